"""Agent overhead per step against a zero-latency scripted server (tools excluded).

Each step: one streamed reply from the scripted server through the real openai client,
parse, a no-op tool, the observation, the session log. Reports median and p95 in ms.

    python bench/loop_overhead.py [--steps 300]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import openai  # noqa: E402

from mzagent_tui.agent.assembly import assemble  # noqa: E402
from mzagent_tui.agent.config import Settings  # noqa: E402
from mzagent_tui.agent.events import StepStarted, Stopped  # noqa: E402
from mzagent_tui.agent.run_config import RunConfig  # noqa: E402
from mzagent_tui.agent.safety.approval import StaticApprover  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    steps = parser.parse_args().steps
    tmp = Path(tempfile.mkdtemp())
    os.environ["XDG_STATE_HOME"] = str(tmp / "state")
    (tmp / "proj").mkdir()
    stamps: list[float] = []

    def sink(event: object) -> None:
        if isinstance(event, (StepStarted, Stopped)):
            stamps.append(time.perf_counter())

    def reply(request: dict) -> Reply:
        n = len(request["messages"])
        return Reply(f"<thought>step {n}</thought><action>noop({n})</action>", chunk_size=16)

    with ScriptedServer(default=reply) as server:
        settings = Settings(provider="custom", base_url=server.base_url, model="m", max_steps=steps)
        agent = assemble(RunConfig(settings, tmp / "proj", environ={}), StaticApprover(True), sink)
        agent.tools.add(noop)
        agent.run("benchmark")
        baseline = bare_round_trips(server.base_url, agent.messages[: len(agent.messages) // 2], 100)
    per_step = sorted((b - a) * 1000 for a, b in zip(stamps, stamps[1:]))[5:]
    step_median, base_median = statistics.median(per_step), statistics.median(baseline)
    p95 = per_step[int(len(per_step) * 0.95)]
    print(f"steps={len(per_step)} step median={step_median:.2f} ms p95={p95:.2f} ms")
    print(f"bare openai round trip (same server, mid-run history) median={base_median:.2f} ms")
    print(f"agent overhead per step: median={step_median - base_median:.2f} ms p95={p95 - base_median:.2f} ms")


def bare_round_trips(base_url: str, messages: list[dict[str, str]], count: int) -> list[float]:
    """The same streamed request made directly with the SDK: what a step costs without the agent."""
    client = openai.OpenAI(api_key="x", base_url=base_url, max_retries=0)
    times = []
    for _ in range(count):
        start = time.perf_counter()
        stream = client.chat.completions.create(model="m", messages=[], extra_body={"messages": messages}, stream=True)
        for _chunk in stream:
            pass
        times.append((time.perf_counter() - start) * 1000)
    return times


def noop(n: int) -> str:
    """Do nothing."""
    return f"ok {n}"


if __name__ == "__main__":
    main()
