"""Reopening a session: 30 steps vs 300 vs 3,000 steps, from the log file to the first frame.

Each log is written by the real `Session` with the events a step of the agent produces
(thought, action, approval, observation, usage, file change); then the app opens it with
`history=` and the time to a settled first frame is measured (process CPU and wall), plus
`load_session` alone. Goal: the 3,000-step session opens within 3x of the 30-step one.
In the 3,000-step session, also: a find whose hits are all off screen (matched in the events
behind the marker) and the jump that brings the newest hit back. Goal: each under 100 ms.

    python bench/resume.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp()

from textual.widgets import Input, Static  # noqa: E402

from mzagent_tui.agent.config import Settings  # noqa: E402
from mzagent_tui.agent.events import (  # noqa: E402
    Action,
    ApprovalAnswered,
    FileChanged,
    FinalAnswer,
    Observation,
    StepStarted,
    Stopped,
    StopReason,
    TaskStarted,
    Thought,
    Usage,
)
from mzagent_tui.agent.run_config import RunConfig  # noqa: E402
from mzagent_tui.agent.safety.secrets import Redactor  # noqa: E402
from mzagent_tui.agent.sessions.history import load_session  # noqa: E402
from mzagent_tui.agent.sessions.session import Session  # noqa: E402
from mzagent_tui.app import MzAgentApp  # noqa: E402
from mzagent_tui.widgets.search_bar import SearchBar  # noqa: E402
from mzagent_tui.widgets.transcript import Transcript  # noqa: E402

OUTPUT = "".join(f"line {i} of the command output\n" for i in range(40))


def write_log(project: Path, steps: int) -> Path:
    session = Session.create(project, Redactor([]))
    session.record_event(TaskStarted("a long task"))
    for step in range(1, steps + 1):
        session.record_event(StepStarted(step, steps + 1))
        session.record("message", role="assistant", content=f"<thought>step {step}</thought><action>run_terminal_command(\"make {step}\")</action>")
        session.record_event(Thought(f"step {step}: build and look at the output"))
        if step % 3 == 0:
            session.record_event(Action("write_to_file", [f"src/file{step}.py", "print(1)\n" * 30]))
            session.record_event(FileChanged(str(project / f"src/file{step}.py"), True, None, "0" * 64))
            session.record_event(Observation("write_to_file", f"File written: src/file{step}.py (created, 30 lines, 270 bytes)."))
        else:
            session.record_event(Action("run_terminal_command", [f"make {step}"]))
            session.record_event(ApprovalAnswered(True, f"make {step}"))
            session.record_event(Observation("run_terminal_command", OUTPUT, True, 0, None))
        session.record("message", role="user", content=f"<observation>{OUTPUT}</observation>")
        session.record_event(Usage(1000 + 50 * step, 60))
    session.record_event(FinalAnswer("done"))
    session.record_event(Stopped(StopReason.FINAL_ANSWER, "final answer", steps))
    session.close()
    return session.folder


async def reopen(project: Path, folder: Path | None) -> tuple[float, float, float]:
    """(load_session ms, CPU ms, wall ms) to a settled first frame; `folder=None` opens no session."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    history = load_session(folder) if folder else None
    load_ms = (time.perf_counter() - wall0) * 1000
    app = MzAgentApp(RunConfig(Settings(provider="custom", base_url="http://127.0.0.1:9/v1", model="m"), project), history=history)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert folder is None or len(list(app.query_one(Transcript).entries())) > 10
        return load_ms, (time.process_time() - cpu0) * 1000, (time.perf_counter() - wall0) * 1000


async def find_far(project: Path, folder: Path) -> tuple[float, float]:
    """(query ms, jump ms) wall: a query matching only off-screen events, then Enter to its newest hit."""
    app = MzAgentApp(RunConfig(Settings(provider="custom", base_url="http://127.0.0.1:9/v1", model="m"), project), history=load_session(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+f")
        count = app.query_one(SearchBar).query_one("#search-count", Static)
        start = time.perf_counter()
        app.query_one(SearchBar).query_one(Input).value = "make 15"
        while not str(count.render()).endswith("found"):
            await asyncio.sleep(0.001)
        query_ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        app.query_one(SearchBar).action_find(-1)  # what Enter does, without the Pilot's own key delay
        while "/" not in str(count.render()):
            await asyncio.sleep(0.001)
        jump_ms = (time.perf_counter() - start) * 1000
        assert app.query_one(Transcript).query_one(".-current-hit").plain == "make 1598"
        return query_ms, jump_ms


async def main() -> None:
    project = Path(tempfile.mkdtemp())
    await reopen(project, None)
    _, cpu, wall = await reopen(project, None)
    print(f"no session: first frame {cpu:.0f} ms CPU / {wall:.0f} ms wall", flush=True)
    results = {}
    for steps in (30, 300, 3000):
        folder = write_log(project, steps)
        size = (folder / "log.jsonl").stat().st_size
        await reopen(project, folder)  # warm imports and caches
        results[steps] = await reopen(project, folder)
        load_ms, cpu, wall = results[steps]
        print(f"{steps:>5} steps ({size / 1e6:.1f} MB log): load_session {load_ms:.0f} ms, open to first frame {cpu:.0f} ms CPU / {wall:.0f} ms wall", flush=True)
    print(f"ratio 3000/30: {results[3000][1] / results[30][1]:.2f}x CPU, {results[3000][2] / results[30][2]:.2f}x wall (goal <= 3x)")
    runs = [await find_far(project, folder) for _ in range(5)]
    query_ms, jump_ms = statistics.median(q for q, _ in runs), statistics.median(j for _, j in runs)
    print(f"find in 3000 steps, hits off screen only (median of 5): query {query_ms:.0f} ms, jump to the newest hit {jump_ms:.0f} ms (goal < 100 ms each)")


if __name__ == "__main__":
    asyncio.run(main())
