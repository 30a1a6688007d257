"""`mzagent acp` spawned as a subprocess and driven by the ACP SDK's own client over stdio."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    DeniedOutcome,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)
from acp.stdio import spawn_agent_process

from mzagent_tui.acp_server import ThoughtStream, decision_for
from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.safety.approval_requests import ApprovalRequest, CommandApproval, ToolCallApproval, WriteApproval
from tests.scripted_server import Reply, answer_reply

SERVER = str(Path(__file__).with_name("mcp_server.py"))


class RecordingClient:
    """An ACP client that answers permission requests from a list and records every update."""

    def __init__(self, answers: list[str | None] | None = None) -> None:
        self.answers = list(answers or [])
        self.permissions: list[Any] = []
        self.updates: list[Any] = []
        self.asked = asyncio.Event()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        self.asked.set()
        answer = self.answers.pop(0) if self.answers else "reject"
        if answer == "wait":
            await asyncio.sleep(3600)
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id=answer, outcome="selected"))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    def of(self, kind: type) -> list[Any]:
        return [u for u in self.updates if isinstance(u, kind)]

    def text(self, kind: type) -> str:
        return "".join(u.content.text for u in self.of(kind))


async def settle(client: RecordingClient, quiet: float = 0.2) -> None:
    """The SDK's client handles each notification in a task of its own, so a response can be
    seen before the updates sent ahead of it: wait until no update has come for `quiet` seconds."""
    seen = -1
    while seen != len(client.updates):
        seen = len(client.updates)
        await asyncio.sleep(quiet)


@contextlib.asynccontextmanager
async def acp_agent(client: RecordingClient, *args: str) -> AsyncIterator[tuple[Any, Any]]:
    async with spawn_agent_process(client, sys.executable, "-m", "mzagent_tui", "acp", *args, env=dict(os.environ)) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        yield conn, process


async def test_initialize_says_who_we_are_and_that_sessions_load(endpoint, project: Path) -> None:
    async with spawn_agent_process(RecordingClient(), sys.executable, "-m", "mzagent_tui", "acp", env=dict(os.environ)) as (conn, _):
        response = await conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert response.agent_info.name == "mzagent"
    assert response.agent_capabilities.load_session is True
    assert response.agent_capabilities.mcp_capabilities.http is True  # streamable HTTP servers from the client are used


async def test_a_prompt_streams_thought_tool_calls_and_the_answer(endpoint, project: Path) -> None:
    endpoint.script(
        Reply('<thought>I will write the file</thought><action>write_to_file("a.py", "print(1)\\n")</action>'),
        answer_reply("a.py prints 1"),
    )
    client = RecordingClient()
    async with acp_agent(client) as (conn, _):
        session = await conn.new_session(cwd=str(project))
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("create a.py")])
        await settle(client)
    assert response.stop_reason == "end_turn"
    assert (project / "a.py").read_text() == "print(1)\n"
    assert client.text(UserMessageChunk) == "", "the client shows the prompt it sent: echoing it showed it twice"
    assert "I will write the file" in client.text(AgentThoughtChunk)
    assert client.text(AgentMessageChunk) == "a.py prints 1"
    [start] = client.of(ToolCallStart)
    assert start.kind == "edit" and start.title == "Write a.py" and start.locations[0].path == str(project / "a.py")
    progress = client.of(ToolCallProgress)
    diff = next(c for u in progress for c in (u.content or []) if c.type == "diff")
    assert diff.path == str(project / "a.py") and diff.new_text == "print(1)\n" and diff.old_text is None
    assert progress[-1].status == "completed" and progress[-1].tool_call_id == start.tool_call_id
    assert client.permissions == []  # writes are not gated by default


async def test_an_edit_is_an_edit_call_on_its_file_with_the_diff_of_the_change(endpoint, project: Path) -> None:
    (project / "a.py").write_text("x = 1\ny = 2\n")
    endpoint.script(
        Reply('<thought>change y</thought><action>edit_file("a.py", "y = 2", "y = 3")</action>'),
        answer_reply(),
    )
    client = RecordingClient()
    async with acp_agent(client) as (conn, _):
        session = await conn.new_session(cwd=str(project))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("set y to 3")])
        await settle(client)
    [start] = client.of(ToolCallStart)
    assert start.kind == "edit" and start.title == "Edit a.py" and start.locations[0].path == str(project / "a.py")
    diff = next(c for u in client.of(ToolCallProgress) for c in (u.content or []) if c.type == "diff")
    assert diff.old_text == "x = 1\ny = 2\n" and diff.new_text == "x = 1\ny = 3\n"


async def test_a_command_asks_with_each_parts_verdict_and_runs_when_allowed(endpoint, project: Path) -> None:
    endpoint.script(
        Reply('<thought>run</thought><action>run_terminal_command("echo hi > out.txt")</action>'),
        answer_reply(),
    )
    client = RecordingClient(["allow"])
    async with acp_agent(client) as (conn, _):
        session = await conn.new_session(cwd=str(project))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        await settle(client)
    [(call, options)] = client.permissions
    assert call.kind == "execute" and call.title == "Run `echo hi > out.txt`"
    assert call.tool_call_id == client.of(ToolCallStart)[0].tool_call_id
    details = call.content[0].content.text
    assert "echo hi" in details and "ask:" in details
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
    assert (project / "out.txt").read_text() == "hi\n"
    final = client.of(ToolCallProgress)[-1]
    assert final.status == "completed"


async def test_a_rejection_reaches_the_model_and_runs_nothing(endpoint, project: Path) -> None:
    endpoint.script(
        Reply('<thought>run</thought><action>run_terminal_command("touch made.txt")</action>'),
        answer_reply("ok, I did not"),
    )
    client = RecordingClient(["reject"])
    async with acp_agent(client) as (conn, _):
        session = await conn.new_session(cwd=str(project))
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        await settle(client)
    assert response.stop_reason == "end_turn"
    assert not (project / "made.txt").exists()
    assert client.of(ToolCallProgress)[-1].status == "failed"
    observation = endpoint.requests[1]["messages"][-1]["content"]
    assert "reject" in observation.lower()


async def test_allow_always_stops_asking_for_that_prefix(endpoint, project: Path) -> None:
    endpoint.script(
        Reply('<action>run_terminal_command("touch one.txt")</action>'),
        Reply('<action>run_terminal_command("touch two.txt")</action>'),
        answer_reply(),
    )
    client = RecordingClient(["allow-always"])
    async with acp_agent(client) as (conn, _):
        session = await conn.new_session(cwd=str(project))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        await settle(client)
    assert len(client.permissions) == 1
    assert (project / "one.txt").exists() and (project / "two.txt").exists()


async def test_the_editors_mode_menu_sets_the_approval_mode(endpoint, project: Path) -> None:
    """The session offers the approval modes; choosing one changes what asks from then on, an
    unknown one is refused and changes nothing."""
    endpoint.script(
        Reply('<action>run_terminal_command("ls")</action>'),
        Reply('<action>run_terminal_command("touch made.txt")</action>'),
        answer_reply(),
    )
    client = RecordingClient(["allow"])
    async with acp_agent(client) as (conn, _):
        session = await conn.new_session(cwd=str(project))
        assert session.modes.current_mode_id == "ask"
        assert [m.id for m in session.modes.available_modes] == ["ask", "auto-safe", "plan", "yolo"]
        with pytest.raises(RequestError):
            await conn.set_session_mode(session_id=session.session_id, mode_id="trusted")
        await conn.set_session_mode(session_id=session.session_id, mode_id="auto-safe")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        await settle(client)
    assert [call.title for call, _ in client.permissions] == ["Run `touch made.txt`"], "ls ran without asking, touch asked"
    assert [u.current_mode_id for u in client.of(CurrentModeUpdate)] == ["auto-safe"]


async def test_the_editors_model_menu_switches_the_model_and_keeps_the_rest(endpoint, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The session offers its model and, once the server has listed them, the others; choosing
    one sends the next prompt to it with the conversation, the settings and the mode the session
    had (here a temperature from the environment and the mode chosen in the editor)."""
    monkeypatch.setenv("MZAGENT_TEMPERATURE", "0.35")
    endpoint.models = [{"id": "scripted", "object": "model"}, {"id": "bigger-model", "object": "model"}]
    endpoint.script(answer_reply("first answer"), answer_reply("second answer"))
    client = RecordingClient()
    async with acp_agent(client) as (conn, _):
        session = await conn.new_session(cwd=str(project))
        options = {option.id: option for option in session.config_options}
        assert options["model"].current_value == "scripted" and [o.value for o in options["model"].options] == ["scripted"]
        assert options["mode"].current_value == "ask" and options["mode"].category == "mode"
        await conn.prompt(session_id=session.session_id, prompt=[text_block("remember the word kiwi")])
        await settle(client)
        [listed] = client.of(ConfigOptionUpdate)
        offered = next(o for o in listed.config_options if o.id == "model")
        assert [o.value for o in offered.options] == ["scripted", "bigger-model"] and offered.category == "model"
        await conn.set_session_mode(session_id=session.session_id, mode_id="auto-safe")
        with pytest.raises(RequestError):
            await conn.set_config_option(config_id="model", session_id=session.session_id, value="not-listed")
        with pytest.raises(RequestError):
            await conn.set_config_option(config_id="colour", session_id=session.session_id, value="red")
        switched = await conn.set_config_option(config_id="model", session_id=session.session_id, value="bigger-model")
        now = {option.id: option.current_value for option in switched.config_options}
        assert now == {"model": "bigger-model", "mode": "auto-safe"}
        await conn.prompt(session_id=session.session_id, prompt=[text_block("which word?")])
        await settle(client)
    first, second = endpoint.requests
    assert first["model"] == "scripted" and second["model"] == "bigger-model"
    assert first["temperature"] == second["temperature"] == 0.35
    assert any("remember the word kiwi" in str(m["content"]) for m in second["messages"]), "the conversation goes on"
    assert client.text(AgentMessageChunk).endswith("second answer")


async def prompt_asking(conn: Any, client: RecordingClient, project: Path) -> tuple[Any, asyncio.Task[Any]]:
    """A new session and its prompt "go", running until the client has been asked for permission."""
    session = await conn.new_session(cwd=str(project))
    prompt = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]))
    await asyncio.wait_for(client.asked.wait(), 30)
    return session, prompt


async def test_the_model_is_not_switched_under_a_running_prompt(endpoint, project: Path) -> None:
    endpoint.models = [{"id": "scripted", "object": "model"}, {"id": "bigger-model", "object": "model"}]
    endpoint.script(Reply('<action>run_terminal_command("touch never.txt")</action>'))
    client = RecordingClient(["wait"])
    async with acp_agent(client) as (conn, _):
        session, prompt = await prompt_asking(conn, client, project)
        await settle(client)
        with pytest.raises(RequestError, match="Invalid params"):
            await conn.set_config_option(config_id="model", session_id=session.session_id, value="bigger-model")
        await conn.cancel(session_id=session.session_id)
        await asyncio.wait_for(prompt, 30)
        after = await conn.set_config_option(config_id="model", session_id=session.session_id, value="bigger-model")
    assert {o.id: o.current_value for o in after.config_options}["model"] == "bigger-model", "once the prompt ended it switches"


async def test_prompt_files_are_the_editors_slash_commands_and_run_as_in_the_app(endpoint, project: Path, isolated_home: Path) -> None:
    """`available_commands_update` lists your prompt files and the project's (marked); a prompt
    `/name args` sends the file's text with the arguments filled, as `mzagent run` does."""
    user = isolated_home / "config" / "mzagent" / "commands"
    user.mkdir(parents=True)
    (user / "review.md").write_text("---\ndescription: Review a file\n---\nReview $1 for bugs.\n")
    (project / ".mzagent" / "commands").mkdir(parents=True)
    (project / ".mzagent" / "commands" / "explain.md").write_text("Explain $ARGUMENTS simply.\n")
    endpoint.script(answer_reply("looks fine"))
    client = RecordingClient()
    async with acp_agent(client) as (conn, _):
        session = await conn.new_session(cwd=str(project))
        await settle(client)
        [offered] = client.of(AvailableCommandsUpdate)
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("/review src/app.py")])
        with pytest.raises(RequestError) as refused:
            await conn.prompt(session_id=session.session_id, prompt=[text_block("/nosuch x")])
    listed = {c.name: c for c in offered.available_commands}
    assert sorted(listed) == ["explain", "review"]
    assert listed["review"].description == "Review a file" and listed["review"].input.root.hint == "arguments"
    assert "(a prompt file of this project)" in listed["explain"].description
    assert response.stop_reason == "end_turn"
    assert "Review src/app.py for bugs." in endpoint.requests[0]["messages"][-1]["content"]
    assert "/nosuch is not a prompt file" in str(refused.value.data)
    assert len(endpoint.requests) == 1, "an unknown command reaches no model"


async def test_cancel_mid_command_kills_its_process_group(endpoint, project: Path) -> None:
    marker = f"acp-cancel-{uuid.uuid4().hex}"
    endpoint.script(Reply(f'<action>run_terminal_command("sleep 300 && echo {marker}; sleep 301 & wait")</action>'))
    client = RecordingClient(["allow"])
    async with acp_agent(client) as (conn, _):
        session = await conn.new_session(cwd=str(project))
        prompt = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]))
        mine: list[psutil.Process] = []
        for _ in range(100):
            mine = [p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]
            if mine:
                break
            await asyncio.sleep(0.1)
        assert mine, "the command did not start"
        await conn.cancel(session_id=session.session_id)
        response = await asyncio.wait_for(prompt, 30)
    assert response.stop_reason == "cancelled"
    _, alive = psutil.wait_procs(mine, timeout=10)
    assert alive == []


async def test_cancel_while_asking_ends_the_prompt(endpoint, project: Path) -> None:
    endpoint.script(Reply('<action>run_terminal_command("touch never.txt")</action>'))
    client = RecordingClient(["wait"])
    async with acp_agent(client) as (conn, _):
        session, prompt = await prompt_asking(conn, client, project)
        await conn.cancel(session_id=session.session_id)
        response = await asyncio.wait_for(prompt, 30)
    assert response.stop_reason == "cancelled"
    assert not (project / "never.txt").exists()


async def test_load_replays_a_logged_session_and_continues_it(endpoint, project: Path) -> None:
    endpoint.script(
        Reply('<thought>look</thought><action>read_file("notes.txt")</action>'),
        answer_reply("the notes say hello"),
        answer_reply("still hello"),
    )
    (project / "notes.txt").write_text("hello\n")
    first = RecordingClient()
    async with acp_agent(first) as (conn, _):
        session = await conn.new_session(cwd=str(project))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("what do the notes say?")])
        await settle(first)
    second = RecordingClient()
    async with acp_agent(second) as (conn, _):
        loaded = await conn.load_session(cwd=str(project), session_id=session.session_id)
        assert loaded.modes.current_mode_id == "ask"
        await settle(second)
        assert second.text(UserMessageChunk) == "what do the notes say?"
        assert second.text(AgentMessageChunk) == "the notes say hello"
        assert second.of(ToolCallStart)[0].title == "Read notes.txt"
        replayed = len(second.updates)
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("and now?")])
        await settle(second)
        assert response.stop_reason == "end_turn"
    assert "".join(u.content.text for u in second.updates[replayed:] if isinstance(u, AgentMessageChunk)) == "still hello"
    history = endpoint.requests[-1]["messages"]
    assert any("what do the notes say?" in m["content"] for m in history)


async def test_load_of_an_unknown_session_is_a_clear_error(endpoint, project: Path) -> None:
    async with acp_agent(RecordingClient()) as (conn, _):
        with pytest.raises(RequestError):
            await conn.load_session(cwd=str(project), session_id="no-such-session")


async def test_an_mcp_server_from_new_session_gives_tools(endpoint, project: Path) -> None:
    endpoint.script(
        Reply('<thought>add</thought><action>mcp__calc__add(a=20, b=22)</action>'),
        answer_reply("42"),
    )
    client = RecordingClient(["allow"])
    server = McpServerStdio(name="calc", command=sys.executable, args=[SERVER], env=[EnvVariable(name="X", value="1")])
    async with acp_agent(client) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[server])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("add")])
        await settle(client)
    assert "mcp__calc__add(a, b)" in endpoint.requests[0]["messages"][0]["content"]
    [(call, options)] = client.permissions  # approval mode ask: even a read-only tool asks
    assert call.title.startswith("Call mcp__calc__add") and options[1].name == "Always allow mcp__calc__add"
    assert client.of(ToolCallProgress)[-1].content[0].content.text == "42"


async def test_an_http_mcp_server_from_new_session_gives_tools(endpoint, project: Path, http_server: str) -> None:
    """The client's streamable HTTP server, with its headers (here the bearer token it needs)."""
    endpoint.script(Reply('<action>mcp__web__add(a=1, b=2)</action>'), answer_reply("3"))
    client = RecordingClient(["allow"])
    server = HttpMcpServer(name="web", url=http_server, headers=[HttpHeader(name="Authorization", value="Bearer tok-123")], type="http")
    async with acp_agent(client) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[server])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("add")])
        await settle(client)
    assert client.of(ToolCallProgress)[-1].content[0].content.text == "3"


async def test_stdout_carries_only_json_rpc(endpoint, project: Path) -> None:
    """Every line the agent writes on stdout parses as a JSON-RPC message (warnings go to stderr)."""
    import json
    import subprocess

    endpoint.script(answer_reply("fine"))
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": PROTOCOL_VERSION}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(project), "mcpServers": []}},
    ]
    process = subprocess.Popen([sys.executable, "-m", "mzagent_tui", "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in lines:
        process.stdin.write(json.dumps(line) + "\n")
    process.stdin.flush()
    first = json.loads(process.stdout.readline())
    session = json.loads(process.stdout.readline())["result"]["sessionId"]
    prompt = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}}
    process.stdin.write(json.dumps(prompt) + "\n")
    process.stdin.flush()
    seen = []
    while True:
        message = json.loads(process.stdout.readline())
        seen.append(message)
        if message.get("id") == 3:
            break
    process.stdin.close()
    process.wait(20)
    rest = process.stdout.read()
    assert first["result"]["agentInfo"]["name"] == "mzagent"
    assert all(m["jsonrpc"] == "2.0" for m in seen) and seen[-1]["result"]["stopReason"] == "end_turn"
    assert rest.strip() == ""


def test_the_thought_streams_as_it_arrives_and_holds_back_a_partial_tag() -> None:
    stream = ThoughtStream()
    pieces = [stream.add(part) for part in ["<thou", "ght>I wi", "ll look</th", "ought><action>read_file(", '"a")</action>']]
    assert pieces == ["", "I wi", "ll look", "", ""]
    assert stream.reset() is True and stream.reset() is False


@pytest.mark.parametrize(
    ("request_", "option", "decision"),
    [
        (CommandApproval(command="git status --short", cwd="/p"), "allow-always", ApprovalDecision(True, always_prefix="git status")),
        (ToolCallApproval(cwd="/p", tool="mcp__a__b", arguments={}), "allow-always", ApprovalDecision(True, always_prefix="mcp__a__b")),
        (WriteApproval(cwd="/p", path="a.py"), "allow-always", ApprovalDecision(True, allow_writes="*")),
        (CommandApproval(command="ls", cwd="/p"), "allow", ApprovalDecision(True)),
        (CommandApproval(command="ls", cwd="/p"), "reject", ApprovalDecision(False)),
        (CommandApproval(command="ls", cwd="/p"), None, ApprovalDecision(False, note="the prompt was cancelled", cancelled=True)),
    ],
)
def test_the_clients_choice_becomes_the_cores_decision(request_: ApprovalRequest, option: str | None, decision: ApprovalDecision) -> None:
    assert decision_for(request_, option) == decision


def test_the_acp_front_end_never_imports_textual() -> None:
    import subprocess

    code = "import sys, mzagent_tui.acp_server; print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr
