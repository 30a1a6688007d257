"""Background commands: started by the model (or `!&`), gated and confined like any command,
reachable on the session's loopback from its next sandboxed command, stoppable, bounded, and
gone when the session ends. Every process test looks for a marker of its own in command lines."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from mzagent_tui.agent.events import BackgroundEnded, BackgroundOutput, BackgroundStarted, Notice, Observation, UserCommandOutput
from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy
from mzagent_tui.agent.safety.approval_requests import CommandApproval
from mzagent_tui.agent.tools import background
from mzagent_tui.agent.tools.shell import _background_report
from tests.conftest import RecordingApprover, make_agent, requires_sandbox
from tests.scripted_server import Fault, Reply, answer_reply, last_user

needs_namespaces = requires_sandbox(6, namespaces=True)
SERVED = "served by the background server"


def call(tool: str, *args: str) -> Reply:
    return Reply(f"<thought>go</thought><action>{tool}({', '.join(json.dumps(a) for a in args)})</action>")


def with_marker(marker: str) -> list[int]:
    """The pids of our own user whose command line holds `marker` (only processes a test started)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(pid))
    return found


def none_left(marker: str, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while with_marker(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def marker() -> str:
    return f"mzbg-{uuid.uuid4().hex[:12]}"


def fetch(port: int) -> str:
    """curl until the server listens (its start is slow on a loaded machine), then python's urllib."""
    return (
        f"for i in $(seq 100); do curl -s localhost:{port}/hello.txt && break; sleep 0.1; done; "
        f"python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{port}/hello.txt').read().decode())\""
    )


def served_site(project: Path, marker: str) -> str:
    """A folder of the project to serve, named with the marker (so the server's command line holds it)."""
    site = project / f"www-{marker}"
    site.mkdir()
    (site / "hello.txt").write_text("served by the background server\n")
    return site.name


def observations(recorder) -> list[str]:  # noqa: ANN001
    return [o.text for o in recorder.of(Observation)]


@needs_namespaces
def test_a_background_server_keeps_serving_the_next_sandboxed_command_and_ends_with_the_session(server, project: Path, marker: str) -> None:
    site, port = served_site(project, marker), free_port()
    alive_between: list[bool] = []

    def curl_while_running(request: dict) -> Reply:
        alive_between.append(bool(with_marker(marker)))
        return call("run_terminal_command", fetch(port))

    server.script(
        call("start_background_command", f"python3 -u -m http.server {port} --bind 127.0.0.1 --directory {site}"),
        curl_while_running,
        call("background_output", "bg1"),
        answer_reply(),
    )
    agent, recorder = make_agent(server, project)
    agent.run("serve the site and fetch a page")
    started, curled, output = observations(recorder)[:3]
    assert "Background command bg1 is running" in started
    assert curled.count(SERVED) == 2, curled
    assert f"Serving HTTP on 127.0.0.1 port {port}" in started + output and "GET /hello.txt" in output and "is running" in output
    assert alive_between == [True]
    [event] = recorder.of(BackgroundStarted)
    assert event.id == "bg1" and Path(event.output_path).read_text().count("GET /hello.txt") == 2
    assert any("GET /hello.txt" in e.text for e in recorder.of(BackgroundOutput))
    holder = agent.shell.shared_network.holder_pid
    assert holder is not None and Path(f"/proc/{holder}").exists()
    agent.close()
    assert none_left(marker)
    assert not Path(f"/proc/{holder}").exists()  # the namespace holder ended with the session
    [ended] = recorder.of(BackgroundEnded)
    assert ended.id == "bg1" and ended.stopped and ended.exit_code is None


@needs_namespaces
def test_the_session_loopback_is_not_the_machines(server, project: Path, marker: str) -> None:
    """A server of the machine on 127.0.0.1 is out of reach of the session's commands, while the
    session's own server on the same kind of address is reached (the positive control)."""
    site, port = served_site(project, marker), free_port()
    with socket.socket() as outside:
        outside.bind(("127.0.0.1", 0))
        outside.listen()
        outside.settimeout(0.5)
        outside_port = outside.getsockname()[1]
        server.script(
            call("start_background_command", f"python3 -u -m http.server {port} --bind 127.0.0.1 --directory {site}"),
            call("run_terminal_command", f"{fetch(port)}; curl -s -m 3 127.0.0.1:{outside_port} || echo OUTSIDE-UNREACHABLE"),
            answer_reply(),
        )
        agent, recorder = make_agent(server, project)
        agent.run("serve")
        with pytest.raises(TimeoutError):
            outside.accept()
    agent.close()
    curled = observations(recorder)[1]
    assert SERVED in curled and "OUTSIDE-UNREACHABLE" in curled
    assert none_left(marker)


@needs_namespaces
def test_commands_cannot_leave_the_shared_namespace_for_the_machines(server, project: Path) -> None:
    """setns into the machine's network namespace, or a new user namespace to get there, is refused."""
    attempts = [
        "python3 -c \"import os; os.setns(os.open('/proc/1/ns/net', os.O_RDONLY), os.CLONE_NEWNET); print('JOINED-HOST')\"",
        "ip link set lo down && echo LOOPBACK-DOWN",
    ]
    server.script(*[call("run_terminal_command", a) for a in attempts], call("run_terminal_command", "curl -s -m 2 localhost:1 || echo still-up-$?"), answer_reply())
    agent, recorder = make_agent(server, project)
    agent.run("try")
    agent.close()
    joined, down, after = observations(recorder)
    assert "JOINED-HOST" not in joined and ("Error" in joined or "denied" in joined or "not permitted" in joined)
    assert "LOOPBACK-DOWN" not in down and "not permitted" in down
    assert "still-up-7" in after  # connection refused (curl 7): the loopback is still up; down, it would be unreachable too


def test_a_rejected_background_command_never_starts(server, project: Path, marker: str) -> None:
    command = f"touch started-{marker}; sleep 30 # {marker}"
    server.script(call("start_background_command", command), answer_reply())
    user = RecordingApprover(ApprovalDecision(False))
    agent, recorder = make_agent(server, project, approver=user)
    agent.run("start it")
    time.sleep(0.3)
    assert "rejected this command, so it was not run" in observations(recorder)[0]
    assert not recorder.of(BackgroundStarted) and not with_marker(marker) and not (project / f"started-{marker}").exists()
    agent.close()
    # the positive control: approved, the same command starts and runs
    server.script(call("start_background_command", command), answer_reply())
    agent, recorder = make_agent(server, project, approver=RecordingApprover(ApprovalDecision(True)))
    agent.run("start it")
    assert (project / f"started-{marker}").exists() and with_marker(marker)
    agent.close()
    assert none_left(marker)


def test_a_background_command_asks_even_where_the_mode_or_a_rule_would_allow_it(server, project: Path, marker: str) -> None:
    """What it writes after its start is not checked, so it asks in every mode but yolo."""
    server.script(call("start_background_command", f"ls # {marker}"), answer_reply())
    user = RecordingApprover(ApprovalDecision(False))
    agent, recorder = make_agent(server, project, approver=user)
    agent.policy = Policy("auto-safe")
    agent.approver.policy = agent.policy
    agent.run("list")
    agent.close()
    [request] = user.requests
    assert isinstance(request, CommandApproval) and "runs in the background" in request.warning
    assert not recorder.of(BackgroundStarted)


def test_stop_ends_it_and_everything_it_started(server, project: Path, marker: str) -> None:
    command = f"echo up; (setsid bash -c 'trap \"\" TERM; sleep 300 # {marker}' &); sleep 301 # {marker}"
    server.script(call("start_background_command", command), call("stop_background", "bg1"), call("background_output", "bg9"), answer_reply())
    agent, recorder = make_agent(server, project)
    agent.run("start and stop")
    started, stopped, unknown = observations(recorder)[:3]
    assert "is running" in started and "up" in started
    assert stopped.startswith("It was stopped.") and "was stopped" in stopped
    assert "there is no background command 'bg9'" in unknown and "bg1" in unknown
    assert none_left(marker, seconds=1.0)
    [ended] = recorder.of(BackgroundEnded)
    assert ended.stopped
    agent.close()


def test_output_is_bounded_in_the_file_in_memory_and_in_events(server, project: Path, marker: str) -> None:
    server.script(call("start_background_command", f"yes {marker}"), answer_reply())
    agent, recorder = make_agent(server, project)
    agent.run("flood")
    [process] = agent.shell.background.all()
    deadline = time.monotonic() + 20
    while process.total_bytes < 2 * background.FILE_CAP_BYTES and time.monotonic() < deadline:
        time.sleep(0.1)
    agent.close()
    assert process.total_bytes >= 2 * background.FILE_CAP_BYTES
    assert process.output_path.stat().st_size == background.FILE_CAP_BYTES
    assert len(process.latest()) <= background.LATEST_BYTES
    told = sum(len(e.text) for e in recorder.of(BackgroundOutput))
    assert 0 < told <= background.EVENTS_CAP_BYTES + background.EVENT_BYTES
    assert none_left(marker)


def test_a_command_that_ends_at_once_is_told_with_its_exit_code(server, project: Path) -> None:
    server.script(call("start_background_command", "echo bye; exit 3"), answer_reply())
    agent, recorder = make_agent(server, project)
    agent.run("go")
    agent.close()
    text = observations(recorder)[0]
    assert "has ended (exit code 3)" in text and "bye" in text
    [ended] = recorder.of(BackgroundEnded)
    assert ended.exit_code == 3 and not ended.stopped


@needs_namespaces
def test_the_users_bang_ampersand_starts_one_the_next_command_reaches(server, project: Path, marker: str) -> None:
    site, port = served_site(project, marker), free_port()
    server.script(answer_reply())
    agent, recorder = make_agent(server, project)
    agent.run(f"!&python3 -u -m http.server {port} --bind 127.0.0.1 --directory {site}")
    agent.run(f"!{fetch(port)}")
    [started, curled] = recorder.of(UserCommandOutput)
    assert "Background command bg1 is running" in started.text and SERVED in curled.text
    [event] = recorder.of(BackgroundStarted)
    assert event.by_user
    agent.run("what did I start?")
    sent = json.dumps(server.requests[-1]["messages"])
    assert f"I started `python3 -u -m http.server {port} --bind 127.0.0.1 --directory {site}` myself in the background" in sent
    assert last_user(server.requests[-1]).endswith("what did I start?</question>")
    agent.close()
    assert none_left(marker)


def test_bang_ampersand_alone_is_a_usage_error(server, project: Path) -> None:
    agent, recorder = make_agent(server, project)
    result = agent.run("!&  ")
    agent.close()
    assert "`!&command` starts it in the background" in result.message and not recorder.of(BackgroundStarted)


def test_headless_json_tells_started_output_and_ended_and_leaves_nothing(server, project: Path, marker: str) -> None:
    server.script(call("start_background_command", f"for i in 1 2 3; do echo tick-$i; sleep 0.2; done; sleep 300 # {marker}"), answer_reply())
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(
        [sys.executable, "-m", "mzagent_tui", "run", "--base-url", server.base_url, "--api-key", "sk-x-1234567890", "--model", "m",
         "--yes", "--json", "--project", str(project), "start a ticker"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds.index("background_started") < kinds.index("background_output") < kinds.index("background_ended")
    assert "tick-1" in "".join(e["text"] for e in events if e["type"] == "background_output")
    [ended] = [e for e in events if e["type"] == "background_ended"]
    assert ended["stopped"] is True and ended["id"] == "bg1"
    assert none_left(marker)


def test_without_namespaces_for_the_holder_commands_get_their_own_and_are_told(server, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A holder that cannot start (no `cat` on the trusted PATH here) leaves each command a
    namespace of its own, as before, and says so once."""
    from mzagent_tui.agent.safety import own_programs

    def no_holder(argv: list[str], enter: object) -> subprocess.Popen[bytes]:
        raise FileNotFoundError("cat is not found on the trusted PATH")

    monkeypatch.setattr(own_programs, "hold", no_holder)
    server.script(call("run_terminal_command", "echo one"), call("run_terminal_command", "echo two"), answer_reply())
    agent, recorder = make_agent(server, project)
    agent.run("two commands")
    agent.close()
    texts = observations(recorder)
    assert "one" in texts[0] and "two" in texts[1]
    if agent.ctx.sandbox.namespaces:
        assert len([n for n in recorder.of(Notice) if "cannot share a network namespace" in n.text]) == 1


def test_an_agent_killed_by_sigkill_leaves_no_background_process(server, project: Path, marker: str) -> None:
    """No close, no atexit: the kernel ends the supervisor's tree when the thread that waits for it dies."""
    server.script(call("start_background_command", f"sleep 300 # {marker}"), Fault("stall"))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    agent = subprocess.Popen(
        [sys.executable, "-m", "mzagent_tui", "run", "--base-url", server.base_url, "--api-key", "sk-x-1234567890", "--model", "m",
         "--yes", "--json", "--project", str(project), "start it"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )
    try:
        for line in agent.stdout:  # type: ignore[union-attr]
            if '"background_started"' in line:
                break
        deadline = time.monotonic() + 20
        while not with_marker(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert with_marker(marker)
    finally:
        agent.kill()
        agent.wait()
    assert none_left(marker, seconds=10)


def test_a_hook_on_run_terminal_command_guards_background_commands_too(server, project: Path, marker: str) -> None:
    """Otherwise the model would pass a user's guard by starting the command in the background."""
    from tests.test_hooks import hook, user_config

    user_config(hook("before_tool", "grep -q forbidden && { echo 'no forbidden commands' >&2; exit 2; }; exit 0", tool="run_terminal_command"))
    server.script(
        call("start_background_command", f"touch forbidden-{marker}; sleep 30 # {marker}"),
        call("start_background_command", f"touch allowed-{marker}; sleep 30 # {marker}"),
        answer_reply(),
    )
    agent, recorder = make_agent(server, project)
    agent.run("start them")
    blocked, allowed = observations(recorder)[:2]
    assert "no forbidden commands" in blocked and not (project / f"forbidden-{marker}").exists()
    assert "is running" in allowed and (project / f"allowed-{marker}").exists()  # the positive control
    agent.close()
    assert none_left(marker)


async def test_an_acp_session_that_ends_leaves_no_background_process(endpoint, project: Path, tmp_path: Path, marker: str) -> None:
    from acp import PROTOCOL_VERSION, text_block
    from acp.stdio import spawn_agent_process

    from tests.test_acp import RecordingClient, settle

    client = RecordingClient()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    async with spawn_agent_process(client, sys.executable, "-m", "mzagent_tui", "acp", env=env, cwd=tmp_path) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(project))
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block(f"!&sleep 300 # {marker}")])
        await settle(client)
        assert response.stop_reason == "end_turn" and with_marker(marker)
    assert none_left(marker, seconds=10)


def test_a_command_that_cannot_start_is_told_as_not_started_not_as_stopped(tmp_path: Path, marker: str) -> None:
    """A start that fails (here its folder is gone: Popen raises) is not a command someone
    stopped: its status, its end event and what the model reads say it could not start, and the
    thread leaves no traceback behind."""
    events: list[object] = []
    failures: list[BaseException] = []
    previous_hook = threading.excepthook
    threading.excepthook = lambda hook_args: failures.append(hook_args.exc_value)  # type: ignore[assignment]
    try:
        processes = background.BackgroundProcesses(events.append)
        output = tmp_path / "out.txt"
        run = background.runner_for(f"echo {marker}", tmp_path / "gone", dict(os.environ), output, None)
        process = processes.start(f"echo {marker}", output, run)
        assert process.wait(10)
        processes.stop_all()
    finally:
        threading.excepthook = previous_hook
    assert process.status() == "failed" and "gone" in process.failed and not process.stopped
    [ended] = [e for e in events if isinstance(e, BackgroundEnded)]
    assert ended.failed == process.failed and not ended.stopped and ended.exit_code is None
    assert ended.describe().startswith(f"bg1 `echo {marker}` could not start: ")
    assert failures == []
    told = _background_report(process)
    assert told.startswith(f"Background command bg1 could not start ({process.failed}): echo {marker}") and "stopped" not in told

