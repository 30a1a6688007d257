"""One conversation with the agent: the transcript, the task box, and the run behind them.

Trace of a task: `TaskInput` submits -> `start` runs `Agent.run` in a thread worker -> the core
emits events -> `EventBridge` posts them here as `AgentEvent`/`StreamChunk` messages ->
`on_agent_event` turns each into transcript entries (`entries_for`) and run state (`_react`).
Commands ask through `ModalApprover`, which opens `ApprovalScreen` and waits for its result on
the worker thread. A reopened session is replayed through the same `entries_for`.

The app around it keeps the run's configuration, the local server, the palette and the dialogs;
this widget tells it what changed through `run` (watched for the status line) and messages.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import var
from textual.worker import Worker, WorkerState

from mzagent_tui.agent.cancel import Cancelled, CancelToken
from mzagent_tui.agent.config import ConfigError, Settings
from mzagent_tui.agent.events import (
    ApprovalAnswered,
    ApprovalAsked,
    BackgroundEnded,
    BackgroundStarted,
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
    TaskListUpdated,
    TaskStarted,
    Usage,
    UserCommand,
    UserCommandOutput,
    shown_path,
)
from mzagent_tui.agent.prompt_commands import PromptCommandError, load_prompt_commands, parse_slash, resolve_task
from mzagent_tui.agent.run_config import RunConfig
from mzagent_tui.agent.safety.secrets import Redactor, redactor_for
from mzagent_tui.agent.sessions.history import SessionHistory, TaskStart, load_session
from mzagent_tui.agent.usage import Meter
from mzagent_tui.bridge import STREAM_INTERVAL, EventBridge, ModalApprover
from mzagent_tui.messages import AgentEvent, StreamChunk
from mzagent_tui.screens.approval import ApprovalScreen
from mzagent_tui.screens.background import ProcessList
from mzagent_tui.screens.confirm import ConfirmScreen
from mzagent_tui.task_completions import BUILT_INS, file_completions, slash_completions, token_at
from mzagent_tui.widgets.completion_menu import CompletionMenu
from mzagent_tui.widgets.entries import ProgressEntry, entries_for, text_entry
from mzagent_tui.widgets.run_status import RunState
from mzagent_tui.widgets.search_bar import SearchBar
from mzagent_tui.widgets.task_input import TaskInput
from mzagent_tui.widgets.task_list import TaskListView
from mzagent_tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from mzagent_tui.agent.loop import Agent
    from mzagent_tui.agent.sessions.rewind import RewindMode
    from mzagent_tui.agent.sessions.undo import Scope, Write

STOP_STATES = {StopReason.FINAL_ANSWER: "done", StopReason.CANCELLED: "cancelled", StopReason.USER_COMMAND: "done"}


class Conversation(Vertical):
    run: var[RunState] = var(RunState)
    """What the status line shows: state, step, tokens, elapsed time, tasks queued."""

    @dataclass
    class RunEnded(Message):
        """A run stopped (the app calls the user back)."""

        message: str

    @dataclass
    class SlashCommand(Message):
        """The user ran one of the app's own commands (`/new`, `/mode plan`): the app carries it out."""

        name: str
        arguments: str

    @dataclass
    class PlanReady(Message):
        """A run in plan mode ended with this plan (the app asks what to do with it)."""

        plan: str

    @dataclass
    class FilesChanged(Message):
        """The agent wrote `written`; `rescan`: a command or an undo may have changed anything."""

        written: tuple[Path, ...]
        rescan: bool

    def __init__(
        self,
        config: RunConfig,
        clock: Callable[[], float] = time.monotonic,
        *,
        id: str | None = None,  # noqa: A002 - Textual's name
    ) -> None:
        """`config` is the app's, replaced (never changed in place) when the endpoint changes; a
        worker is handed the config of its run, so no thread sees half of an update."""
        super().__init__(id=id)
        self.config = config
        self.project = config.project.resolve()
        self._clock = clock
        self._number = 0
        self._token = CancelToken()
        self._bridge = EventBridge(self, self._number)
        self._agent: Agent | None = None
        self._run_active = False
        self._queue: list[str] = []
        self._started_at: float | None = None
        self._last_answer = ""
        self._plan: str | None = None
        """The plan the running task answered with, handed to the app when the run stops."""
        self._progress: ProgressEntry | None = None
        self._meter = self._new_meter()
        self._resume_folder: Path | None = None
        """A reopened session the next run continues (read again then, so undos made since count)."""
        self._idle_state = "idle"
        """What the status says before the first task: "reopened" or "interrupted" after a reopen."""
        self._files: list[str] | None = None
        """The project's files for `@` completion, listed on the first `@` and again after each run."""

    def compose(self) -> ComposeResult:
        yield Transcript(self.project, id="transcript")
        yield TaskListView(id="task-list")
        yield CompletionMenu(id="completions")
        yield TaskInput(placeholder="Describe a task and press Enter (/ for commands, @ for files)", id="task")

    def on_mount(self) -> None:
        self.query_one(TaskInput).menu = self.query_one(CompletionMenu)
        self._approver = self._new_approver()
        self._update(usage=self._meter.summary())
        self.set_interval(1.0, self._tick)
        self.set_interval(STREAM_INTERVAL, self._bridge_flush)

    def on_unmount(self) -> None:
        """However the app ends, stop the run so no thread waits on a dialog or a command."""
        self._token.cancel()
        self._approver.close()
        self._close_agent()

    def _new_approver(self) -> ModalApprover:
        """One per conversation: replacing the conversation closes it, which answers its pending
        question "no" and keeps a question of the replaced run from opening in the new one."""
        return ModalApprover(self.app, ApprovalScreen, lambda: self._token)

    # Public state -----------------------------------------------------------------------

    @property
    def number(self) -> int:
        """The conversation's number: a worker's messages carry it, and those of an old one are dropped."""
        return self._number

    @property
    def run_active(self) -> bool:
        """A run (or a wait such as the local model's start) is in progress; new tasks queue."""
        return self._run_active

    @property
    def task_running(self) -> bool:
        """A task is running (not merely a wait): reopening and undo wait for it."""
        return self._started_at is not None

    @property
    def token(self) -> CancelToken:
        """The current run's cancel token (Esc cancels it)."""
        return self._token

    @property
    def last_answer(self) -> str:
        """The latest final answer (what "Copy final answer" copies)."""
        return self._last_answer

    @property
    def background(self) -> ProcessList | None:
        """The conversation's background commands (None before its first task)."""
        return self._agent.background if self._agent is not None else None

    @property
    def session_folder(self) -> Path | None:
        """The logged session of this conversation, once there is one."""
        return self._agent.session.folder if self._agent is not None else self._resume_folder

    @property
    def session_log(self) -> Path | None:
        return self._agent.session.log_path if self._agent is not None else None

    @property
    def settings(self) -> Settings:
        return self.config.settings

    @property
    def _transcript(self) -> Transcript:
        return self.query_one(Transcript)

    def _update(self, **changes: object) -> None:
        self.run = replace(self.run, **changes)  # type: ignore[arg-type]

    def _tick(self) -> None:
        if self._started_at is not None:
            self._update(elapsed=self._clock() - self._started_at)

    def say(self, kind: str, text: str, title: str | None = None) -> None:
        """Add a notice or an error of the front-end's own to the transcript."""
        self._transcript.add(text_entry(kind, text, title=title))

    # Tasks ------------------------------------------------------------------------------

    @on(TaskInput.Submitted, "#task")
    def _submitted(self, event: TaskInput.Submitted) -> None:
        task = event.value.strip()
        if not task:
            return
        box = self.query_one(TaskInput)
        box.remember(task)
        box.value = ""
        parsed = parse_slash(task)
        if parsed is not None and parsed[0] in BUILT_INS:
            self.post_message(self.SlashCommand(*parsed))
            return
        try:
            task = resolve_task(task, self.project)
        except PromptCommandError as exc:
            self.say("error", str(exc), title="slash command")
            return
        self.send(task)

    # Completing `/` commands and `@` files ------------------------------------------------

    @on(TaskInput.Changed, "#task")
    def _typed(self, event: TaskInput.Changed) -> None:
        box = self.query_one(TaskInput)
        menu = self.query_one(CompletionMenu)
        token = token_at(box.value, box.cursor_position)
        if token is None:
            menu.hide()
        elif token.kind == "/":
            menu.show(token, slash_completions(token.text, load_prompt_commands(self.project)))
        elif self._files is None:
            menu.hide()
            self._list_files()
        else:
            menu.show(token, file_completions(token.text, self._files))

    @work(thread=True, exclusive=True, exit_on_error=False, group="files", description="list the project's files")
    def _list_files(self) -> None:
        """`git ls-files` or a walk, off the UI thread; the menu opens when the list is there."""
        from mzagent_tui.agent.filelist import project_files

        files = project_files(self.project)
        self.app.call_from_thread(self._files_listed, files)

    def _files_listed(self, files: list[str]) -> None:
        self._files = files
        box = self.query_one(TaskInput)
        self._typed(TaskInput.Changed(box, box.value))

    def send(self, task: str) -> None:
        """Start `task` now, or queue it behind the run in progress."""
        if self._run_active:
            self._queue.append(task)
            self._update(queued=len(self._queue))
            self.notify("Queued: it starts when the current run ends.")
            return
        self.start(task)

    def start(self, task: str) -> None:
        self._run_active = True
        self._token = CancelToken()
        self._started_at = self._clock()
        self._update(step=0, max_steps=self.settings.max_steps, elapsed=0.0, state="thinking")
        self._run_task(task, self.config, self._token, self._bridge)

    @work(thread=True, exit_on_error=False, group="agent", description="agent run")
    def _run_task(self, task: str, config: RunConfig, token: CancelToken, bridge: EventBridge) -> None:
        """The whole ReAct loop for one task, off the UI thread."""
        if self._agent is None:
            from mzagent_tui.agent.assembly import assemble  # imports the openai SDK: keep it off start-up

            history = load_session(self._resume_folder) if self._resume_folder else None
            try:
                self._agent = assemble(config, self._approver, bridge, history)
            except ConfigError as exc:
                bridge(TaskStarted(task))
                bridge(Stopped(StopReason.ERROR, str(exc)))
                return
        self._agent.run(task, token)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "agent" or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        if not self.app.is_running:
            return  # quitting: start no queued task
        if event.state is WorkerState.ERROR:
            self.say("error", f"the run failed: {event.worker.error}")
            self._update(state="stopped")
        self._finish_run()

    def _finish_run(self) -> None:
        """The run (or a wait) is over: start the next queued task."""
        self._run_active = False
        self._files = None  # the run may have made or removed files
        self._started_at = None
        if self._queue:
            task = self._queue.pop(0)
            self._update(queued=len(self._queue))
            self.start(task)

    def cancel(self) -> None:
        """Esc: cancel the run (its stream, its command's process group, its open dialog)."""
        if self._run_active and not self._token.cancelled:
            self._token.cancel()
            self._update(state="cancelling")

    def stop(self) -> None:
        """The app is ending: whatever runs is cancelled, whatever it asks is withdrawn."""
        self._token.cancel()
        self._approver.close()

    # Waiting for something before tasks can run (the local model) ---------------------------

    def hold(self, text: str, state: str) -> None:
        """Tasks typed from now on queue until `release`; `text` shows as a progress notice."""
        self._run_active = True
        self._progress = ProgressEntry(text)
        self._transcript.add(self._progress)
        self._update(state=state)

    def show_progress(self, text: str) -> None:
        if self._progress is not None:
            self._progress.show(text)

    def release(self, text: str, failed: bool) -> None:
        """The wait is over; queued tasks start (with the settings the app set meanwhile)."""
        if self._progress is not None:
            self._progress.show(text)
            self._progress.set_class(failed, "-error")
        self._update(state="model failed" if failed else self._idle_state)
        self._finish_run()

    # Events from the core -----------------------------------------------------------------

    def _bridge_flush(self) -> None:
        self._bridge.flush()

    def _belongs(self, number: int) -> bool:
        """Whether a worker's message still has a place on screen: it is from the current
        conversation and the app is not closing (a handler may await a mount while the app
        closes; what it and the queue hold after that must not touch widgets already removed)."""
        return self.app.is_running and number == self._number

    async def on_stream_chunk(self, message: StreamChunk) -> None:
        message.stop()
        if not self._belongs(message.conversation):
            return
        await self._transcript.stream(message.text, message.thinking)

    async def on_agent_event(self, message: AgentEvent) -> None:
        message.stop()
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
        """What a live event changes besides the transcript: state, step, tokens, files, stream."""
        match event:
            case StepStarted(step=step):
                self._update(step=step, state="thinking")
                self._transcript.step_started()
            case ReplyFinished(incomplete=incomplete):
                self._transcript.reply_finished(incomplete)
            case ApprovalAsked():
                self._update(state="waiting for approval")
            case ApprovalAnswered(approved=True):
                self._update(state="running a command")
            case BackgroundStarted():
                self._update(background=self.run.background + 1)
            case BackgroundEnded():
                self._update(background=max(0, self.run.background - 1))
                self.post_message(self.FilesChanged((), rescan=True))
            case UserCommand():
                self._update(state="running your command")
            case UserCommandOutput():
                self.post_message(self.FilesChanged((), rescan=True))
            case Observation(tool=tool):
                self._update(state="thinking")
                if tool == "run_terminal_command":
                    self.post_message(self.FilesChanged((), rescan=True))
            case FileChanged(path=path):
                self.post_message(self.FilesChanged((Path(path),), rescan=False))
            case TaskListUpdated(steps=steps):
                self.query_one(TaskListView).show(steps)
            case FinalAnswer(text=text, plan=plan):
                self._last_answer = text
                self._plan = text if plan else None
                self._transcript.answer_shown()
            case RetryWait(seconds=seconds):
                self._update(state=f"retrying in {seconds:.0f}s")
            case Usage() | ModelInfo():
                self._meter.observe(event)
                self._update(usage=self._meter.summary())
            case Stopped(reason=reason, message=text):
                self.post_message(self.RunEnded(text))
                if self._plan is not None and reason is StopReason.FINAL_ANSWER:
                    self.post_message(self.PlanReady(self._plan))
                self._plan = None
                self._transcript.run_stopped()
                self._tick()
                self._update(state=STOP_STATES.get(reason, "stopped"))
            case _:
                pass

    # A new conversation, or a logged one reopened --------------------------------------------

    def new(self, config: RunConfig | None = None) -> None:
        """Forget the conversation (optionally with a new configuration); a run still ending
        reports to an old bridge and is not shown."""
        self._token.cancel()
        self._approver.close()
        self._approver = self._new_approver()
        self._token = CancelToken()
        self._number += 1
        self._bridge = EventBridge(self, self._number)
        self._queue.clear()
        self._close_agent()
        self._agent = None
        self._resume_folder = None
        self._idle_state = "idle"
        self._transcript.clear()
        self.query_one(TaskListView).show([])
        if config is not None:
            self.config = config
        self._meter = self._new_meter()
        self.run = RunState(usage=self._meter.summary())

    def _new_meter(self) -> Meter:
        return Meter(self.settings.price_in, self.settings.price_out, self.settings.window())

    def _close_agent(self) -> None:
        """Stop the conversation's tool servers, off the UI thread (they get a few seconds)."""
        if self._agent is not None:
            threading.Thread(target=self._agent.close, name="mzagent-close", daemon=True).start()

    def open_session(self, history: SessionHistory, said: tuple[str, str] | None = None) -> None:
        """Show a logged session and make the next task continue it; nothing of it is re-run.
        `said`: the notice's (title, text) in place of "reopened" (after a rewind or a fork).

        Only the newest entries are built and mounted (both cost); the transcript shows earlier
        ones on request. The export and the log have everything.
        """
        self.new()
        self._resume_folder = history.folder
        written: list[Path] = []
        step = 0
        for event in history.events:
            self._meter.observe(event)
            match event:
                case StepStarted(step=number):
                    step = number
                case FinalAnswer(text=text):
                    self._last_answer = text
                case FileChanged(path=path):
                    written.append(Path(path))
                case TaskListUpdated(steps=steps):
                    self.query_one(TaskListView).show(steps)
        self.post_message(self.FilesChanged(tuple(written), rescan=False))
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
        title = "reopened"
        if said is not None:
            title, note = said
        self.say("notice", note, title=title)
        self._idle_state = "interrupted" if history.interrupted else title
        self._update(step=step, usage=self._meter.summary(), state=self._idle_state)

    # Undo, export, compaction ---------------------------------------------------------------

    def _redactor(self) -> Redactor:
        return redactor_for(os.environ if self.config.environ is None else self.config.environ, self.settings.api_key)

    def undo(self, scope: Scope) -> None:
        """Take back the agent's last step (a write, or the files a command changed), all writes
        of its last run, or every write from a numbered one on; refuses rather than lose user edits."""
        from mzagent_tui.agent.sessions.undo import undo_session  # restoring files needs the file tools: load on first use

        if self.task_running:
            self.notify("Undo waits until the run ends (Esc cancels it).", severity="warning")
            return
        folder = self.session_folder
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
            self.post_message(self.FilesChanged((), rescan=True))
        if problem is not None:
            self.say("notice", problem, title="undo refused")
            self.notify(problem, title="Undo refused", severity="error", markup=False)
        else:
            self.notify(f"Undid {len(done)} file change{'s' if len(done) > 1 else ''}.")

    def tasks(self) -> list[TaskStart]:
        """The conversation's tasks as it stands: the points a rewind can go back to."""
        folder = self.session_folder
        return load_session(folder).tasks if folder else []

    def rewind(self, to: int, mode: RewindMode, fork: bool = False, overwrite: bool = False) -> None:
        """Back to the end of task `to`: the files, the conversation or both (sessions/rewind.py);
        a fork does it in a new session and leaves this one whole. Files the user changed since
        are overwritten only after the question."""
        from mzagent_tui.agent.sessions.rewind import fork_session, rewind_session  # the file tools, as for undo

        folder = self.session_folder
        if self.task_running:
            self.notify("Rewinding waits until the run ends (Esc cancels it).", severity="warning")
            return
        if folder is None:
            self.notify("Nothing to rewind: this conversation has no task yet.")
            return
        if fork:
            outcome = fork_session(folder, to, mode, self._redactor(), overwrite)
        else:
            outcome = rewind_session(folder, to, mode, self._redactor(), self._agent.session if self._agent is not None else None, overwrite)
        if outcome.conflicts:
            question = "You changed these files since the agent wrote them:\n" + "\n".join(outcome.conflicts)
            question += "\n\nRewinding takes them back and your changes to them are lost. Rewind anyway?"
            self.app.push_screen(ConfirmScreen(question), callback=lambda yes: self._rewind_confirmed(yes, to, mode, fork))
            return
        for event in outcome.done:
            self._transcript.add(*entries_for(event, self.project))
            if self._agent is not None and outcome.rewound is None:
                self._agent.tell_undo(event)
        if outcome.done:
            self.post_message(self.FilesChanged((), rescan=True))
        if outcome.refused is not None:
            self.say("notice", outcome.refused, title="rewind refused")
            self.notify(outcome.refused, title="Rewind refused", severity="error", markup=False)
        elif outcome.rewound is not None:
            paths = dict.fromkeys(shown_path(Path(e.path), self.project) for e in outcome.done)  # a file written twice is named once
            files = f"Files taken back: {', '.join(paths)}. " if paths else ""
            where = f"This is a new session, {outcome.folder.name}; the original stays as it was" if fork else "The log keeps everything"
            self.open_session(load_session(outcome.folder), ("forked" if fork else "rewound", f"{files}{where}. Your next task continues from here."))
            self.notify(f"{'Forked' if fork else 'Rewound'} to {'before the first task' if to == 0 else f'the end of task {to}'}.")
        else:
            self.notify(f"Took back {len(outcome.done)} file change{'s' if len(outcome.done) != 1 else ''}; the conversation goes on." if outcome.done else "No file to take back: the agent wrote nothing after that task.")

    def _rewind_confirmed(self, yes: bool | None, to: int, mode: RewindMode, fork: bool) -> None:
        if yes:
            self.rewind(to, mode, fork, overwrite=True)
        else:
            self.notify("Not rewound: nothing was changed.")

    def undoable_writes(self) -> list[Write]:
        """The writes still to take back, oldest first."""
        from mzagent_tui.agent.sessions.undo import writes_of

        folder = self.session_folder
        return [w for w in writes_of(load_session(folder).events) if not w.undone] if folder else []

    def export(self, target: Path) -> None:
        """Write the session as Markdown (secrets redacted); a clash or an OS error is a notice."""
        from mzagent_tui.agent.sessions.export import export_to_file  # loaded on first use, like undo

        folder = self.session_folder
        if folder is None:
            return
        try:
            export_to_file(load_session(folder), self._redactor(), target)
        except FileExistsError:
            self.notify(f"{target} exists; choose another name.", severity="error", markup=False)
            return
        except OSError as exc:
            self.notify(f"Cannot write {target}: {exc.strerror}", severity="error", markup=False)
            return
        self.notify(f"Exported to {target}", markup=False)

    def compact(self) -> None:
        if self._run_active:
            self.notify("Compacting waits for the run to end (or esc to cancel it).", severity="warning")
        elif self._agent is None:
            self.notify("Nothing to compact yet: the conversation is empty.")
        else:
            self._compact(self._agent)

    @work(thread=True, exclusive=True, group="compact")
    def _compact(self, agent: Agent) -> None:
        """On a thread: the summary is a model request, like a step."""
        from mzagent_tui.agent.model.llm import LLMError  # the openai SDK is loaded by then

        try:
            done = agent.compact()
        except (LLMError, Cancelled) as exc:
            self.notify(f"The conversation could not be compacted: {exc}", severity="error")
            return
        if not done:
            self.notify("Too little to compact yet: there is no finished step before the last ones.")

    # Find in the transcript ------------------------------------------------------------------

    async def find(self) -> None:
        """Open the search bar; it is mounted on first use to keep it off start-up."""
        if not self.query(SearchBar):
            await self.mount(SearchBar(id="search"), before=self._transcript)
        self.query_one(SearchBar).open()

    @on(SearchBar.Find)
    async def _find(self, message: SearchBar.Find) -> None:
        selected, total = await self._transcript.find(message.query, message.step)
        self.query_one(SearchBar).show_count(selected, total)

    @on(SearchBar.Closed)
    def _find_closed(self) -> None:
        self._transcript.end_find()
        self.query_one(TaskInput).focus()
