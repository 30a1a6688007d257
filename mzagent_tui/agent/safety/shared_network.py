"""The session's network namespace: one for all its confined commands, its loopback up.

A confined command without network used to get a network namespace of its own, its loopback
down: nothing left it, but nothing in it reached anything either, not a server the previous
command (or a background one) started, nor a test's own server on `localhost`. Now each session
has a holder: `cat` from the trusted PATH, started in a user and a network namespace of its own,
where it brings the loopback up and then reads its stdin, a pipe only the agent writes to. The
namespaces live while it does; commands join them (`sandbox.enter_namespaces`'s `join`) and make
their own user namespace inside the holder's, so a command's processes are still told apart
from the others' and from the holder's (process.end_namespace).

The holder ends when the session closes (its stdin is closed, it reads the end) and when the
agent dies, even by kill -9 (the kernel closes the pipe). Only what is in the namespace shares it:
the commands of this session; not the machine's loopback, nor another session's. A command given
the network (`w`, `network = true`) runs in the machine's network instead, where the session's
servers are not.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import socket
import struct
import subprocess
import threading
from collections.abc import Callable

from mzagent_tui.agent.safety import own_programs

_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_IFREQ = "16sH22x"
"""struct ifreq: the interface's name, then its flags (a short) in a 24-byte union."""


class SharedNetwork:
    """Started at the first command that joins it; `close` ends it. Thread-safe (a background
    command and the model's next one may start together)."""

    def __init__(self, listen: bool = False) -> None:
        self._listen = listen
        self.listener: socket.socket | None = None
        """With `listen`: a socket listening on the namespace's 127.0.0.1, made by the holder and
        handed to the agent, which accepts on it from outside (the commands' proxy by domain:
        domain_proxy.py); its connections come from the namespace, and what the agent then
        connects to is reached from the machine's network."""
        self._holder: own_programs.Holder[bytes] | None = None
        self._namespaces: tuple[int, int] | None = None
        self.failed = ""
        """Why there is no shared namespace ("" while there is or none was tried): commands then
        get one of their own each, its loopback down, as before."""
        self._lock = threading.Lock()

    @property
    def holder_pid(self) -> int | None:
        """The holder's pid while it runs (None before the first command and once closed)."""
        return self._holder.pid if self._holder is not None else None

    def namespaces(self) -> tuple[int, int] | None:
        """The holder's user and network namespaces, open (for setns in a command's child), or
        None where the holder could not start (said in `failed`, tried once)."""
        with self._lock:
            if self._namespaces is None and not self.failed:
                try:
                    self._start()
                except OSError as exc:
                    self.failed = str(exc) or type(exc).__name__
                    self._end_holder()
            return self._namespaces

    def _start(self) -> None:
        mine, theirs = socket.socketpair() if self._listen else (None, None)
        try:
            holder = own_programs.hold(["cat"], _enter_holder_namespaces(theirs.fileno() if theirs is not None else None))
        finally:
            if theirs is not None:
                theirs.close()
        self._holder = holder
        if mine is not None:
            with mine:
                mine.settimeout(10)
                _, fds, _, _ = socket.recv_fds(mine, 1, 1)
            if not fds:
                raise OSError("the namespace holder did not hand over its listening socket")
            self.listener = socket.socket(fileno=fds[0])
        user = os.open(f"/proc/{holder.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        try:
            network = os.open(f"/proc/{holder.pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            os.close(user)
            raise
        self._namespaces = (user, network)
        if holder.poll() is not None or os.fstat(network).st_ino == os.stat("/proc/self/ns/net").st_ino:
            raise OSError("the namespace holder could not make its namespaces")  # it exited 126 before its exec

    def close(self) -> None:
        """End the holder; a command still in the namespace keeps it until it ends (the session's
        commands are ended before this)."""
        with self._lock:
            self._end_holder()
            self.failed = self.failed or "closed"

    def _end_holder(self) -> None:
        if self.listener is not None:
            self.listener.close()
            self.listener = None
        if self._namespaces is not None:
            for fd in self._namespaces:
                os.close(fd)
            self._namespaces = None
        holder, self._holder = self._holder, None
        if holder is None:
            return
        with contextlib.suppress(OSError):
            holder.stdin.close()  # type: ignore[union-attr]
        try:
            holder.wait(2)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()


def _enter_holder_namespaces(hand_over: int | None = None) -> Callable[[], None]:
    """What the holder's child runs before its exec: a user namespace of its own (the same uid
    and gid inside), a network namespace, its loopback up; with `hand_over` (one end of a socket
    pair), a socket listening on the namespace's 127.0.0.1, sent over it to the agent. Exits 126
    on any failure."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    maps = ((b"/proc/self/setgroups", b"deny"), (b"/proc/self/uid_map", f"{uid} {uid} 1".encode()), (b"/proc/self/gid_map", f"{gid} {gid} 1".encode()))

    def enter() -> None:  # pragma: no cover - runs in the child
        try:
            if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
                os._exit(126)
            for name, text in maps:
                fd = os.open(name, os.O_WRONLY)
                os.write(fd, text)
                os.close(fd)
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                flags = struct.unpack(_IFREQ, fcntl.ioctl(probe, _SIOCGIFFLAGS, struct.pack(_IFREQ, b"lo", 0)))[1]
                fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack(_IFREQ, b"lo", flags | _IFF_UP))
            if hand_over is not None:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener, socket.socket(fileno=hand_over) as channel:
                    listener.bind(("127.0.0.1", 0))
                    listener.listen(64)
                    socket.send_fds(channel, [b"L"], [listener.fileno()])
        except OSError:
            os._exit(126)

    return enter
