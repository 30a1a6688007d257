"""File tools under a racing attacker: a folder swapped for a symlink after the containment
check must not lead outside the project, with openat2 and with the fallback walk."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mzagent_tui.agent.ground import beneath
from mzagent_tui.agent.safety.approval import StaticApprover
from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.tools import files
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.files import FileTools
from mzagent_tui.agent.tools.registry import ToolRegistry
from tests.conftest import Recorder


@pytest.fixture(params=["openat2", "walk"])
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(beneath, "_openat2_works", None if request.param == "openat2" else False)
    return request.param


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "notes.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("OUTSIDE SECRET\n")
    return root.resolve(), outside


@pytest.fixture
def context(layout: tuple[Path, Path], tmp_path: Path) -> ToolContext:
    session = Session(tmp_path / "session", Redactor([]))
    return ToolContext(layout[0], session, Recorder(), StaticApprover(True), session.redact, env={})


@pytest.fixture
def registry(context: ToolContext) -> ToolRegistry:
    tools = FileTools(context)
    return ToolRegistry([tools.read_file, tools.write_to_file])


def swap(root: Path, outside: Path) -> None:
    os.rename(root / "sub", root / "sub.real")
    os.symlink(outside, root / "sub")


@pytest.fixture
def swap_after_check(layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The attacker wins the race every time: the swap lands right after resolve_inside."""
    real = files.resolve_inside

    def resolve_then_swap(root: Path, raw: object) -> Path:
        resolved = real(root, raw)
        swap(*layout)
        return resolved

    monkeypatch.setattr(files, "resolve_inside", resolve_then_swap)
    yield


def test_a_swap_after_the_check_reads_nothing_outside(kernel: str, registry: ToolRegistry, swap_after_check: None) -> None:
    result = registry.call("read_file", ["sub/notes.txt"])
    assert not result.ok and "OUTSIDE" not in result.text
    assert "changed while it was being opened" in result.text


def test_a_swap_after_the_check_writes_nothing_outside(
    kernel: str, context: ToolContext, registry: ToolRegistry, layout: tuple[Path, Path], swap_after_check: None,
) -> None:
    result = registry.call("write_to_file", ["sub/notes.txt", "overwritten\n"])
    assert not result.ok and "changed while it was being opened" in result.text
    assert (layout[1] / "notes.txt").read_text() == "OUTSIDE SECRET\n"
    assert [p.name for p in layout[1].iterdir()] == ["notes.txt"]


def test_links_inside_the_project_still_work(kernel: str, registry: ToolRegistry, layout: tuple[Path, Path]) -> None:
    root = layout[0]
    (root / "alias").symlink_to("sub")
    assert registry.call("read_file", ["alias/notes.txt"]).text == "inside\n"
    assert registry.call("write_to_file", ["alias/new/deep.txt", "x\n"]).ok
    assert (root / "sub" / "new" / "deep.txt").read_text() == "x\n"


FLIPPER = """
import os, sys
root, outside = sys.argv[1], sys.argv[2]
while True:
    os.rename(root + "/sub", root + "/sub.real")
    os.symlink(outside, root + "/sub")
    os.unlink(root + "/sub")
    os.rename(root + "/sub.real", root + "/sub")
"""


def test_a_racing_swapper_never_leaks_the_outside_file(kernel: str, registry: ToolRegistry, layout: tuple[Path, Path]) -> None:
    """Another process swaps the folder for a link to the outside as fast as it can."""
    root, outside = layout
    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, str(root), str(outside)])
    try:
        texts = [registry.call("read_file", ["sub/notes.txt"]).text for _ in range(1500)]
    finally:
        flipper.kill()
        flipper.wait()
    assert not any("OUTSIDE" in text for text in texts)
    refused = [text for text in texts if text != "inside\n"]
    assert refused, "the race never happened: the test proved nothing"
