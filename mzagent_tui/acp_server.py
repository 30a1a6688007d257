"""`mzagent acp`: the agent as an ACP server, for editors (Zed, JetBrains) and front-ends (Toad).

One more front-end beside the app and `mzagent run`, driving the same `Agent`. JSON-RPC goes
over stdin/stdout and nothing else is written to stdout: logs and warnings go to stderr, tool
servers' and the local model's output to their log files.

Per ACP session: one `Agent` (its session id is ours, so `session/load` finds the log), a cancel
token, and one sender task. The agent runs in a worker thread; its events become
`session/update` notifications in order through the sender's queue, and its approval questions
become `session/request_permission` requests through the same queue, so a permission request
never overtakes the tool call it is about.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, assert_never, cast
from urllib.parse import urlsplit
from urllib.request import url2pathname

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    plan_entry,
    run_agent,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.helpers import update_available_commands
from acp.interfaces import Agent, Client
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AvailableCommand,
    AvailableCommandInput,
    ConfigOptionUpdate,
    ContentToolCallContent,
    CurrentModeUpdate,
    FileEditToolCallContent,
    HttpMcpServer,
    Implementation,
    McpCapabilities,
    McpServerStdio,
    PermissionOption,
    PlanEntryStatus,
    PromptCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
    UnstructuredCommandInput,
    UsageUpdate,
)
from acp.schema import StopReason as AcpStopReason

from mzagent_tui import __version__
from mzagent_tui.acp_transport import stdio_transport
from mzagent_tui.agent.assembly import assemble
from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.config import ConfigError, check_project
from mzagent_tui.agent.event_text import describe
from mzagent_tui.agent.events import (
    Action,
    Event,
    FileChanged,
    FinalAnswer,
    Observation,
    ReplyFinished,
    Stopped,
    StopReason,
    TaskListUpdated,
    TaskStarted,
    TextDelta,
    ThinkingDelta,
    Thought,
    ToolStarted,
    Usage,
    UserCommand,
    UserCommandOutput,
    call_text,
    shown_path,
)
from mzagent_tui.agent.ground.diffs import binary_text, is_binary
from mzagent_tui.agent.ground.textfiles import read_regular_bytes
from mzagent_tui.agent.mcp.config import McpServerConfig, http_url
from mzagent_tui.agent.model.local import LocalModelError, LocalServer, faster_engine_hint, model_path, needs_local, pointed_at, progress_text
from mzagent_tui.agent.model.reply_stream import stream_parts
from mzagent_tui.agent.prompt_commands import PromptCommandError, load_prompt_commands, resolve_task
from mzagent_tui.agent.run_config import RunConfig
from mzagent_tui.agent.safety.approval import MODE_DESCRIPTIONS, ApprovalDecision, offered_rule
from mzagent_tui.agent.safety.approval import MODES as APPROVAL_MODES
from mzagent_tui.agent.safety.approval_requests import (
    ApprovalRequest,
    CommandApproval,
    GitEntryApproval,
    PartVerdict,
    PlantedFileApproval,
    SecretReadApproval,
    ToolCallApproval,
    WriteApproval,
)
from mzagent_tui.agent.sessions.history import SessionHistory, SessionNotFound, find_session

STOP_REASONS: dict[StopReason, AcpStopReason] = {
    StopReason.FINAL_ANSWER: "end_turn", StopReason.CANCELLED: "cancelled", StopReason.MAX_STEPS: "max_turn_requests",
}
TOOL_KINDS: dict[str, ToolKind] = {"read_file": "read", "write_to_file": "edit", "edit_file": "edit", "run_terminal_command": "execute", "update_plan": "think",
                                   "start_background_command": "execute", "background_output": "read", "stop_background": "execute"}
PLAN_STATUSES: dict[str, PlanEntryStatus] = {"pending": "pending", "in_progress": "in_progress", "done": "completed"}
"""A task-list step's status as ACP's plan entry says it."""
FILE_TITLES = {"read_file": "Read", "write_to_file": "Write", "edit_file": "Edit"}
ALLOW_ONCE, ALLOW_ALWAYS, REJECT = "allow", "allow-always", "reject"
PROGRESS_EVERY = 3.0
"""Seconds between the bundled model's loading messages."""
DIFF_READ = 1 << 26
"""Bytes of a file read to show its change in a permission request or an update."""


@dataclass
class ThoughtStream:
    """The part of a streamed reply inside `<thought>`, as it arrives."""

    text: str = ""
    sent: int = 0
    """Characters of the thought already sent."""

    def add(self, fragment: str) -> str:
        self.text += fragment
        thought = next((part for part in stream_parts(self.text) if part.tag == "thought"), None)
        if thought is None:
            return ""
        visible = thought.text
        new, self.sent = visible[self.sent:], max(self.sent, len(visible))
        return new

    def reset(self) -> bool:
        """A new reply begins; True when this one's thought was streamed."""
        streamed = self.sent > 0
        self.text, self.sent = "", 0
        return streamed


@dataclass
class _Permission:
    """A question from the worker thread, answered on the event loop."""

    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]
    answer: concurrent.futures.Future[str | None] = field(default_factory=concurrent.futures.Future)


class Updates:
    """Turns the core's events into ACP updates for one session, in order; `replay` rebuilds a
    logged session's updates for `session/load` (nothing is asked then)."""

    def __init__(self, root: Path, send: Callable[[Any], None], window: Callable[[], int]) -> None:
        self.root = root
        self._send = send
        self._window = window
        self._ids = itertools.count(1)
        self.current: str | None = None
        """The tool call in progress: its permission request and result belong to it."""
        self._running = False
        """The current call was said to be `in_progress`."""
        self._replaying = False
        """`session/load` is replaying the log: the user's prompts are sent back only then."""
        self._diffs: list[Any] = []
        """The current call's diffs: `content` replaces the whole collection, so every update
        that carries content carries all of them."""
        self._thought = ThoughtStream()
        self._streamed_thought = False
        self._used = 0

    def __call__(self, event: Event) -> None:
        match event:
            case TaskStarted(task=task):
                if self._replaying:  # live, the client shows the prompt it sent
                    self._send(update_user_message_text(task))
            case TextDelta(text=text):
                chunk = self._thought.add(text)
                if chunk:
                    self._send(update_agent_thought_text(chunk))
            case ThinkingDelta(text=text):
                self._send(update_agent_thought_text(text))
            case ReplyFinished():
                self._streamed_thought = self._thought.reset()
            case Thought(text=text):
                if not self._streamed_thought:
                    self._send(update_agent_thought_text(text))
                self._streamed_thought = False
            case Action(tool=tool, args=args):
                self.current, self._running, self._diffs = f"call-{next(self._ids)}", False, []
                self._send(self._start(self.current, tool, args))
            case ToolStarted() if self.current is not None:
                self.running()
            case FileChanged() if self.current is not None:
                self._diffs.append(self._change(event))
                self._send(update_tool_call(self.current, content=list(self._diffs)))
            case Observation(text=text, ok=ok, exit_code=code) if self.current is not None:
                self.running()  # a log written before ToolStarted existed has none to replay
                content = [*self._diffs, tool_content(text_block(text))]
                self._send(update_tool_call(self.current, status="completed" if ok else "failed", content=content, raw_output=raw_output(text, code)))
                self.current = None
            case UserCommand(command=command):
                self.current, self._running, self._diffs = f"call-{next(self._ids)}", True, []
                if self._replaying:
                    self._send(update_user_message_text(f"!{command}"))
                title = f"Run `{command}` (typed by the user)"
                self._send(start_tool_call(self.current, title, kind="execute", status="in_progress", raw_input={"command": command}))
            case UserCommandOutput(text=text, exit_code=code) if self.current is not None:
                content = [*self._diffs, tool_content(text_block(text))]
                self._send(update_tool_call(self.current, status="completed" if code == 0 else "failed", content=content, raw_output=raw_output(text, code)))
                self.current = None
            case TaskListUpdated(steps=steps):
                self._send(update_plan(plan_entry(step.get("step", ""), status=PLAN_STATUSES.get(step.get("status", ""), "pending")) for step in steps))
            case FinalAnswer(text=text):
                self._send(update_agent_message_text(text))
            case Usage(prompt_tokens=prompt, completion_tokens=completion):
                self._used = prompt + completion
                if self._window():
                    self._send(UsageUpdate(session_update="usage_update", used=self._used, size=self._window()))
            case Stopped(message=message) if self.current is not None:
                # cut short mid-call (a cancel): the call ends here, with what it changed
                self._send(update_tool_call(self.current, status="failed", content=[*self._diffs, tool_content(text_block(message))]))
                self.current = None
            case Stopped(reason=StopReason.CANCELLED | StopReason.ERROR):
                pass  # the prompt's stop reason, or the error sent just before, says it
            case _:
                described = describe(event, self.root)
                if described is not None and described.kind == "error":
                    self._send(update_agent_message_text(paragraph(f"{described.label}: {described.text}")))
                elif described is not None:
                    self._send(update_agent_thought_text(paragraph(f"[{described.label}: {described.text}]")))

    def replay(self, history: SessionHistory) -> None:
        self._replaying = True
        try:
            for event in history.events:
                if not isinstance(event, (TextDelta, ThinkingDelta, ReplyFinished, Usage)):
                    self(event)
        finally:
            self._replaying = False

    def running(self) -> None:
        """The current call runs: `in_progress`, said once. Every call starts `pending`, goes
        `in_progress` when the core starts it (a question it asks comes while it is in progress)
        and ends `completed` or `failed`."""
        if self.current is not None and not self._running:
            self._running = True
            self._send(update_tool_call(self.current, status="in_progress"))

    def _start(self, call_id: str, tool: str, args: list[Any]) -> Any:
        kind = TOOL_KINDS.get(tool, "other")
        locations = None
        if tool in FILE_TITLES and args and isinstance(args[0], str):
            path = (self.root / args[0]).resolve() if not Path(args[0]).is_absolute() else Path(args[0])
            locations = [ToolCallLocation(path=str(path))]
            title = f"{FILE_TITLES[tool]} {shown_path(path, self.root)}"
        elif tool == "run_terminal_command" and args:
            title = f"Run `{args[0]}`"
        elif tool == "update_plan":
            title = "Update the task list"
        else:
            title = call_text(tool, args)
        return start_tool_call(call_id, title, kind=kind, status="pending", locations=locations, raw_input={"tool": tool, "args": args})

    def _change(self, event: FileChanged) -> Any:
        """The change as a `diff`, or for a binary file as text that says so (a diff of it would
        be NULs and U+FFFD)."""
        path = Path(event.path)
        new = _read(path) if not event.deleted else b""
        old = None if event.created or event.backup is None else _read(Path(event.backup))
        if is_binary(new) or (old is not None and is_binary(old)):
            size = len(old or b"") if event.deleted else len(new)
            return tool_content(text_block(f"{shown_path(path, self.root)}: {binary_text(event.verb, size)}"))
        return tool_diff_content(str(path), _text(new), _text(old) if old is not None else None)

    def permission(self, session_id: str, request: ApprovalRequest) -> _Permission:
        """The request for one approval: what is asked, each part's verdict, the sandbox, and
        allow once / allow always / reject."""
        lines: list[str] = []
        kind: ToolKind
        match request:
            case CommandApproval():
                title, always, kind = f"Run `{request.command}`", f"Always allow `{offered_rule(request)}`", "execute"
                if request.warning:
                    lines.append(f"⚠ {request.warning}")
                lines.extend(_verdicts(request.parts))
                if request.sandbox:
                    lines.append(request.sandbox)
            case ToolCallApproval():
                title, always, kind = f"Call {request.tool} {request.shown_arguments}", f"Always allow {request.tool}", "other"
                lines.extend(_verdicts(request.parts))
            case WriteApproval():
                title, always, kind = f"Write {request.path}", "Allow all writes in this session", "edit"
            case PlantedFileApproval() | GitEntryApproval():
                title, always, kind = request.summary, "", "other"
            case SecretReadApproval():
                title, always, kind = request.summary, "", "read"
            case _:
                assert_never(request)
        if request.reason:
            lines.append(f"reason: {request.reason}")
        content: list[ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent] = [tool_content(text_block("\n\n".join(lines)))] if lines else []
        if isinstance(request, WriteApproval):
            content.insert(0, self._write_asked(request))
        # a question about the current call leaves its status alone: it is in progress
        status: ToolCallStatus | None = None if self.current is not None else "pending"
        call = ToolCallUpdate(tool_call_id=self.current or f"ask-{next(self._ids)}", title=title, kind=kind, status=status, content=content or None)
        options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
        if always:
            options.append(PermissionOption(option_id=ALLOW_ALWAYS, name=always, kind="allow_always"))
        options.append(PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"))
        return _Permission(session_id, call, options)

    def _write_asked(self, request: WriteApproval) -> Any:
        """A gated write's diff, or a note when the file it replaces is binary."""
        path = self.root / request.path
        old = _read(path)
        if old and is_binary(old):
            return tool_content(text_block(f"{request.path}: {binary_text('changed', len(request.content.encode()))}"))
        return tool_diff_content(str(path), request.content, _text(old) or None)


def _verdicts(parts: tuple[PartVerdict, ...]) -> list[str]:
    """Each part's verdict in a line, with its risks."""
    return [f"{part.verdict}: {part.text} — {part.reason}" + "".join(f" [{r}]" for r in part.risks) for part in parts]


def raw_output(text: str, exit_code: int | None) -> dict[str, Any]:
    """A call's `rawOutput`: an object, as clients built on typed models (Toad) require; the
    spec allows any JSON there."""
    return {"output": text, "exit_code": exit_code}


def paragraph(text: str) -> str:
    """A note in a stream of Markdown: a paragraph of its own, so it runs into neither the
    thought before it nor the one after."""
    return f"\n\n{text}\n\n"


WITHDRAWN = ApprovalDecision(False, note="the prompt was cancelled", cancelled=True)
"""A question the client answered `cancelled`, or one a `session/cancel` withdrew: no one's
"no", so the call stops as interrupted (see ApprovalDecision.cancelled)."""


def decision_for(request: ApprovalRequest, option: str | None) -> ApprovalDecision:
    """The client's choice as the core's decision; None (the `cancelled` outcome) is no choice."""
    if option is None:
        return WITHDRAWN
    if option == ALLOW_ONCE:
        return ApprovalDecision(True)
    if option == ALLOW_ALWAYS:
        if isinstance(request, WriteApproval):
            return ApprovalDecision(True, allow_writes=offered_rule(request))
        return ApprovalDecision(True, always_prefix=offered_rule(request) or None)
    return ApprovalDecision(False)


class _Approver:
    """The core's approver for one session: asks the client and waits (a cancel ends the wait)."""

    def __init__(self, session: AcpSession) -> None:
        self._session = session

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        question = self._session.updates.permission(self._session.id, request)
        self._session.post(question)
        while True:
            try:
                option = question.answer.result(timeout=0.1)
                break
            except concurrent.futures.TimeoutError:
                if self._session.token.cancelled:
                    return WITHDRAWN
        if option is None:
            # the spec's `cancelled` outcome answers a cancelled turn: the turn ends `cancelled`
            # even when the client's session/cancel has not arrived (or was never sent)
            self._session.token.cancel()
        return decision_for(request, option)


class AcpSession:
    def __init__(self, agent_side: AcpAgent, config: RunConfig, history: SessionHistory | None) -> None:
        root = config.project
        self._agent_side = agent_side
        self.root = root
        self.token = CancelToken()
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self.updates = Updates(root, self.post, lambda: self.agent.meter.window)
        self.config = config
        self.agent = assemble(config, _Approver(self), self.updates, history)
        self.running = False
        """A prompt is running: the model is not switched under it."""
        self.models = [config.settings.model]
        """The models offered in the editor's menu: the session's own, then those its server lists."""
        self._listing: asyncio.Future[None] | None = None
        self._asking: asyncio.Future[Any] | None = None
        """The permission request waiting for the client: a cancel withdraws it."""
        self.sender = asyncio.create_task(self._send_all())

    @property
    def id(self) -> str:
        return self.agent.session.id

    def post(self, item: Any) -> None:
        """From any thread: queue an update (or a permission question) for the client. On the
        loop's own thread it is queued at once, so a `queue.join()` that follows waits for it."""
        if _running_loop() is self._loop:
            self.queue.put_nowait(item)
        else:
            self._loop.call_soon_threadsafe(self.queue.put_nowait, item)

    async def _send_all(self) -> None:
        client = self._agent_side.client
        while True:
            item = await self.queue.get()
            try:
                if isinstance(item, _Permission):
                    self._asking = asyncio.ensure_future(client.request_permission(session_id=item.session_id, tool_call=item.tool_call, options=item.options))
                    try:
                        outcome = (await self._asking).outcome
                    except asyncio.CancelledError:
                        current = asyncio.current_task()
                        if current is not None and current.cancelling():
                            raise  # the session is closing, not just this question withdrawn
                        outcome = None
                    item.answer.set_result(outcome.option_id if isinstance(outcome, AllowedOutcome) else None)
                else:
                    await client.session_update(session_id=self.id, update=item)
            except Exception as exc:  # noqa: BLE001 - a client that fails one message must not stop the session
                print(f"mzagent acp: sending to the client failed: {exc}", file=sys.stderr)
                if isinstance(item, _Permission) and not item.answer.done():
                    item.answer.set_result(None)
            finally:
                self.queue.task_done()

    def cancel(self) -> None:
        """Stop the run: the stream or the command's group, and a question still waiting."""
        self.token.cancel()
        if self._asking is not None:
            self._asking.cancel()

    async def prompt(self, text: str) -> AcpStopReason:
        self.token = CancelToken()
        self.running = True
        try:
            result = await asyncio.to_thread(self.agent.run, text, self.token)
        finally:
            self.running = False
        await self.queue.join()
        return STOP_REASONS.get(result.reason, "end_turn")

    def start_listing(self) -> None:
        self._listing = asyncio.ensure_future(self.list_models())

    async def list_models(self) -> None:
        """Offer the models the session's server lists (one short request, after session/new has
        answered), as an update of the session's options."""
        agent = self.agent
        listed = await asyncio.to_thread(lambda: agent.llm.model_names())  # the client is made there too: its first import of openai took seconds
        others = [name for name in listed if name != self.config.settings.model][: MODEL_CHOICES - 1]
        if others:
            self.models = [self.config.settings.model, *others]
            self.post(ConfigOptionUpdate(session_update="config_option_update", config_options=_options(self)))

    async def switch_model(self, model: str) -> None:
        """The same session with another model of the same server: every other setting, flag and
        rule is kept (`RunConfig.with_model`), the conversation goes on from its log, and the
        agent is assembled anew for the model (its profile may offer other tools), so the
        session's background commands and tool servers are stopped and started again."""
        config = self.config.with_model(self.config.settings.provider, model)
        await asyncio.to_thread(self.agent.close)
        self.agent.session.close()
        history = find_session(self.root, self.id)
        self.agent = await asyncio.to_thread(assemble, config, _Approver(self), self.updates, history)
        self.config = config

    async def close(self) -> None:
        self.cancel()
        self.sender.cancel()
        if self._listing is not None:
            self._listing.cancel()
        await asyncio.to_thread(self.agent.close)
        self.agent.session.close()


COMMANDS_DELAY = 0.05
"""The editor learns a session's id from the response to session/new; an update for it sent
before that response would be dropped, so the command list follows a moment later."""


def _commands(root: Path) -> Any:
    """The prompt files (yours, then the project's, marked) as the editor's slash commands. The
    app's own commands act on its screen, so the editor has its own for those."""
    commands = []
    for command in load_prompt_commands(root).values():
        described = command.description or f"the prompt file {command.path.name}"
        if command.source == "project":
            described += " (a prompt file of this project)"
        commands.append(AvailableCommand(name=command.name, description=described, input=AvailableCommandInput(root=UnstructuredCommandInput(hint="arguments"))))
    return update_available_commands(commands)


MODEL_CHOICES = 100
"""Models offered in the editor's menu at most (a router lists hundreds)."""


def _options(session: AcpSession) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    """The session's options as an editor shows them: the approval mode and the model."""
    modes = [SessionConfigSelectOption(value=mode, name=mode.capitalize(), description=MODE_DESCRIPTIONS[mode]) for mode in APPROVAL_MODES]
    models = [SessionConfigSelectOption(value=name, name=name) for name in session.models]
    return [
        SessionConfigOptionSelect(id="mode", name="Approval mode", category="mode", type="select", current_value=session.agent.policy.mode, options=modes),
        SessionConfigOptionSelect(
            id="model", name="Model", category="model", type="select", current_value=session.config.settings.model, options=models,
            description=f"a model of {session.config.settings.base_url}",
        ),
    ]


def _modes(current: str) -> SessionModeState:
    """The approval modes, offered as the session's modes (the editor shows them as a menu)."""
    return SessionModeState(
        current_mode_id=current,
        available_modes=[SessionMode(id=mode, name=mode.capitalize(), description=MODE_DESCRIPTIONS[mode]) for mode in APPROVAL_MODES],
    )


class AcpAgent:
    """The ACP agent interface (the SDK calls these methods)."""

    def __init__(self, flags: dict[str, Any] | None = None, approval: str | None = None, writes: str | None = None) -> None:
        self._flags = flags or {}
        self._approval = approval
        self._writes = writes
        self.client: Client
        self.sessions: dict[str, AcpSession] = {}
        self._local: LocalServer | None = None
        self._local_loaded = False
        self._local_lock = asyncio.Lock()

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True, prompt_capabilities=PromptCapabilities(embedded_context=True), mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            agent_info=Implementation(name="mzagent", title="mzagent", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        """No sign-in is needed (the model's key comes from the configuration), so no method is
        offered in `initialize`, and any method asked for is one that was never offered."""
        raise RequestError.invalid_params({"message": f"no authentication method {method_id!r}: this agent offers none and needs no sign-in"})

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        session = await self._open(cwd, mcp_servers or [], None)
        self._offer_commands(session)
        return NewSessionResponse(session_id=session.id, modes=_modes(session.agent.policy.mode), config_options=_options(session))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> LoadSessionResponse:
        root = _project(cwd)
        try:
            history = find_session(root, session_id)
        except SessionNotFound as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        if history.project and Path(history.project) != root:
            raise RequestError.invalid_params({"message": f"session {history.id} belongs to {history.project}, not {root}"})
        session = await self._open(cwd, mcp_servers or [], history)
        # The spec: the whole conversation goes out as updates, then the response. A worker
        # thread's posts are all on the loop before its result, so the join sees every one.
        await asyncio.to_thread(session.updates.replay, history)
        await session.queue.join()
        self._offer_commands(session)
        return LoadSessionResponse(modes=_modes(session.agent.policy.mode), config_options=_options(session))

    def _offer_commands(self, session: AcpSession) -> None:
        """The slash commands, and the models the server lists, once the client knows the session."""
        loop = asyncio.get_running_loop()
        loop.call_later(COMMANDS_DELAY, session.post, _commands(session.root))
        if session.config.settings.provider != "local":  # the bundled model is one model
            loop.call_later(COMMANDS_DELAY, session.start_listing)

    async def _open(self, cwd: str, mcp_servers: list[Any], history: SessionHistory | None) -> AcpSession:
        root = _project(cwd)
        try:
            config = RunConfig.load(root, self._flags, self._approval, self._writes, cwd=root)
            config = config.with_servers([_server(s) for s in mcp_servers])
            if needs_local(config.settings):
                config = config.with_settings(pointed_at(config.settings, await self._launch_local()))
            session = AcpSession(self, config, history)
        except ConfigError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        self.sessions[session.id] = session
        return session

    async def _launch_local(self) -> LocalServer:
        """The bundled model's server, launched once for all sessions (its address is known at
        once; the first prompt waits for it to load). Assembling the model file the first time
        is reported on stderr: no session exists yet to show it."""
        async with self._local_lock:
            if self._local is None:

                def progress(what: str, done: float, total: float) -> None:
                    print(f"mzagent acp: {progress_text(what, done, total)}", file=sys.stderr, flush=True)

                server = LocalServer(await asyncio.to_thread(model_path, progress))
                server.launch()  # on the loop's thread, which lives as long as we do: the parent-death signal follows it
                self._local = server
            return self._local

    async def _local_ready(self, session: AcpSession) -> None:
        """Wait for the bundled model to load, its progress sent to the session as message chunks."""
        if self._local is None or self._local_loaded:
            return
        shown = [-PROGRESS_EVERY]

        def progress(what: str, done: float, total: float) -> None:
            if done - shown[0] >= PROGRESS_EVERY:
                shown[0] = done
                session.post(update_agent_message_text(paragraph(f"[{progress_text(what, done, total)}]")))

        try:
            await asyncio.to_thread(self._local.wait_ready, progress)
        except LocalModelError as exc:
            self._local = None
            raise RequestError.internal_error({"message": str(exc)}) from None
        self._local_loaded = True
        hint = faster_engine_hint()
        session.post(update_agent_message_text(paragraph(f"[local model ready: {self._local.model.name}{f'; faster: {hint}' if hint else ''}]")))

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        text = "\n\n".join(_block_text(block, session.root) for block in prompt).strip()
        if not text:
            raise RequestError.invalid_params({"message": "the prompt has no text"})
        try:
            text = resolve_task(text, session.root)
        except PromptCommandError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        await self._local_ready(session)
        return PromptResponse(stop_reason=await session.prompt(text))

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        """The editor's mode menu sets the session's approval mode, like the app's palette; it
        takes effect at the next command (one waiting for permission is still asked)."""
        session = self._session(session_id)
        if mode_id not in APPROVAL_MODES:
            raise RequestError.invalid_params({"message": f"no mode {mode_id!r}; the modes are {', '.join(APPROVAL_MODES)}"})
        session.agent.policy.mode = mode_id
        session.post(CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id))
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool, **kwargs: Any) -> SetSessionConfigOptionResponse:
        """The editor's menus: the approval mode (as `session/set_mode`) and the model, which
        waits for a running prompt's end; an unknown option or value changes nothing."""
        session = self._session(session_id)
        if config_id == "mode" and isinstance(value, str):
            await self.set_session_mode(session_id, value)
        elif config_id == "model" and isinstance(value, str):
            if value not in session.models:
                raise RequestError.invalid_params({"message": f"no model {value!r} here; the models are {', '.join(session.models)}"})
            if session.running:
                raise RequestError.invalid_params({"message": "a prompt is running: choose the model when it has ended"})
            if value != session.config.settings.model:
                try:
                    await session.switch_model(value)
                except ConfigError as exc:
                    raise RequestError.invalid_params({"message": str(exc)}) from None
        else:
            raise RequestError.invalid_params({"message": f"no option {config_id!r} taking {value!r}; the options are mode and model"})
        return SetSessionConfigOptionResponse(config_options=_options(session))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"no session {session_id}"})
        return session

    async def close(self) -> None:
        for session in self.sessions.values():
            await session.close()
        if self._local is not None:
            self._local.stop()


def _project(cwd: str) -> Path:
    root = Path(cwd).expanduser()
    if not root.is_absolute():
        raise RequestError.invalid_params({"message": f"cwd must be an absolute path, got {cwd!r}"})
    try:
        check_project(root)
    except ConfigError as exc:
        raise RequestError.invalid_params({"message": str(exc)}) from None
    return root.resolve()


def _server(server: Any) -> McpServerConfig:
    """An MCP server the client passed in `session/new`: stdio, or streamable HTTP (the old SSE
    transport is not offered in our capabilities, and is refused)."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", getattr(server, "name", "")) or "server"
    if isinstance(server, HttpMcpServer):
        url = http_url(server.url, f"MCP server '{server.name}': the url")
        return McpServerConfig(name, url=url, headers={h.name: h.value for h in server.headers})
    if not isinstance(server, McpServerStdio):
        raise ConfigError(f"MCP server '{getattr(server, 'name', '?')}': only stdio and streamable HTTP servers are supported")
    return McpServerConfig(name, server.command, tuple(server.args), {v.name: v.value for v in server.env})


def _block_text(block: Any, root: Path) -> str:
    """The text of a prompt block: text as is, an embedded or linked file with its path. Kinds
    not advertised in the prompt capabilities (image, audio) are refused, not dropped."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return block.text
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        where = _uri_text(resource.uri, root)
        return f"File {where}:\n```\n{text}\n```" if isinstance(text, str) else f"[attached {where}]"
    if kind == "resource_link":
        return f"[file {_uri_text(block.uri, root)}]"
    raise RequestError.invalid_params({"message": f"{kind or 'unknown'} content is not supported: the prompt capabilities offer text, embedded files and file links"})


def _uri_text(uri: str, root: Path) -> str:
    """A `file://` URI as the path the tools take (relative to the project when inside it);
    any other URI as it is."""
    parsed = urlsplit(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return uri
    return shown_path(Path(url2pathname(parsed.path)), root)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _text(data: bytes) -> str:
    """A side that is not binary, as text: only a character cut at the read's limit is dropped."""
    return data.decode("utf-8", "ignore")


def _read(path: Path) -> bytes:
    """A file's bytes for a diff; b"" for a missing file or one that is not regular (a FIFO would block)."""
    return read_regular_bytes(path, DIFF_READ) or b""


async def serve(flags: dict[str, Any] | None = None, approval: str | None = None, writes: str | None = None) -> None:
    """Serve ACP on stdio. AcpAgent is not the library's whole `Agent` protocol: the router looks
    each method up by name and answers those it lacks (session/list, fork, resume, close, config
    options) with "method not found", which clients read as "not supported"."""
    agent = AcpAgent(flags, approval, writes)
    try:
        await run_agent(cast(Agent, agent), await stdio_transport())
    finally:
        await agent.close()


def main(flags: dict[str, Any] | None = None, approval: str | None = None, writes: str | None = None) -> int:
    try:
        asyncio.run(serve(flags, approval, writes))
    except KeyboardInterrupt:
        return 130
    return 0

