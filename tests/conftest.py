"""Shared fixtures: an isolated home for config/state, a scripted server, a project folder."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from mzagent_tui.agent.assembly import assemble
from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.config import Settings
from mzagent_tui.agent.events import Event
from mzagent_tui.agent.hooks.config import load_hooks
from mzagent_tui.agent.loop import Agent
from mzagent_tui.agent.run_config import RunConfig
from mzagent_tui.agent.safety import own_programs
from mzagent_tui.agent.safety.approval import ApprovalDecision, Approver, Policy, StaticApprover
from mzagent_tui.agent.safety.approval_requests import ApprovalRequest
from mzagent_tui.agent.safety.sandbox import landlock_abi, namespaces_work, pid_namespace_works
from mzagent_tui.agent.sessions.history import SessionHistory
from tests.scripted_server import ScriptedServer

KEY_VARS = ("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "SILICONFLOW_API_KEY", "OPENROUTER_API_KEY")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep the user's config, state and keys out of every test."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    for name in list(os.environ):
        if name.startswith("MZAGENT_") or name in KEY_VARS or name == "OLLAMA_HOST":
            monkeypatch.delenv(name)
    monkeypatch.setenv("MZAGENT_DISCOVER", "off")  # an Ollama on the developer's machine must not change what a test runs
    return home


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        yield running


@pytest.fixture
def endpoint(server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedServer:
    """The scripted server as the model of every agent process a test starts (through the environment)."""
    for name, value in {"PROVIDER": "custom", "BASE_URL": server.base_url, "MODEL": "scripted", "API_KEY": "sk-test-1234567890", "SANDBOX": "off"}.items():
        monkeypatch.setenv(f"MZAGENT_{name}", value)
    return server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder.resolve()


def settings_for(server: ScriptedServer, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "provider": "custom",
        "base_url": server.base_url,
        "api_key": "sk-test-secret-key-1234",
        "model": "scripted-model",
        "retry_base_delay": 0.01,
        "idle_timeout": 2.0,
        "command_timeout": 10.0,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


def config_for(
    server: ScriptedServer, project: Path, policy: Policy | None = None, environ: Mapping[str, str] | None = None, **overrides: object
) -> RunConfig:
    """What a front-end would hand down for `settings_for`: the user config's hooks (read as at
    start), a restricted environment unless one is given."""
    return RunConfig(
        settings_for(server, **overrides), project, policy or Policy(), tuple(load_hooks()), environ=environ or {"PATH": "/usr/bin:/bin"},
    )


class RecordingApprover:
    """A user who answers every request with one decision and remembers what was asked."""

    def __init__(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        self.requests: list[ApprovalRequest] = []

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        return self.decision


class Recorder:
    """Collects events; thread-safe because the agent may run on a worker thread."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        with self._lock:
            self.events.append(event)

    def of(self, kind: type) -> list:
        with self._lock:
            return [e for e in self.events if isinstance(e, kind)]


def requires_sandbox(abi: int = 6, namespaces: bool = False, pids: bool = False) -> pytest.MarkDecorator:
    """A test of the sandbox needs Landlock at `abi` (and user namespaces, and a PID namespace
    with its own /proc): elsewhere it is skipped, but under CI=true a machine without them fails
    the test, so a security suite that silently skipped could never pass as green."""
    wanted = ((f"Landlock ABI {abi}+", landlock_abi() < abi), ("user namespaces", namespaces and not namespaces_work()),
              ("PID namespaces", pids and not pid_namespace_works()))
    missing = [what for what, gone in wanted if gone]
    if not missing:
        return pytest.mark.skipif(False, reason="the sandbox is here")
    reason = "needs " + " and ".join(missing)
    if os.environ.get("CI") == "true":
        return pytest.mark.usefixtures("_wall_missing_in_ci")
    return pytest.mark.skip(reason=reason)


@pytest.fixture
def _wall_missing_in_ci() -> None:
    pytest.fail(f"CI machine lacks the sandbox (Landlock ABI {landlock_abi()}, user namespaces {namespaces_work()}, "
                f"PID namespaces {pid_namespace_works()}): the security tests must run in CI")


class CancelWhen:
    """Cancels `token` once `condition` holds (a command is running, a stream has begun), never on
    a timer that races start-up on a loaded machine. `met` says whether the condition was seen;
    after `timeout` it cancels anyway, so a test cannot hang, and the test asserts `met`."""

    def __init__(self, token: CancelToken, condition: Callable[[], bool], timeout: float = 30.0) -> None:
        self.met = False
        self._thread = threading.Thread(target=self._watch, args=(token, condition, timeout), daemon=True)
        self._thread.start()

    def _watch(self, token: CancelToken, condition: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not condition():
            time.sleep(0.02)
        self.met = condition()
        token.cancel()

    def join(self) -> bool:
        self._thread.join()
        return self.met


def make_agent(
    server: ScriptedServer,
    project: Path,
    approver: Approver | None = None,
    env: dict[str, str] | None = None,
    history: SessionHistory | None = None,
    **overrides: object,
) -> tuple[Agent, Recorder]:
    recorder = Recorder()
    environ = env or {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    agent = assemble(config_for(server, project, environ=environ, **overrides), approver or StaticApprover(True), recorder, history)
    return agent, recorder


@pytest.fixture
def http_server() -> Iterator[str]:
    """tests/mcp_server.py over streamable HTTP on a free port, with the bearer token tok-123; its URL."""

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    marker = f"mcp-http-{uuid.uuid4().hex}"
    process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("mcp_server.py")), "--marker", marker, "--http", str(port), "--token", "tok-123"], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            assert process.poll() is None and time.monotonic() < deadline, "the HTTP test server did not start"
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(10)


@pytest.fixture
def short() -> Iterator[Path]:
    """A folder with a short path under /tmp (a unix socket's path must fit in 108 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="atk-", dir="/tmp")).resolve()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def outside(short: Path) -> Path:
    folder = short / "outside"
    folder.mkdir()
    return folder


@pytest.fixture
def bare_home(short: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home of the test's own (`HOME`), under `short`."""
    folder = short / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def home(short: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of the test's own (`HOME`) under `short`, holding the user's private key: what a
    command must not read. A file may override it (a home with more in it, or an empty one)."""
    folder = short / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_rsa").write_text("PRIVATE KEY OF THE USER\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def unwalled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the git hardening stands: our programs' Landlock and namespace wall taken away."""
    monkeypatch.setattr(own_programs, "_confine", lambda readable, writable, seen=(): None)


@pytest.fixture
def outside_home() -> Iterator[Path]:
    """A folder outside the (test's) home and outside /tmp, /var/tmp and /run: where a user keeps
    `~/.config` or `~/.local` when the home is on a small disk (`ln -s /data/me/config ~/.config`)."""
    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    if any(str(real_home.resolve()).startswith(p) for p in ("/tmp", "/var/tmp", "/run")) or not os.access(real_home, os.W_OK):
        pytest.skip("needs a writable folder outside the covered ones")
    folder = Path(tempfile.mkdtemp(prefix="mzagent-attack-data-", dir=real_home)).resolve()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
