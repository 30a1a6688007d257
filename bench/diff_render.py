"""Showing the diff of a 5,000-line file change must not stall the event loop (goal: <= 100 ms).

    python bench/diff_render.py [--runs 5]

Builds the change the way a write does (`file_diff` of 5,000 changed lines: a 10,000-line diff),
mounts its entry in the app's transcript with the app's stylesheet, expands it and pages through it,
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

from bench.ui_latency import StallMeter  # noqa: E402
from mzagent_tui.agent.events import FileChanged  # noqa: E402
from mzagent_tui.agent.ground.diffs import file_diff  # noqa: E402
from mzagent_tui.widgets.entries import DiffEntry, entries_for  # noqa: E402
from mzagent_tui.widgets.transcript import Transcript  # noqa: E402

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
        yield Transcript(ROOT, id="transcript")


PHASES = ("mount", "expand", "page-down burst", "end")


async def one_run(event: FileChanged) -> dict[str, float]:
    """The longest stall of each phase, in ms."""
    app = Bench()
    meter = StallMeter()
    stalls: dict[str, float] = {}

    async def phase(name: str) -> None:
        await pilot.pause(0.2)
        stalls[name] = meter.worst * 1000
        meter.reset()

    async with app.run_test(size=(120, 40)) as pilot:
        app.set_interval(0.01, meter.tick)
        await pilot.pause(0.1)
        meter.reset()
        transcript = app.query_one(Transcript)
        await transcript.add(*entries_for(event, ROOT))
        await phase("mount")
        entry = app.query_one(DiffEntry)
        entry.focus()
        await pilot.press("enter")
        await phase("expand")
        for _ in range(20):
            await pilot.press("pagedown")
        await phase("page-down burst")
        await pilot.press("end")
        await phase("end")
        assert entry.view.size.height == len(entry.view.lines)
        assert transcript.scroll_y == transcript.max_scroll_y > len(entry.view.lines) - 40
    return stalls


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    event, took = big_change()
    runs = [await one_run(event) for _ in range(args.runs)]
    worst = [max(run.values()) for run in runs]
    print(f"diff of {LINES} changed lines ({event.diff.count(chr(10))} diff lines) built in {took * 1000:.0f} ms on the worker thread")
    print(f"longest event-loop stall: median {statistics.median(worst):.0f} ms, worst {max(worst):.0f} ms over {args.runs} runs")
    print("by phase (median / worst): " + ", ".join(
        f"{name} {statistics.median(run[name] for run in runs):.0f} / {max(run[name] for run in runs):.0f} ms" for name in PHASES
    ))


if __name__ == "__main__":
    asyncio.run(main())
