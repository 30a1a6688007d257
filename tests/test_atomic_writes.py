"""Atomic writes, killed: a writer killed with SIGKILL in the middle of a large write leaves the
old file and no temp file where the kernel has `O_TMPFILE`; where it has not (the positive
control), the named temp file it leaves is the one a later session sweeps."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mzagent_tui.agent.ground.textfiles import atomic_write

SIZE = 20_000_000
KILLED_WRITER = """
import os, sys, time
from pathlib import Path
from mzagent_tui.agent.ground.textfiles import atomic_write
if sys.argv[2] == "no-tmpfile":
    del os.O_TMPFILE  # a kernel or platform without it
def stall(fd):
    print("written, not yet synced", flush=True)
    time.sleep(60)
os.fsync = stall  # a slow disk: the kill lands while the data is being written out
atomic_write(Path(sys.argv[1]), b"n" * %d)
""" % SIZE


def _unnamed_files(pid: int, folder: Path) -> list[int]:
    """Sizes of the files the process holds open in `folder` that have no name."""
    sizes = []
    for entry in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{entry}")
            if target.startswith(f"{folder}/") and target.endswith(" (deleted)"):
                sizes.append(os.stat(f"/proc/{pid}/fd/{entry}").st_size)
        except OSError:
            continue
    return sizes


def _kill_mid_write(target: Path, variant: str) -> int:
    """Start a writer, wait until the data is written and not yet synced, kill it; return the size
    of the nameless file it held then (0: none)."""
    writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(target), variant], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "written, not yet synced"
        held = _unnamed_files(writer.pid, target.parent)
        writer.send_signal(signal.SIGKILL)
        assert writer.wait(timeout=30) == -signal.SIGKILL
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    return max(held, default=0)


@pytest.mark.skipif(not hasattr(os, "O_TMPFILE") or not os.path.isdir("/proc/self/fd"), reason="O_TMPFILE and /proc are Linux's")
def test_a_writer_killed_mid_write_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "big.txt"
    target.write_text("old\n")
    held = _kill_mid_write(target, "tmpfile")
    assert held == SIZE, "the data was in a file with no name when the kill came"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]
    assert target.read_text() == "old\n"


def test_without_o_tmpfile_the_kill_leaves_a_named_temp_file_for_the_sweep(tmp_path: Path) -> None:
    """The positive control: the same kill on the fallback path leaves a temp file this test sees,
    noted for the next session's sweep, which removes it."""
    from mzagent_tui.agent.ground import leftovers

    target = tmp_path / "big.txt"
    target.write_text("old\n")
    assert _kill_mid_write(target, "no-tmpfile") == 0
    temps = [p for p in tmp_path.iterdir() if p.name.endswith(".mzagent-tmp")]
    assert len(temps) == 1 and temps[0].stat().st_size == SIZE
    assert target.read_text() == "old\n"
    assert temps[0] in leftovers.sweep()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]


@pytest.mark.parametrize("variant", ["tmpfile", "no-tmpfile"])
def test_a_write_replaces_the_file_keeps_its_mode_and_leaves_nothing_beside_it(variant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if variant == "no-tmpfile":
        monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    target = tmp_path / "run.sh"
    target.write_text("old\n")
    target.chmod(0o751)
    atomic_write(target, b"new\n")
    atomic_write(tmp_path / "fresh.txt", b"fresh\n")
    assert target.read_bytes() == b"new\n" and stat.S_IMODE(target.stat().st_mode) == 0o751
    assert (tmp_path / "fresh.txt").read_bytes() == b"fresh\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.txt", "run.sh"]

