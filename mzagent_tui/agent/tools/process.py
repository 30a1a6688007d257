"""Run one shell command with a timeout, bounded memory, and no survivors.

The command gets its own session (process group), stdin from /dev/null and the project as
its working folder. On timeout or cancel the whole group gets SIGTERM, then SIGKILL after a
grace period; background children left behind by a finished command are stopped the same way.
Output is read on a thread: everything goes to a file (up to a cap), and memory holds only
the first and last few kilobytes.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.cancel import CancelToken

HEAD_BYTES = 5_000
TAIL_BYTES = 5_000
FILE_CAP_BYTES = 64 * 1024 * 1024
KILL_GRACE = 2.0
DRAIN_SECONDS = 1.0
_POLL = 0.05


@dataclass
class ProcessResult:
    exit_code: int | None
    head: bytes
    tail: bytes
    total_bytes: int
    timed_out: bool = False
    cancelled: bool = False
    stopped_background: bool = False

    @property
    def cut_bytes(self) -> int:
        return self.total_bytes - len(self.head) - len(self.tail)


# Why a supervising shell, and not a pipe-holding helper or a subreaper: the kernel already
# tells a child when the agent dies (PR_SET_PDEATHSIG, also on kill -9), but only the direct
# child, and a killed bash leaves its grandchildren running. So the direct child is a small shell
# that runs the command as a job of its own process group and waits for it. Its parent-death
# signal is SIGUSR1, which interrupts that `wait`, and the trap kills the whole group. A SIGTERM
# from the agent (cancel, timeout) is not trapped: the command gets it and its grace period as
# before. A subreaper needs the agent alive to reap; a helper holding a pipe cannot join a
# process group in another session. A shell's background job starts with SIGINT and SIGQUIT
# ignored, so `env --default-signal` gives the command the dispositions it would have had.
SUPERVISOR = """trap 'trap - USR1; kill -KILL 0' USR1
$3 "$2" -c "$1" &
wait $!
"""
_PR_SET_PDEATHSIG = 1
_RESET_SIGNALS = "env --default-signal=INT,QUIT"


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: a single-process child (the local model server) gets SIGKILL when the thread that
    started it dies, even by kill -9."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


def _tie_to_agent(agent_pid: int) -> None:  # pragma: no cover - runs in the child between fork and exec
    """The supervisor gets SIGUSR1 when the thread that started it dies, even by kill -9; if the
    agent died before this call, nobody would tell it, so it does not start."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGUSR1)
    except OSError:
        return
    if os.getppid() != agent_pid:
        os._exit(1)


def _child_setup(confine: Callable[[], None] | None) -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return confine
    agent_pid = os.getpid()

    def setup() -> None:  # pragma: no cover - runs in the child between fork and exec
        _tie_to_agent(agent_pid)
        if confine is not None:
            confine()

    return setup


@functools.cache
def _signal_reset() -> str:
    """`env --default-signal` where this `env` has it (GNU coreutils 8.31+), else nothing."""
    try:
        ok = subprocess.run(_RESET_SIGNALS.split() + ["true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return _RESET_SIGNALS if ok else ""


def shell_path() -> str:
    return shutil.which("bash") or "/bin/sh"



class _Capture:
    """Keeps the head and tail of a stream in memory and the whole (capped) stream on disk."""

    def __init__(self, output_path: Path) -> None:
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0
        self._file = output_path.open("wb")
        self._written = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self._written < FILE_CAP_BYTES:
            piece = chunk[: FILE_CAP_BYTES - self._written]
            self._file.write(piece)
            self._written += len(piece)
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail.append(chunk)
            self.tail_size += len(chunk)
            while self.tail_size - len(self.tail[0]) >= TAIL_BYTES:
                self.tail_size -= len(self.tail.popleft())

    def tail_bytes(self) -> bytes:
        return b"".join(self.tail)[-TAIL_BYTES:]

    def close(self) -> None:
        self._file.close()


def run_command(
    command: str,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    cancel: CancelToken,
    output_path: Path,
    confine: Callable[[], None] | None = None,
) -> ProcessResult:
    """`confine` runs in the child before exec (the sandbox), after it is tied to the agent's life."""
    capture = _Capture(output_path)
    setup = _child_setup(confine)
    proc = subprocess.Popen(
        [shell_path(), "-c", SUPERVISOR, "mzagent-supervisor", command, shell_path(), _signal_reset()],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=setup,
    )
    assert proc.stdout is not None
    reader = threading.Thread(target=_pump, args=(proc.stdout, capture), name="mzagent-output", daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    timed_out = cancelled = False
    while proc.poll() is None:
        if cancel.cancelled:
            cancelled = True
            break
        if time.monotonic() >= deadline:
            timed_out = True
            break
        try:
            proc.wait(_POLL)  # returns as soon as the command ends, not at the next tick
        except subprocess.TimeoutExpired:
            pass
    if timed_out or cancelled:
        _kill_group(proc.pid, proc)
    exit_code = proc.wait()
    reader.join(DRAIN_SECONDS)
    stopped_background = _kill_group(proc.pid, proc)
    reader.join(DRAIN_SECONDS)
    if reader.is_alive():  # a child that left the group still holds the pipe
        proc.stdout.close()
        reader.join(DRAIN_SECONDS)
    capture.close()
    return ProcessResult(
        exit_code=None if (timed_out or cancelled) else exit_code,
        head=bytes(capture.head),
        tail=capture.tail_bytes(),
        total_bytes=capture.total,
        timed_out=timed_out,
        cancelled=cancelled,
        stopped_background=stopped_background and not (timed_out or cancelled),
    )


def _pump(stream, capture: _Capture) -> None:  # noqa: ANN001 - a binary pipe
    try:
        while chunk := stream.read1(65536):
            capture.feed(chunk)
    except (OSError, ValueError):
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_group(pgid: int, proc: subprocess.Popen[bytes]) -> bool:
    """SIGTERM the group, then SIGKILL after a grace period. True if anything was alive."""
    if not _group_alive(pgid):
        return False
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + KILL_GRACE
    while time.monotonic() < deadline:
        proc.poll()
        if not _group_alive(pgid):
            return True
        time.sleep(_POLL)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.poll()
    return True
