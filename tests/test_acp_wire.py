"""`mzagent acp` read line by line from its stdout, as an editor reads it.

The SDK client in test_acp.py handles each notification in a task of its own, so it can see a
response before the updates sent ahead of it. These tests keep every message in the order it
arrived and assert that order: nothing here waits for updates to settle.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION

from tests.scripted_server import Reply, ScriptedServer, answer_reply

Message = dict[str, Any]
READ_TIMEOUT = 30.0


@dataclass
class Wire:
    """A JSON-RPC client on the agent's stdin/stdout that records every message it receives, in
    order, and answers permission requests from `answers` ("hold" leaves one unanswered)."""

    process: asyncio.subprocess.Process
    answers: list[str] = field(default_factory=list)
    received: list[Message] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def send(self, method: str, params: dict[str, Any], notification: bool = False) -> int:
        message: Message = {"jsonrpc": "2.0", "method": method, "params": params}
        number = 0 if notification else next(self._ids)
        if not notification:
            message["id"] = number
        await self._write(message)
        return number

    async def request(self, method: str, params: dict[str, Any]) -> Message:
        """Send a request and read until its response (returned: the whole message)."""
        number = await self.send(method, params)
        return await self.read_until(lambda m: m.get("id") == number and "method" not in m)

    async def read_until(self, done: Callable[[Message], bool]) -> Message:
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), READ_TIMEOUT)
            assert line, "the agent closed its stdout"
            message = json.loads(line)
            self.received.append(message)
            if message.get("method") == "session/request_permission":
                answer = self.answers.pop(0) if self.answers else "reject"
                if answer != "hold":
                    await self._write({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": {"outcome": "selected", "optionId": answer}}})
            if done(message):
                return message

    async def _write(self, message: Message) -> None:
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        await self.process.stdin.drain()


@contextlib.asynccontextmanager
async def wire_agent(answers: list[str] | None = None) -> AsyncIterator[Wire]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mzagent_tui", "acp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, env=dict(os.environ),
    )
    wire = Wire(process, list(answers or []))
    try:
        response = await wire.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": {}})
        assert "result" in response, response
        yield wire
    finally:
        if process.returncode is None:
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 20)
            except TimeoutError:
                process.kill()
                await process.wait()


async def new_session(wire: Wire, project: Path) -> str:
    response = await wire.request("session/new", {"cwd": str(project), "mcpServers": []})
    return response["result"]["sessionId"]


async def prompt(wire: Wire, session: str, *blocks: dict[str, Any]) -> Message:
    return await wire.request("session/prompt", {"sessionId": session, "prompt": list(blocks)})


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def updates(messages: list[Message]) -> list[dict[str, Any]]:
    return [m["params"]["update"] for m in messages if m.get("method") == "session/update"]


def call_trace(messages: list[Message]) -> list[tuple[str, str | None]]:
    """What each message says about tool calls, in order: (what, status)."""
    trace = []
    for message in messages:
        if message.get("method") == "session/request_permission":
            trace.append(("permission", message["params"]["toolCall"].get("status")))
        elif message.get("method") == "session/update" and message["params"]["update"]["sessionUpdate"] in ("tool_call", "tool_call_update"):
            update = message["params"]["update"]
            trace.append((update["sessionUpdate"], update.get("status")))
    return trace


@dataclass
class CallState:
    """A tool call as a conforming client holds it: each field an update carries replaces the old one."""

    status: str | None = None
    content: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)


def fold_calls(messages: list[Message]) -> dict[str, CallState]:
    calls: dict[str, CallState] = {}
    for message in messages:
        if message.get("method") == "session/request_permission":
            update = message["params"]["toolCall"]
        elif message.get("method") == "session/update" and message["params"]["update"]["sessionUpdate"] in ("tool_call", "tool_call_update"):
            update = message["params"]["update"]
        else:
            continue
        call = calls.setdefault(update["toolCallId"], CallState())
        if update.get("status") is not None:
            call.status = update["status"]
            call.statuses.append(update["status"])
        if update.get("content") is not None:
            call.content = update["content"]
    return calls


def diffs(call: CallState) -> list[dict[str, Any]]:
    return [c for c in call.content if c["type"] == "diff"]


def texts(call: CallState) -> list[str]:
    return [c["content"]["text"] for c in call.content if c["type"] == "content"]


async def test_load_replays_the_conversation_before_it_answers(endpoint: ScriptedServer, project: Path) -> None:
    """The spec: the agent streams the whole conversation as updates, then responds to
    `session/load`; a prompt sent right after the response sees only its own turn."""
    (project / "notes.txt").write_text("hello\n")
    endpoint.script(
        Reply('<thought>look</thought><action>read_file("notes.txt")</action>'),
        answer_reply("the notes say hello"),
        answer_reply("still hello"),
    )
    async with wire_agent() as wire:
        session = await new_session(wire, project)
        assert (await prompt(wire, session, text("what do the notes say?")))["result"]["stopReason"] == "end_turn"
    async with wire_agent() as wire:
        response = await wire.request("session/load", {"cwd": str(project), "sessionId": session, "mcpServers": []})
        assert response["result"]["modes"]["currentModeId"] == "ask"
        replayed = updates(wire.received)
        kinds = [u["sessionUpdate"] for u in replayed]
        assert kinds[0] == "user_message_chunk" and replayed[0]["content"]["text"] == "what do the notes say?"
        assert "tool_call" in kinds and replayed[-1] == {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "the notes say hello"}}
        loaded = len(wire.received)
        assert (await prompt(wire, session, text("and now?")))["result"]["stopReason"] == "end_turn"
        turn = updates(wire.received[loaded:])
    kinds = [u["sessionUpdate"] for u in turn]
    assert "user_message_chunk" not in kinds and "tool_call" not in kinds, "a replayed update came after the load response"
    assert [u["content"]["text"] for u in turn if u["sessionUpdate"] == "agent_message_chunk"] == ["still hello"]


async def test_a_writes_diff_stays_in_the_call_when_it_completes(endpoint: ScriptedServer, project: Path) -> None:
    (project / "a.py").write_text("x = 1\n")
    endpoint.script(
        Reply('<action>read_file("a.py")</action>'),
        Reply('<thought>write</thought><action>write_to_file("a.py", "x = 2\\n")</action>'),
        answer_reply(),
    )
    async with wire_agent() as wire:
        session = await new_session(wire, project)
        await prompt(wire, session, text("set x to 2"))
    write = fold_calls(wire.received)["call-2"]
    assert write.status == "completed"
    assert diffs(write) == [{"type": "diff", "path": str(project / "a.py"), "oldText": "x = 1\n", "newText": "x = 2\n"}]
    assert texts(write) == ["File written: a.py (overwrote, 1 line, 6 bytes)."]


async def test_a_file_a_command_created_keeps_its_diff_when_the_command_completes(endpoint: ScriptedServer, project: Path) -> None:
    endpoint.script(Reply('<action>run_terminal_command("printf one > one.txt; printf two > two.txt")</action>'), answer_reply())
    async with wire_agent(["allow"]) as wire:
        session = await new_session(wire, project)
        await prompt(wire, session, text("make two files"))
    [command] = fold_calls(wire.received).values()
    assert command.status == "completed"
    assert sorted((d["path"], d["newText"], d.get("oldText")) for d in diffs(command)) == [
        (str(project / "one.txt"), "one", None), (str(project / "two.txt"), "two", None),
    ], "each file the command created keeps its diff"
    [result] = texts(command)
    assert result.startswith("Command succeeded (exit code 0).") and "one.txt (created), two.txt (created)" in result


async def test_an_asked_call_is_in_progress_while_it_asks(endpoint: ScriptedServer, project: Path) -> None:
    """The core starts the call (`in_progress`), the gate asks about it: the question leaves its
    status alone, so no status moves back to `pending`."""
    endpoint.script(Reply('<action>run_terminal_command("echo hi > out.txt")</action>'), answer_reply())
    async with wire_agent(["allow"]) as wire:
        session = await new_session(wire, project)
        await prompt(wire, session, text("go"))
    assert call_trace(wire.received) == [
        ("tool_call", "pending"), ("tool_call_update", "in_progress"), ("permission", None), ("tool_call_update", None), ("tool_call_update", "completed"),
    ]
    assert (project / "out.txt").read_text() == "hi\n"


async def test_a_rejected_call_ends_failed_and_never_runs(endpoint: ScriptedServer, project: Path) -> None:
    endpoint.script(Reply('<action>run_terminal_command("touch made.txt")</action>'), answer_reply())
    async with wire_agent(["reject"]) as wire:
        session = await new_session(wire, project)
        await prompt(wire, session, text("go"))
    assert call_trace(wire.received) == [("tool_call", "pending"), ("tool_call_update", "in_progress"), ("permission", None), ("tool_call_update", "failed")]
    assert not (project / "made.txt").exists()


async def test_a_call_that_does_not_ask_goes_in_progress_as_it_runs(endpoint: ScriptedServer, project: Path) -> None:
    """Writes are not gated by default: no permission, and `in_progress` before the diff."""
    endpoint.script(Reply('<action>write_to_file("a.py", "print(1)\\n")</action>'), answer_reply())
    async with wire_agent() as wire:
        session = await new_session(wire, project)
        await prompt(wire, session, text("go"))
    assert call_trace(wire.received) == [("tool_call", "pending"), ("tool_call_update", "in_progress"), ("tool_call_update", None), ("tool_call_update", "completed")]


async def test_the_status_never_goes_back(endpoint: ScriptedServer, project: Path) -> None:
    """Over a turn mixing an asked command, a write and a read, each call's statuses only move forward."""
    order = {"pending": 0, "in_progress": 1, "completed": 2, "failed": 2}
    (project / "n.txt").write_text("n\n")
    endpoint.script(
        Reply('<action>read_file("n.txt")</action>'),
        Reply('<action>run_terminal_command("touch t.txt")</action>'),
        Reply('<action>write_to_file("w.txt", "w\\n")</action>'),
        Reply('<action>run_terminal_command("touch u.txt")</action>'),
        answer_reply(),
    )
    async with wire_agent(["allow", "reject"]) as wire:
        session = await new_session(wire, project)
        await prompt(wire, session, text("go"))
    calls = fold_calls(wire.received)
    assert [c.status for c in calls.values()] == ["completed", "completed", "completed", "failed"]
    for call in calls.values():
        ranks = [order[s] for s in call.statuses]
        assert ranks == sorted(ranks), call.statuses


@pytest.mark.parametrize("action", ['run_terminal_command("sleep 120")', "mcp__slow__hang(seconds=120)"], ids=["command", "mcp-tool"])
async def test_a_cancelled_call_ends_failed_before_the_prompt_answers(endpoint: ScriptedServer, project: Path, action: str) -> None:
    """A command answers the cancel with its result; a tool server's call is cut off without
    one, and the call is closed all the same."""
    endpoint.script(Reply(f"<action>{action}</action>"))
    server = {"name": "slow", "command": sys.executable, "args": [str(Path(__file__).with_name("mcp_server.py"))], "env": []}
    async with wire_agent(["allow"]) as wire:
        response = await wire.request("session/new", {"cwd": str(project), "mcpServers": [server]})
        session = response["result"]["sessionId"]
        number = await wire.send("session/prompt", {"sessionId": session, "prompt": [text("go")]})
        await wire.read_until(lambda m: m.get("method") == "session/request_permission")  # answered "allow" as it is read
        await wire.send("session/cancel", {"sessionId": session}, notification=True)
        response = await wire.read_until(lambda m: m.get("id") == number and "method" not in m)
    assert response["result"]["stopReason"] == "cancelled"
    assert call_trace(wire.received) == [("tool_call", "pending"), ("tool_call_update", "in_progress"), ("permission", None), ("tool_call_update", "failed")]


async def test_an_image_only_prompt_is_refused_as_not_advertised(endpoint: ScriptedServer, project: Path) -> None:
    async with wire_agent() as wire:
        initialize = wire.received[0]["result"]
        assert initialize["agentCapabilities"]["promptCapabilities"].get("image", False) is False
        session = await new_session(wire, project)
        response = await prompt(wire, session, {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
        audio = await prompt(wire, session, text("hear this"), {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})
    assert response["error"]["code"] == -32602 and "image" in json.dumps(response["error"])
    assert audio["error"]["code"] == -32602 and "audio" in json.dumps(audio["error"])
    assert endpoint.requests == [], "nothing reached the model"


async def test_a_file_resource_link_reaches_the_model_as_a_path(endpoint: ScriptedServer, project: Path) -> None:
    (project / "my notes.txt").write_text("hi\n")
    endpoint.script(answer_reply())
    link = {"type": "resource_link", "uri": (project / "my notes.txt").as_uri(), "name": "my notes.txt"}
    elsewhere = {"type": "resource_link", "uri": "file:///etc/hostname", "name": "hostname"}
    web = {"type": "resource_link", "uri": "https://example.com/spec", "name": "spec"}
    embedded = {"type": "resource", "resource": {"uri": (project / "my notes.txt").as_uri(), "text": "hi\n"}}
    async with wire_agent() as wire:
        session = await new_session(wire, project)
        await prompt(wire, session, text("look at these"), link, elsewhere, web, embedded)
    sent = endpoint.requests[0]["messages"][-1]["content"]
    assert "[file my notes.txt]" in sent and "[file /etc/hostname]" in sent and "[file https://example.com/spec]" in sent
    assert "File my notes.txt:\n```\nhi\n\n```" in sent
    assert "file:" not in sent and "%20" not in sent


async def test_authenticate_refuses_a_method_never_offered(endpoint: ScriptedServer, project: Path) -> None:
    async with wire_agent() as wire:
        assert wire.received[0]["result"].get("authMethods", []) == []
        response = await wire.request("authenticate", {"methodId": "oauth"})
        still = await new_session(wire, project)
    assert response["error"]["code"] == -32602 and "oauth" in json.dumps(response["error"])
    assert still
