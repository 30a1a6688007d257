"""Showing the diff of a 5,000-line file change must not stall the event loop (goal: <= 100 ms).

    python bench/diff_render.py [--runs 5]

Builds the change the way a write does (`file_diff` of 5,000 changed lines: a 10,000-line diff),
mounts its transcript entry in the real app's stylesheet, expands it and pages through it,
while a 10 ms timer records the longest gap between its ticks. Prints the median and worst of
the runs, and the time `file_diff` itself took (it runs on the agent's worker thread).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual.app import App, ComposeResult  # noqa: E402
from textual.containers import VerticalScroll  # noqa: E402

from bench.ui_latency import StallMeter  # noqa: E402
from mzagent_tui.agent.diffs import file_diff  # noqa: E402
from mzagent_tui.agent.events import FileChanged  # noqa: E402
from mzagent_tui.widgets.entries import DiffEntry, entries_for  # noqa: E402

LINES = 5_000
ROOT = Path("/proj")


def big_change() -> tuple[FileChanged, float]:
    old = "".join(f"def function_{i}(value):\n    return value + {i}\n" for i in range(LINES // 2)).encode()
    new = "".join(f"def function_{i}(value):\n    return value * {i}\n" for i in range(LINES // 2)).encode()
    started = time.perf_counter()
    diff = file_diff("big.py", old, new)
    took = time.perf_counter() - started
    assert diff is not None
    return FileChanged("/proj/big.py", False, "/b", "0" * 64, diff=diff.text, added=diff.added, removed=diff.removed), took


class Bench(App):
    CSS_PATH = Path(__file__).resolve().parents[1] / "mzagent_tui" / "app.tcss"

    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="scroller")


async def one_run(event: FileChanged) -> float:
    app = Bench()
    meter = StallMeter()
    async with app.run_test(size=(120, 40)) as pilot:
        app.set_interval(0.01, meter.tick)
        await pilot.pause(0.1)
        meter.reset()
        await app.query_one("#scroller").mount_all(entries_for(event, ROOT))
        await pilot.pause(0.1)
        entry = app.query_one(DiffEntry)
        entry.focus()
        await pilot.press("enter")
        await pilot.pause(0.1)
        for _ in range(20):
            await pilot.press("pagedown")
        await pilot.press("end")
        await pilot.pause(0.2)
        assert entry.view.size.height == len(entry.view.lines)
    return meter.worst * 1000


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    event, took = big_change()
    stalls = [await one_run(event) for _ in range(args.runs)]
    print(f"diff of {LINES} changed lines ({event.diff.count(chr(10))} diff lines) built in {took * 1000:.0f} ms on the worker thread")
    print(f"longest event-loop stall: median {statistics.median(stalls):.0f} ms, worst {max(stalls):.0f} ms over {args.runs} runs")


if __name__ == "__main__":
    asyncio.run(main())
