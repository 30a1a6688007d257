"""What recording a command's changes costs: the snapshots before and after each command.

A generated project of N files (10 KB each, in folders of 100): the project's first snapshot
(every file read and hashed), a snapshot with nothing changed (one `stat` per file), the first
snapshot of a later session (it starts from the index the first one left),
and the whole record of a command that changed one file (snapshot, diff, saved pre-image, the
scan for files that make tools run code), next to running `true` through the same shell tool
without snapshots; and that scan alone (tools/planted_scan.py), first and unchanged. Medians of 5.

    python bench/snapshots.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mzagent_tui.agent.safety.approval import StaticApprover  # noqa: E402
from mzagent_tui.agent.safety.secrets import Redactor, command_env  # noqa: E402
from mzagent_tui.agent.sessions.session import Session  # noqa: E402
from mzagent_tui.agent.sessions.snapshots import Snapshots  # noqa: E402
from mzagent_tui.agent.tools.context import ToolContext  # noqa: E402
from mzagent_tui.agent.tools.planted_scan import PlantedScan  # noqa: E402
from mzagent_tui.agent.tools.shell import ShellTool  # noqa: E402

SCRATCH = Path(tempfile.mkdtemp(prefix="mzagent-bench-snapshots-"))
"""Every generated project and session folder (600 MB at 50,000 files), removed at the end."""


def scratch() -> Path:
    return Path(tempfile.mkdtemp(dir=SCRATCH))


def make_project(files: int) -> Path:
    root = scratch() / "proj"
    for n in range(files):
        folder = root / f"pkg{n // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n}.py").write_bytes(f"# module {n}\n".encode() * 800)
    return root


def ms(action) -> float:  # noqa: ANN001
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def measure(files: int) -> None:
    root = make_project(files)
    firsts, unchanged, reused, next_session = [], [], [], []
    for _ in range(5):
        sessions = scratch()
        (sessions / "one").mkdir()
        (sessions / "two").mkdir()
        snapshots = Snapshots(root, sessions / "one")
        firsts.append(ms(snapshots.take))
        unchanged.append(ms(snapshots.take))
        last = snapshots.take()
        reused.append(ms(lambda last=last: snapshots.take(modes_from=last)))
        next_session.append(ms(Snapshots(root, sessions / "two").take))
    scans = [PlantedScan(root) for _ in range(5)]
    scan_first = [ms(scan.take) for scan in scans]
    scan_unchanged = [ms(scan.take) for scan in scans]
    shell = ShellTool(ToolContext(root, Session(scratch() / "s", Redactor([])), lambda e: None, StaticApprover(True), Redactor([]), env=command_env(dict(os.environ))))
    shell.run_terminal_command("true")  # the session's first snapshot
    with_record = [ms(lambda n=n: shell.run_terminal_command(f"echo {n} >> pkg0/mod0.py")) for n in range(5)]
    shell._snapshots = None  # the same tool with recording off, as after a failed snapshot
    without = [ms(lambda: shell.run_terminal_command("echo 1 >> pkg0/mod0.py")) for _ in range(5)]
    print(
        f"{files:>6} files: first snapshot {statistics.median(firsts):.0f} ms, unchanged {statistics.median(unchanged):.0f} ms "
        f"({statistics.median(reused):.0f} ms before a command, modes reused), "
        f"a later session's first {statistics.median(next_session):.0f} ms; "
        f"a command changing one file {statistics.median(with_record):.0f} ms recorded vs {statistics.median(without):.0f} ms not; "
        f"the planted-file scan {statistics.median(scan_first):.0f} ms first, {statistics.median(scan_unchanged):.1f} ms unchanged",
        flush=True,
    )


if __name__ == "__main__":
    try:
        for count in (1_000, 10_000, 50_000):
            measure(count)
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)
