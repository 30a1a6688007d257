"""`!command`: the user's own command runs without a dialog but through the agent's command path
(sandbox, runner, undo record), and its output reaches the model with the next task."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mzagent_tui.agent.events import ApprovalAsked, Error, FileChanged, Observation, Stopped, StopReason, TaskStarted, UserCommand, UserCommandOutput
from mzagent_tui.agent.prompt_commands import PromptCommandError, resolve_task
from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.sessions.export import to_markdown
from mzagent_tui.agent.sessions.history import load_session
from mzagent_tui.agent.sessions.undo import undo
from mzagent_tui.agent.user_commands import USAGE, typed_command
from tests.conftest import RecordingApprover, make_agent, requires_sandbox
from tests.scripted_server import Reply, answer_reply


def user_message(request: dict) -> str:  # type: ignore[type-arg]
    """Every user message of a request the scripted server received, joined."""
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")


@pytest.mark.parametrize("task, command", [("!ls -la", "ls -la"), ("  ! echo hi ", "echo hi"), ("!", ""), ("!   ", ""), ("ls", None), ("say !x", None)])
def test_typed_command(task: str, command: str | None) -> None:
    assert typed_command(task) == command


def test_runs_without_asking_and_the_model_sees_it_next(server, project: Path) -> None:
    approver = RecordingApprover(ApprovalDecision(False))
    agent, rec = make_agent(server, project, approver=approver)
    result = agent.run("!echo hello-from-user; echo oops >&2; exit 3")
    assert approver.requests == [] and rec.of(ApprovalAsked) == []
    assert server.requests == []  # no model was asked
    assert result.reason is StopReason.USER_COMMAND and result.exit_code == 3
    assert rec.of(UserCommand) == [UserCommand("echo hello-from-user; echo oops >&2; exit 3")]
    (output,) = rec.of(UserCommandOutput)
    assert output.exit_code == 3 and "hello-from-user" in output.text and "oops" in output.text
    assert not rec.of(TaskStarted)
    assert rec.of(Stopped)[-1].reason is StopReason.USER_COMMAND

    server.script(answer_reply("seen"))
    agent.run("what did my command print?")
    sent = user_message(server.requests[0])
    assert "I ran `echo hello-from-user; echo oops >&2; exit 3` myself" in sent
    assert "exit code 3" in sent and "hello-from-user" in sent
    assert sent.index("hello-from-user") < sent.index("what did my command print?")
    agent.close()


def test_long_output_is_cut_like_an_observation(server, project: Path) -> None:
    agent, rec = make_agent(server, project)
    agent.run(f"!{sys.executable} -c \"print('\\n'.join(str(i) for i in range(20000)))\"")
    (output,) = rec.of(UserCommandOutput)
    assert "bytes cut; the full output" in output.text and len(output.text) < 12_000
    assert "19999" in output.text and Path(output.output_path).read_text().count("\n") == 20000
    agent.close()


def test_bare_bang_is_a_usage_message(server, project: Path) -> None:
    agent, rec = make_agent(server, project)
    result = agent.run("!   ")
    assert result.reason is StopReason.ERROR and rec.of(Error) == [Error(USAGE)]
    assert rec.of(UserCommand) == [] and agent.messages == []
    agent.close()


def test_changes_are_recorded_for_undo(server, project: Path) -> None:
    (project / "a.txt").write_text("before\n")
    agent, rec = make_agent(server, project)
    agent.run("!echo after > a.txt && echo new > b.txt")
    assert (project / "a.txt").read_text() == "after\n"
    assert sorted(Path(e.path).name for e in rec.of(FileChanged)) == ["a.txt", "b.txt"]
    assert "Files changed by the command: a.txt (modified), b.txt (created)." in rec.of(UserCommandOutput)[0].text
    done = undo(agent.session, load_session(agent.session.folder).events, "last")
    assert len(done) == 2
    assert (project / "a.txt").read_text() == "before\n" and not (project / "b.txt").exists()
    agent.close()


@requires_sandbox(6)
def test_runs_in_the_sandbox_as_the_agents_command_does(server, project: Path, tmp_path: Path) -> None:
    """A write outside the project is refused, with the same error as the model's command gets."""
    outside = tmp_path / "outside"
    outside.mkdir()
    agent, rec = make_agent(server, project, sandbox="workspace")
    result = agent.run(f"!echo x > {outside}/by-user")
    server.script(Reply(f"<thought>t</thought><action>run_terminal_command({json.dumps(f'echo x > {outside}/by-model')})</action>"), answer_reply())
    agent.run("try it yourself")
    agent.close()
    assert list(outside.iterdir()) == []
    assert result.exit_code == 1
    by_user = rec.of(UserCommandOutput)[0].text.replace("by-user", "X")
    by_model = rec.of(Observation)[0].text.replace("by-model", "X")
    assert by_user.splitlines()[:3] == by_model.splitlines()[:3]


def test_the_session_lists_and_exports_the_command(server, project: Path) -> None:
    agent, _ = make_agent(server, project)
    agent.run("!echo [/x] listed")
    agent.close()
    agent.session.close()
    history = load_session(agent.session.folder)
    assert history.first_task == "!echo [/x] listed"
    assert "(no task)" not in history.summary_line() and "user command" in history.summary_line()
    exported = to_markdown(history, lambda text: text)
    assert "echo [/x] listed" in exported and "(exit 0)" in exported


def run_cli(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`mzagent run` in a child process, importing this checkout (PYTHONPATH) from the project folder."""
    checkout = str(Path(__file__).resolve().parent.parent)
    return subprocess.run(
        [sys.executable, "-m", "mzagent_tui", "run", "--project", str(project), *args],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": checkout, **(env or {})}, cwd=project,
    )


def test_headless_needs_no_model_and_exits_with_the_code(project: Path) -> None:
    """No endpoint is configured at all (the isolated home has no key): a `!command` still runs."""
    done = run_cli(project, "!echo printed-by-cli; exit 4", env={"MZAGENT_SANDBOX": "off"})
    assert done.returncode == 4, done.stderr
    assert "printed-by-cli" in done.stdout
    assert "local model" not in done.stderr
    lines = run_cli(project, "--json", "!echo json-line", env={"MZAGENT_SANDBOX": "off"})
    kinds = [json.loads(line)["type"] for line in lines.stdout.splitlines()]
    assert lines.returncode == 0 and kinds[:1] == ["user_command"] and "user_command_output" in kinds


def test_headless_bare_bang_is_a_usage_error(project: Path) -> None:
    done = run_cli(project, "!")
    assert done.returncode == 2 and "`!` needs a command" in done.stderr and "Traceback" not in done.stderr


def test_a_prompt_file_cannot_become_a_command(project: Path, tmp_path: Path) -> None:
    """A project's `/name` is text for the model: one that starts with `!` never runs."""
    (project / ".mzagent" / "commands").mkdir(parents=True)
    (project / ".mzagent" / "commands" / "setup.md").write_text(f"!touch {tmp_path}/planted\n")
    with pytest.raises(PromptCommandError, match="starts with `!`"):
        resolve_task("/setup", project, tmp_path / "none")
    assert not (tmp_path / "planted").exists()
