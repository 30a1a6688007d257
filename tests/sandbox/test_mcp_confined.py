"""#54, item 1: an MCP server that would run what the model can write runs confined.

The SDK starts a server's process itself, so the guard that starts it confines itself first
(hub.py). The server here is tests/mcp_server.py behind a program planted in a project outside
/tmp (so the rule that holds is "the project", not "the temp folders"); the planted program also
tries to leave a marker outside the project before it starts the server. Each way a server can
reach the project is one attempt (its program by path, relative, by PATH, by a link, with `..`;
its working folder; a script among its arguments; its environment); each asserts what the
confined server cannot do (write the project or outside it, read a secret of the home, reach
the network, leave the marker) and what it still can (list its tools, answer, read the project,
write its temp folder). The control: the same server from the user's own program runs as the
user and can write outside.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.config import user_config_path
from mzagent_tui.agent.mcp.config import McpServerConfig
from mzagent_tui.agent.mcp.hub import McpHub
from mzagent_tui.agent.mcp.program import how_it_runs, server_program
from mzagent_tui.agent.mcp.tools import RemoteTool
from mzagent_tui.agent.safety import trusted_path
from mzagent_tui.agent.safety.sandbox import Sandbox, landlock_abi
from tests.attack_helpers import needs_wall


def _server_script() -> str:
    """tests/mcp_server.py where a confined server can read it: a confined program sees no /tmp
    but its session's, and CI clones the checkout under /tmp, so there a copy goes beside the
    attack data (in the real home, outside /tmp), removed at exit."""
    script = (Path(__file__).parents[1] / "mcp_server.py").resolve()
    if not any(str(script).startswith(p) for p in ("/tmp/", "/var/tmp/")):
        return str(script)
    folder = Path(tempfile.mkdtemp(prefix="mzagent-attack-data-", dir=pwd.getpwuid(os.getuid()).pw_dir))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    shutil.copy(script, folder / script.name)
    return str(folder / script.name)


MCP_SERVER = _server_script()
SYSTEM_PATH = os.environ.get("PATH", "/usr/bin:/bin")
ROOT = str(Path(__file__).resolve().parents[2])
STARTUP = 60.0
"""A server's startup timeout here: a Python server takes over 20 s to start on a loaded 2-core machine."""


class Place:
    """A project with a planted server, a folder outside it, a home with a secret."""

    def __init__(self, base: Path) -> None:
        self.base, self.project, self.outside, self.home = base, base / "proj", base / "outside", base / "home"
        for folder in (self.project, self.outside, self.home / ".ssh", self.project / "src"):
            folder.mkdir(parents=True, exist_ok=True)
        (self.home / ".ssh" / "id_ed25519").write_text("ssh-secret-mcp-confined\n")
        (self.project / "README").write_text("project-readme-mcp\n")
        self.program = self.project / ".venv" / "bin" / "server"
        self.program.parent.mkdir(parents=True)
        self.program.write_text(f"#!/bin/sh\necho ran > {self.outside}/planted-marker\nexec {sys.executable} {MCP_SERVER} \"$@\"\n")
        self.program.chmod(0o755)
        (self.project / "server.py").write_text(f"import runpy, sys\nsys.argv[0] = {MCP_SERVER!r}\nrunpy.run_path({MCP_SERVER!r}, run_name='__main__')\n")
        trusted_path.note_project(self.project)


@pytest.fixture
def place(outside_home: Path, monkeypatch: pytest.MonkeyPatch) -> Place:
    where = Place(outside_home)
    monkeypatch.setenv("HOME", str(where.home))
    return where


@pytest.fixture
def sandbox(place: Place) -> Iterator[Sandbox]:
    box = Sandbox(place.project, "workspace", home=place.home)
    yield box
    box.close()


def variations(place: Place) -> dict[str, McpServerConfig]:
    """Every way a server's config reaches the project, each naming the planted program or a
    project file."""
    link = place.base / "mybin"
    if not link.exists():
        link.mkdir()
        (link / "server").symlink_to(place.program)
        (place.base / "proj-link").symlink_to(place.project)
    path_first = f"{place.project}/.venv/bin:{SYSTEM_PATH}"
    return {name: dataclasses.replace(config, startup_timeout=STARTUP) for name, config in {
        "absolute": McpServerConfig("absolute", str(place.program)),
        "relative-from-cwd": McpServerConfig("relative", ".venv/bin/server", cwd=str(place.project)),
        "dotdot": McpServerConfig("dotdot", f"{place.outside}/../{place.project.name}/.venv/bin/server"),
        "on-path-only-there": McpServerConfig("onpath", "server", env={"PATH": path_first}),
        "link-in-a-user-folder": McpServerConfig("link", str(link / "server")),
        "linked-project-folder": McpServerConfig("linkdir", f"{place.base}/proj-link/.venv/bin/server"),
        "cwd-project": McpServerConfig("cwd", sys.executable, (MCP_SERVER,), cwd=str(place.project)),
        "cwd-inside": McpServerConfig("cwdsub", sys.executable, (MCP_SERVER,), cwd=str(place.project / "src")),
        "cwd-link": McpServerConfig("cwdlink", sys.executable, (MCP_SERVER,), cwd=f"{place.base}/proj-link"),
        "script-argument": McpServerConfig("script", sys.executable, (str(place.project / "server.py"),)),
        "script-relative-dotdot": McpServerConfig("scriptrel", sys.executable, ("../proj/server.py",), cwd=str(place.outside)),
        "script-option-value": McpServerConfig("scriptopt", sys.executable, ("-X", "utf8", f"{place.project}/server.py")),
        "pythonpath": McpServerConfig("pythonpath", sys.executable, (MCP_SERVER,), env={"PYTHONPATH": f"/usr/lib:{place.project}/src"}),
    }.items()}


NAMES = [
    "absolute", "relative-from-cwd", "dotdot", "on-path-only-there", "link-in-a-user-folder", "linked-project-folder",
    "cwd-project", "cwd-inside", "cwd-link", "script-argument", "script-relative-dotdot", "script-option-value", "pythonpath",
]


def tools_of(hub: McpHub) -> dict[str, RemoteTool]:
    tools, failures = hub.wait_started()
    assert failures == []
    return {tool.name: tool for tool in tools}


def call(hub: McpHub, tools: dict[str, RemoteTool], name: str, **arguments: object) -> str:
    return hub.call(tools[name], dict(arguments), CancelToken()).text


@pytest.mark.parametrize("name", NAMES)
def test_every_way_into_the_project_makes_the_server_confined(place: Place, name: str) -> None:
    found = server_program(variations(place)[name])
    assert found.confined != "" and found.refused == "", found


@pytest.mark.parametrize("config", [
    McpServerConfig("plain", sys.executable, (MCP_SERVER,)),
    McpServerConfig("outside", sys.executable, (MCP_SERVER,), cwd="/"),
    McpServerConfig("data", sys.executable, (MCP_SERVER, "--marker", "x")),
])
def test_a_server_of_the_user_s_programs_runs_as_the_user(place: Place, config: McpServerConfig) -> None:
    """The control: nothing of the project, so nothing confined (a folder argument such as a
    filesystem server's root is data, not a program: see the next test)."""
    found = server_program(config)
    assert found.confined == "" and found.program == sys.executable


def test_a_server_given_the_project_folder_as_data_runs_as_the_user(place: Place) -> None:
    """`server-filesystem /proj`: the folder is what it serves, not code it runs; confining it
    (read-only, no network) would break the most common server. Only a file argument counts."""
    assert server_program(McpServerConfig("fs", sys.executable, (MCP_SERVER, str(place.project)))).confined == ""


@needs_wall
@pytest.mark.parametrize("name", NAMES)
def test_a_confined_server_cannot_write_read_secrets_or_reach_the_network(place: Place, sandbox: Sandbox, tmp_path: Path, name: str) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    hub = McpHub([variations(place)[name]], tmp_path, sandbox)
    try:
        tools = tools_of(hub)
        assert call(hub, tools, "add", a=2, b=3) == "5"  # it runs and answers
        assert call(hub, tools, "read_text", path=str(place.project / "README")) == "project-readme-mcp\n"
        temp = sandbox.temp_dir
        assert temp is not None and call(hub, tools, "try_write", path=f"{temp}/ok", text="t").startswith("wrote")
        assert call(hub, tools, "try_write", path=str(place.project / "planted.py"), text="x").startswith("cannot write")
        assert call(hub, tools, "try_write", path=str(place.project / ".envrc"), text="x").startswith("cannot write")
        assert call(hub, tools, "try_write", path=str(place.outside / "stolen"), text="x").startswith("cannot write")
        assert call(hub, tools, "try_write", path=str(place.program), text="#!/bin/sh\n").startswith("cannot write")
        assert "ssh-secret-mcp-confined" not in call(hub, tools, "read_text", path=str(place.home / ".ssh" / "id_ed25519"))
        assert call(hub, tools, "connect", port=port).startswith("cannot connect")
    finally:
        hub.close()
        listener.close()
    assert not (place.project / "planted.py").exists() and not (place.outside / "stolen").exists()
    assert not (place.outside / "planted-marker").exists()


@needs_wall
def test_the_same_server_from_the_user_s_program_runs_as_the_user(place: Place, sandbox: Sandbox, tmp_path: Path) -> None:
    """The control for the test above: its writes outside the project go through."""
    hub = McpHub([McpServerConfig("mine", sys.executable, (MCP_SERVER,), startup_timeout=STARTUP)], tmp_path, sandbox)
    try:
        tools = tools_of(hub)
        assert call(hub, tools, "try_write", path=str(place.outside / "mine"), text="x").startswith("wrote")
    finally:
        hub.close()
    assert (place.outside / "mine").exists()


@needs_wall
def test_a_confined_server_stops_with_the_hub(place: Place, sandbox: Sandbox, tmp_path: Path) -> None:
    hub = McpHub([variations(place)["absolute"]], tmp_path, sandbox)
    try:
        tools = tools_of(hub)
        pid = int(call(hub, tools, "pid"))
        assert psutil.pid_exists(pid)
    finally:
        hub.close()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.parametrize("mode", ["off", "none"])
def test_without_a_sandbox_a_server_that_must_be_confined_is_not_started(place: Place, tmp_path: Path, mode: str) -> None:
    sandbox = Sandbox(place.project, "off", home=place.home) if mode == "off" else None
    hub = McpHub([variations(place)["absolute"], variations(place)["cwd-project"]], tmp_path, sandbox)
    try:
        tools, failures = hub.wait_started()
    finally:
        hub.close()
    assert tools == [] and len(failures) == 2
    assert all("is not started" in failure and "runs only confined" in failure for failure in failures), failures
    assert not (place.outside / "planted-marker").exists()


def test_mzagent_config_says_how_each_server_runs_and_why(place: Place) -> None:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'[mcp_servers.planted]\ncommand = "{place.program}"\n'
        f'[mcp_servers.mine]\ncommand = "{sys.executable}"\nargs = ["{MCP_SERVER}"]\n'
        f'[mcp_servers.here]\ncommand = "{sys.executable}"\nargs = ["{MCP_SERVER}"]\ncwd = "{place.project}"\n'
        '[mcp_servers.remote]\nurl = "http://127.0.0.1:9/mcp"\n'
        '[mcp_servers.missing]\ncommand = "no-such-server-program-x"\n'
    )

    def config_lines(sandbox: str) -> dict[str, str]:
        done = subprocess.run(
            [sys.executable, "-m", "mzagent_tui", "config", "--project", str(place.project), "--base-url", "http://127.0.0.1:9/v1"],
            capture_output=True, text=True, timeout=60, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": ROOT, "MZAGENT_SANDBOX": sandbox},
        )
        return {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}

    off = config_lines("off")
    assert "is not started: its program" in off["mcp_servers.planted"] and "the sandbox is off" in off["mcp_servers.planted"]
    assert "is not started: it works in" in off["mcp_servers.here"]
    assert f"runs as you: {sys.executable}" in off["mcp_servers.mine"]
    assert "already running: reached at http://127.0.0.1:9/mcp" in off["mcp_servers.remote"]
    assert "not found on PATH" in off["mcp_servers.missing"]
    if landlock_abi() > 0:
        confined = config_lines("workspace")
        assert "sandboxed (project read-only, no network): its program" in confined["mcp_servers.planted"]
        assert str(place.program) in confined["mcp_servers.planted"]
        assert "sandboxed (project read-only, no network): it works in" in confined["mcp_servers.here"]
        assert f"runs as you: {sys.executable}" in confined["mcp_servers.mine"]


def test_how_it_runs_without_a_sandbox_object_is_not_started(place: Place) -> None:
    assert how_it_runs(variations(place)["absolute"], None).startswith("is not started")
    assert how_it_runs(McpServerConfig("mine", sys.executable, (MCP_SERVER,)), None).startswith("runs as you")


CONFINED_PARENT = """
import sys, time
from pathlib import Path
from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.mcp.config import McpServerConfig
from mzagent_tui.agent.mcp.hub import McpHub
from mzagent_tui.agent.safety import trusted_path
from mzagent_tui.agent.safety.sandbox import Sandbox
project = Path(sys.argv[3])
trusted_path.note_project(project)
config = McpServerConfig("t", sys.executable, (sys.argv[1], "--marker", sys.argv[2]), cwd=str(project), startup_timeout=60)
hub = McpHub([config], Path(sys.argv[4]), Sandbox(project, "workspace"))
tools, failures = hub.wait_started()
pid = next(t for t in tools if t.name == "pid")
print(hub.call(pid, {}, CancelToken()).text, flush=True)
time.sleep(300)
"""


@needs_wall
def test_no_confined_server_outlives_a_kill_9_of_the_agent(place: Place, tmp_path: Path) -> None:
    """The guard sets the parent-death signal after it confined itself (a new user namespace
    and Landlock do not clear it)."""
    marker = f"confined-orphan-{os.getpid()}-{id(tmp_path)}"
    parent = subprocess.Popen(
        [sys.executable, "-c", CONFINED_PARENT, MCP_SERVER, marker, str(place.project), str(tmp_path)],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        server = psutil.Process(pid)
        assert marker in " ".join(server.cmdline())
        parent.kill()
        parent.wait(10)
        _, alive = psutil.wait_procs([server], timeout=10)
        assert alive == []
    finally:
        parent.kill()
        for process in psutil.process_iter(["cmdline"]):
            if marker in " ".join(process.info["cmdline"] or []):
                process.kill()
