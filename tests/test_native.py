"""Native tool calls: `tools` sent, streamed `tool_calls` read, the same loop, log and approval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mzagent_tui.agent.config import ConfigError, Settings, load_settings
from mzagent_tui.agent.events import Action, FileChanged, FinalAnswer, FormatError, Notice, Observation, StopReason, Thought
from mzagent_tui.agent.model.native import NativeCall, flattened, parse_native, tool_schemas
from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.sessions.history import load_session
from mzagent_tui.agent.tools.registry import ToolRegistry
from tests.conftest import RecordingApprover, make_agent
from tests.scripted_server import Reply

SIGS = {"read_file": ["file_path", "start_line"], "write_to_file": ["file_path", "content"], "run_terminal_command": ["command"]}


def call(name: str, **arguments: object) -> tuple[str, str, str]:
    return (f"call_{name}", name, json.dumps(arguments))


def test_a_task_runs_through_native_calls(server, project: Path) -> None:
    server.script(
        Reply("I will write the file.", tool_calls=[call("write_to_file", file_path="a.py", content="print(1)\n")], finish_reason="tool_calls"),
        Reply("", reasoning="Now run it.", tool_calls=[call("run_terminal_command", command="python3 a.py")], finish_reason="tool_calls"),
        Reply("a.py prints 1."),
    )
    agent, rec = make_agent(server, project, protocol="native")
    result = agent.run("create a.py and run it")
    assert result.reason is StopReason.FINAL_ANSWER and result.final_answer == "a.py prints 1."
    assert (project / "a.py").read_text() == "print(1)\n"
    assert [t.text for t in rec.of(Thought)] == ["I will write the file.", "Now run it."]
    assert [a.tool for a in rec.of(Action)] == ["write_to_file", "run_terminal_command"]
    assert rec.of(FileChanged)[0].created and rec.of(Observation)[1].text.count("1") >= 1
    first = server.requests[0]
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert names == [
        "read_file", "write_to_file", "edit_file", "run_terminal_command", "update_plan",
        "start_background_command", "background_output", "stop_background", "web_fetch",
    ]
    write = first["tools"][1]["function"]["parameters"]
    assert write == {"type": "object", "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}}, "required": ["file_path", "content"]}
    assert "<action>" not in first["messages"][0]["content"]
    second = server.requests[1]["messages"]
    assert second[2]["tool_calls"] == [{"id": "call_write_to_file", "type": "function", "function": {"name": "write_to_file", "arguments": '{"file_path": "a.py", "content": "print(1)\\n"}'}}]
    assert second[3]["role"] == "tool" and second[3]["tool_call_id"] == "call_write_to_file" and "File written: a.py" in second[3]["content"]


def test_bad_arguments_answer_the_call_with_a_format_error(server, project: Path) -> None:
    server.script(
        Reply("", tool_calls=[("c1", "read_file", '{"path": "a.py"}')]),
        Reply("", tool_calls=[("c2", "read_file", '{"file_path": ')]),
        Reply("done"),
    )
    agent, rec = make_agent(server, project, protocol="native")
    agent.run("read a.py")
    errors = [e.message for e in rec.of(FormatError)]
    assert "read_file has no parameter 'path'" in errors[0]
    assert "not valid JSON" in errors[1]
    answered = server.requests[1]["messages"][-1]
    assert answered["role"] == "tool" and answered["tool_call_id"] == "c1" and "Call one tool, or answer in plain text" in answered["content"]


def test_only_the_first_of_several_calls_runs_and_every_kept_call_is_answered(server, project: Path) -> None:
    (project / "a.txt").write_text("A")
    server.script(
        Reply("", tool_calls=[call("read_file", file_path="a.txt"), ("c2", "run_terminal_command", '{"command": "touch b.txt"}')]),
        Reply("A"),
    )
    agent, rec = make_agent(server, project, protocol="native")
    agent.run("read")
    assert not (project / "b.txt").exists()
    assert any("only the first tool call was run" in n.text for n in rec.of(Notice))
    kept = server.requests[1]["messages"]
    assert len(kept[2]["tool_calls"]) == 1 and kept[3]["tool_call_id"] == "call_read_file"


def test_a_rejected_command_reaches_the_model_as_the_calls_result(server, project: Path) -> None:
    server.script(Reply("", tool_calls=[call("run_terminal_command", command="touch x.txt")]), Reply("ok, I will not"))
    agent, _ = make_agent(server, project, approver=RecordingApprover(ApprovalDecision(False, note="no files")), protocol="native")
    agent.run("make x")
    assert not (project / "x.txt").exists()
    answered = server.requests[1]["messages"][-1]
    assert answered["role"] == "tool" and "no files" in answered["content"]


def test_the_log_keeps_the_calls_and_a_resumed_session_continues_them(server, project: Path) -> None:
    server.script(Reply("", tool_calls=[call("run_terminal_command", command="echo hi")]), Reply("said hi"), Reply("still"))
    agent, _ = make_agent(server, project, protocol="native")
    agent.run("say hi")
    history = load_session(agent.session.folder)
    assert [m["role"] for m in history.messages] == ["system", "user", "assistant", "tool", "assistant"]
    resumed, _ = make_agent(server, project, history=history, protocol="native")
    resumed.run("again")
    assert server.requests[-1]["messages"][3]["tool_call_id"] == "call_run_terminal_command"


def test_an_xml_session_read_with_native_calls_in_it_is_sent_as_text(server, project: Path) -> None:
    server.script(Reply("", tool_calls=[call("run_terminal_command", command="echo hi")]), Reply("said hi"), Reply("<final_answer>ok</final_answer>"))
    agent, _ = make_agent(server, project, protocol="native")
    agent.run("say hi")
    resumed, _ = make_agent(server, project, history=load_session(agent.session.folder), protocol="xml")
    resumed.run("again")
    sent = server.requests[-1]
    assert "tools" not in sent
    assert all(set(m) == {"role", "content"} and m["role"] != "tool" for m in sent["messages"])
    assert "[called run_terminal_command with" in sent["messages"][2]["content"]
    assert sent["messages"][3]["content"].startswith("<observation>")


def test_an_interrupted_call_is_answered_when_the_session_is_reopened(server, project: Path) -> None:
    server.script(Reply("", tool_calls=[call("run_terminal_command", command="echo hi")]), Reply("ok"))
    agent, _ = make_agent(server, project, protocol="native")
    agent._add({"role": "user", "content": "<question>x</question>"})
    agent.session.record_event(__import__("mzagent_tui.agent.events", fromlist=["TaskStarted"]).TaskStarted("x"))
    agent._add({"role": "assistant", "content": "", "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]})
    history = load_session(agent.session.folder)
    [repair] = history.repairs()
    assert repair["role"] == "tool" and repair["tool_call_id"] == "c9"


def test_protocol_auto_is_native_for_hosted_presets_only() -> None:
    assert Settings(provider="deepseek").native_tools() and Settings(provider="openai").native_tools()
    assert not Settings(provider="local").native_tools() and not Settings(provider="llamacpp").native_tools()
    assert not Settings(provider="custom").native_tools() and not Settings(provider="ollama").native_tools()
    assert Settings(provider="custom", protocol="native").native_tools()
    assert not Settings(provider="openai", protocol="xml").native_tools()
    with pytest.raises(ConfigError, match="protocol must be"):
        load_settings(flags={"protocol": "json"}, environ={}, cwd=Path("/"))


def test_a_project_env_cannot_switch_the_protocol(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("MZAGENT_PROTOCOL=native\n")
    settings = load_settings(project=tmp_path, environ={}, cwd=tmp_path)
    assert settings.protocol == "auto" and any("MZAGENT_PROTOCOL" in item for item in settings.ignored)


@pytest.mark.parametrize(
    ("text", "calls", "expected"),
    [
        ("Done: 4 files.", [], ("final", "Done: 4 files.")),
        ("<thought>x</thought><final_answer>4</final_answer>", [], ("final", "4")),
        ('<action>read_file("a")</action>', [], ("tool", "read_file")),
        ("", [NativeCall("1", "read_file", '{"file_path": "a"}')], ("tool", "read_file")),
        ("", [], ("error", "empty")),
        ("", [NativeCall("1", "read_file", "[1]")], ("error", "JSON object")),
        # json raises a plain ValueError (no `msg`) for a number longer than int() reads: an error, not a crash
        pytest.param("", [NativeCall("1", "read_file", '{"start_line": ' + "9" * 5000 + "}")], ("error", "not valid JSON (Exceeds the limit"), id="long-number"),
    ],
)
def test_reading_a_native_reply(text: str, calls: list[NativeCall], expected: tuple[str, str]) -> None:
    parsed = parse_native(text, "", calls, SIGS)
    kind, value = expected
    if kind == "final":
        assert parsed.final_answer == value
    elif kind == "tool":
        assert parsed.tool == value and parsed.error is None
    else:
        assert parsed.error is not None and value in parsed.error


def test_schemas_come_from_annotations_and_defaults() -> None:
    def tally(words: list[str], limit: int | None = None, exact: bool = False) -> str:
        """Count words."""
        return ""

    [schema] = tool_schemas(ToolRegistry([tally]))
    assert schema["function"] == {
        "name": "tally",
        "description": "Count words.",
        "parameters": {"type": "object", "properties": {"words": {"type": "array"}, "limit": {"type": "integer"}, "exact": {"type": "boolean"}}, "required": ["words"]},
    }


def test_flattened_turns_calls_into_text() -> None:
    messages = [
        {"role": "assistant", "content": "look", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "read_file", "arguments": '{"file_path": "a"}'}}]},
        {"role": "tool", "tool_call_id": "1", "content": "A"},
    ]
    assert flattened(messages) == [
        {"role": "assistant", "content": 'look\n[called read_file with {"file_path": "a"}]'},
        {"role": "user", "content": "<observation>A</observation>"},
    ]


def test_final_answer_event_in_native_mode(server, project: Path) -> None:
    server.script(Reply("The answer is 4."))
    agent, rec = make_agent(server, project, protocol="native")
    agent.run("2+2?")
    assert [e.text for e in rec.of(FinalAnswer)] == ["The answer is 4."]


def test_a_stuck_native_run_answers_the_call_it_did_not_run(server, project: Path) -> None:
    """Asked for its final answer after being stuck, the model called a tool again: the call is
    answered (not run), so a follow-up sends a conversation the API accepts."""
    (project / "a.txt").write_text("same")
    read = Reply("", tool_calls=[call("read_file", file_path="a.txt")], finish_reason="tool_calls")
    server.script(*[read] * 4, Reply("It says same."))
    agent, rec = make_agent(server, project, protocol="native")
    assert agent.run("What does the text file say?").reason is StopReason.STUCK
    assert len(rec.of(Action)) == 3
    assert agent.run("So?").final_answer == "It says same."
    messages = server.requests[-1]["messages"]
    calls = [m["tool_calls"][0]["id"] for m in messages if m.get("tool_calls")]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert calls == answered and messages[-2]["content"] == "Not run: the run stopped here, because it was stuck."
