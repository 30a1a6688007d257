"""What the sandbox adds to starting a command: 200 runs of `true` through `run_command`, with
and without the Landlock confinement, alternating so both see the same machine load. The ruleset
is built once per session (its cost, walking `/` and the home folder, is reported separately).

    python bench/sandbox.py [--runs 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mzagent_tui.agent.cancel import CancelToken  # noqa: E402
from mzagent_tui.agent.safety.sandbox import Sandbox  # noqa: E402
from mzagent_tui.agent.tools.process import run_command  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp())
    output = root / "out.txt"
    sandbox = Sandbox(root)
    start = time.perf_counter()
    confine = sandbox.preexec(sandbox.confinement())
    build_ms = (time.perf_counter() - start) * 1000
    env = sandbox.environment({"PATH": "/usr/bin:/bin"})
    plain: list[float] = []
    confined: list[float] = []
    for index in range(args.runs * 2):
        target, hook = (confined, confine) if index % 2 else (plain, None)
        start = time.perf_counter()
        result = run_command("true", root, env, 10, CancelToken(), output, hook)
        target.append((time.perf_counter() - start) * 1000)
        assert result.exit_code == 0
    sandbox.close()
    ratio = statistics.median(confined) / statistics.median(plain)
    print(f"ruleset built once in {build_ms:.1f} ms (Landlock ABI {sandbox.abi})")
    print(f"`true` x {args.runs}: median {statistics.median(plain):.2f} ms plain, {statistics.median(confined):.2f} ms sandboxed: {ratio:.2f}x")


if __name__ == "__main__":
    main()
