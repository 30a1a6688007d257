"""The Textual app: project tree on the left, the conversation (transcript and task box) on the
right, the run's status line below.

The app keeps what outlives a conversation: the run's configuration (settings, approval policy,
hooks, tool servers and the flags it was started with, one `RunConfig`), the bundled model's
server, the palette, the dialogs and the user's attention. The run itself lives in
`widgets/conversation.py`, where a task can be traced from the task box to the agent and back.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.screen import ModalScreen, Screen
from textual.widgets import DirectoryTree, Header

from mzagent_tui.agent.cancel import STOP_SIGNALS
from mzagent_tui.agent.config import ConfigError, Settings, save_user_setting
from mzagent_tui.agent.ground.providers import local_available
from mzagent_tui.agent.model.local import LocalServer, faster_engine_hint, needs_local, pointed_at, progress_text, start_local
from mzagent_tui.agent.planning import plan_task
from mzagent_tui.agent.prompt_commands import PROJECT_FOLDER, load_prompt_commands, user_commands_folder
from mzagent_tui.agent.run_config import RunConfig
from mzagent_tui.agent.safety.approval import MODE_DESCRIPTIONS, MODES, Policy
from mzagent_tui.agent.safety.sandbox import sandbox_label
from mzagent_tui.agent.sessions.history import SessionHistory, list_sessions, load_session
from mzagent_tui.attention import Attention
from mzagent_tui.collection_pacing import CollectionPacer
from mzagent_tui.screens.approval import ApprovalScreen
from mzagent_tui.screens.ask_text import AskTextScreen
from mzagent_tui.screens.choose import ChooseScreen
from mzagent_tui.screens.confirm import ConfirmScreen
from mzagent_tui.screens.theme import ThemeScreen
from mzagent_tui.task_completions import BUILT_INS
from mzagent_tui.widgets.conversation import Conversation
from mzagent_tui.widgets.entries import ObservationEntry
from mzagent_tui.widgets.key_footer import KeyFooter
from mzagent_tui.widgets.project_tree import ProjectTree
from mzagent_tui.widgets.run_status import RunState, RunStatus
from mzagent_tui.widgets.task_input import TaskInput

if TYPE_CHECKING:
    from mzagent_tui.agent.sessions.undo import Scope
    from mzagent_tui.screens.plan import PlanChoice

SETUP_HELP = (
    "No model endpoint is configured, so tasks cannot run yet. The file tree works.\n"
    "Set a key in the environment or a .env file, for example DEEPSEEK_API_KEY=… or OPENAI_API_KEY=…,\n"
    "or point at a local server: MZAGENT_BASE_URL=http://127.0.0.1:8080/v1 MZAGENT_MODEL=…\n"
    "Then restart mzagent. `mzagent config` shows what is set and where it came from."
)


COLLECTION_TICK = 0.25
"""How often the app sees whether a full garbage collection is due and nobody is typing."""
DOUBLE_ESCAPE_SECONDS = 0.8
"""How soon a second Esc must follow the first to open the rewind (as in Claude Code)."""


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
        Binding("ctrl+g", "background", "Background", show=False, id="app.background"),
        Binding("shift+tab", "cycle_mode", "Mode", priority=True, id="app.cycle_mode"),
    ]

    def __init__(
        self,
        config: RunConfig,
        clock: Callable[[], float] = time.monotonic,
        history: SessionHistory | None = None,
        pick_session: bool = False,
        collections: CollectionPacer | None = None,
    ) -> None:
        """`history` reopens a logged session at start; `pick_session` opens the session list;
        `collections` paces the process's full garbage collections (the real app; not in tests,
        where many apps share one process)."""
        super().__init__()
        self.config = config
        """What every run of this app runs with; only the model switch and the local model's start replace it."""
        self.project = config.project.resolve()
        self._clock = clock
        self._sandbox_label = sandbox_label(config.settings.sandbox)
        """Said in the header all session: how commands are confined here."""
        self._run_mode = self.policy.mode if self.policy.mode != "plan" else "ask"
        """The last mode other than plan: the one a plan is offered to run in."""
        self._local_server: LocalServer | None = None
        self._attention = Attention(config.settings.notify, clock)
        self._opening = history
        self._pick_session = pick_session
        self._escaped_at: float | None = None
        """When Esc was last pressed with no run going: a second one soon after opens the rewind."""
        self._theme_problem = self._use_configured_theme()
        """Why the configured theme is not on (said in the transcript at start), or ""."""
        self.closed = threading.Event()
        """Set when the app unmounts: its screen is gone, whatever threads still run."""
        self._collections = collections

    @property
    def settings(self) -> Settings:
        return self.config.settings

    @property
    def policy(self) -> Policy:
        return self.config.policy

    # Layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="main"):
            yield ProjectTree(self.project, id="tree")
            yield Conversation(self.config, self._clock, id="work")
        yield RunStatus(id="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._catch_stop_signals()
        self._status.mode = self.policy.mode
        self.watch(self.conversation, "run", self._show_run)
        if self._opening is not None:
            self.conversation.open_session(self._opening)
        if self._pick_session:
            self.action_resume()
        if self._theme_problem:
            self.conversation.say("error", self._theme_problem, title="theme")
        if self._collections is not None:
            self.call_after_refresh(self._collections.start)
            self.set_interval(COLLECTION_TICK, self._collections.tick, name="collections")
        if needs_local(self.settings) and local_available():
            self.conversation.hold("starting the offline model…", "starting the local model")
            self._start_local()
            return
        try:
            self.settings.endpoint()
        except ConfigError as exc:
            self.conversation.say("error", f"{exc}\n\n{SETUP_HELP}", title="setup needed")

    @property
    def conversation(self) -> Conversation:
        return self.query_one(Conversation)

    @property
    def _status(self) -> RunStatus:
        return self.query_one(RunStatus)

    def _show_run(self, run: RunState) -> None:
        model = self.settings.model or "no model"
        provider = self.settings.provider or "unconfigured"
        self.sub_title = f"{self.project} · {provider}/{model} · {self._sandbox_label} · {run.state}"
        self._status.run = run

    # The bundled model ----------------------------------------------------------------

    @work(thread=True, exit_on_error=False, group="local", description="start the local model")
    def _start_local(self) -> None:
        """Assemble the model and wait for llama.cpp's server; tasks typed meanwhile are queued."""
        conversation = self.conversation
        try:
            server = start_local(self._local_progress, lambda: conversation.token.cancelled, lambda server: self.call_from_thread(self._launch_local, server))
            hint = faster_engine_hint()
            self.call_from_thread(self._local_ready, f"ready: {server.model.name} ({server.describe()}){f'; faster: {hint}' if hint else ''}", server)
        except Exception as exc:  # noqa: BLE001 - shown as a notice, never a traceback
            self.call_from_thread(self._local_ready, str(exc) if isinstance(exc, ConfigError) else f"the offline model failed to start: {exc}")

    def _launch_local(self, server: LocalServer) -> None:
        """On the UI thread, which lives as long as the app (see LocalServer.launch); kept to stop it at exit."""
        self._local_server = server
        server.launch()

    def _local_progress(self, what: str, done: float, total: float) -> None:
        self.call_from_thread(self.conversation.show_progress, progress_text(what, done, total))

    def _local_ready(self, text: str, server: LocalServer | None = None) -> None:
        """On the UI thread: the settings point at the server from here on (None: it failed)."""
        if server is not None:
            self.config = self.config.with_settings(pointed_at(self.settings, server))
            self.conversation.config = self.config
        self.conversation.release(text, failed=server is None)

    # What the conversation reports ------------------------------------------------------

    @on(Conversation.FilesChanged)
    def _files_changed(self, message: Conversation.FilesChanged) -> None:
        """The tree marks what changed; a report that arrives while the app closes finds no tree."""
        try:
            tree = self.query_one(ProjectTree)
        except NoMatches:
            return
        tree.mark_changed(*message.written)
        if message.rescan:
            tree.refresh_folder(self.project)

    @on(Conversation.RunEnded)
    def _run_ended(self, message: Conversation.RunEnded) -> None:
        self._call_attention("mzagent run ended", message.message)

    @on(Conversation.SlashCommand)
    def _slash_command(self, message: Conversation.SlashCommand) -> None:
        """The app's own commands typed in the task box, each the same as its key or palette entry."""
        name, arguments = message.name, message.arguments
        if name == "mode":
            self._mode_command(arguments)
        elif name == "model" and arguments:
            self._switch_model(arguments)
        elif name == "theme":
            self._theme_command(arguments)
        elif name == "help":
            self.conversation.say("notice", self._slash_help(), title="commands")
        else:
            actions: dict[str, Callable[[], None]] = {
                "new": self.action_new_conversation, "undo": lambda: self.action_undo("last"), "compact": self.action_compact,
                "export": self.action_export, "resume": self.action_resume, "model": self.action_switch_model,
                "rewind": self.action_rewind, "fork": lambda: self.action_rewind(fork=True),
                "bg": self.action_background,
            }
            actions[name]()

    def _mode_command(self, mode: str) -> None:
        if mode in MODES:
            self.action_approval_mode(mode)
        elif not mode:
            items = [(f"{m}: {MODE_DESCRIPTIONS[m]}", m) for m in MODES]
            self.push_screen(ChooseScreen("Approval mode", items), callback=self._mode_chosen)
        else:
            self.notify(f"No mode {mode!r}: the modes are {', '.join(MODES)}.", severity="error", markup=False)

    def _mode_chosen(self, mode: str | None) -> None:
        if mode is not None:
            self.action_approval_mode(mode)

    # Themes -----------------------------------------------------------------------------

    def _use_configured_theme(self) -> str:
        """Put on the theme of the settings; a name Textual does not know leaves the default on
        and says why (a typo in the config must not stop the app)."""
        name = self.settings.theme
        if name in self.available_themes:
            self.theme = name
            return ""
        source = self.settings.sources.get("theme", "default")
        close = difflib.get_close_matches(name, self.available_themes, n=1)
        guess = f" (did you mean {close[0]}?)" if close else ""
        return f"No theme {name!r}{guess} in {source}; using {self.theme}. The themes are {', '.join(sorted(self.available_themes))}: /theme chooses one and saves it."

    def _theme_command(self, name: str) -> None:
        if not name:
            self.action_change_theme()
        elif name in self.available_themes:
            self._theme_chosen(name)
        else:
            self.notify(f"No theme {name!r}: /theme lists them.", severity="error", markup=False)

    def action_change_theme(self) -> None:
        """`/theme` and the palette's "Theme" (Textual's action, replaced): the picker, then saved."""
        self.push_screen(ThemeScreen(sorted(self.available_themes)), callback=self._theme_chosen)

    def _theme_chosen(self, name: str | None) -> None:
        """Put the theme on and save it in the user config, so the next start has it too."""
        if name is None:
            return
        self.theme = name
        try:
            where = save_user_setting("theme", name)
        except ConfigError as exc:
            self.notify(f"Theme {name} for this session only: {exc}", severity="error", markup=False)
            return
        source = self.settings.sources.get("theme", "")
        if source.startswith("environment"):
            self.notify(f"Theme {name} saved in {where}, but {source} still comes first at the next start.", severity="warning", markup=False)
        else:
            self.notify(f"Theme {name} (saved in {where}).", markup=False)

    def _slash_help(self) -> str:
        lines = [f"/{name} — {about}" for name, about in BUILT_INS.items()]
        prompts = load_prompt_commands(self.project)
        lines += [f"/{c.name} — {c.description} ({'from this project' if c.source == 'project' else c.path})" for c in prompts.values() if c.name not in BUILT_INS]
        if not prompts:
            lines.append(f"Prompt files: {user_commands_folder()}/NAME.md or {PROJECT_FOLDER}/NAME.md in the project become /NAME ($ARGUMENTS, $1… take what follows the name).")
        lines.append("@ completes a file of the project; // sends a task starting with / as it is.")
        return "\n".join(lines)

    @on(Conversation.PlanReady)
    def _plan_ready(self, message: Conversation.PlanReady) -> None:
        from mzagent_tui.screens.plan import PlanScreen  # Markdown (markdown-it) loads with the first plan, not at start-up

        self.push_screen(PlanScreen(message.plan, self._run_mode), callback=lambda choice: self._plan_chosen(message.plan, choice))

    def _plan_chosen(self, plan: str, choice: PlanChoice | None) -> None:
        """Run: switch to the chosen mode (yolo confirmed first) and send the plan as the next task."""
        if choice is None or choice.action == "cancel":
            self.notify("Plan dropped. Still in plan mode: shift+tab changes the mode.")
        elif choice.action == "keep":
            self.notify("Still in plan mode: say in the task box what the plan should change.")
            self.action_focus_task()
        elif choice.mode == "yolo":
            self.push_screen(ConfirmScreen("Run this plan with every command allowed, for the rest of this session?"), callback=lambda yes: self._run_plan(plan, "yolo") if yes else None)
        else:
            self._run_plan(plan, choice.mode)

    def _run_plan(self, plan: str, mode: str) -> None:
        self._apply_mode(mode)
        self.conversation.send(plan_task(plan))

    @on(ApprovalScreen.Opened)
    def _approval_opened(self, message: ApprovalScreen.Opened) -> None:
        self._call_attention("mzagent needs approval", message.request.summary)

    @on(TaskInput.Typed)
    def _typing(self) -> None:
        self._attention.typed()

    def _call_attention(self, title: str, body: str) -> None:
        """The bell or a desktop notification (settings.notify), written to the terminal like Textual's own bell."""
        sequence = self._attention.signal(title, body)
        if sequence and self._driver is not None:
            self._driver.write(sequence)

    @on(DirectoryTree.FileSelected)
    def _preview(self, event: DirectoryTree.FileSelected) -> None:
        path = Path(event.path)
        if path in self.query_one(ProjectTree).more_markers:
            self.notify("The tree lists the first 500 entries of a folder; the agent and the shell see them all.")
            return
        title = path.relative_to(self.project).as_posix() if path.is_relative_to(self.project) else str(path)
        from mzagent_tui.screens.preview import PreviewScreen

        self.push_screen(PreviewScreen(path, title))

    @on(ObservationEntry.OpenOutput)
    def _open_output(self, event: ObservationEntry.OpenOutput) -> None:
        from mzagent_tui.screens.preview import PreviewScreen

        self.push_screen(PreviewScreen(event.path, f"full output: {event.path}", highlight=False))

    # Actions ----------------------------------------------------------------------------

    def action_cancel_run(self) -> None:
        """Esc cancels a run; with no run and an empty task box, a second Esc soon after opens the rewind."""
        if self.conversation.run_active:
            self.conversation.cancel()
            return
        now = time.monotonic()  # key timing is real time (the injected clock times runs)
        if self.query_one("#task", TaskInput).value or self._escaped_at is None or now - self._escaped_at > DOUBLE_ESCAPE_SECONDS:
            self._escaped_at = now
            return
        self._escaped_at = None
        self.action_rewind()

    def action_new_conversation(self) -> None:
        self.conversation.new()
        self.notify("New conversation.")

    def action_compact(self) -> None:
        self.conversation.compact()

    async def action_find(self) -> None:
        await self.conversation.find()

    def action_resume(self) -> None:
        if self.conversation.task_running:
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
            self.conversation.open_session(load_session(Path(folder)))

    def action_undo(self, scope: Scope) -> None:
        self.conversation.undo(scope)

    def action_undo_to(self) -> None:
        """Choose a write; it and every later write are undone (the same checks as any undo)."""
        from mzagent_tui.agent.sessions.undo import write_label

        writes = self.conversation.undoable_writes()
        if not writes:
            self.notify("Nothing to undo: the agent has no writes left to take back in this conversation.")
            return
        items = [(write_label(w, self.project), str(w.number)) for w in reversed(writes)]
        self.push_screen(ChooseScreen("Undo back to (this write and every later one)", items), callback=self._undo_to)

    def _undo_to(self, number: str | None) -> None:
        if number is not None:
            self.conversation.undo(int(number))

    def action_background(self) -> None:
        """Ctrl+G and `/bg`: the conversation's background commands, their live output, a stop key."""
        from mzagent_tui.screens.background import BackgroundScreen

        processes = self.conversation.background
        if processes is None or not processes.all():
            self.notify("No background command in this conversation: the model starts one with start_background_command, you with !&command.")
            return
        self.push_screen(BackgroundScreen(processes))

    def action_rewind(self, fork: bool = False) -> None:
        """Choose a task to go back to (before it), then what goes back; the conversation does it."""
        from mzagent_tui.agent.sessions.rewind import task_label

        if self.conversation.task_running:
            self.notify("A run is going: wait for it to end (Esc cancels it), then rewind.", severity="warning")
            return
        tasks = self.conversation.tasks()
        if not tasks:
            self.notify("Nothing to rewind: this conversation has no task yet.")
            return
        items = [(f"before {task_label(task)}", task.number - 1) for task in reversed(tasks)]
        title = "Fork a new session from (the original stays whole)" if fork else "Rewind to (this task and every later one are taken back)"
        self.push_screen(ChooseScreen(title, items), callback=lambda to: self._rewind_point(to, fork))

    def _rewind_point(self, to: int | None, fork: bool) -> None:
        from mzagent_tui.agent.sessions.rewind import MODES

        if to is None:
            return
        items = [(about, mode) for mode, about in MODES.items() if not (fork and mode == "files")]
        self.push_screen(ChooseScreen("What goes back", items), callback=lambda mode: self.conversation.rewind(to, mode, fork) if mode is not None else None)

    def action_export(self) -> None:
        folder = self.conversation.session_folder
        if folder is None:
            self.notify("Nothing to export yet: run a task first.")
            return
        default = self.project / f"mzagent-{folder.name}.md"
        self.push_screen(AskTextScreen("Export this session as Markdown to:", str(default)), callback=self._export_to)

    def _export_to(self, answer: str | None) -> None:
        if not answer:
            return
        target = Path(answer).expanduser()
        self.conversation.export(target if target.is_absolute() else self.project / target)

    def action_toggle_tree(self) -> None:
        tree = self.query_one(ProjectTree)
        tree.display = not tree.display

    def action_focus_task(self) -> None:
        self.query_one(TaskInput).focus()

    def action_cycle_mode(self) -> None:
        """Shift+Tab: ask → auto-safe → plan → ask (yolo only from the palette, confirmed); in a
        dialog it moves the focus back as usual."""
        if isinstance(self.screen, ModalScreen):
            self.screen.focus_previous()
            return
        cycle = ("ask", "auto-safe", "plan")
        current = self.policy.mode
        self._apply_mode(cycle[(cycle.index(current) + 1) % len(cycle)] if current in cycle else "ask")

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
        if mode != "plan":
            self._run_mode = mode
        self._status.mode = mode
        self.notify(f"Approval mode: {mode}", severity="warning" if mode == "yolo" else "information")

    def action_switch_model(self) -> None:
        current = f"{self.settings.provider} {self.settings.model}".strip()
        self.push_screen(
            AskTextScreen("Switch to: provider and model (keys come from your environment or .env)", current, "deepseek deepseek-chat"),
            callback=self._switch_model,
        )

    def _switch_model(self, answer: str | None) -> None:
        """The same configuration with another provider/model (every other setting, flag and the
        policy kept); a new conversation starts if it works."""
        if not answer:
            return
        provider, _, model = answer.partition(" ")
        try:
            if provider == "local" and self._local_server is None:
                raise ConfigError("the offline model starts with the app: restart mzagent without a key to use it")
            config = self.config.with_model(provider, model.strip())
            if provider == "local" and self._local_server is not None:
                config = config.with_settings(pointed_at(config.settings, self._local_server))
            config.settings.endpoint()
        except ConfigError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self.config = config
        self.conversation.new(config)
        self._show_run(self.conversation.run)
        self.notify(f"Now using {config.settings.provider}/{config.settings.model}.", markup=False)

    def action_copy_answer(self) -> None:
        answer = self.conversation.last_answer
        if answer:
            self.copy_to_clipboard(answer)
            self.notify("Copied the last final answer.")

    def action_show_session_log(self) -> None:
        log = self.conversation.session_log
        if log is None:
            self.notify("No session yet: run a task first.")
            return
        from mzagent_tui.screens.preview import PreviewScreen

        self.push_screen(PreviewScreen(log, f"session log: {log}", highlight=False))

    def _catch_stop_signals(self) -> None:
        """SIGTERM and SIGHUP (a closed terminal) end the app like Ctrl+Q: the run is cancelled,
        its command group killed, the terminal restored, and the exit code is 143 / 129."""
        if threading.current_thread() is not threading.main_thread():
            return
        loop = asyncio.get_running_loop()
        for number in STOP_SIGNALS:
            loop.add_signal_handler(number, self._stop_by_signal, number)

    def _stop_by_signal(self, number: int) -> None:
        self.conversation.stop()
        self.exit(return_code=128 + number)

    def on_unmount(self) -> None:
        """The conversation has stopped its run by now (its own unmount); the local server goes last."""
        if threading.current_thread() is threading.main_thread():
            loop = asyncio.get_running_loop()
            for number in STOP_SIGNALS:
                loop.remove_signal_handler(number)
        if self._local_server is not None:
            self._local_server.stop()
        if self._collections is not None:
            self._collections.stop()
        self.closed.set()

    async def on_event(self, event: events.Event) -> None:
        if self._collections is not None and isinstance(event, events.InputEvent) and not event.is_forwarded:
            self._collections.input_seen()
        await super().on_event(event)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("New conversation", "Forget the conversation and start fresh", self.action_new_conversation)
        yield SystemCommand("Toggle file tree", "Show or hide the project files", self.action_toggle_tree)
        yield SystemCommand("Background commands", "Their live output; stop one (ctrl+g, /bg)", self.action_background)
        yield SystemCommand("Switch provider/model", "Use another endpoint or model (starts a new conversation)", self.action_switch_model)
        yield SystemCommand("Approval mode: ask", MODE_DESCRIPTIONS["ask"], lambda: self.action_approval_mode("ask"))
        yield SystemCommand("Approval mode: auto-safe", MODE_DESCRIPTIONS["auto-safe"], lambda: self.action_approval_mode("auto-safe"))
        yield SystemCommand("Approval mode: plan", MODE_DESCRIPTIONS["plan"], lambda: self.action_approval_mode("plan"))
        yield SystemCommand("Approval mode: yolo", f"{MODE_DESCRIPTIONS['yolo']}; dangerous, asks to confirm", lambda: self.action_approval_mode("yolo"))
        yield SystemCommand("Reopen a session", "List this project's sessions and continue one", self.action_resume)
        yield SystemCommand("Undo last write", "Take back the agent's last step: a file write, or the files a command changed (ctrl+z)", lambda: self.action_undo("last"))
        yield SystemCommand("Undo all writes of the last run", "Restore every file the agent's last run wrote", lambda: self.action_undo("run"))
        yield SystemCommand("Undo writes back to…", "Choose a write: it and every later write are taken back", self.action_undo_to)
        yield SystemCommand("Rewind…", "Take the files and the conversation back to before a task (esc esc)", self.action_rewind)
        yield SystemCommand("Fork from…", "Start a new session from before a task; this one stays whole", lambda: self.action_rewind(fork=True))
        yield SystemCommand("Compact the conversation", "The model summarises the older steps, which the summary replaces (the log keeps them)", self.action_compact)
        yield SystemCommand("Export session as Markdown", "Save the conversation as a Markdown file", self.action_export)
        yield SystemCommand("Find in transcript", "Search the transcript (ctrl+f)", self.action_find)
        yield SystemCommand("Copy final answer", "Copy the last final answer to the clipboard", self.action_copy_answer)
        yield SystemCommand("Show session log", "Open this session's log", self.action_show_session_log)


EXIT_GRACE = 5.0
"""Seconds a run's thread gets to end after the app has closed, before the process leaves it."""


def run_app(config: RunConfig, history: SessionHistory | None = None, pick_session: bool = False) -> int:
    app = MzAgentApp(config, history=history, pick_session=pick_session, collections=CollectionPacer())
    threading.Thread(target=_leave_a_stuck_run, args=(app,), name="mzagent-exit-watch", daemon=True).start()
    app.run()
    return app.return_code or 0


def _leave_a_stuck_run(app: MzAgentApp) -> None:
    """After the app has closed, asyncio waits for every worker thread to end: a run blocked in a
    tool that does not heed the cancel (a custom tool that sleeps, a library call that hangs)
    kept the process alive with its screen gone, until the tool returned. The cancel has been
    given (commands' groups are killed, streams closed, questions withdrawn) and every record
    is already in the session log, so past EXIT_GRACE the process ends without it."""
    app.closed.wait()
    time.sleep(EXIT_GRACE)
    print(f"mzagent: a tool was still running {EXIT_GRACE:.0f} s after the app closed; it was left behind", file=sys.stderr, flush=True)
    os._exit(app.return_code or 0)

