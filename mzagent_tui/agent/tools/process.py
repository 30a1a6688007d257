"""Run one shell command with a timeout, bounded memory, and no survivors.

The command gets its own session (process group), stdin from /dev/null (or the input it is given) and the project as
its working folder. On timeout or cancel the whole group gets SIGTERM, then SIGKILL after a
grace period; background children left behind by a finished command are stopped the same way.
Output is read on a thread: everything goes to a file (up to a cap), and memory holds only
the first and last few kilobytes.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.safety import own_programs, trusted_path

HEAD_BYTES = 5_000
TAIL_BYTES = 5_000
FILE_CAP_BYTES = 64 * 1024 * 1024
KILL_GRACE = 2.0
SUPERVISOR_GRACE = KILL_GRACE + 4.0
"""The supervisor's own grace for the command is 1.5 s; then it ends what the command left."""
DRAIN_SECONDS = 1.0
_POLL = 0.05


@dataclass
class Stream:
    """The first and last few kilobytes of one output stream, and its true size."""

    head: bytes = b""
    tail: bytes = b""
    total_bytes: int = 0

    @property
    def cut_bytes(self) -> int:
        return self.total_bytes - len(self.head) - len(self.tail)


@dataclass
class ProcessResult:
    exit_code: int | None
    output: Stream
    """stdout and stderr together, as they arrived (the whole of it is in the output file)."""
    lines: int = 0
    """Lines in the whole output, as an editor counts them."""
    stdout: Stream = field(default_factory=Stream)
    stderr: Stream = field(default_factory=Stream)
    timed_out: bool = False
    cancelled: bool = False
    stopped_background: bool = False


# Why a supervising shell: the kernel tells a child when the agent dies (PR_SET_PDEATHSIG, also on
# kill -9), but only the direct child, and a killed bash leaves its grandchildren running. So the
# direct child is a small shell that runs the command and outlives it. Two kernel features make
# it the owner of everything the command starts:
# - job control (`set -m`) gives the command a process group of its own, apart from the
#   supervisor's, so the supervisor can stop that group, with a grace period, and live on;
# - it is a child subreaper (PR_SET_CHILD_SUBREAPER, kept across exec): a process that leaves
#   the group and its parent (`setsid … &`, a double fork) is re-parented to the supervisor, not
#   to init, and is ended from the supervisor's list of children until none is left (once
#   anything was killed, three empty reads in a row: read while many SIGCHLDs arrive, the list
#   came back empty with hundreds of children still there). Each round stops a child and all
#   its descendants (SIGSTOP, top-down) before it kills them all: killed one level at a time, a
#   chain whose next process forks as soon as the one above it dies kept the list from ever
#   coming back empty, and outlived the sweep. A child seen counts as something left even when
#   killing it fails: a fork-and-exit chain's member is often gone by the kill, and a failed
#   `kill` once ended the sweep with the chain's next member running on.
# When the command ends, `end TERM` stops what it left running; SIGTERM from the agent (cancel,
# timeout) does the same before the command has ended; SIGUSR1 (the agent died) ends everything
# at once; a second signal is ignored while it does so (the kernel sends the parent-death
# signal again each time the agent's dying threads hand the supervisor on). The command's group
# and what was stopped are told on a pipe of its own ($4), closed for the command (which can
# still reopen it through /proc/$PPID/fd, so the agent believes only its first line, and checks
# it: see _read_job). Once the command runs, the supervisor's stderr goes nowhere, so
# job-control notices never mix with the output.
# In the sandbox, where the kernel allows it, the supervisor is also the first process (init) of
# the command's own PID namespace (safety/pid_namespace.py): the command cannot stop or kill it,
# and when it ends the kernel ends everything left in the namespace. Popen's process is then a
# relay outside the namespace; the pids the supervisor uses and reports are the namespace's.
# A job-control shell does not ignore SIGINT and SIGQUIT in its jobs; `env --default-signal` is
# kept for a shell without job control, whose background jobs start with them ignored (and with
# stdin from /dev/null: `<&0` passes ours, empty or a hook's event).
SUPERVISOR = """{ set -m; } 2>/dev/null
report=$4
down() {
  local p t c
  for p; do
    kill -STOP "$p"
    all="$all $p"
    for t in /proc/"$p"/task/*/children; do c=; read -r c < "$t"; [ -n "$c" ] && down $c; done
  done
}
end() {
  kill -"$1" -- -"$job" && left=1
  n=0
  while [ "$1" = TERM ] && [ $n -lt 30 ] && kill -0 -- -"$job"; do sleep 0.05; n=$((n + 1)); done
  kill -KILL -- -"$job"
  n=0
  none=0
  while [ $n -lt 200 ] && [ $none -lt 3 ]; do
    kids=
    read -r kids < /proc/$$/task/$$/children
    all=
    [ -n "$kids" ] && down $kids
    if [ -n "$kids" ]; then kill -KILL $all; left=1; none=0; else none=$((none + 1)); fi
    [ -z "$left" ] && break
    sleep 0.02
    n=$((n + 1))
  done
  [ -n "$left" ] && echo stopped >&"$report"
}
trap 'trap "" USR1 TERM; end KILL; exit 137' USR1
trap 'trap "" TERM; end TERM; exit 143' TERM
eval "$3"' "$2" -c "$1" '"$4"'>&- <&0 &'
job=$!
exec 2>/dev/null
echo "job $job" >&"$report"
wait "$job"
code=$?
trap "" TERM
end TERM
exit $code
"""
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: a single-process child (the local model server) gets SIGKILL when the thread that
    started it dies, even by kill -9."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


def _tie_to_agent(agent_pid: int) -> None:  # pragma: no cover - runs in the child between fork and exec
    """The supervisor gets SIGUSR1 when the thread that started it dies, even by kill -9, and
    inherits whatever the command leaves orphaned; if the agent died before this call, nobody
    would tell it, so it does not start."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGUSR1)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1)
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


def shell_path() -> str:
    """The shell that supervises and runs every command: bash from the trusted PATH, absolute (a
    `.venv/bin/bash` a test run made would otherwise supervise the hooks, unconfined)."""
    return trusted_path.which("bash") or "/bin/sh"



class _Capture:
    """Keeps the head and tail of a stream in memory and, given a file, the whole (capped) stream on disk."""

    def __init__(self, output_path: Path | None = None, file_cap: int = FILE_CAP_BYTES) -> None:
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0
        self.newlines = 0
        self.ends_with_newline = True
        self._file = output_path.open("wb", buffering=0) if output_path else None  # unbuffered: a background command's file is read while it runs
        self._written = 0
        self._file_cap = file_cap
        self._lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self.total += len(chunk)
            self.newlines += chunk.count(b"\n")
            self.ends_with_newline = chunk.endswith(b"\n")
            if self._file is not None and self._written < self._file_cap:
                piece = chunk[: self._file_cap - self._written]
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

    def stream(self) -> Stream:
        return Stream(bytes(self.head), b"".join(self.tail)[-TAIL_BYTES:], self.total)

    def lines(self) -> int:
        return self.newlines + (0 if self.ends_with_newline or not self.total else 1)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


def run_command(
    command: str,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    cancel: CancelToken,
    output_path: Path,
    confine: Callable[[], None] | None = None,
    stdin: bytes | None = None,
    watch: Callable[[bytes], None] | None = None,
    file_cap: int = FILE_CAP_BYTES,
) -> ProcessResult:
    """`confine` runs in the child before exec (the sandbox), after it is tied to the agent's life.
    `stdin` is the command's whole input (a hook's event); without it stdin is empty. `watch`
    gets the output as it arrives (a background command's live view); the file keeps at most
    `file_cap` bytes of it."""
    capture = _Capture(output_path, file_cap)
    streams = {"stdout": _Capture(), "stderr": _Capture()}
    setup = _child_setup(confine)
    shell = shell_path()
    report, report_end = os.pipe()
    try:
        proc = subprocess.Popen(
            [shell, "-c", SUPERVISOR, "mzagent-supervisor", command, shell, own_programs.signal_reset_prefix(), str(report_end)],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=setup,
            pass_fds=(report_end,),
        )
    except BaseException:
        os.close(report)
        raise
    finally:
        os.close(report_end)
    namespace = user_namespace(proc.pid) if confine is not None else None
    if stdin is not None:
        threading.Thread(target=_feed, args=(proc.stdin, stdin), name="mzagent-stdin", daemon=True).start()
    pipes = {"stdout": proc.stdout, "stderr": proc.stderr}
    watched = (watch,) if watch is not None else ()
    readers = [
        threading.Thread(target=_pump, args=(pipe, (capture.feed, streams[name].feed, *watched)), name=f"mzagent-{name}", daemon=True)
        for name, pipe in pipes.items()
    ]
    for reader in readers:
        reader.start()
    job, early = _read_job(report, proc, min(timeout, 5.0))
    told = _Told(report, early)
    deadline = time.monotonic() + timeout
    timed_out = cancelled = False
    while proc.poll() is None:
        if cancel.cancelled:
            cancelled = True
            break
        told.read()
        if time.monotonic() >= deadline:
            timed_out = True
            break
        try:
            proc.wait(_POLL)  # returns as soon as the command ends, not at the next tick
        except subprocess.TimeoutExpired:
            pass
    if timed_out or cancelled:
        _kill_group(proc.pid, proc, SUPERVISOR_GRACE)
    exit_code = _reap(proc)
    told.close()
    if exit_code < 0 and job:  # the supervisor was killed (by us after its grace, or by the command) before it ended everything
        _kill_group(job, proc)
    # Where the command has a user namespace, whatever of it is still running is ended when the
    # supervisor did not end cleanly with nothing left: it was killed, the command was stopped, or
    # its sweep had work (it kills its children one level at a time, and a chain whose next
    # process forks as soon as the one above dies keeps it busy until it gives up). A command that
    # left nothing costs no look through /proc (2 ms a command).
    left_in_namespace = False
    if namespace is not None:
        if exit_code < 0 or timed_out or cancelled or told.stopped:
            left_in_namespace = end_namespace(namespace)
        os.close(namespace)
    _join(readers)
    stopped_background = _kill_group(proc.pid, proc) or told.stopped or left_in_namespace
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(_POLL)  # a supervisor held by a tracer: reaped once the namespace's end killed the tracer
    _join(readers)
    for name, reader in zip(pipes, readers):
        if reader.is_alive():  # a child that left the group still holds the pipe
            pipes[name].close()  # type: ignore[union-attr]
            reader.join(DRAIN_SECONDS)
    capture.close()
    return ProcessResult(
        exit_code=None if (timed_out or cancelled) else exit_code,
        output=capture.stream(),
        lines=capture.lines(),
        stdout=streams["stdout"].stream(),
        stderr=streams["stderr"].stream(),
        timed_out=timed_out,
        cancelled=cancelled,
        stopped_background=stopped_background and not (timed_out or cancelled),
    )


def _reap(proc: subprocess.Popen[bytes]) -> int:
    """The supervisor's exit code. A traced process that dies is reaped by its tracer first: a
    command that attached to its supervisor (ptrace, same user and sandbox) and never waits
    would leave the agent waiting forever, so a supervisor not reaped after the grace counts as
    killed (it was, or is now)."""
    try:
        return proc.wait(KILL_GRACE)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.kill(proc.pid, signal.SIGKILL)  # not reaped, so its pid is not reused
        return -signal.SIGKILL


_NS_GET_PARENT = 0xB702


def user_namespace(pid: int) -> int | None:
    """The user namespace a confined supervisor entered, as an open file (to close once done
    with it), None where it has none of its own: read once Popen returns, after the child's
    exec, so after it entered it. Held open, it keeps the namespace's number from being reused:
    a namespace's number is freed with it and the next one made anywhere on the machine (a
    browser's sandbox, a container) takes it, and the agent would end what is in that one."""
    try:
        fd = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_ino != os.stat("/proc/self/ns/user").st_ino:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _inside(pid: str, namespace: int) -> bool:
    """The process is in `namespace` or in a namespace made inside it (`unshare -U`)."""
    try:
        fd = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY)
    except OSError:
        return False
    try:
        for _ in range(32):  # the kernel nests user namespaces 32 deep at most
            if os.fstat(fd).st_ino == namespace:
                return True
            parent = fcntl.ioctl(fd, _NS_GET_PARENT)
            os.close(fd)
            fd = parent
    except OSError:
        pass
    finally:
        os.close(fd)
    return False


def end_namespace(held: int, rounds: int = 20) -> bool:
    """SIGKILL every process in the command's user namespace (`held` open, see user_namespace);
    True if there was any. A command
    can kill its own supervisor (`kill -9 $PPID`, they share the sandbox), and what it detached
    would live on, re-parented to init; the namespace still tells which processes were the command's."""
    killed = False
    namespace = os.fstat(held).st_ino
    for _ in range(rounds):
        found = [int(pid) for pid in os.listdir("/proc") if pid.isdigit() and _inside(pid, namespace)]
        if not found:
            return killed
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed = True
        time.sleep(_POLL)
    return killed


def _feed(pipe, data: bytes) -> None:  # noqa: ANN001 - a binary pipe
    """Write the input on a thread, so a command that never reads it cannot block the runner."""
    try:
        pipe.write(data)
    except (OSError, ValueError):
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def _read_job(fd: int, proc: subprocess.Popen[bytes], seconds: float) -> tuple[int, bytes]:
    """The command's process group, from the supervisor's first line (`job N`, written as soon
    as it started the command), and what else was read. The pipe is closed for the command, but
    the command can reopen it (/proc/$PPID/fd/N: same user, same sandbox) and write `job <any
    group of the user>` before killing the supervisor, and the agent, unconfined, would end that
    group. So only the first line counts, and only if N is then a child of the supervisor leading
    its own group; otherwise no group is ended by number (the namespace still is). In a PID
    namespace of its own N is a pid of that namespace: it names no child of the relay here (at
    most, by chance, the relay's own group, which is ended anyway), and none is needed: the
    namespace ends with its supervisor."""
    data = b""
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:  # not select.select: it fails on a descriptor numbered 1024 or more
        selector.register(fd, selectors.EVENT_READ)
        while b"\n" not in data and len(data) < 4096 and time.monotonic() < deadline:
            if selector.select(_POLL):
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                data += chunk
            elif proc.poll() is not None:
                break
    line, _, rest = data.partition(b"\n")
    word, _, value = line.decode("ascii", "replace").partition(" ")
    if word != "job" or not value.isdigit():
        return 0, rest
    job = int(value)
    if not os.path.isdir("/proc"):  # no /proc: nor any /proc/$PPID/fd to reopen the pipe through
        return job, rest
    try:
        with open(f"/proc/{job}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        return (job if int(fields[1]) == proc.pid and int(fields[2]) == job else 0), rest
    except (OSError, IndexError, ValueError):
        return 0, rest


class _Told:
    """What the supervisor tells after its first line: whether it stopped anything the command
    left running. Read as it comes, not once the supervisor has exited: a command that filled
    the pipe (reopened through /proc/$PPID/fd, see _read_job) blocked the supervisor's last line
    after its sweep until the timeout. A line the command writes there can at most claim
    `stopped`, and only a few bytes are kept."""

    def __init__(self, fd: int, early: bytes) -> None:
        self.fd = fd
        self.stopped = False
        self._tail = b"\n"
        os.set_blocking(fd, False)
        self._feed(early)

    def _feed(self, data: bytes) -> None:
        text = self._tail + data
        self.stopped = self.stopped or b"\nstopped\n" in text
        self._tail = text[-16:]

    def read(self) -> None:
        """What is in the pipe now (a pipe holds 64 KiB: a writer that never stops is not followed)."""
        with contextlib.suppress(BlockingIOError):
            for _ in range(4):
                if not (chunk := os.read(self.fd, 65536)):
                    break
                self._feed(chunk)

    def close(self) -> None:
        self.read()
        os.close(self.fd)


def _pump(stream, feeds: tuple[Callable[[bytes], None], ...]) -> None:  # noqa: ANN001 - a binary pipe
    """Feed one pipe into the combined capture, its own, and a watcher if there is one."""
    try:
        while chunk := stream.read1(65536):
            for feed in feeds:
                feed(chunk)
    except (OSError, ValueError):
        pass


def _join(readers: list[threading.Thread]) -> None:
    deadline = time.monotonic() + DRAIN_SECONDS
    for reader in readers:
        reader.join(max(0.0, deadline - time.monotonic()))


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _traced(pid: int) -> bool:
    """Held in a ptrace stop: SIGCONT does not end it and only the tracer can, so waiting out the
    grace for it to act on SIGTERM would only keep the agent waiting."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].startswith("t")


def _kill_group(pgid: int, proc: subprocess.Popen[bytes], grace: float = KILL_GRACE) -> bool:
    """SIGTERM the group (and SIGCONT, should it be stopped), then SIGKILL after a grace period.
    True if anything was alive."""
    if not _group_alive(pgid):
        return False
    try:
        os.killpg(pgid, signal.SIGTERM)
        # A stopped process acts on nothing but SIGKILL: a command that stopped its supervisor
        # (kill -STOP $PPID) would have it killed before it swept what the command left.
        os.killpg(pgid, signal.SIGCONT)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and not _traced(pgid):
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
