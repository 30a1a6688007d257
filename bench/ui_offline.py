"""The app while the bundled model computes on every core: the real offline case, beside the quiet one.

In one run, for each condition (quiet; the bundled engine generating a long answer, started the
way the app starts it), with the app's paced full garbage collections and without (left to CPython),
alternating, `--rounds` times:
- key latency in the task box while the scripted model streams and a command prints 50 MB
  (`ui_latency.key_latency`): median, p95 and the longest event-loop stall;
- the transcript's append cost at 5,000 entries (`transcript.measure`): median CPU per append.

Then the engine's generation speed with the UI idle, with the priority the app gives it (nice
ENGINE_NICE, SCHED_BATCH) and without (the same process started at the app's own priority),
alternating, three rounds.

    python bench/ui_offline.py [--rounds 3]

Needs the `local` extra. Goals (issue 59): loaded p95 < 16 ms, no stall over 100 ms, append
<= 40 ms CPU at 5,000 entries; tokens/s with the priority within 5 % of without.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.transcript import measure as append_cost  # noqa: E402
from bench.ui_latency import Latency, key_latency  # noqa: E402
from mzagent_tui.agent.model import local  # noqa: E402
from mzagent_tui.agent.tools.process import die_with_parent  # noqa: E402

PROMPT = "Write a long, detailed history of the printing press, chapter by chapter."


def generate(server: local.LocalServer, tokens: int) -> dict[str, float]:
    """One non-streamed completion of exactly `tokens` tokens (end of text ignored); the server's timings."""
    body = {
        "model": local.MODEL_ALIAS, "max_tokens": tokens, "temperature": 0.7, "ignore_eos": True,
        "messages": [{"role": "user", "content": PROMPT}],
    }
    request = urllib.request.Request(f"{server.base_url}/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=1800) as response:
        return json.loads(response.read())["timings"]


@contextmanager
def engine(prioritised: bool) -> Iterator[local.LocalServer]:
    """The bundled server as the app starts it, or (prioritised=False) at the app's own priority."""
    original = local._engine_setup
    if not prioritised:
        local._engine_setup = die_with_parent
    try:
        server = local.LocalServer(local.model_path())
        server.launch()
    finally:
        local._engine_setup = original
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@contextmanager
def generating(server: local.LocalServer) -> Iterator[None]:
    """The engine generates on every core until the block ends (one long answer after another)."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                generate(server, 256)
            except OSError:
                return

    worker = threading.Thread(target=loop, daemon=True)
    worker.start()
    try:
        yield
    finally:
        stop.set()
        worker.join()


@dataclass
class Case:
    """One condition's samples over the rounds."""

    p95: list[float] = field(default_factory=list)
    stall: list[float] = field(default_factory=list)
    append: list[float] = field(default_factory=list)

    def add(self, latency: Latency, append: float) -> None:
        self.p95.append(latency.p95)
        self.stall.append(latency.stall)
        self.append.append(append)

    def line(self, label: str) -> str:
        return (
            f"{label}: key latency p95 median {statistics.median(self.p95):.1f} ms (worst {max(self.p95):.1f}), "
            f"longest stall median {statistics.median(self.stall):.0f} ms (worst {max(self.stall):.0f}), "
            f"append at 5,000 entries median {statistics.median(self.append):.1f} ms CPU"
        )


async def ui_round(cases: dict[tuple[str, bool], Case], load: str) -> None:
    for paced in (True, False):
        latency = await key_latency(paced)
        cpu, _wall = await append_cost(5000)
        cases[load, paced].add(latency, cpu)
        print(f"  {load}, {'paced' if paced else 'unpaced'}: {latency}, append {cpu:.1f} ms", flush=True)


def speed(rounds: int) -> None:
    results: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(rounds):
        for prioritised in (True, False):
            with engine(prioritised) as server:
                generate(server, 8)
                results[prioritised].append(generate(server, 200)["predicted_per_second"])
    with_priority, without = statistics.median(results[True]), statistics.median(results[False])
    print(
        f"generation with the UI idle, median of {rounds}: with the engine's priority {with_priority:.2f} tokens/s "
        f"({', '.join(f'{v:.2f}' for v in results[True])}), at the app's priority {without:.2f} tokens/s "
        f"({', '.join(f'{v:.2f}' for v in results[False])}): {with_priority / without:.3f}x",
        flush=True,
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    cases = {(load, paced): Case() for load in ("quiet", "engine generating") for paced in (True, False)}
    with engine(prioritised=True) as server:
        generate(server, 8)
        for _ in range(rounds):
            await ui_round(cases, "quiet")
            with generating(server):
                await ui_round(cases, "engine generating")
    for (load, paced), case in cases.items():
        print(case.line(f"{load}, full collections {'paced by the app' if paced else 'left to CPython'}"), flush=True)
    speed(rounds)


if __name__ == "__main__":
    asyncio.run(main())
