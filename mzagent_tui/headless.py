"""`mzagent run`: the agent core driven from a plain terminal (or a pipe), no Textual.

The agent runs on a worker thread so Ctrl+C in the main thread becomes a clean cancel: the
command's process group is stopped and the run ends as "cancelled".
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO, assert_never

from mzagent_tui.agent.assembly import assemble
from mzagent_tui.agent.cancel import STOP_SIGNALS, CancelToken
from mzagent_tui.agent.event_text import describe, task_list_text
from mzagent_tui.agent.events import (
    ApprovalAnswered,
    Event,
    FileChanged,
    FinalAnswer,
    Observation,
    StepStarted,
    Stopped,
    StopReason,
    TaskListUpdated,
    TaskStarted,
)
from mzagent_tui.agent.loop import RunResult
from mzagent_tui.agent.model.local import progress_text
from mzagent_tui.agent.run_config import RunConfig
from mzagent_tui.agent.safety.approval import ApprovalDecision, Approver, StaticApprover, offered_rule
from mzagent_tui.agent.safety.approval_requests import (
    ApprovalRequest,
    CommandApproval,
    FileChangeApproval,
    GitEntryApproval,
    PartVerdict,
    PlantedFileApproval,
    SecretReadApproval,
    ToolCallApproval,
    WriteApproval,
)
from mzagent_tui.agent.safety.textsafe import for_display, shown_exactly
from mzagent_tui.agent.sessions.history import SessionHistory

EXIT_OK, EXIT_STOPPED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130
OBSERVATION_LINES = 30
_COLOURS = {
    "thought": "36", "action": "33", "observation": "2", "tasks": "35", "final": "1;32", "error": "31", "notice": "2;33", "step": "2",
    "added": "32", "removed": "31", "hunk": "36",
}
DIFF_LINES = 200
"""Diff lines printed per change; the export and the session log keep all of it."""
PLAN_LABEL = "Plan (nothing was changed; to carry it out, send it as the task with --approval ask or auto-safe):\n"
NO_TERMINAL_NOTE = "no terminal to ask the user; run with --yes to allow commands and gated writes (or --no to silence this)"


class ConsolePrinter:
    """A readable trace: thought, action, observation per step; the final answer last."""

    def __init__(self, out: TextIO, err: TextIO, colour: bool, root: Path) -> None:
        self.out, self.err, self.colour, self.root = out, err, colour, root
        self.final_answer: str | None = None
        self.plan = False

    def _line(self, stream: TextIO, style: str, label: str, text: str) -> None:
        text = for_display(text)
        if self.colour:
            label = f"\x1b[{_COLOURS[style]}m{label}\x1b[0m"
        stream.write(f"{label}{text}\n")
        stream.flush()

    def __call__(self, event: Event) -> None:
        match event:
            case TaskStarted(task=task):
                self._line(self.out, "step", "Task: ", task_head(task))
            case StepStarted(step=step, max_steps=limit):
                self._line(self.out, "step", f"── step {step}/{limit} ", "")
            case Observation(text=text):
                lines = text.splitlines()
                if len(lines) > OBSERVATION_LINES:
                    lines = lines[:OBSERVATION_LINES] + [f"... ({len(lines) - OBSERVATION_LINES} more lines)"]
                self._line(self.out, "observation", "Observation: ", "\n".join(lines))
            case FileChanged():
                self._line(self.out, "action", "Changed: ", event.summary(self.root))
                self._diff(event.diff)
            case TaskListUpdated(steps=steps):
                self._line(self.out, "tasks", "Task list:\n", task_list_text(steps))
            case FinalAnswer(text=text, plan=plan):
                self.final_answer, self.plan = text, plan
            case Stopped(reason=StopReason.FINAL_ANSWER):
                self._line(self.out, "final", PLAN_LABEL if self.plan else "Final answer:\n", self.final_answer or "")
            case _:
                described = describe(event, self.root)
                if described is not None:
                    aside = described.kind in ("notice", "error") and not isinstance(event, ApprovalAnswered)
                    stream = self.err if aside else self.out  # the trace on stdout, with the user's answers; the rest on stderr
                    self._line(stream, described.kind, f"{described.label}: ", described.text)


    def _diff(self, diff: str) -> None:
        lines = for_display(diff).splitlines()
        for line in lines[:DIFF_LINES]:
            style = "hunk" if line.startswith("@@") else "added" if line.startswith("+") else "removed" if line.startswith("-") else ""
            self.out.write(f"\x1b[{_COLOURS[style]}m{line}\x1b[0m\n" if self.colour and style else line + "\n")
        if len(lines) > DIFF_LINES:
            self.out.write(f"... ({len(lines) - DIFF_LINES} more diff lines; the export has all of them)\n")
        self.out.flush()


class JsonPrinter:
    """Every event as one JSON line on stdout."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        line = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()


class TerminalApprover:
    """Asks on the terminal: y(es), n(o), r(eason), e(dit), a(lways allow a prefix)."""

    def __init__(self, out: TextIO, read_line=input) -> None:  # noqa: ANN001 - a callable like input
        self.out = out
        self.read_line = read_line

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self._show(request)
        sandboxed = isinstance(request, CommandApproval) and request.sandboxed
        while True:
            try:
                extra = " / [o]utside sandbox / [w]ith network" if sandboxed else ""
                answer = self.read_line(f"Allow? [y]es / [N]o / [r]eject with reason / {_choices(request)}{extra}: ").strip().lower()
            except EOFError:
                return ApprovalDecision(False, note="no answer from the terminal")
            if answer in ("y", "yes"):
                return ApprovalDecision(True)
            if answer in ("", "n", "no"):
                return ApprovalDecision(False)
            if answer == "o" and sandboxed:
                return ApprovalDecision(True, outside_sandbox=True, note="run outside the sandbox by the user")
            if answer == "w" and sandboxed:
                return ApprovalDecision(True, network=True, note="run with network by the user")
            if answer == "r":
                return ApprovalDecision(False, note=self.read_line("Reason for the agent: ").strip())
            if answer == "e" and isinstance(request, CommandApproval):
                edited = self.read_line("Command to run instead: ").strip()
                if edited:
                    return ApprovalDecision(True, command=edited)
            if answer == "a" and (always := self._always(request)) is not None:
                return always

    def _show(self, request: ApprovalRequest) -> None:
        """What is asked, its warning and its parts' verdicts, the reason, a file's diff and the
        sandbox a command runs in."""
        match request:
            case CommandApproval():
                self.out.write(f"\nThe agent wants to run:\n  {shown_exactly(request.command, keep=chr(10))}\n")
                if request.warning:
                    self.out.write(f"Warning: {request.warning}\n")
                self._parts(request.parts)
            case ToolCallApproval():
                self.out.write(f"\nThe agent wants to call the tool {for_display(request.tool)} with:\n{for_display(request.shown_arguments)}\n")
                self._parts(request.parts)
            case WriteApproval() | PlantedFileApproval() | GitEntryApproval() | SecretReadApproval():
                self.out.write(f"\nThe agent wants to do:\n  {shown_exactly(request.summary, keep='')}\n")
            case _:
                assert_never(request)
        if request.reason:
            self.out.write(f"Reason: {for_display(request.reason)}\n")
        if isinstance(request, FileChangeApproval) and request.diff:
            self.out.write(for_display(request.diff).rstrip("\n") + "\n")
        if isinstance(request, CommandApproval) and request.sandboxed:
            self.out.write(f"{request.sandbox} (o: run outside it, w: with network, this command only)\n")
        self.out.flush()

    def _parts(self, parts: tuple[PartVerdict, ...]) -> None:
        for part in parts:
            risks = "".join(f" [{risk}]" for risk in part.risks)
            self.out.write(f"  {part.verdict:>5}: {shown_exactly(part.text)} — {shown_exactly(part.reason)}{risks}\n")

    def _always(self, request: ApprovalRequest) -> ApprovalDecision | None:
        """"a": a rule for the rest of the session (None: this kind offers none)."""
        match request:
            case CommandApproval():
                offered = offered_rule(request)
                prefix = self.read_line(f"Always allow commands starting with [{offered}]: ").strip() or offered
                return ApprovalDecision(True, always_prefix=prefix, save_rule=self._save_rule())
            case ToolCallApproval():
                return ApprovalDecision(True, always_prefix=offered_rule(request), save_rule=self._save_rule())
            case WriteApproval():
                offered = offered_rule(request)
                glob = self.read_line(f"Allow writes for this session to paths matching [{offered}]: ").strip() or offered
                return ApprovalDecision(True, allow_writes=glob)
            case PlantedFileApproval() | GitEntryApproval() | SecretReadApproval():
                return None
            case _:
                assert_never(request)

    def _save_rule(self) -> bool:
        return self.read_line("Also in every later session (saved to your config)? [y/N]: ").strip().lower() in ("y", "yes")


def _choices(request: ApprovalRequest) -> str:
    """The prompt's kind-specific choices."""
    match request:
        case WriteApproval():
            return "[a]llow writes like it"
        case ToolCallApproval():
            return "[a]lways allow this tool"
        case CommandApproval() | PlantedFileApproval() | GitEntryApproval() | SecretReadApproval():
            return "[e]dit / [a]lways"
        case _:
            assert_never(request)


def choose_approver(yes: bool, no: bool, interactive: bool, out: TextIO) -> Approver:
    if yes:
        return StaticApprover(True, note="approved by --yes")
    if no:
        return StaticApprover(False, note="commands are disabled for this run (--no)")
    if interactive:
        return TerminalApprover(out)
    return StaticApprover(False, note=NO_TERMINAL_NOTE)


def run_headless(
    config: RunConfig,
    task: str,
    approver: Approver,
    as_json: bool,
    history: SessionHistory | None = None,
    needs_model: bool = True,
) -> int:
    """Run one task (continuing `history` if given) and return the exit code: a `!command`'s
    own exit code, else whether the run ended with a final answer."""
    out, err = sys.stdout, sys.stderr
    sink = JsonPrinter(out) if as_json else ConsolePrinter(out, err, colour=out.isatty(), root=config.project.resolve())
    agent = assemble(config, approver, sink, history, needs_model)
    cancel = CancelToken()
    outcome: list[RunResult] = []
    finished = threading.Event()

    def work() -> None:
        try:
            outcome.append(agent.run(task, cancel))
        finally:
            finished.set()

    # An Event, not Thread.join: a KeyboardInterrupt inside join() can leave the thread
    # looking finished while it still runs (CPython gh-90882).
    threading.Thread(target=work, name="mzagent-agent", daemon=True).start()
    exit_code = EXIT_CANCELLED
    with stop_signals():
        try:
            while not finished.wait(0.2):
                pass
        except (KeyboardInterrupt, Terminated) as exc:
            exit_code = 128 + exc.signal if isinstance(exc, Terminated) else EXIT_CANCELLED
            _say(err, "\nCancelling… (Ctrl+C again to quit at once)\n")
            cancel.cancel()
            try:
                finished.wait(30)
            except (KeyboardInterrupt, Terminated):
                return exit_code
    agent.close()
    if finished.is_set():
        agent.session.close()
    if not as_json:
        _say(err, f"{agent.meter.summary()} · session {agent.session.id}\n")
    if not outcome:
        return exit_code
    reason = outcome[0].reason
    if reason is StopReason.FINAL_ANSWER:
        return EXIT_OK
    if reason is StopReason.USER_COMMAND and outcome[0].exit_code is not None:
        return outcome[0].exit_code
    return exit_code if reason is StopReason.CANCELLED else EXIT_STOPPED


class Terminated(Exception):
    """SIGTERM (CI's `timeout`, a service manager) or SIGHUP (a closed terminal): like Ctrl+C."""

    def __init__(self, number: int) -> None:
        super().__init__(signal.Signals(number).name)
        self.signal = number


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into `Terminated` in the main thread while a run goes on."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_terminated(number: int, frame: object) -> None:
        raise Terminated(number)

    previous = {number: signal.signal(number, raise_terminated) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _say(stream: TextIO, text: str) -> None:
    """After SIGHUP the terminal may be gone: a failed write must not stop the cancel."""
    try:
        stream.write(text)
        stream.flush()
    except OSError:
        pass


class ProgressPrinter:
    """Waits of the local model on stderr: bytes while assembling, seconds while loading.

    On a terminal one line is rewritten a few times a second; in a log, a line every 5 s.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self._last = 0.0

    def __call__(self, what: str, done: float, total: float) -> None:
        now = time.monotonic()
        finished = bool(total) and done >= total
        if now - self._last < (0.2 if self.tty else 5.0) and not finished:
            return
        self._last = now
        line = progress_text(what, done, total)
        if self.tty:
            self.stream.write(f"\r{line}\x1b[K" + ("\n" if finished else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


TASK_ECHO_CHARS = 500


def task_head(task: str) -> str:
    """The task as echoed on the console: a pasted megabyte is cut to its head and a count."""
    if len(task) <= TASK_ECHO_CHARS:
        return task
    return f"{task[:TASK_ECHO_CHARS]}… ({len(task) - TASK_ECHO_CHARS:,} more characters)"
