"""The network by domain for commands (issue 58, item 3): with `allowed_domains` in the user
config, a command the user gives the network runs in the session's network namespace and
reaches the outside only through mzagent's proxy: an allowed host is reached, another is asked
about, and nothing goes around the proxy. A local site stands in for the outside: bound on every
address of the machine, named 127.0.0.2 (not the namespace's own loopback, which stays direct)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from mzagent_tui.agent.events import Observation
from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.safety.approval_requests import ApprovalRequest, CommandApproval, ToolCallApproval
from tests.conftest import make_agent, requires_sandbox
from tests.local_site import serving
from tests.scripted_server import Reply, answer_reply

needs_namespaces = requires_sandbox(6, namespaces=True)


@pytest.fixture
def site() -> Iterator[int]:
    with serving("0.0.0.0") as port:  # every address of the machine: 127.0.0.2 and .3 reach it
        yield port


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
        assert re.search(r"page /one .*\n 200", text) and re.search(r"page /two .*\n 200", text) and "reached 127.0.0.3" in text, text
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
