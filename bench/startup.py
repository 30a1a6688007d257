"""Startup to the first interactive frame: mzagent against a minimal Textual app, same run.

Each child process starts Python, imports, runs the app headless, waits for the first frame
after mount, and exits; the parent times the whole process. Medians of N runs each, and their
ratio (goal <= 1.3x, issue 44). Where textual-speedups is installed, both apps also run with it
switched off (`TEXTUAL_SPEEDUPS=0`), interleaved in the same run.

    python bench/startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MINIMAL = """
from textual.app import App
from textual.widgets import Footer, Header, Input
class Minimal(App):
    def compose(self):
        yield Header()
        yield Input()
        yield Footer()
async def first_frame(pilot):
    await pilot.pause()
    pilot.app.exit()
Minimal().run(headless=True, size=(120, 40), auto_pilot=first_frame)
"""

MZAGENT = """
import sys
from pathlib import Path
sys.path.insert(0, {root!r})
from mzagent_tui.agent.config import Settings
from mzagent_tui.agent.run_config import RunConfig
from mzagent_tui.app import MzAgentApp
async def first_frame(pilot):
    await pilot.pause()
    pilot.app.exit()
settings = Settings(provider="custom", base_url="http://127.0.0.1:9/v1", model="m")
MzAgentApp(RunConfig(settings, Path({project!r}))).run(headless=True, size=(120, 40), auto_pilot=first_frame)
"""


CHILD_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
"""Bytecode is cached as on a user's machine (the warm-up run writes it), not compiled each start."""


def time_child(code: str, speedups: bool = True) -> float:
    """Milliseconds from start to exit; `speedups=False` switches textual-speedups off (Textual's own switch)."""
    env = CHILD_ENV if speedups else {**CHILD_ENV, "TEXTUAL_SPEEDUPS": "0"}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=env)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    project = Path(tempfile.mkdtemp())
    for i in range(20):
        (project / f"file{i}.py").write_text("x = 1\n")
    ours_code = MZAGENT.format(root=str(ROOT), project=str(project))
    time_child(MINIMAL)  # warm the file cache for both
    time_child(ours_code)
    speedups = importlib.util.find_spec("textual_speedups") is not None
    minimal, ours, plain_minimal, plain_ours = [], [], [], []
    for _ in range(runs):  # interleaved so machine noise hits both alike
        minimal.append(time_child(MINIMAL))
        ours.append(time_child(ours_code))
        if speedups:
            plain_minimal.append(time_child(MINIMAL, speedups=False))
            plain_ours.append(time_child(ours_code, speedups=False))
    m, o = statistics.median(minimal), statistics.median(ours)
    print(f"minimal Textual app: median {m:.0f} ms")
    print(f"mzagent:             median {o:.0f} ms")
    print(f"ratio: {o / m:.2f}x (goal <= 1.3x)")
    if speedups:
        pm, po = statistics.median(plain_minimal), statistics.median(plain_ours)
        print(f"without textual-speedups (TEXTUAL_SPEEDUPS=0): minimal {pm:.0f} ms, mzagent {po:.0f} ms; "
              f"mzagent with them {o / po:.2f}x of without, against the minimal app without them {o / pm:.2f}x")


if __name__ == "__main__":
    main()
