"""web_fetch against a real HTTP server on this machine: allowed domains are read without a
question, other hosts are asked about (and each redirect again), a host on this machine is asked
about with a warning unless the allow-list names it exactly, and a page comes back as Markdown."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy
from mzagent_tui.agent.safety.hosts import domain_allowed
from tests.conftest import RecordingApprover, make_agent
from tests.scripted_server import Reply, ScriptedServer, answer_reply

PAGE = """<html><head><title>T</title><style>body { color: red }</style></head><body>
<h1>JSON module</h1><script>var STOLEN = document.cookie;</script>
<p>Use <a href="/dump">json.dumps</a> to <b>encode</b>.</p><ul><li>one</li><li>two</li></ul>
</body></html>"""


class Site:
    """A small web site: pages by path, and every request it got."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                site.paths.append(self.path)
                status, headers, body = site.answer(self.path)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        if path == "/page.html":
            return 200, {"content-type": "text/html; charset=utf-8"}, PAGE.encode()
        if path == "/notes.txt":
            return 200, {"content-type": "text/plain"}, b"plain notes\n"
        if path == "/tool.bin":
            return 200, {"content-type": "application/octet-stream"}, b"\x00\x01" * 50
        if path == "/big.txt":
            return 200, {"content-type": "text/plain"}, b"x" * 30_000
        if path == "/to-localhost":
            return 302, {"location": f"http://localhost:{self.port}/notes.txt"}, b""
        if path == "/odd-charset.txt":
            return 200, {"content-type": "text/plain; charset=no-such-charset"}, "café\n".encode()
        if path == "/loop":
            return 302, {"location": "/loop"}, b""
        return 404, {"content-type": "text/plain"}, b"no such page"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def site() -> Iterator[Site]:
    running = Site()
    yield running
    running.close()


def fetch_step(url: str) -> Reply:
    return Reply(f"<thought>read the docs</thought><action>web_fetch({json.dumps(url)})</action>")


def observation(server: ScriptedServer, index: int = -1) -> str:
    return server.requests[index]["messages"][-1]["content"]


def run(server: ScriptedServer, project: Path, urls: list[str], approver: RecordingApprover | None = None, **settings: object) -> RecordingApprover:
    approver = approver or RecordingApprover(ApprovalDecision(True))
    server.script(*(fetch_step(u) for u in urls), answer_reply())
    agent, _ = make_agent(server, project, approver=approver, profile="full", **settings)
    agent.run("read the docs")
    return approver


def test_an_allowed_host_is_read_without_a_question_as_markdown(server: ScriptedServer, project: Path, site: Site) -> None:
    approver = run(server, project, [f"http://127.0.0.1:{site.port}/page.html"], allowed_domains=["127.0.0.1"])
    text = observation(server)
    assert approver.requests == []
    assert "# JSON module" in text and "[json.dumps](/dump)" in text and "**encode**" in text and "* one" in text
    assert "STOLEN" not in text and "color: red" not in text, "scripts and styles are not page text"
    assert site.paths == ["/page.html"]


def test_another_host_is_asked_about_and_a_no_fetches_nothing(server: ScriptedServer, project: Path, site: Site) -> None:
    approver = run(server, project, [f"http://localhost:{site.port}/notes.txt"], RecordingApprover(ApprovalDecision(False, note="not that one")), allowed_domains=["127.0.0.1"])
    assert [r.tool for r in approver.requests] == ["web_fetch:localhost"]
    assert "on this machine" in approver.requests[0].reason
    assert "fetching from localhost was not allowed: not that one" in observation(server)
    assert site.paths == []


def test_control_a_yes_fetches_it(server: ScriptedServer, project: Path, site: Site) -> None:
    approver = run(server, project, [f"http://localhost:{site.port}/notes.txt"], allowed_domains=["127.0.0.1"])
    assert len(approver.requests) == 1 and "plain notes" in observation(server)


def test_a_redirect_to_another_host_is_asked_about_again(server: ScriptedServer, project: Path, site: Site) -> None:
    approver = run(server, project, [f"http://127.0.0.1:{site.port}/to-localhost"], RecordingApprover(ApprovalDecision(False)), allowed_domains=["127.0.0.1"])
    assert [r.tool for r in approver.requests] == ["web_fetch:localhost"]
    assert site.paths == ["/to-localhost"] and "not allowed" in observation(server)


def test_always_allowing_a_host_asks_once_per_session(server: ScriptedServer, project: Path, site: Site) -> None:
    url = f"http://localhost:{site.port}/notes.txt"
    approver = RecordingApprover(ApprovalDecision(True, always_prefix="web_fetch:localhost"))
    run(server, project, [url, url], approver)
    assert len(approver.requests) == 2, "a host on this machine is asked about even where a rule allows it"
    assert site.paths == ["/notes.txt", "/notes.txt"]


def test_a_wider_entry_does_not_let_a_name_on_this_machine_through_silently(server: ScriptedServer, project: Path, site: Site) -> None:
    """`localhost` is a subdomain of nothing here, but `*.localhost`-style wide entries and rules
    must not reach this machine unasked: only the exact name does."""
    approver = run(server, project, [f"http://localhost:{site.port}/notes.txt"], allowed_domains=["*.localhost", "127.0.0.1"])
    assert [r.tool for r in approver.requests] == ["web_fetch:localhost"]
    exact = run(server, project, [f"http://localhost:{site.port}/notes.txt"], allowed_domains=["localhost"])
    assert exact.requests == [], "control: named exactly, no question"


def test_in_yolo_a_host_on_this_machine_is_still_asked(server: ScriptedServer, project: Path, site: Site) -> None:
    from mzagent_tui.agent.assembly import assemble
    from tests.conftest import Recorder, config_for

    approver = RecordingApprover(ApprovalDecision(False))
    server.script(fetch_step(f"http://localhost:{site.port}/notes.txt"), answer_reply())
    agent = assemble(config_for(server, project, Policy(mode="yolo"), profile="full"), approver, Recorder())
    agent.run("read")
    assert [r.tool for r in approver.requests] == ["web_fetch:localhost"] and site.paths == []


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/tool.bin", "is application/octet-stream (100 bytes), not a page of text"),
        ("/big.txt", "[cut: 10,000 more characters]"),
        ("/missing", "(404 text/plain):\n\nno such page"),
        ("/loop", "more than 5 redirects"),
        ("/odd-charset.txt", "café"),
    ],
)
def test_what_is_not_a_readable_page(server: ScriptedServer, project: Path, site: Site, path: str, expected: str) -> None:
    run(server, project, [f"http://127.0.0.1:{site.port}{path}"], allowed_domains=["127.0.0.1"])
    assert expected in observation(server)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("file:///etc/passwd", "is not an http or https URL"),
        ("ftp://127.0.0.1/x", "is not an http or https URL"),
        ("http://user:secret@127.0.0.1:9/x", "a URL with a user name or password is not fetched"),
        ("http://127.0.0.1:9/nothing-listens", "could not fetch http://127.0.0.1:9/nothing-listens"),
    ],
)
def test_bad_urls_get_a_clear_error_and_no_request(server: ScriptedServer, project: Path, url: str, expected: str) -> None:
    run(server, project, [url], allowed_domains=["127.0.0.1"])
    assert expected in observation(server)


def test_plan_mode_reads_allowed_hosts_and_refuses_questions(server: ScriptedServer, project: Path, site: Site) -> None:
    from mzagent_tui.agent.assembly import assemble
    from tests.conftest import Recorder, config_for

    approver = RecordingApprover(ApprovalDecision(True))
    server.script(fetch_step(f"http://127.0.0.1:{site.port}/notes.txt"), fetch_step("http://example.invalid/x"), answer_reply())
    agent = assemble(config_for(server, project, Policy(mode="plan"), profile="full", allowed_domains=["127.0.0.1"]), approver, Recorder())
    agent.run("plan")
    assert "plain notes" in observation(server, 1)
    assert approver.requests == [] and "plan" in observation(server, 2).lower()


def test_the_small_profile_is_not_offered_web_fetch(server: ScriptedServer, project: Path) -> None:
    server.script(answer_reply(), answer_reply())
    make_agent(server, project, profile="small")[0].run("a")
    make_agent(server, project, profile="full")[0].run("b")
    assert "web_fetch" not in server.requests[0]["messages"][0]["content"]
    assert "web_fetch(url" in server.requests[1]["messages"][0]["content"]


def test_a_project_env_cannot_allow_a_domain(project: Path) -> None:
    from mzagent_tui.agent.config import load_settings

    (project / ".env").write_text("MZAGENT_ALLOWED_DOMAINS=evil.example\n")
    settings = load_settings(project=project, environ={})
    assert settings.allowed_domains == [] and any("MZAGENT_ALLOWED_DOMAINS" in entry for entry in settings.ignored)


@pytest.mark.parametrize(
    ("host", "allowed", "expected"),
    [
        ("docs.python.org", ["python.org"], True),
        ("python.org", ["python.org"], True),
        ("PYTHON.ORG.", ["python.org"], True),
        ("evilpython.org", ["python.org"], False),
        ("python.org.evil.example", ["python.org"], False),
        ("pypi.org", ["*.pypi.org"], True),
        ("x.example", [], False),
        ("x.example", [""], False),
    ],
)
def test_domain_matching(host: str, allowed: list[str], expected: bool) -> None:
    assert domain_allowed(host, allowed) is expected
