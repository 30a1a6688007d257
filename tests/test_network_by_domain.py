"""The network by domain for commands (issue 58, item 3): with `allowed_domains` in the user
config, a command the user gives the network runs in the session's network namespace and
reaches the outside only through mzagent's proxy: an allowed host is reached, another is asked
about, and nothing goes around the proxy. A local site stands in for the outside: bound on every
address of the machine, named 127.0.0.2 (not the namespace's own loopback, which stays direct)."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mzagent_tui.agent.events import Observation
from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.safety.approval_requests import ApprovalRequest, CommandApproval, ToolCallApproval
from tests.conftest import make_agent, requires_sandbox
from tests.scripted_server import Reply, answer_reply

needs_namespaces = requires_sandbox(6, namespaces=True)


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the server's name for it
        body = f"page {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


class NetworkUser:
    """Gives every command the network (w); answers a question about a host from `hosts`."""

    def __init__(self, hosts: dict[str, bool]) -> None:
        self.hosts = hosts
        self.asked: list[ApprovalRequest] = []

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        if isinstance(request, CommandApproval):
            return ApprovalDecision(True, network=True)
        if isinstance(request, ToolCallApproval):
            return ApprovalDecision(self.hosts.get(str(request.arguments["host"]), False))
        return ApprovalDecision(False)


def command(line: str) -> Reply:
    return Reply(f"<thought>go</thought><action>run_terminal_command({json.dumps(line)})</action>")


def texts(recorder) -> list[str]:  # noqa: ANN001
    return [o.text for o in recorder.of(Observation)]


@needs_namespaces
def test_an_allowed_domain_is_reached_through_the_proxy_and_nothing_goes_around_it(server, project: Path, site: int) -> None:
    server.script(
        command(f"curl -s -m 10 http://127.0.0.2:{site}/allowed"),
        command(f"python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.2:{site}/py', timeout=10).read().decode())\""),
        command(f"curl -s -m 5 --noproxy '*' http://127.0.0.2:{site}/direct || echo direct-failed-$?"),
        command(f"env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy curl -s -m 5 http://127.0.0.2:{site}/ || echo bare-failed-$?"),
        answer_reply(),
    )
    user = NetworkUser({})
    agent, recorder = make_agent(server, project, approver=user, allowed_domains=["127.0.0.2"])
    try:
        agent.run("fetch")
    finally:
        agent.close()
    allowed, python, direct, bare = texts(recorder)
    assert "page /allowed" in allowed and "reached 127.0.0.2" in allowed, allowed
    assert "page /py" in python, python
    assert "direct-failed-7" in direct and "page" not in direct, direct
    assert "bare-failed-7" in bare and "page" not in bare, bare
    assert not [r for r in user.asked if isinstance(r, ToolCallApproval)], "an allowed host is not asked about"


@needs_namespaces
@pytest.mark.parametrize("answer", [False, True])
def test_another_host_is_asked_about_once_per_command(server, project: Path, site: int, answer: bool) -> None:
    url = f"http://127.0.0.3:{site}"
    server.script(command(f"curl -s -m 10 -w ' %{{http_code}}' {url}/one; curl -s -m 10 -w ' %{{http_code}}' {url}/two"), answer_reply())
    user = NetworkUser({"127.0.0.3": answer})
    agent, recorder = make_agent(server, project, approver=user, allowed_domains=["pypi.org"])
    try:
        agent.run("fetch")
    finally:
        agent.close()
    (text,) = texts(recorder)
    questions = [r for r in user.asked if isinstance(r, ToolCallApproval)]
    assert [q.tool for q in questions] == ["network:127.0.0.3"], "one question for the command's two connections"
    assert "on this machine or a private network" in questions[0].reason
    if answer:
        assert "page /one\n 200" in text and "page /two\n 200" in text and "reached 127.0.0.3" in text, text
    else:
        assert "page" not in text and text.count("403") == 2 and "refused 127.0.0.3 (refused by the user)" in text, text


@needs_namespaces
def test_control_without_allowed_domains_the_network_is_the_machines(server, project: Path, site: int) -> None:
    server.script(command(f"curl -s -m 10 --noproxy '*' http://127.0.0.2:{site}/direct"), answer_reply())
    agent, recorder = make_agent(server, project, approver=NetworkUser({}))
    try:
        agent.run("fetch")
    finally:
        agent.close()
    assert "page /direct" in texts(recorder)[0]
