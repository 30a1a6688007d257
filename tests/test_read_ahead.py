"""The files a task names are read for the model before its first reply, and only those a
plain read_file would give without asking: small text files inside the project, not secrets."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.events import Action, Notice, Observation, StepStarted, StopReason
from mzagent_tui.agent.sessions.history import load_session
from mzagent_tui.agent.aids.read_ahead import MAX_BYTES, MAX_FILES, MAX_NAMES, files_to_read_ahead
from tests.conftest import RecordingApprover, make_agent
from tests.scripted_server import Reply

DONE = Reply("<thought>done</thought><final_answer>ok</final_answer>")


def test_a_named_file_is_read_as_the_models_first_step(server, project: Path) -> None:
    (project / "take.py").write_text("def first_n(items, n):\n    return items[:n - 1]\n")
    server.script(DONE)
    agent, rec = make_agent(server, project)
    result = agent.run("Which function does take.py define?")
    assert result.reason is StopReason.FINAL_ANSWER and result.steps == 1
    messages = server.requests[0]["messages"]
    assert messages[1]["content"] == "<question>Which function does take.py define?</question>"
    assert messages[2] == {"role": "assistant", "content": '<thought>I need to read take.py first.</thought>\n<action>read_file("take.py")</action>'}
    assert messages[3] == {"role": "user", "content": "<observation>def first_n(items, n):\n    return items[:n - 1]\n</observation>"}
    assert len(messages) == 4
    kinds = [type(e).__name__ for e in rec.events if isinstance(e, (Notice, Action, Observation, StepStarted))]
    assert kinds == ["Action", "Observation", "StepStarted"]
    assert rec.of(Action)[0].args == ["take.py"] and rec.of(Observation)[0].text.startswith("def first_n")


def test_a_file_read_ahead_may_be_overwritten_at_once(server, project: Path) -> None:
    """read_file's read counts: the write that replaces the whole file is not refused as unread."""
    (project / "take.py").write_text("def first_n(items, n):\n    return items[:n - 1]\n")
    server.script(
        Reply('<thought>fix</thought><action>write_to_file("take.py", "def first_n(items, n):\\n    return items[:n]\\n")</action>'),
        DONE,
    )
    agent, _ = make_agent(server, project)
    agent.run("Fix take.py")
    assert (project / "take.py").read_text() == "def first_n(items, n):\n    return items[:n]\n"


def test_several_names_are_read_in_the_order_the_task_gives_them_at_most_three(server, project: Path) -> None:
    for name in ("a.py", "b.py", "c.py", "d.py"):
        (project / name).write_text(f"# {name}\n")
    server.script(DONE)
    agent, rec = make_agent(server, project)
    agent.run("Move the helper from c.py into a.py, then update b.py, c.py and d.py")
    assert [a.args for a in rec.of(Action)] == [["c.py"], ["a.py"], ["b.py"]]
    assert MAX_FILES == 3
    assert [m["role"] for m in server.requests[0]["messages"]] == ["system", "user"] + ["assistant", "user"] * 3


def test_names_that_are_no_project_text_file_are_left_to_the_model(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("SECRET = 1\n")
    (project / "src").mkdir()
    (project / "src" / "ok.py").write_text("x = 1\n")
    (project / "empty.py").write_text("")
    (project / "big.txt").write_text("x" * (MAX_BYTES + 1))
    (project / "folder.d").mkdir()
    (project / ".env").write_text("API_KEY=sk-live-1234567890abcdef\n")
    (project / "id_rsa.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (project / "link.py").symlink_to(outside)
    os.mkfifo(project / "pipe.txt")
    task = (
        f"Compare missing.py, ../outside.py, {outside}, link.py, empty.py, big.txt, folder.d, .env, id_rsa.pem, pipe.txt, "
        "~/outside.py and src/ok.py"
    )
    assert files_to_read_ahead(project, task, set()) == ["src/ok.py"]
    assert files_to_read_ahead(project, task, {project / "src" / "ok.py"}) == []


def test_a_secret_file_named_in_the_task_asks_nothing_and_is_not_shown(server, project: Path) -> None:
    (project / ".env.local").write_text("API_KEY=sk-live-1234567890abcdef\n")
    (project / "secrets.toml").write_text("token = 'sk-live-1234567890abcdef'\n")
    server.script(DONE)
    approver = RecordingApprover(ApprovalDecision(True))
    agent, rec = make_agent(server, project, approver=approver)
    agent.run("What is in .env.local and secrets.toml?")
    assert approver.requests == [] and rec.of(Action) == []
    assert "sk-live" not in json.dumps(server.requests[0]["messages"])


def test_a_binary_file_is_left_to_the_model(server, project: Path) -> None:
    (project / "blob.dat").write_bytes(b"\x00\x01binary")
    server.script(DONE)
    agent, rec = make_agent(server, project)
    agent.run("What is in blob.dat?")
    assert rec.of(Action) == [] and len(server.requests[0]["messages"]) == 2


def test_a_follow_up_does_not_read_again_what_the_model_has_seen(server, project: Path) -> None:
    (project / "a.py").write_text("x = 1\n")
    (project / "b.py").write_text("y = 2\n")
    server.script(DONE, DONE)
    agent, rec = make_agent(server, project)
    agent.run("Look at a.py")
    agent.run("Now compare a.py with b.py")
    assert [a.args for a in rec.of(Action)] == [["a.py"], ["b.py"]]


def test_a_resumed_session_knows_what_was_read_ahead(server, project: Path) -> None:
    (project / "a.py").write_text("x = 1\n")
    server.script(DONE, DONE)
    agent, _ = make_agent(server, project)
    agent.run("Look at a.py")
    resumed, rec = make_agent(server, project, history=load_session(agent.session.folder))
    resumed.run("And a.py again?")
    assert rec.of(Action) == []
    assert any('<action>read_file("a.py")</action>' in m["content"] for m in server.requests[1]["messages"])


def test_with_native_calls_the_read_is_a_call_and_its_answer(server, project: Path) -> None:
    (project / "a.py").write_text("x = 1\n")
    server.script(Reply("a.py sets x to 1."))
    agent, _ = make_agent(server, project, protocol="native")
    agent.run("What does a.py set?")
    messages = server.requests[0]["messages"]
    call = messages[2]["tool_calls"][0]
    assert messages[2]["role"] == "assistant" and call["function"] == {"name": "read_file", "arguments": '{"file_path": "a.py"}'}
    assert messages[3] == {"role": "tool", "tool_call_id": call["id"], "content": "x = 1\n"}



def test_only_the_first_names_of_a_long_task_are_looked_at(project: Path) -> None:
    (project / "real.py").write_text("x = 1\n")
    many = " ".join(f"log{i}.txt" for i in range(MAX_NAMES))
    assert files_to_read_ahead(project, f"real.py {many}", set()) == ["real.py"]
    assert files_to_read_ahead(project, f"{many} real.py", set()) == []


def test_the_bundled_model_reads_for_itself(server, project: Path) -> None:
    """For the bundled model the read-ahead did not earn its place on the held-out half."""
    (project / "a.py").write_text("x = 1\n")
    server.script(DONE)
    agent, rec = make_agent(server, project, provider="local")
    agent.run("Which variable does a.py set?")
    assert rec.of(Action) == [] and [m["role"] for m in server.requests[0]["messages"]] == ["system", "user"]
