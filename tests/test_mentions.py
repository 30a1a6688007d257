"""`@path` in a task: the file is read for the model as its first step, through read_file's rules."""

from __future__ import annotations

from pathlib import Path

from mzagent_tui.agent.events import Action, Observation
from mzagent_tui.agent.mentions import mentioned_files
from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.safety.approval_requests import SecretReadApproval
from tests.conftest import RecordingApprover, make_agent
from tests.scripted_server import Reply, answer_reply


def test_mentions_are_found_once_each_without_trailing_punctuation() -> None:
    assert mentioned_files("explain @src/app.py, then @README.md and @src/app.py; mail me@x.org") == ["src/app.py", "README.md"]
    assert mentioned_files("@ alone, @) and a@b") == []


def test_a_mentioned_file_is_read_as_the_models_first_step(server, project: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("print('mentioned')\n")
    server.script(answer_reply("it prints"))
    agent, recorder = make_agent(server, project)
    agent.run("what does @src/app.py do?")
    assert recorder.of(Action) == [Action("read_file", ["src/app.py"])]
    [observation] = recorder.of(Observation)
    assert observation.ok and "print('mentioned')" in observation.text
    messages = server.requests[0]["messages"]
    assert 'read_file("src/app.py")' in messages[2]["content"] and "print('mentioned')" in messages[3]["content"]


def test_a_mentioned_file_counts_as_read_so_the_model_may_rewrite_it(server, project: Path) -> None:
    """The demo's task, "add a flag to @greet.py": the model's first call rewrites the file it was
    shown, which must not be refused as a file it has not read."""
    (project / "greet.py").write_text("print('hi')\n")
    (project / "other.py").write_text("print('other')\n")
    server.script(
        Reply('<action>write_to_file("greet.py", "print(\'hello\')\\n")</action>'),
        Reply('<action>write_to_file("other.py", "x = 1\\n")</action>'),
        answer_reply("done"),
    )
    agent, recorder = make_agent(server, project)
    agent.run("change @greet.py")
    written, refused = [o for o in recorder.of(Observation)][1:]
    assert written.ok and (project / "greet.py").read_text() == "print('hello')\n"
    assert not refused.ok and "you have not read it" in refused.text and (project / "other.py").read_text() == "print('other')\n"


def test_a_mentioned_secret_file_still_asks_and_a_missing_one_is_told(server, project: Path) -> None:
    (project / ".env").write_text("TOKEN=abc\n")
    server.script(answer_reply("no"))
    refusing = RecordingApprover(ApprovalDecision(False))
    agent, recorder = make_agent(server, project, approver=refusing)
    agent.run("use @.env and @missing.py")
    assert [type(r) for r in refusing.requests] == [SecretReadApproval]
    secret, missing = recorder.of(Observation)
    assert not secret.ok and "did not allow" in secret.text and "TOKEN=abc" not in secret.text
    assert not missing.ok and "missing.py" in missing.text
    assert "TOKEN=abc" not in str(server.requests[0]["messages"])


def test_with_native_calls_the_read_is_a_call_and_its_answer(server, project: Path) -> None:
    (project / "a.py").write_text("x = 1\n")
    server.script(Reply("a.py sets x to 1."))
    agent, _ = make_agent(server, project, protocol="native")
    agent.run("What does @a.py set?")
    messages = server.requests[0]["messages"]
    call = messages[2]["tool_calls"][0]
    assert messages[2]["role"] == "assistant" and call["function"] == {"name": "read_file", "arguments": '{"file_path": "a.py"}'}
    assert messages[3] == {"role": "tool", "tool_call_id": call["id"], "content": "x = 1\n"}
