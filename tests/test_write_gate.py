"""Gated writes: with `writes = "ask"` every write shows its diff and waits for the user."""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.config import ConfigError
from mzagent_tui.agent.events import FileChanged
from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy, load_policy
from mzagent_tui.agent.safety.approval_requests import PlantedFileApproval, WriteApproval
from tests.conftest import RecordingApprover, make_agent
from tests.scripted_server import answer_reply, last_user, read_reply, write_reply
from tests.test_cli import endpoint, mzagent


def agent_with(server, project: Path, decision: ApprovalDecision, writes: str = "ask"):  # noqa: ANN001, ANN201
    user = RecordingApprover(decision)
    agent, rec = make_agent(server, project, approver=user)
    agent.policy.writes = writes
    return agent, rec, user


def test_with_writes_auto_nothing_asks(server, project: Path) -> None:
    server.script(write_reply("a.txt", "x\n"), answer_reply())
    agent, _, user = agent_with(server, project, ApprovalDecision(False), writes="auto")
    agent.run("t")
    assert (project / "a.txt").read_text() == "x\n" and user.requests == []


def test_an_approved_write_showed_its_diff_first(server, project: Path) -> None:
    (project / "a.py").write_text("x = 1\n")
    server.script(read_reply("a.py"), write_reply("a.py", "x = 2\n"), answer_reply())
    agent, rec, user = agent_with(server, project, ApprovalDecision(True))
    agent.run("t")
    [request] = user.requests
    assert (type(request), request.path, request.content) == (WriteApproval, "a.py", "x = 2\n")
    assert request.diff == "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    assert (project / "a.py").read_text() == "x = 2\n"
    assert rec.of(FileChanged)[0].diff == request.diff


def test_a_rejected_write_writes_nothing_and_the_model_hears_why(server, project: Path) -> None:
    (project / "a.py").write_text("x = 1\n")
    server.script(read_reply("a.py"), write_reply("a.py", "x = 2\n"), answer_reply())
    agent, rec, _ = agent_with(server, project, ApprovalDecision(False, note="keep x at 1"))
    agent.run("t")
    assert (project / "a.py").read_text() == "x = 1\n" and not rec.of(FileChanged)
    told = last_user(server.requests[2])
    assert "the user did not allow this write to a.py, so nothing was written. Their reason: keep x at 1." in told


def test_the_user_can_edit_the_content_before_it_is_written(server, project: Path) -> None:
    server.script(write_reply("a.py", "x = 2\n"), answer_reply())
    agent, rec, _ = agent_with(server, project, ApprovalDecision(True, content="x = 3\n"))
    agent.run("t")
    assert (project / "a.py").read_text() == "x = 3\n"
    assert rec.of(FileChanged)[0].diff.endswith("+x = 3\n")
    assert "The user edited the content before it was written; read a.py to see it." in last_user(server.requests[1])


def test_allowing_a_glob_stops_the_questions_for_matching_paths_only(server, project: Path) -> None:
    server.script(write_reply("src/a.py", "1\n"), write_reply("src/b.py", "2\n"), write_reply("c.py", "3\n"), answer_reply())
    agent, _, user = agent_with(server, project, ApprovalDecision(True, allow_writes="src/*"))
    agent.run("t")
    assert [r.path for r in user.requests] == ["src/a.py", "c.py"]
    assert (project / "src/b.py").read_text() == "2\n"


def test_a_write_that_plants_code_asks_even_with_writes_auto(server, project: Path) -> None:
    server.script(write_reply(".git/hooks/pre-commit", "#!/bin/sh\necho hi\n"), answer_reply())
    agent, _, user = agent_with(server, project, ApprovalDecision(False), writes="auto")
    agent.run("t")
    assert [type(r) for r in user.requests] == [PlantedFileApproval] and user.requests[0].diff.startswith("--- /dev/null")
    assert not (project / ".git/hooks/pre-commit").exists()


def test_writes_come_from_the_user_config_or_the_flag(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[approval]\nwrites = "ask"\n')
    assert load_policy(path=config).writes == "ask"
    assert load_policy(path=config, writes="auto").writes == "auto"
    assert Policy().writes == "auto"
    config.write_text('[approval]\nwrites = "sometimes"\n')
    with pytest.raises(ConfigError, match="writes must be one of auto, ask"):
        load_policy(path=config)


def test_headless_without_a_terminal_refuses_gated_writes_and_tells_the_model(server, project: Path) -> None:
    server.script(write_reply("a.txt", "x\n"), answer_reply("could not"))
    done = mzagent("run", *endpoint(server), "--writes", "ask", "--project", str(project), "t")
    assert done.returncode == 0 and not (project / "a.txt").exists()
    assert "--yes" in last_user(server.requests[1])


def test_headless_yes_approves_gated_writes(server, project: Path) -> None:
    server.script(write_reply("a.txt", "x\n"), answer_reply())
    done = mzagent("run", *endpoint(server), "--writes", "ask", "--yes", "--project", str(project), "t")
    assert done.returncode == 0 and (project / "a.txt").read_text() == "x\n"


def test_the_terminal_shows_the_diff_and_can_allow_a_glob() -> None:
    import io

    from mzagent_tui.headless import TerminalApprover

    out = io.StringIO()
    answers = iter(["a", "docs/*"])
    request = WriteApproval(cwd="/p", path="docs/a.md", diff="--- /dev/null\n+++ b/docs/a.md\n@@ -0,0 +1 @@\n+hi\n", content="hi\n")
    decision = TerminalApprover(out, read_line=lambda prompt: next(answers)).approve(request)
    assert decision == ApprovalDecision(True, allow_writes="docs/*")
    assert "+++ b/docs/a.md\n@@ -0,0 +1 @@\n+hi\n" in out.getvalue()


