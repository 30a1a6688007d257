"""Visible compaction: past 80% of the window the model summarises the older steps, the summary
replaces them (task texts kept verbatim), an entry shows it, and the log keeps everything."""

from __future__ import annotations

import json
from pathlib import Path

from mzagent_tui.agent.events import Compacted, StopReason
from mzagent_tui.agent.model.compaction import SUMMARY_REQUEST
from mzagent_tui.agent.sessions.history import load_session
from tests.conftest import make_agent
from tests.scripted_server import Reply


def step(action: str, prompt_tokens: int) -> Reply:
    return Reply(f"<thought>next</thought><action>{action}</action>", usage=(prompt_tokens, 10))


def test_past_80_percent_the_older_steps_become_a_summary(server, project: Path) -> None:
    (project / "a.txt").write_text("alpha\n")
    server.script(
        step('read_file("a.txt")', 300),
        step('run_terminal_command("echo one")', 500),
        step('run_terminal_command("echo two")', 850),
        Reply("Read a.txt (alpha), ran echo one and echo two. Left: answer.", usage=(700, 30)),
        Reply("<thought>done</thought><final_answer>alpha</final_answer>", usage=(400, 10)),
    )
    agent, rec = make_agent(server, project, context_window=1000)
    result = agent.run("What does the text file say? Check with echo too.")
    assert result.reason is StopReason.FINAL_ANSWER and result.final_answer == "alpha"
    summary_request = server.requests[3]["messages"]
    assert summary_request[-1]["content"].endswith(SUMMARY_REQUEST) and "grammar" not in server.requests[3]
    after = server.requests[4]["messages"]
    assert after[0]["role"] == "system"
    assert after[1]["content"].startswith("Earlier in this conversation the user asked:\n<question>What does the text file say? Check with echo too.</question>")
    assert "Read a.txt (alpha), ran echo one and echo two." in after[1]["content"]
    assert [m["role"] for m in after] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "echo one" in after[2]["content"] and "echo two" in after[4]["content"] and 'read_file("a.txt")' not in json.dumps(after)
    [compaction] = rec.of(Compacted)
    assert compaction.summary == "Read a.txt (alpha), ran echo one and echo two. Left: answer." and compaction.replaced == 3


def test_where_compaction_starts_is_a_setting(server, project: Path) -> None:
    """compact_at 0.9: a request that filled 85 % of the window is not compacted yet."""
    (project / "a.txt").write_text("alpha\n")
    server.script(
        step('read_file("a.txt")', 300),
        step('run_terminal_command("echo one")', 850),
        Reply("<thought>done</thought><final_answer>alpha</final_answer>", usage=(870, 10)),
    )
    agent, rec = make_agent(server, project, context_window=1000, compact_at=0.9)
    assert agent.run("What does the text file say?").final_answer == "alpha"
    assert rec.of(Compacted) == [] and len(server.requests) == 3


def test_the_log_keeps_every_message_and_a_resumed_session_continues_compacted(server, project: Path) -> None:
    server.script(
        *(step(f'run_terminal_command("echo {n}")', 900) for n in range(3)),
        Reply("Ran echo 0, 1 and 2."),
        Reply("<final_answer>ok</final_answer>", usage=(100, 5)),
    )
    agent, _ = make_agent(server, project, context_window=1000)
    agent.run("count")
    log = [json.loads(line) for line in (agent.session.folder / "log.jsonl").read_text().splitlines()]
    said = [r["content"] for r in log if r["type"] == "message"]
    assert any("echo 0" in text for text in said), "the original steps stay in the log"
    assert load_session(agent.session.folder).messages == agent.messages
    assert "Ran echo 0, 1 and 2." in agent.messages[1]["content"]


def test_too_little_to_compact(server, project: Path) -> None:
    server.script(Reply("<final_answer>hi</final_answer>"))
    agent, _ = make_agent(server, project)
    agent.run("hi")
    assert agent.compact() is False and len(server.requests) == 1, "one question and one answer: nothing older to summarise"


def test_a_failed_summary_is_a_notice_and_the_run_goes_on(server, project: Path) -> None:
    from tests.scripted_server import Fault

    server.script(
        *(step(f'run_terminal_command("echo {n}")', 900) for n in range(3)),
        Fault("status", 401, {"error": {"message": "bad key"}}),
        Reply("<final_answer>ok</final_answer>"),
    )
    agent, rec = make_agent(server, project, context_window=1000)
    result = agent.run("count")
    assert result.final_answer == "ok" and not rec.of(Compacted)
