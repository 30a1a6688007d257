"""Transcript append cost at 50, 500 and 5,000 entries, mounted through the real widgets.

For each size: fill the transcript to that many entries (pruning applies as in the app), then
time 30 further appends of a thought entry and an observation entry, each followed by the
refresh (Pilot `pause`). Reported: the CPU time of the process per append (the work done), and
the wall time (which also includes Textual's frame pacing and the Pilot's idle wait).
Goal (issue 44): the 5,000 case within 1.2x of the 50 case, and at most 40 ms of CPU per append.

    python bench/transcript.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mzagent_tui.agent.config import Settings  # noqa: E402
from mzagent_tui.agent.run_config import RunConfig  # noqa: E402
from mzagent_tui.app import MzAgentApp  # noqa: E402
from mzagent_tui.widgets.entries import ObservationEntry, text_entry  # noqa: E402
from mzagent_tui.widgets.transcript import Transcript  # noqa: E402


async def measure(size: int) -> tuple[float, float]:
    app = MzAgentApp(RunConfig(Settings(provider="custom", base_url="http://127.0.0.1:9/v1", model="m"), Path(tempfile.mkdtemp())))
    async with app.run_test(size=(120, 40)) as pilot:
        transcript = app.query_one(Transcript)
        for start in range(0, size, 50):
            transcript.add(*[text_entry("thought", f"thought {i}") for i in range(start, min(size, start + 50))])
            await pilot.pause()
        cpu, wall = [], []
        for i in range(30):
            cpu_start, wall_start = time.process_time(), time.perf_counter()
            transcript.add(text_entry("thought", f"new {i}"), ObservationEntry("line\n" * 20, True, 0, None))
            await pilot.pause()
            cpu.append((time.process_time() - cpu_start) * 1000)
            wall.append((time.perf_counter() - wall_start) * 1000)
        return statistics.median(cpu), statistics.median(wall)


async def main() -> None:
    results = {}
    for size in (50, 500, 5000):
        results[size] = await measure(size)
        cpu, wall = results[size]
        print(f"{size:>5} entries: median append {cpu:.1f} ms CPU, {wall:.1f} ms wall", flush=True)
    print(f"ratio 5000/50: {results[5000][0] / results[50][0]:.2f}x CPU, {results[5000][1] / results[50][1]:.2f}x wall (goal <= 1.2x, and <= 40 ms CPU at 5,000)")


if __name__ == "__main__":
    asyncio.run(main())
