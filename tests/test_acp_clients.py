"""`mzagent acp` as the editors people use read it (issue #57: what Toad found).

stdout is read line by line as a client reads it (the Wire of test_acp_wire.py), and every
message is checked by two validators that are not ours:

- the Python ACP SDK's own pydantic schema models, validating strictly (no coercion);
- Toad 0.6.20's validator: its typed models (toad/acp/protocol.py) checked with typeguard's
  `check_type`, every item of every list, as toad/jsonrpc.py checks a method's parameters before
  it calls it (a message that fails is refused, and the tool call never updates in Toad).

Toad is fetched with pip (its wheel, nothing installed) the first time and cached beside the
system's temporary files; without network the Toad checks are skipped, saying so. Toad needs
Python 3.14: its models use `type` aliases (3.12+) and annotations that name classes defined
further down (evaluated lazily since 3.14). On an older interpreter those two are restated as
it reads them (the aliases as assignments, all annotations postponed) and nothing else of the
file changes; `test_toad_models_are_read_unchanged` holds that.
"""

from __future__ import annotations

import fcntl
import json
import re
import subprocess
import sys
import tempfile
import types
import zipfile
from pathlib import Path
from typing import Any

import pytest
from acp.schema import RequestPermissionRequest, SessionNotification

from mzagent_tui import __version__
from mzagent_tui.agent.loop import CALL_INTERRUPTED
from tests.scripted_server import Reply, ScriptedServer, answer_reply
from tests.test_acp_wire import Message, Wire, fold_calls, new_session, prompt, text, updates, wire_agent

TOAD = "batrachian-toad==0.6.20"
TOAD_CACHE = Path(tempfile.gettempdir()) / "mzagent-tests-toad-0.6.20"
TOAD_PROTOCOL = "toad/acp/protocol.py"
DOWNLOAD_TIMEOUT = 300
TYPE_ALIAS = re.compile(r"^type (\w+) = ", re.MULTILINE)


def _toad_source() -> str:
    """toad/acp/protocol.py from Toad's wheel, downloaded once (one download at a time)."""
    TOAD_CACHE.mkdir(exist_ok=True)
    with open(TOAD_CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wheel = next(TOAD_CACHE.glob("batrachian_toad-0.6.20-*.whl"), None)
        if wheel is None:
            done = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.14", "-d", str(TOAD_CACHE), TOAD],
                capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT,
            )
            wheel = next(TOAD_CACHE.glob("batrachian_toad-0.6.20-*.whl"), None)
            if done.returncode != 0 or wheel is None:
                pytest.skip(f"{TOAD} could not be downloaded, so Toad's validator is not run: {done.stderr.strip()[-300:]}")
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(TOAD_PROTOCOL).decode("utf-8")


def _as_this_interpreter_reads_it(source: str) -> str:
    if sys.version_info >= (3, 14):
        return source
    return "from __future__ import annotations\n" + TYPE_ALIAS.sub(r"\1 = ", source)


@pytest.fixture(scope="session")
def toad() -> types.ModuleType:
    """Toad's protocol models, as a module of their own (nothing else of Toad is imported)."""
    pytest.importorskip("typeguard", reason="typeguard (the test extra) runs Toad's validator")
    module = types.ModuleType("toad_acp_protocol")
    sys.modules[module.__name__] = module  # its postponed annotations resolve in its own namespace
    exec(compile(_as_this_interpreter_reads_it(_toad_source()), TOAD_PROTOCOL, "exec"), module.__dict__)  # noqa: S102 - Toad's model definitions, read to validate with them
    return module


def toad_refusal(value: Any, model: Any) -> str | None:
    """Why Toad would refuse the value, or None when it accepts it."""
    from typeguard import CollectionCheckStrategy, TypeCheckError, check_type

    try:
        check_type(value, model, collection_check_strategy=CollectionCheckStrategy.ALL_ITEMS)
    except TypeCheckError as error:
        return str(error)
    return None


def toad_refusals(messages: list[Message], toad: types.ModuleType) -> list[str]:
    """Every message Toad would refuse: a `session/update`, or a permission request's parts."""
    refused = []
    for message in messages:
        params = message.get("params", {})
        if message.get("method") == "session/update":
            checks = [(params["update"], toad.SessionUpdate)]
        elif message.get("method") == "session/request_permission":
            checks = [(params["toolCall"], toad.ToolCallUpdatePermissionRequest), (params["options"], list[toad.PermissionOption])]
        else:
            continue
        refused += [f"{json.dumps(value)[:300]}: {why}" for value, model in checks if (why := toad_refusal(value, model)) is not None]
    return refused


def sdk_refusals(messages: list[Message]) -> list[str]:
    """Every message the Python SDK's schema refuses, validating strictly."""
    refused = []
    for message in messages:
        model = {"session/update": SessionNotification, "session/request_permission": RequestPermissionRequest}.get(message.get("method", ""))
        if model is None:
            continue
        try:
            model.model_validate(message["params"], strict=True)
        except ValueError as error:
            refused.append(f"{json.dumps(message['params'])[:300]}: {error}")
    return refused


def test_toad_models_are_read_unchanged(toad: types.ModuleType) -> None:
    """Only the `type` aliases differ from Toad's file (and annotations are postponed): no line
    of a model is restated, so the validator is Toad's."""
    source = _toad_source()
    restated = _as_this_interpreter_reads_it(source).splitlines()
    if sys.version_info < (3, 14):
        assert restated[0] == "from __future__ import annotations"
        restated = restated[1:]
    changed = [(old, new) for old, new in zip(source.splitlines(), restated, strict=True) if old != new]
    assert all(old.startswith("type ") and old[len("type "):] == new for old, new in changed)
    assert len(changed) == len(TYPE_ALIAS.findall(source))


def test_both_validators_refuse_what_toad_refused(toad: types.ModuleType) -> None:
    """Positive controls: the update Toad refused (rawOutput as a string) and a bad status are
    refused by Toad's validator; a number sent as a string by the SDK's strict one."""
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "completed"}
    assert "rawOutput" in (toad_refusal({**done, "rawOutput": "hi\n"}, toad.SessionUpdate) or "")
    assert toad_refusal({**done, "rawOutput": {"output": "hi\n", "exit_code": 0}}, toad.SessionUpdate) is None
    assert toad_refusal({**done, "status": "finished"}, toad.SessionUpdate) is not None
    usage = {"sessionId": "s", "update": {"sessionUpdate": "usage_update", "used": "5", "size": 10}}
    assert sdk_refusals([{"method": "session/update", "params": usage}])
    assert not sdk_refusals([{"method": "session/update", "params": {**usage, "update": {**usage["update"], "used": 5}}}])


# A session with reads, writes, allowed and rejected commands, binary files, a task list and a
# tool server's call: every message of it goes through both validators.
PLAN = [{"step": "Read the notes", "status": "done"}, {"step": "Build", "status": "in_progress"}]
MAKE_BINARIES = "python3 -c \"open('blob.bin','wb').write(bytes(range(256)))\" && printf 'x\\377y' > old.bin && rm gone.bin && python3 -m py_compile a.py"
FULL_SESSION = [
    Reply('<thought>First the notes.\nThen the code.</thought><action>read_file("notes.txt")</action>'),
    Reply('<action>write_to_file("a.py", "x = 1\\n")</action>'),
    Reply(f"<action>run_terminal_command({json.dumps(MAKE_BINARIES)})</action>"),
    Reply('<action>run_terminal_command("touch rejected.txt")</action>'),
    Reply(f"<action>update_plan({json.dumps(PLAN)})</action>"),
    Reply("<action>mcp__tools__add(a=2, b=3)</action>"),
    answer_reply("all done"),
]
ANSWERS = ["allow", "reject", "allow"]
"""The questions in order: the binaries' command, `touch rejected.txt`, the tool server's call."""


def tool_server() -> dict[str, Any]:
    return {"name": "tools", "command": sys.executable, "args": [str(Path(__file__).with_name("mcp_server.py"))], "env": []}


async def full_session(project: Path) -> tuple[Wire, Message, str]:
    """The session's messages, the prompt's answer and the session's id."""
    (project / "notes.txt").write_text("hello\n")
    (project / "old.bin").write_bytes(b"\x00\x01\x02" * 100)
    (project / "gone.bin").write_bytes(b"\x00" * 7)
    async with wire_agent(list(ANSWERS)) as wire:
        response = await wire.request("session/new", {"cwd": str(project), "mcpServers": [tool_server()]})
        session = response["result"]["sessionId"]
        answer = await prompt(wire, session, text("build it"))
    return wire, answer, session


async def test_every_update_of_a_full_session_passes_toad_and_the_sdk(endpoint: ScriptedServer, project: Path, toad: types.ModuleType) -> None:
    endpoint.script(*FULL_SESSION)
    wire, answer, session = await full_session(project)
    assert answer["result"]["stopReason"] == "end_turn"
    assert (project / "a.py").exists() and (project / "blob.bin").exists() and not (project / "rejected.txt").exists()
    kinds = {u["sessionUpdate"] for u in updates(wire.received)}
    assert {"agent_thought_chunk", "tool_call", "tool_call_update", "plan", "agent_message_chunk"} <= kinds, kinds
    assert len([m for m in wire.received if m.get("method") == "session/request_permission"]) == len(ANSWERS)
    assert toad_refusals(wire.received, toad) == []
    assert sdk_refusals(wire.received) == []
    async with wire_agent() as loading:
        loaded = await loading.request("session/load", {"cwd": str(project), "sessionId": session, "mcpServers": []})
    assert "result" in loaded, loaded
    replayed = [u["sessionUpdate"] for u in updates(loading.received)]
    assert replayed[0] == "user_message_chunk" and "plan" in replayed and "tool_call" in replayed
    assert toad_refusals(loading.received, toad) == [], "the replay of session/load too"
    assert sdk_refusals(loading.received) == []


async def test_every_call_goes_pending_in_progress_then_completed_or_failed(endpoint: ScriptedServer, project: Path) -> None:
    """Reads and tool servers' calls too (they had no `in_progress`), and the rejected command."""
    endpoint.script(*FULL_SESSION)
    wire, _, _ = await full_session(project)
    calls = fold_calls(wire.received)
    assert [c.status for c in calls.values()] == ["completed", "completed", "completed", "failed", "completed", "completed"]
    for call_id, call in calls.items():
        assert call.statuses[0] == "pending" and call.statuses[1] == "in_progress" and len(call.statuses) == 3, (call_id, call.statuses)
    finals = {u["toolCallId"]: u for u in updates(wire.received) if u.get("status") in ("completed", "failed")}
    assert all(set(u["rawOutput"]) == {"output", "exit_code"} for u in finals.values()), "rawOutput is an object"
    allowed, rejected = finals["call-3"]["rawOutput"], finals["call-4"]["rawOutput"]
    assert allowed["exit_code"] == 0 and allowed["output"].startswith("Command succeeded")
    assert rejected["exit_code"] is None and rejected["output"].startswith("The user rejected this command")


async def test_a_live_prompt_is_not_echoed(endpoint: ScriptedServer, project: Path) -> None:
    endpoint.script(*FULL_SESSION)
    wire, _, _ = await full_session(project)
    assert [u for u in updates(wire.received) if u["sessionUpdate"] == "user_message_chunk"] == []


async def test_binary_changes_are_said_never_diffed(endpoint: ScriptedServer, project: Path) -> None:
    endpoint.script(*FULL_SESSION)
    wire, _, _ = await full_session(project)
    contents = [c for u in updates(wire.received) if u["sessionUpdate"].startswith("tool_call") for c in u.get("content") or []]
    diffs = [c for c in contents if c["type"] == "diff"]
    assert [Path(d["path"]).name for d in diffs] == ["a.py"] * len(diffs), "only the text file has a diff"
    assert not any("\x00" in side or "\ufffd" in side for d in diffs for side in (d["newText"], d.get("oldText") or ""))
    said = {c["content"]["text"] for c in contents if c["type"] == "content"}
    assert "blob.bin: binary file created, 256 bytes" in said
    assert "old.bin: binary file changed, 3 bytes" in said
    assert "gone.bin: binary file deleted, 7 bytes" in said
    assert any(re.fullmatch(r"__pycache__/a\.cpython-\d+\.pyc: binary file created, \d+ bytes", line) for line in said), said
    assert not any("\x00" in line or "\ufffd" in line for line in said)


async def test_notes_and_questions_are_markdown_paragraphs(endpoint: ScriptedServer, project: Path) -> None:
    """A Markdown client joins single newlines into one line: the question's lines and the
    notes between thoughts are paragraphs of their own."""
    endpoint.script(*FULL_SESSION)
    wire, _, _ = await full_session(project)
    question = next(m for m in wire.received if m.get("method") == "session/request_permission")
    [asked] = [c["content"]["text"] for c in question["params"]["toolCall"]["content"] if c["type"] == "content"]
    paragraphs = [part.split(" ")[0] for part in asked.split("\n\n")]
    assert paragraphs == ["ask:", "ask:", "ask:", "ask:", "no", "reason:"], asked
    thoughts = [u["content"]["text"] for u in updates(wire.received) if u["sessionUpdate"] == "agent_thought_chunk"]
    notes = [t for t in thoughts if t.strip().startswith("[")]
    assert any(note.strip().startswith("[Rejected") for note in notes)
    assert all(note.startswith("\n\n") and note.endswith("]\n\n") for note in notes), notes


async def test_initialize_names_the_agent_and_the_modes_include_plan(endpoint: ScriptedServer, project: Path) -> None:
    async with wire_agent() as wire:
        info = wire.received[0]["result"]["agentInfo"]
        response = await wire.request("session/new", {"cwd": str(project), "mcpServers": []})
    assert info == {"name": "mzagent", "title": "mzagent", "version": __version__}
    assert [m["id"] for m in response["result"]["modes"]["availableModes"]] == ["ask", "auto-safe", "plan", "yolo"]
    assert "`plan`" in (Path(__file__).parent.parent / "docs" / "acp-and-mcp.md").read_text(), "the docs list every mode"


async def _raw(wire: Wire, line: bytes) -> Message:
    wire.process.stdin.write(line)
    await wire.process.stdin.drain()
    return await wire.read_until(lambda m: "id" in m and "method" not in m)


async def test_a_malformed_line_is_answered_and_the_agent_goes_on(endpoint: ScriptedServer, project: Path) -> None:
    endpoint.script(answer_reply("still here"))
    async with wire_agent() as wire:
        not_json = await _raw(wire, b'{"jsonrpc": "2.0", "id": 7, "method": "session/new", \n')
        not_utf8 = await _raw(wire, b'{"jsonrpc": "2.0", "method": "\xff"}\n')
        not_an_object = await _raw(wire, b"[1, 2]\n")
        no_method_or_id = await _raw(wire, b'{"jsonrpc": "2.0"}\n')
        session = await new_session(wire, project)
        answer = await prompt(wire, session, text("hello"))
    for reply in (not_json, not_utf8):
        assert reply["id"] is None and reply["error"]["code"] == -32700, reply
    for reply in (not_an_object, no_method_or_id):
        assert reply["id"] is None and reply["error"]["code"] == -32600, reply
    assert answer["result"]["stopReason"] == "end_turn"


async def _cancel_while_asking(project: Path, *, send_cancel: bool, answer_cancelled: bool) -> tuple[Message, Wire]:
    async with wire_agent(["hold"]) as wire:
        session = await new_session(wire, project)
        number = await wire.send("session/prompt", {"sessionId": session, "prompt": [text("make it")]})
        asked = await wire.read_until(lambda m: m.get("method") == "session/request_permission")
        if send_cancel:
            await wire.send("session/cancel", {"sessionId": session}, notification=True)
        if answer_cancelled:  # as the spec asks of a client that cancels
            await wire._write({"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": {"outcome": "cancelled"}}})
        cancelled = await wire.read_until(lambda m: m.get("id") == number and "method" not in m)
        follow_up = await prompt(wire, session, text("and now?"))
    assert follow_up["result"]["stopReason"] == "end_turn"
    return cancelled, wire


@pytest.mark.parametrize(("send_cancel", "answer_cancelled"), [(True, True), (True, False), (False, True)], ids=["cancel-and-answer", "cancel-only", "answer-only"])
async def test_a_cancel_during_a_question_is_not_a_rejection(endpoint: ScriptedServer, project: Path, send_cancel: bool, answer_cancelled: bool) -> None:
    """The turn ends `cancelled`, the call `failed`, and the model reads that the step was
    interrupted: never that the user rejected it."""
    endpoint.script(Reply('<action>run_terminal_command("touch made.txt")</action>'), answer_reply("ok"))
    cancelled, wire = await _cancel_while_asking(project, send_cancel=send_cancel, answer_cancelled=answer_cancelled)
    assert cancelled["result"]["stopReason"] == "cancelled"
    assert not (project / "made.txt").exists()
    [call] = fold_calls(wire.received).values()
    assert call.statuses == ["pending", "in_progress", "failed"]
    conversation = endpoint.requests[-1]["messages"][1:]  # after the system prompt
    assert CALL_INTERRUPTED in conversation[-2]["content"]
    told = json.dumps(conversation)
    assert "reject" not in told.lower() and "cancelled the request" not in told
    thoughts = [u["content"]["text"] for u in updates(wire.received) if u["sessionUpdate"] == "agent_thought_chunk"]
    assert not any(t.strip().startswith("[Rejected") for t in thoughts)


async def test_a_rejection_still_reaches_the_model_as_one(endpoint: ScriptedServer, project: Path) -> None:
    """Positive control for the test above: the same question answered "reject" is a rejection."""
    endpoint.script(Reply('<action>run_terminal_command("touch made.txt")</action>'), answer_reply("ok"))
    async with wire_agent(["reject"]) as wire:
        session = await new_session(wire, project)
        answer = await prompt(wire, session, text("make it"))
    assert answer["result"]["stopReason"] == "end_turn"
    assert "The user rejected this command" in endpoint.requests[-1]["messages"][-1]["content"]
