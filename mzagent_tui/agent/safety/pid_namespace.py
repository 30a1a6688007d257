"""A PID namespace of the command's own: it sees only its own processes in `/proc` (not your
editor's or shells' command lines and environments, nor mzagent's), has no pid of anything
outside to signal or trace, and everything it starts dies when its first process does.

`unshare(CLONE_NEWPID)` moves only the caller's children into the new namespace, so the child
that `Popen` made forks once more, between entering its namespaces and confining itself:

- the new child is the namespace's first process (its init). It mounts a `/proc` of its
  namespace over the old one (only a process inside can), and goes on to become the command's
  supervising shell (tools/process.py). As init it is the reaper of whatever the command
  orphans, and the command cannot stop or kill it (the kernel drops a signal to a namespace's
  init from inside that it has no handler for, SIGKILL and SIGSTOP included). When it exits,
  the kernel kills everything left in the namespace, namespaces made inside it included;
- the parent stays outside, as the process the agent started (its `Popen`), so the agent's
  view of a command (its exit code, its process group, its user namespace) is unchanged. It
  passes SIGTERM on, ends the namespace at once when the agent is gone (the parent-death signal,
  SIGUSR1), and exits as its child did. Its child dies if it dies (SIGKILL by the agent).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from typing import NoReturn

_PR_SET_PDEATHSIG = 1
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_WAITED = {signal.SIGTERM, signal.SIGUSR1, signal.SIGCHLD}
"""What the relay acts on, blocked from before the fork so none is lost to a default action."""


def become_first_process(libc: ctypes.CDLL) -> None:  # pragma: no cover - runs in the child
    """Called after unshare(CLONE_NEWPID): returns in the namespace's first process, with a
    `/proc` of the namespace; the caller stays behind as the relay and never returns."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)
    try:
        child = os.fork()
    except OSError:
        os._exit(126)
    if child:
        _relay(child)
    signal.pthread_sigmask(signal.SIG_SETMASK, before)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        os._exit(126)
    if libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None) != 0:
        os._exit(126)  # never run a command that sees the old /proc while the session says it does not


def _relay(child: int) -> NoReturn:  # pragma: no cover - runs in the child
    """Wait for the namespace's first process and exit as it did. SIGTERM (cancel, timeout) is
    passed on: the supervisor ends the command with a grace period. SIGUSR1 means the agent is
    gone: the first process is killed, and with it the namespace. Every file is closed first:
    the pipes the agent reads (and the one telling it the exec happened) see their end when the
    command's side does, not when this process exits."""
    status = 126 << 8
    try:
        os.closerange(0, os.sysconf("SC_OPEN_MAX"))
        while True:
            number = signal.sigwaitinfo(_WAITED).si_signo
            with contextlib.suppress(ProcessLookupError):
                if number == signal.SIGTERM:
                    os.kill(child, signal.SIGTERM)
                elif number == signal.SIGUSR1:
                    os.kill(child, signal.SIGKILL)
            pid, status = os.waitpid(child, os.WNOHANG)
            if pid:
                break
    except BaseException:  # noqa: BLE001 - nothing may return into the exec of the command
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGKILL)
    _exit_as(status)


def _exit_as(status: int) -> NoReturn:  # pragma: no cover - runs in the child
    """Exit with the child's code, or die of its signal, so the agent sees what it would have
    seen of the supervisor itself (a negative code: it was killed)."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            if number != signal.SIGKILL:
                signal.signal(number, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
            os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 126)
