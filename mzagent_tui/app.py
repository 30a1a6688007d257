"""The Textual app: project tree on the left, transcript and task box on the right.

Trace of a task: `TaskInput` submits -> `_start` runs `Agent.run` in a thread worker ->
the core emits events -> `EventBridge` posts them as `AgentEvent`/`StreamChunk` messages ->
`on_agent_event` turns each into transcript entries (`entries_for`) and state (`_react`).
Commands ask through `ModalApprover`, which opens `ApprovalScreen` and waits for its result
on the worker thread. A reopened session is replayed through the same `entries_for`.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DirectoryTree, Footer, Header
from textual.worker import Worker, WorkerState

from mzagent_tui.agent.approval import ApprovalRequest, Policy
from mzagent_tui.agent.cancel import STOP_SIGNALS, Cancelled, CancelToken
from mzagent_tui.agent.config import ConfigError, Settings, load_settings
from mzagent_tui.agent.mcp.config import McpServerConfig
from mzagent_tui.agent.events import (
    ApprovalAnswered,
    ApprovalAsked,
    Event,
    FileChanged,
    FinalAnswer,
    ModelInfo,
    Observation,
    ReplyFinished,
    RetryWait,
    StepStarted,
    Stopped,
    StopReason,
    TaskStarted,
    Usage,
)
from mzagent_tui.agent.history import SessionHistory, list_sessions, load_session
from mzagent_tui.agent.local import LocalServer, needs_local, pointed_at, progress_text, start_local
from mzagent_tui.agent.providers import local_available
from mzagent_tui.agent.sandbox import sandbox_label
from mzagent_tui.agent.secrets import Redactor, redactor_for
from mzagent_tui.agent.usage import Meter
from mzagent_tui.attention import Attention
from mzagent_tui.bridge import STREAM_INTERVAL, EventBridge, ModalApprover
from mzagent_tui.messages import AgentEvent, StreamChunk
from mzagent_tui.screens.approval import ApprovalScreen
from mzagent_tui.screens.ask_text import AskTextScreen
from mzagent_tui.screens.choose import ChooseScreen
from mzagent_tui.screens.confirm import ConfirmScreen
from mzagent_tui.screens.preview import PreviewScreen
from mzagent_tui.widgets.project_tree import ProjectTree
from mzagent_tui.widgets.run_status import RunStatus
from mzagent_tui.widgets.search_bar import SearchBar
from mzagent_tui.widgets.task_input import TaskInput
from mzagent_tui.widgets.entries import ObservationEntry, ProgressEntry, entries_for, text_entry
from mzagent_tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from mzagent_tui.agent.loop import Agent
    from mzagent_tui.agent.undo import Scope

SETUP_HELP = (
    "No model endpoint is configured, so tasks cannot run yet. The file tree works.\n"
    "Set a key in the environment or a .env file, for example DEEPSEEK_API_KEY=… or OPENAI_API_KEY=…,\n"
    "or point at a local server: MZAGENT_BASE_URL=http://127.0.0.1:8080/v1 MZAGENT_MODEL=…\n"
    "Then restart mzagent. `mzagent config` shows what is set and where it came from."
)
STOP_STATES = {StopReason.FINAL_ANSWER: "done", StopReason.CANCELLED: "cancelled"}


class MzAgentApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "mzagent"
    AUTO_FOCUS = "#task"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit"),
        Binding("escape", "cancel_run", "Cancel run", id="app.cancel"),
        Binding("ctrl+n", "new_conversation", "New conversation", id="app.new"),
        Binding("ctrl+b", "toggle_tree", "Files", id="app.toggle_tree"),
        Binding("ctrl+t", "focus_task", "Task box", id="app.focus_task"),
        Binding("ctrl+f", "find", "Find", id="app.find"),
        Binding("ctrl+z", "undo('last')", "Undo write", id="app.undo"),
    ]

    def __init__(
        self,
        settings: Settings,
        project: Path,
        environ: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        policy: Policy | None = None,
        history: SessionHistory | None = None,
        pick_session: bool = False,
        mcp_servers: Sequence[McpServerConfig] = (),
    ) -> None:
        """`history` reopens a logged session at start; `pick_session` opens the session list;
        `mcp_servers` start with each conversation's agent."""
        super().__init__()
        self.settings = settings
        self.policy = policy or Policy()
        self.project = project.resolve()
        self._environ = environ
        self._clock = clock
        self._agent: Agent | None = None
        self._mcp_servers = tuple(mcp_servers)
        self._sandbox_label = sandbox_label(settings.sandbox)
        """Said in the header all session: how commands are confined here."""
        self._token = CancelToken()
        self._run_active = False
        self._queue: list[str] = []
        self._started_at: float | None = None
        self._last_answer = ""
        self._local_server: LocalServer | None = None
        self._progress: ProgressEntry | None = None
        self._conversation = 0
        self._bridge = EventBridge(self, self._conversation)
        self._approver = ModalApprover(self, self._approval_screen, lambda: self._token)
        self._attention = Attention(settings.notify, clock)
        self._meter = self._new_meter()
        self._opening = history
        self._pick_session = pick_session
        self._resume_folder: Path | None = None
        """A reopened session the next run continues (read again then, so undos made since count)."""
        self._idle_state = "idle"
        """What the header says before the first task: "reopened" or "interrupted" after a reopen."""

    # Layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="main"):
            yield ProjectTree(self.project, id="tree")
            with Vertical(id="work"):
                yield Transcript(self.project, id="transcript")
                yield TaskInput(placeholder="Describe a task and press Enter", id="task")
        yield RunStatus(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self._catch_stop_signals()
        self._status.mode = self.policy.mode
        self._status.usage = self._meter.summary()
        self._set_state("idle")
        self.set_interval(1.0, self._tick)
        self.set_interval(STREAM_INTERVAL, self._flush_stream)
        if self._opening is not None:
            self._open_session(self._opening)
        if self._pick_session:
            self.action_resume()
        if needs_local(self.settings) and local_available():
            self._run_active = True
            self._progress = ProgressEntry("starting the offline model…")
            self._transcript.add(self._progress)
            self._set_state("starting the local model")
            self._start_local()
            return
        try:
            self.settings.endpoint()
        except ConfigError as exc:
            self._transcript.add(text_entry("error", f"{exc}\n\n{SETUP_HELP}", title="setup needed"))

    @work(thread=True, exit_on_error=False, group="local", description="start the local model")
    def _start_local(self) -> None:
        """Assemble the model and wait for llama.cpp's server; tasks typed meanwhile are queued."""
        try:
            server = start_local(self._local_progress, lambda: self._token.cancelled, lambda server: self.call_from_thread(self._launch_local, server))
            self.call_from_thread(self._local_ready, f"ready: {server.model.name} ({server.settings.describe()})", server)
        except Exception as exc:  # noqa: BLE001 - shown as a notice, never a traceback
            self.call_from_thread(self._local_ready, str(exc) if isinstance(exc, ConfigError) else f"the offline model failed to start: {exc}")

    def _launch_local(self, server: LocalServer) -> None:
        """On the UI thread, which lives as long as the app (see LocalServer.launch); kept to stop it at exit."""
        self._local_server = server
        server.launch()

    def _local_progress(self, what: str, done: float, total: float) -> None:
        self.call_from_thread(self._progress.show, progress_text(what, done, total))

    def _local_ready(self, text: str, server: LocalServer | None = None) -> None:
        """On the UI thread: the settings point at the server from here on (None: it failed)."""
        failed = server is None
        if server is not None:
            self.settings = pointed_at(self.settings, server)
        self._progress.show(text)
        self._progress.set_class(failed, "-error")
        self._set_state("model failed" if failed else self._idle_state)
        self._finish_run()

    @property
    def run_active(self) -> bool:
        """A run (or the local model's start) is in progress; new tasks queue."""
        return self._run_active

    @property
    def last_answer(self) -> str:
        """The latest final answer (what "Copy final answer" copies)."""
        return self._last_answer

    @property
    def conversation(self) -> int:
        """The conversation's number: a worker's messages carry it, and those of an old one are dropped."""
        return self._conversation

    @property
    def _transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def _status(self) -> RunStatus:
        return self.query_one(RunStatus)

    def _set_state(self, state: str) -> None:
        model = self.settings.model or "no model"
        provider = self.settings.provider or "unconfigured"
        self.sub_title = f"{self.project} · {provider}/{model} · {self._sandbox_label} · {state}"
        self._status.state = state

    def _tick(self) -> None:
        if self._started_at is not None:
            self._status.elapsed = self._clock() - self._started_at

    # Tasks ----------------------------------------------------------------------------

    @on(TaskInput.Submitted, "#task")
    def _submitted(self, event: TaskInput.Submitted) -> None:
        task = event.value.strip()
        if not task:
            return
        box = self.query_one(TaskInput)
        box.remember(task)
        box.value = ""
        if self._run_active:
            self._queue.append(task)
            self._status.queued = len(self._queue)
            self.notify("Queued: it starts when the current run ends.")
            return
        self._start(task)

    def _start(self, task: str) -> None:
        self._run_active = True
        self._token = CancelToken()
        self._started_at = self._clock()
        status = self._status
        status.step, status.max_steps, status.elapsed = 0, self.settings.max_steps, 0.0
        self._set_state("thinking")
        self._run_task(task, self._token, self._bridge)

    @work(thread=True, exit_on_error=False, group="agent", description="agent run")
    def _run_task(self, task: str, token: CancelToken, bridge: EventBridge) -> None:
        """The whole ReAct loop for one task, off the UI thread."""
        if self._agent is None:
            from mzagent_tui.agent.loop import Agent  # imports the openai SDK: keep it off start-up

            history = load_session(self._resume_folder) if self._resume_folder else None
            try:
                self._agent = Agent(
                    self.settings, self.project, self._approver, bridge, environ=self._environ, policy=self.policy, history=history,
                    mcp_servers=self._mcp_servers,
                )
            except ConfigError as exc:
                bridge(TaskStarted(task))
                bridge(Stopped(StopReason.ERROR, str(exc)))
                return
        self._agent.run(task, token)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "agent" or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        if not self.is_running:
            return  # quitting: start no queued task
        if event.state is WorkerState.ERROR:
            self._transcript.add(text_entry("error", f"the run failed: {event.worker.error}"))
            self._set_state("stopped")
        self._finish_run()

    def _finish_run(self) -> None:
        """The run (or the local model's start) is over: start the next queued task."""
        self._run_active = False
        self._started_at = None
        if self._queue:
            task = self._queue.pop(0)
            self._status.queued = len(self._queue)
            self._start(task)

    # Events from the core ---------------------------------------------------------------

    def _flush_stream(self) -> None:
        self._bridge.flush()

    def _belongs(self, conversation: int) -> bool:
        """Whether a worker's message still has a place on screen: it is from the current
        conversation and the app is not closing (a handler may await a mount while the app
        closes; what it and the queue hold after that must not touch widgets already removed)."""
        return self.is_running and conversation == self._conversation

    async def on_stream_chunk(self, message: StreamChunk) -> None:
        if not self._belongs(message.conversation):
            return
        await self._transcript.stream(message.text, message.thinking)

    async def on_agent_event(self, message: AgentEvent) -> None:
        if not self._belongs(message.conversation):
            return
        event = message.event
        entries = entries_for(event, self.project)
        if entries:
            mounted = self._transcript.add(*entries)
            if isinstance(event, FinalAnswer):
                await mounted  # the rendered answer replaces the streamed one without a blank frame
                if not self._belongs(message.conversation):
                    return
        self._react(event)

    def _react(self, event: Event) -> None:
        """What a live event changes besides the transcript: state, step, tokens, tree, stream."""
        status = self._status
        match event:
            case StepStarted(step=step):
                status.step = step
                self._transcript.step_started()
                self._set_state("thinking")
            case ReplyFinished(incomplete=incomplete):
                self._transcript.reply_finished(incomplete)
            case ApprovalAsked():
                self._set_state("waiting for approval")
            case ApprovalAnswered(approved=True):
                self._set_state("running a command")
            case Observation(tool=tool):
                self._set_state("thinking")
                if tool == "run_terminal_command":
                    self.query_one(ProjectTree).refresh_folder(self.project)
            case FileChanged(path=path):
                self.query_one(ProjectTree).mark_changed(Path(path))
            case FinalAnswer(text=text):
                self._last_answer = text
                self._transcript.answer_shown()
            case RetryWait(seconds=seconds):
                self._set_state(f"retrying in {seconds:.0f}s")
            case Usage() | ModelInfo():
                self._meter.observe(event)
                status.usage = self._meter.summary()
            case Stopped(reason=reason, message=message):
                self._call_attention("mzagent run ended", message)
                self._transcript.run_stopped()
                self._tick()
                self._set_state(STOP_STATES.get(reason, "stopped"))
            case _:
                pass

    @on(DirectoryTree.FileSelected)
    def _preview(self, event: DirectoryTree.FileSelected) -> None:
        path = Path(event.path)
        if path in self.query_one(ProjectTree).more_markers:
            self.notify("The tree lists the first 500 entries of a folder; the agent and the shell see them all.")
            return
        title = path.relative_to(self.project).as_posix() if path.is_relative_to(self.project) else str(path)
        self.push_screen(PreviewScreen(path, title))

    @on(ObservationEntry.OpenOutput)
    def _open_output(self, event: ObservationEntry.OpenOutput) -> None:
        self.push_screen(PreviewScreen(event.path, f"full output: {event.path}", highlight=False))

    # Approval ---------------------------------------------------------------------------

    def _approval_screen(self, request: ApprovalRequest) -> ApprovalScreen:
        return ApprovalScreen(request)

    @on(ApprovalScreen.Opened)
    def _approval_opened(self, message: ApprovalScreen.Opened) -> None:
        self._call_attention("mzagent needs approval", message.request.command)

    @on(TaskInput.Typed)
    def _typing(self) -> None:
        self._attention.typed()

    def _call_attention(self, title: str, body: str) -> None:
        """The bell or a desktop notification (settings.notify), written to the terminal like Textual's own bell."""
        sequence = self._attention.signal(title, body)
        if sequence and self._driver is not None:
            self._driver.write(sequence)

    # Actions ----------------------------------------------------------------------------

    def action_compact(self) -> None:
        if self._run_active:
            self.notify("Compacting waits for the run to end (or esc to cancel it).", severity="warning")
        elif self._agent is None:
            self.notify("Nothing to compact yet: the conversation is empty.")
        else:
            self._compact(self._agent)

    @work(thread=True, exclusive=True, group="compact")
    def _compact(self, agent: Agent) -> None:
        """On a thread: the summary is a model request, like a step."""
        from mzagent_tui.agent.llm import LLMError  # the openai SDK is loaded by then

        try:
            done = agent.compact()
        except (LLMError, Cancelled) as exc:
            self.notify(f"The conversation could not be compacted: {exc}", severity="error")
            return
        if not done:
            self.notify("Too little to compact yet: there is no finished step before the last ones.")

    def action_cancel_run(self) -> None:
        if self._run_active and not self._token.cancelled:
            self._token.cancel()
            self._set_state("cancelling")

    def action_new_conversation(self) -> None:
        self._reset_conversation()
        self._set_state("idle")
        self.notify("New conversation.")

    def _reset_conversation(self) -> None:
        """Forget the conversation; a run still ending reports to an old bridge and is not shown."""
        self._token.cancel()
        self._token = CancelToken()
        self._conversation += 1
        self._bridge = EventBridge(self, self._conversation)
        self._queue.clear()
        self._status.queued = 0
        self._close_agent()
        self._agent: Agent | None = None
        self._resume_folder = None
        self._idle_state = "idle"
        self._transcript.clear()
        self._meter = self._new_meter()
        self._status.usage = self._meter.summary()

    def _new_meter(self) -> Meter:
        return Meter(self.settings.price_in, self.settings.price_out, self.settings.window())

    # Sessions: reopen, undo, export ------------------------------------------------------

    def action_resume(self) -> None:
        if self._started_at is not None:
            self.notify("A run is going: wait for it to end (Esc cancels it), then reopen a session.", severity="warning")
            return
        sessions = list_sessions(self.project)
        if not sessions:
            self.notify("No earlier sessions for this project.")
            return
        items = [(s.summary_line(), str(s.folder)) for s in sessions]
        self.push_screen(ChooseScreen(f"Reopen a session ({len(sessions)}, most recent first)", items), callback=self._picked_session)

    def _picked_session(self, folder: str | None) -> None:
        if folder is not None:
            self._open_session(load_session(Path(folder)))

    def _open_session(self, history: SessionHistory) -> None:
        """Show a logged session and make the next task continue it; nothing of it is re-run.

        Only the newest entries are built and mounted (both cost); the transcript shows earlier
        ones on request. The export and the log have everything.
        """
        self._reset_conversation()
        self._resume_folder = history.folder
        written: list[Path] = []
        for event in history.events:
            self._meter.observe(event)
            match event:
                case StepStarted(step=step):
                    self._status.step = step
                case FinalAnswer(text=text):
                    self._last_answer = text
                case FileChanged(path=path):
                    written.append(Path(path))
        self.query_one(ProjectTree).mark_changed(*written)
        self._status.usage = self._meter.summary()
        self._transcript.show_session(history.events)
        box = self.query_one(TaskInput)
        for event in history.events:
            if isinstance(event, TaskStarted):
                box.remember(event.task)
        note = f"session {history.id}: {history.steps} steps, {history.final_state}. Your next task continues this conversation."
        if history.interrupted:
            note += " It ended during a run: nothing of that run is repeated, and the model is told to check what finished."
        if history.bad_lines:
            note += f" {history.bad_lines} damaged line(s) of the log were skipped."
        self._transcript.add(text_entry("notice", note, title="reopened"))
        self._idle_state = "interrupted" if history.interrupted else "reopened"
        self._set_state(self._idle_state)

    def _redactor(self) -> Redactor:
        return redactor_for(os.environ if self._environ is None else self._environ, self.settings.api_key)

    def _session_folder(self) -> Path | None:
        return self._agent.session.folder if self._agent is not None else self._resume_folder

    def action_undo(self, scope: Scope) -> None:
        """Take back the agent's last step (a write, or the files a command changed) or all writes of its last run; refuses rather than lose user edits."""
        from mzagent_tui.agent.undo import undo_session  # restoring files needs the file tools: load on first use

        if self._started_at is not None:
            self.notify("Undo waits until the run ends (Esc cancels it).", severity="warning")
            return
        folder = self._session_folder()
        if folder is None:
            self.notify("Nothing to undo: the agent has not written anything in this conversation.")
            return
        outcome = undo_session(folder, scope, self._redactor(), self._agent.session if self._agent is not None else None)
        done, problem = outcome.done, outcome.refused
        for event in done:
            self._transcript.add(*entries_for(event, self.project))
            if self._agent is not None:
                self._agent.tell_undo(event)
        if done:
            self.query_one(ProjectTree).refresh_folder(self.project)
        if problem is not None:
            self._transcript.add(text_entry("notice", problem, title="undo refused"))
            self.notify(problem, title="Undo refused", severity="error", markup=False)
        else:
            self.notify(f"Undid {len(done)} file change{'s' if len(done) > 1 else ''}.")

    def action_undo_to(self) -> None:
        """Choose a write; it and every later write are undone (the same checks as any undo)."""
        from mzagent_tui.agent.undo import write_label, writes_of

        folder = self._session_folder()
        writes = [w for w in writes_of(load_session(folder).events) if not w.undone] if folder else []
        if not writes:
            self.notify("Nothing to undo: the agent has no writes left to take back in this conversation.")
            return
        items = [(write_label(w, self.project), str(w.number)) for w in reversed(writes)]
        self.push_screen(ChooseScreen("Undo back to (this write and every later one)", items), callback=self._undo_to)

    def _undo_to(self, number: str | None) -> None:
        if number is not None:
            self.action_undo(int(number))

    def action_export(self) -> None:
        folder = self._session_folder()
        if folder is None:
            self.notify("Nothing to export yet: run a task first.")
            return
        default = self.project / f"mzagent-{folder.name}.md"
        self.push_screen(AskTextScreen("Export this session as Markdown to:", str(default)), callback=self._export_to)

    def _export_to(self, answer: str | None) -> None:
        folder = self._session_folder()
        if not answer or folder is None:
            return
        from mzagent_tui.agent.export import export_to_file  # loaded on first use, like undo

        target = Path(answer).expanduser()
        target = target if target.is_absolute() else self.project / target
        try:
            export_to_file(load_session(folder), self._redactor(), target)
        except FileExistsError:
            self.notify(f"{target} exists; choose another name.", severity="error", markup=False)
            return
        except OSError as exc:
            self.notify(f"Cannot write {target}: {exc.strerror}", severity="error", markup=False)
            return
        self.notify(f"Exported to {target}", markup=False)

    # Find in the transcript ----------------------------------------------------------------

    async def action_find(self) -> None:
        """Open the search bar; it is mounted on first use to keep it off start-up."""
        if not self.query(SearchBar):
            await self.query_one("#work").mount(SearchBar(id="search"), before=self._transcript)
        self.query_one(SearchBar).open()

    @on(SearchBar.Find)
    async def _find(self, message: SearchBar.Find) -> None:
        selected, total = await self._transcript.find(message.query, message.step)
        self.query_one(SearchBar).show_count(selected, total)

    @on(SearchBar.Closed)
    def _find_closed(self) -> None:
        self._transcript.end_find()
        self.query_one(TaskInput).focus()

    def action_toggle_tree(self) -> None:
        tree = self.query_one(ProjectTree)
        tree.display = not tree.display

    def action_focus_task(self) -> None:
        self.query_one(TaskInput).focus()

    def action_approval_mode(self, mode: str) -> None:
        """Switch the approval mode; yolo needs a confirmation."""
        if mode != "yolo":
            self._apply_mode(mode)
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._apply_mode("yolo")

        self.push_screen(ConfirmScreen("Run every command without asking for the rest of this session?"), callback=confirmed)

    def _apply_mode(self, mode: str) -> None:
        self.policy.mode = mode
        self._status.mode = mode
        self.notify(f"Approval mode: {mode}", severity="warning" if mode == "yolo" else "information")

    def action_switch_model(self) -> None:
        current = f"{self.settings.provider} {self.settings.model}".strip()
        self.push_screen(
            AskTextScreen("Switch to: provider and model (keys come from your environment or .env)", current, "deepseek deepseek-chat"),
            callback=self._switch_model,
        )

    def _switch_model(self, answer: str | None) -> None:
        """Load settings for the new provider/model; a new conversation starts if they work."""
        if not answer:
            return
        provider, _, model = answer.partition(" ")
        try:
            if provider == "local" and self._local_server is None:
                raise ConfigError("the offline model starts with the app: restart mzagent without a key to use it")
            settings = load_settings(project=self.project, flags={"provider": provider, "model": model.strip() or None}, environ=self._environ)
            if provider == "local" and self._local_server is not None:
                settings = pointed_at(settings, self._local_server)
            settings.endpoint()
        except ConfigError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self.settings = settings
        self.action_new_conversation()
        self._set_state("idle")
        self.notify(f"Now using {settings.provider}/{settings.model}.", markup=False)

    def action_copy_answer(self) -> None:
        if self._last_answer:
            self.copy_to_clipboard(self._last_answer)
            self.notify("Copied the last final answer.")

    def action_show_session_log(self) -> None:
        if self._agent is None:
            self.notify("No session yet: run a task first.")
            return
        self.push_screen(PreviewScreen(self._agent.session.log_path, f"session log: {self._agent.session.log_path}", highlight=False))

    def _catch_stop_signals(self) -> None:
        """SIGTERM and SIGHUP (a closed terminal) end the app like Ctrl+Q: the run is cancelled,
        its command group killed, the terminal restored, and the exit code is 143 / 129."""
        if threading.current_thread() is not threading.main_thread():
            return
        loop = asyncio.get_running_loop()
        for number in STOP_SIGNALS:
            loop.add_signal_handler(number, self._stop_by_signal, number)

    def _stop_by_signal(self, number: int) -> None:
        self._token.cancel()
        self.exit(return_code=128 + number)

    def on_unmount(self) -> None:
        """However the app ends, stop the run so no thread waits on a dialog or a command."""
        if threading.current_thread() is threading.main_thread():
            loop = asyncio.get_running_loop()
            for number in STOP_SIGNALS:
                loop.remove_signal_handler(number)
        self._token.cancel()
        self._close_agent()
        if self._local_server is not None:
            self._local_server.stop()

    def _close_agent(self) -> None:
        """Stop the conversation's tool servers, off the UI thread (they get a few seconds)."""
        if self._agent is not None:
            threading.Thread(target=self._agent.close, name="mzagent-close", daemon=True).start()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("New conversation", "Forget the conversation and start fresh", self.action_new_conversation)
        yield SystemCommand("Toggle file tree", "Show or hide the project files", self.action_toggle_tree)
        yield SystemCommand("Switch provider/model", "Use another endpoint or model (starts a new conversation)", self.action_switch_model)
        yield SystemCommand("Approval mode: ask", "Every command asks (default)", lambda: self.action_approval_mode("ask"))
        yield SystemCommand("Approval mode: auto-safe", "Read-only commands on the safe list run without asking", lambda: self.action_approval_mode("auto-safe"))
        yield SystemCommand("Approval mode: yolo", "Nothing asks, for this session (dangerous; asks to confirm)", lambda: self.action_approval_mode("yolo"))
        yield SystemCommand("Reopen a session", "List this project's sessions and continue one", self.action_resume)
        yield SystemCommand("Undo last write", "Take back the agent's last step: a file write, or the files a command changed (ctrl+z)", lambda: self.action_undo("last"))
        yield SystemCommand("Undo all writes of the last run", "Restore every file the agent's last run wrote", lambda: self.action_undo("run"))
        yield SystemCommand("Undo writes back to…", "Choose a write: it and every later write are taken back", self.action_undo_to)
        yield SystemCommand("Compact the conversation", "The model summarises the older steps, which the summary replaces (the log keeps them)", self.action_compact)
        yield SystemCommand("Export session as Markdown", "Save the conversation as a Markdown file", self.action_export)
        yield SystemCommand("Find in transcript", "Search the transcript (ctrl+f)", self.action_find)
        yield SystemCommand("Copy final answer", "Copy the last final answer to the clipboard", self.action_copy_answer)
        yield SystemCommand("Show session log", "Open this session's log", self.action_show_session_log)


def run_app(
    settings: Settings,
    project: Path,
    policy: Policy,
    history: SessionHistory | None = None,
    pick_session: bool = False,
    mcp_servers: Sequence[McpServerConfig] = (),
) -> int:
    app = MzAgentApp(settings, project, policy=policy, history=history, pick_session=pick_session, mcp_servers=mcp_servers)
    app.run()
    return app.return_code or 0

