"""Transcript append cost at 50, 500 and 5,000 entries, mounted through the real widgets.

For each size: fill the transcript to that many entries (pruning applies as in the app), then
time 30 further appends of a thought entry and an observation entry and take the median.
Goal: the 5,000 case within 2x of the 50 case.

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
from mzagent_tui.app import MzAgentApp  # noqa: E402
from mzagent_tui.widgets.transcript import ObservationEntry, Transcript, text_entry  # noqa: E402


async def measure(size: int) -> float:
    app = MzAgentApp(Settings(provider="custom", base_url="http://127.0.0.1:9/v1", model="m"), Path(tempfile.mkdtemp()))
    async with app.run_test(size=(120, 40)) as pilot:
        transcript = app.query_one(Transcript)
        for start in range(0, size, 50):
            transcript.add(*[text_entry("thought", f"thought {i}") for i in range(start, min(size, start + 50))])
            await pilot.pause()
        times = []
        for i in range(30):
            started = time.perf_counter()
            transcript.add(text_entry("thought", f"new {i}"), ObservationEntry(f"line\n" * 20, True, 0, None))
            await pilot.pause()
            times.append((time.perf_counter() - started) * 1000)
        return statistics.median(times)


async def main() -> None:
    results = {}
    for size in (50, 500, 5000):
        results[size] = await measure(size)
        print(f"{size:>5} entries: median append {results[size]:.1f} ms", flush=True)
    print(f"ratio 5000/50: {results[5000] / results[50]:.2f}x (goal <= 2x)")


if __name__ == "__main__":
    asyncio.run(main())
