"""The commands' proxy by domain (safety/domain_proxy.py), against real servers on 127.0.0.1:
curl and Python's urllib go through it as pip and npm would, with HTTPS_PROXY / HTTP_PROXY set.

127.0.0.1 is a private address, so a test host is reached by its address named exactly in the
list (`allowed_domains = ["127.0.0.1"]`), the way the rule asks for a local service.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from mzagent_tui.agent.safety.domain_proxy import Attempt, DomainProxy, listen_here
from mzagent_tui.agent.safety.hosts import host_verdict
from tests.local_site import serving


@pytest.fixture
def site() -> Iterator[int]:
    with serving("127.0.0.1") as port:
        yield port


class Asked:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.hosts: list[tuple[str, int, str]] = []

    def __call__(self, host: str, port: int, warning: str) -> bool:
        self.hosts.append((host, port, warning))
        return self.answer


def proxy_for(tmp_path: Path, allowed: list[str], asked: Asked, attempts: list[Attempt]) -> tuple[DomainProxy, int]:
    proxy = DomainProxy(allowed, asked, attempts.append)
    return proxy, proxy.serve_on(listen_here())


def fetch(url: str, port: int, data: bytes | None = None) -> tuple[int, bytes]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{port}"}))
    try:
        with opener.open(urllib.request.Request(url, data=data), timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_an_allowed_host_is_reached_in_plain_http(tmp_path: Path, site: int) -> None:
    attempts: list[Attempt] = []
    asked = Asked(False)
    proxy, port = proxy_for(tmp_path, ["127.0.0.1"], asked, attempts)
    try:
        status, body = fetch(f"http://127.0.0.1:{site}/simple/pip/?x=1", port)
        posted = fetch(f"http://127.0.0.1:{site}/up", port, data=b"hello")
    finally:
        proxy.close()
    assert status == 200 and body.startswith(f"page /simple/pip/?x=1 host=127.0.0.1:{site}".encode())
    assert posted == (200, b"HELLO"), "a request body goes through whole"
    assert asked.hosts == [] and attempts[0] == Attempt("127.0.0.1", site, True, "on the allowed domains")


def test_a_host_not_on_the_list_is_asked_about_and_refused(tmp_path: Path, site: int) -> None:
    attempts: list[Attempt] = []
    asked = Asked(False)
    proxy, port = proxy_for(tmp_path, ["pypi.org"], asked, attempts)
    try:
        status, body = fetch(f"http://127.0.0.1:{site}/", port)
    finally:
        proxy.close()
    assert status == 403 and b"does not allow connections to 127.0.0.1" in body
    assert asked.hosts == [("127.0.0.1", site, "127.0.0.1 is on this machine or a private network")]
    assert attempts == [Attempt("127.0.0.1", site, False, "refused by the user")]


def test_a_yes_holds_for_the_command_and_is_asked_again_after_it(tmp_path: Path, site: int) -> None:
    attempts: list[Attempt] = []
    asked = Asked(True)
    proxy, port = proxy_for(tmp_path, [], asked, attempts)
    try:
        first = [fetch(f"http://127.0.0.1:{site}/{n}", port)[0] for n in range(3)]
        proxy.forget_answers()
        second = fetch(f"http://127.0.0.1:{site}/again", port)[0]
    finally:
        proxy.close()
    assert first == [200, 200, 200] and second == 200
    assert len(asked.hosts) == 2, "once for the command's three connections, once for the next command"


def test_a_subdomain_entry_does_not_let_a_name_reach_this_machine(tmp_path: Path) -> None:
    """`localhost` is under no entry; and an entry that covers a name resolving to 127.0.0.1
    (`localhost` itself, named by a wider rule) still asks: only the exact name lets it through."""
    assert host_verdict("localhost", 80, ["localhost"]).allowed
    assert not host_verdict("localhost", 80, ["*.localhost", "host"]).allowed
    assert host_verdict("localhost", 80, ["pypi.org"]).warning == "localhost is on this machine or a private network"


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_tunnels_through_connect_to_an_allowed_host_and_not_to_another(tmp_path: Path, site: int) -> None:
    """CONNECT carries any bytes (here plain HTTP inside the tunnel, as TLS would be)."""
    attempts: list[Attempt] = []
    proxy, port = proxy_for(tmp_path, ["127.0.0.1"], Asked(False), attempts)
    try:
        tunnel = subprocess.run(
            ["curl", "-sS", "--proxytunnel", "-x", f"http://127.0.0.1:{port}", f"http://127.0.0.1:{site}/tunnelled"],
            capture_output=True, text=True, timeout=30,
        )
        refused = subprocess.run(
            ["curl", "-sS", "--proxytunnel", "-x", f"http://127.0.0.1:{port}", "http://localhost:9/"],
            capture_output=True, text=True, timeout=30,
        )
    finally:
        proxy.close()
    assert tunnel.returncode == 0 and tunnel.stdout.startswith("page /tunnelled"), tunnel.stderr
    assert refused.returncode != 0 and "403" in refused.stderr
    assert [(a.host, a.allowed) for a in attempts] == [("127.0.0.1", True), ("localhost", False)]


def test_the_proxys_own_credentials_are_not_passed_on_and_close_stops_it(tmp_path: Path, site: int) -> None:
    attempts: list[Attempt] = []
    proxy, port = proxy_for(tmp_path, ["127.0.0.1"], Asked(False), attempts)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(f"GET http://127.0.0.1:{site}/plain HTTP/1.1\r\nHost: x\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n".encode())
            answer = b""
            while chunk := client.recv(4096):
                answer += chunk
    finally:
        proxy.close()
    assert answer.startswith(b"HTTP/1.0 200") and b"page /plain" in answer and b"proxy-auth=None" in answer
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


@pytest.mark.parametrize("head", [
    b"GET /relative HTTP/1.1\r\n\r\n",
    b"GET https://127.0.0.1/ HTTP/1.1\r\n\r\n",
    b"CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n",
    b"CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n",
    b"nonsense\r\n\r\n",
    b"GET http://" + b"a" * 20_000 + b"/ HTTP/1.1\r\n\r\n",
], ids=["relative", "https-plain", "connect-no-port", "connect-bad-port", "nonsense", "head-too-long"])
def test_what_is_not_a_proxy_request_gets_a_clear_refusal(tmp_path: Path, head: bytes) -> None:
    attempts: list[Attempt] = []
    proxy, port = proxy_for(tmp_path, ["127.0.0.1"], Asked(True), attempts)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(head)
            client.shutdown(socket.SHUT_WR)
            answer = b""
            while chunk := client.recv(4096):
                answer += chunk
    finally:
        proxy.close()
    assert answer.startswith(b"HTTP/1.1 400 Bad Request") and attempts == []


def test_a_name_that_does_not_resolve_is_refused_without_a_question(tmp_path: Path) -> None:
    attempts: list[Attempt] = []
    asked = Asked(True)
    proxy, port = proxy_for(tmp_path, [], asked, attempts)
    try:
        status, body = fetch("http://no-such-host.invalid/", port)
    finally:
        proxy.close()
    assert status == 403 and asked.hosts == []
    assert attempts == [Attempt("no-such-host.invalid", 80, False, "no-such-host.invalid does not resolve")]
