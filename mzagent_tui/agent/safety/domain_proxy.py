"""The proxy through which commands reach the network by domain (issue 58).

A command that gets the network while the user config lists `allowed_domains` reaches the
outside only through this proxy: HTTP `CONNECT host:port` (https, or any TLS) and plain HTTP in
absolute form (`GET http://host/path`), the two forms pip, npm, curl, git and Python's urllib
speak when `HTTPS_PROXY` / `HTTP_PROXY` name a proxy. Each attempt is judged by the rule web_fetch
uses (`hosts.host_verdict`): a host on the list passes, any other is asked about through the
approver (once, or always for the session), and a host that is or resolves to this machine or a
private network passes only when the list names it exactly. The connection goes to the address
that was checked, so a name that resolves elsewhere a second time (DNS rebinding) cannot move it.
Every attempt is recorded (`Attempt`), allowed or refused, with why.

It serves on listening sockets it is given: the one the session's network namespace hands over
(shared_network.py), where the commands are and nothing else can be reached, or one on the
machine's 127.0.0.1 (`listen_here`). A plain loop of blocking sockets and one thread per
connection: commands make few connections, and nothing here parses what flows through a tunnel.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from mzagent_tui.agent.safety.hosts import HostVerdict, host_verdict

MAX_HEAD = 16 * 1024
"""Bytes of a request line and headers; a longer head is refused (no client needs more)."""
CONNECT_TIMEOUT = 15.0
IDLE_TIMEOUT = 300.0
"""A tunnel with nothing flowing either way this long is closed."""
DROPPED_HEADERS = frozenset({"proxy-connection", "proxy-authorization", "connection", "keep-alive"})
"""Headers for the proxy itself, not passed on (a plain request is sent with `Connection: close`)."""


@dataclass(frozen=True)
class Attempt:
    """One connection a command tried to make."""

    host: str
    port: int
    allowed: bool
    why: str


Ask = Callable[[str, int, str], bool]
"""Asks the user about a host not on the list: (host, port, warning) -> allowed."""


class DomainProxy:
    """One session's proxy: the list, who asks, who records, and the sockets it serves on."""

    def __init__(self, allowed: Sequence[str], ask: Ask, record: Callable[[Attempt], None]) -> None:
        self.allowed = tuple(allowed)
        self._ask = ask
        self._record = record
        self._asking = threading.Lock()
        self._answered: dict[str, bool] = {}
        self._listeners: list[socket.socket] = []

    def serve_on(self, listener: socket.socket) -> int:
        """Accept on `listener` from now on (a thread of its own); its port."""
        self._listeners.append(listener)
        threading.Thread(target=self._accept, args=(listener,), name="domain-proxy", daemon=True).start()
        return int(listener.getsockname()[1])

    def forget_answers(self) -> None:
        """The user's "once" answers end with the command they were given for."""
        with self._asking:
            self._answered.clear()

    def close(self) -> None:
        """Stop accepting (connections under way end with their command)."""
        for listener in self._listeners:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
            listener.close()
        self._listeners.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve_closing, args=(client,), name="domain-proxy-client", daemon=True).start()

    def _serve_closing(self, client: socket.socket) -> None:
        with client:
            self.serve(client)

    def serve(self, client: socket.socket) -> None:
        """One client connection: its request judged, then a tunnel or one plain request."""
        client.settimeout(CONNECT_TIMEOUT)
        head, rest = _read_head(client)
        if head is None:
            return _reply(client, 400, "the request's head was cut off or too long")
        request = _parse(head)
        if request is None:
            return _reply(client, 400, "not a proxy request (CONNECT host:port, or an absolute http:// URL)")
        address = self._admit(request.host, request.port)
        if address is None:
            return _reply(client, 403, f"mzagent does not allow connections to {request.host}")
        try:
            upstream = socket.create_connection((address, request.port), timeout=CONNECT_TIMEOUT)
        except OSError as exc:
            return _reply(client, 502, f"cannot connect to {request.host}:{request.port}: {exc.strerror or exc}")
        with upstream:
            if request.tunnel:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.sendall(request.forwarded)
            if rest:
                upstream.sendall(rest)
            _relay(client, upstream)

    def _admit(self, host: str, port: int) -> str | None:
        """The address to connect to, or None when refused; each attempt recorded."""
        verdict = host_verdict(host, port, self.allowed)
        allowed = verdict.allowed and verdict.address is not None
        why = verdict.why
        if verdict.address is not None and not allowed:
            allowed = self._asked(host, port, verdict)
            why = "allowed by the user" if allowed else "refused by the user"
        self._record(Attempt(host, port, allowed, why))
        return verdict.address if allowed else None

    def _asked(self, host: str, port: int, verdict: HostVerdict) -> bool:
        """The user's answer for this host: asked once while a command runs, one question at a time."""
        with self._asking:
            if host not in self._answered:
                self._answered[host] = self._ask(host, port, verdict.warning)
            return self._answered[host]


@dataclass(frozen=True)
class _Request:
    host: str
    port: int
    tunnel: bool
    forwarded: bytes = b""
    """A plain request's head as the server gets it (origin form, `Connection: close`)."""


def _parse(head: bytes) -> _Request | None:
    lines = head.decode("latin-1").split("\r\n")
    words = lines[0].split(" ")
    if len(words) != 3 or not words[2].startswith("HTTP/"):
        return None
    method, target, version = words
    if method.upper() == "CONNECT":
        host, _, port = target.rpartition(":")
        host = host.strip("[]")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            return None
        return _Request(host, int(port), True)
    url = urlsplit(target)
    if url.scheme != "http" or not url.hostname:
        return None
    try:
        port_number = url.port or 80
    except ValueError:
        return None
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    headers = [line for line in lines[1:] if line and line.split(":", 1)[0].strip().lower() not in DROPPED_HEADERS]
    forwarded = "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""])
    return _Request(url.hostname, port_number, False, forwarded.encode("latin-1"))


def _read_head(client: socket.socket) -> tuple[bytes | None, bytes]:
    """The request line and headers, and whatever came after them in the same reads."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEAD:
            return None, b""
        try:
            chunk = client.recv(4096)
        except OSError:
            return None, b""
        if not chunk:
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return (head, rest) if len(head) <= MAX_HEAD else (None, b"")


def _reply(client: socket.socket, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    body = f"{text}\n".encode()
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    with contextlib.suppress(OSError):
        client.sendall(head.encode() + body)


def _relay(one: socket.socket, other: socket.socket) -> None:
    """Bytes both ways until both sides have finished sending (or nothing moves for IDLE_TIMEOUT)."""
    peers = {one: other, other: one}
    with selectors.DefaultSelector() as selector:
        for sock in peers:
            sock.setblocking(True)
            selector.register(sock, selectors.EVENT_READ)
        open_sides = 2
        while open_sides:
            ready = selector.select(IDLE_TIMEOUT)
            if not ready:
                return
            for key, _ in ready:
                source = key.fileobj
                assert isinstance(source, socket.socket)
                try:
                    data = source.recv(65536)
                    if data:
                        peers[source].sendall(data)
                        continue
                    peers[source].shutdown(socket.SHUT_WR)
                except OSError:
                    return
                selector.unregister(source)
                open_sides -= 1


def listen_here() -> socket.socket:
    """A socket listening on a free port of this machine's 127.0.0.1."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    return listener
