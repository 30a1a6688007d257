"""Background commands: a dev server or a watcher that keeps running while the agent works on.

Each runs through `process.run_command` on a thread of its own, so it has what every command has:
the supervisor (it ends everything the command starts, and everything ends if the agent dies:
the thread that started the supervisor is the one that waits for it), the sandbox, and an output
file of the session. It has no timeout; its own cancel token is its stop button. The session's
end stops them all (`stop_all`). Only the output's last few kilobytes stay in memory; the file
keeps up to `FILE_CAP_BYTES`.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.events import BackgroundEnded, BackgroundOutput, BackgroundStarted, EventSink
from mzagent_tui.agent.ground.errors import ToolError
from mzagent_tui.agent.safety.textsafe import strip_control
from mzagent_tui.agent.tools.process import DRAIN_SECONDS, KILL_GRACE, SUPERVISOR_GRACE, ProcessResult, run_command

FILE_CAP_BYTES = 8 * 1024 * 1024
"""What a background command's output file keeps; later output is seen live, not kept."""
LATEST_BYTES = 4000
"""The output kept in memory: what `background_output` and the app's panel show."""
FIRST_OUTPUT_SECONDS = 2.0
"""How long starting one waits for its first output (or its end) before it returns."""
EVENT_SECONDS = 0.5
EVENT_BYTES = 2000
"""A `BackgroundOutput` event at most every EVENT_SECONDS, holding at most its last EVENT_BYTES."""
EVENTS_CAP_BYTES = 64 * 1024
"""Output told in events per command, at most (the session log keeps every event)."""
STOP_SECONDS = SUPERVISOR_GRACE + KILL_GRACE + 2 * DRAIN_SECONDS + 1.0
"""How long a stop waits for the command's end: the supervisor's grace, then the kill."""

Runner = Callable[[CancelToken, Callable[[bytes], None]], ProcessResult]
"""Runs the command to its end: run_command with the session's sandbox, given the stop token
and the output's watcher."""


@dataclass
class BackgroundProcess:
    """One background command, as the tools and the app's panel see it."""

    id: str
    command: str
    output_path: Path
    by_user: bool = False
    result: ProcessResult | None = None
    stopped: bool = False
    failed: str = ""
    """Why it could not start ("": it started): no process ran, so it was not stopped either."""
    total_bytes: int = 0
    _latest: bytearray = field(default_factory=bytearray)
    _unread: int = 0
    """Bytes of output the model has not been shown yet (counted up to LATEST_BYTES)."""
    _pending: bytearray = field(default_factory=bytearray)
    _told: int = 0
    _cancel: CancelToken = field(default_factory=CancelToken)
    _done: threading.Event = field(default_factory=threading.Event)
    _told_end: threading.Event = field(default_factory=threading.Event)
    """Set once its end has been told (`BackgroundEnded`): the session's end waits for it."""
    _arrived: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def running(self) -> bool:
        return not self._done.is_set()

    def status(self) -> str:
        if self.running:
            return "stopping" if self._cancel.cancelled else "running"
        if self.failed:
            return "failed"
        if self.stopped or self.result is None or self.result.exit_code is None:
            return "stopped"
        return f"exit {self.result.exit_code}"

    def latest(self) -> str:
        """The output's last few kilobytes, as text without control characters."""
        with self._lock:
            return strip_control(bytes(self._latest).decode("utf-8", "replace"))

    def unread(self) -> tuple[str, int]:
        """The output the model has not been shown (its last LATEST_BYTES at most) and how many
        bytes of it were cut; it counts as shown from now on."""
        with self._lock:
            kept = min(self._unread, len(self._latest))
            data = bytes(self._latest[len(self._latest) - kept :]) if kept else b""
            cut = self._unread - kept
            self._unread = 0
        return strip_control(data.decode("utf-8", "replace")), cut

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self.total_bytes += len(chunk)
            self._unread += len(chunk)
            self._latest += chunk
            del self._latest[: max(0, len(self._latest) - LATEST_BYTES)]
            if self._told < EVENTS_CAP_BYTES:
                self._pending += chunk
                del self._pending[: max(0, len(self._pending) - EVENT_BYTES)]
        self._arrived.set()

    def take_pending(self) -> str:
        with self._lock:
            data = bytes(self._pending)
            self._pending.clear()
            self._told += len(data)
        return strip_control(data.decode("utf-8", "replace"))

    def stop(self) -> None:
        self._cancel.cancel()

    def wait(self, seconds: float) -> bool:
        """True once it has ended."""
        return self._done.wait(seconds)

    def wait_for_output(self, seconds: float) -> None:
        """Until it printed something or ended, `seconds` at most; then a moment for the rest
        of a first burst (or the end of a command that printed and exits)."""
        deadline = time.monotonic() + seconds
        while not self._arrived.is_set() and not self.wait(0.05) and time.monotonic() < deadline:
            pass
        self.wait(0.2)


class BackgroundProcesses:
    """The session's background commands: started, listed, stopped, all stopped at its end."""

    def __init__(self, emit: EventSink) -> None:
        self._emit = emit
        self._processes: dict[str, BackgroundProcess] = {}
        self._lock = threading.Lock()
        self._closed = False

    def start(self, command: str, output_path: Path, run: Runner, by_user: bool = False) -> BackgroundProcess:
        """Start it and return once it printed something, ended, or FIRST_OUTPUT_SECONDS passed."""
        with self._lock:
            if self._closed:
                raise ToolError("background.session_ended")
            process = BackgroundProcess(f"bg{len(self._processes) + 1}", command, output_path, by_user)
            self._processes[process.id] = process
        self._emit(BackgroundStarted(process.id, command, str(output_path), by_user))
        threading.Thread(target=self._run, args=(process, run), name=f"mzagent-{process.id}", daemon=True).start()
        threading.Thread(target=self._report, args=(process,), name=f"mzagent-{process.id}-report", daemon=True).start()
        process.wait_for_output(FIRST_OUTPUT_SECONDS)
        return process

    def _run(self, process: BackgroundProcess, run: Runner) -> None:
        try:
            process.result = run(process._cancel, process.feed)
        except (OSError, subprocess.SubprocessError) as exc:
            process.failed = str(exc) or type(exc).__name__
        finally:
            process.stopped = not process.failed and (process._cancel.cancelled or process.result is None)
            process._done.set()

    def _report(self, process: BackgroundProcess) -> None:
        """Tell the output as it comes, then the end."""
        while not process.wait(EVENT_SECONDS):
            self._tell_output(process)
        self._tell_output(process)
        code = process.result.exit_code if process.result is not None and not process.stopped else None
        try:
            self._emit(BackgroundEnded(process.id, process.command, code, process.stopped, process.failed))
        finally:
            process._told_end.set()

    def _tell_output(self, process: BackgroundProcess) -> None:
        if text := process.take_pending():
            self._emit(BackgroundOutput(process.id, text))

    def get(self, process_id: str) -> BackgroundProcess | None:
        with self._lock:
            return self._processes.get(process_id.strip())

    def all(self) -> list[BackgroundProcess]:
        with self._lock:
            return list(self._processes.values())

    def stop(self, process_id: str) -> BackgroundProcess | None:
        """Stop one and wait for its end (None: no such id)."""
        process = self.get(process_id)
        if process is not None:
            process.stop()
            process.wait(STOP_SECONDS)
        return process

    def stop_all(self) -> None:
        """The session's end: stop every one, then wait for them all; none starts after it."""
        with self._lock:
            self._closed = True
        processes = self.all()
        for process in processes:
            process.stop()
        deadline = time.monotonic() + STOP_SECONDS + EVENT_SECONDS
        for process in processes:
            process.wait(max(0.0, deadline - time.monotonic()))
            process._told_end.wait(max(0.0, deadline - time.monotonic()))  # its end is in the log before the session closes


def runner_for(
    command: str, cwd: Path, env: Mapping[str, str], output_path: Path, confine: Callable[[], None] | None,
) -> Runner:
    """The runner of one background command: run_command without a timeout."""

    def run(cancel: CancelToken, watch: Callable[[bytes], None]) -> ProcessResult:
        return run_command(command, cwd, env, float("inf"), cancel, output_path, confine, watch=watch, file_cap=FILE_CAP_BYTES)

    return run
