"""What the reshaped-read rule costs a command's pre-check (`commands.analyse`).

    python bench/reshaped_reads.py [--runs N]

Builds a project under a temporary folder: 400 source files with a git history of 200 commits,
a 300 KB log, a file of DEEP_SCAN_BYTES of this repository's source (the slowest text for the
rules: many secret words), and a 50 MB log. Prints the best of N pre-checks of ordinary
commands (no reshaping: the rule scans nothing) and of reshaped reads (scanned whole up to the
bound, or asked about past it)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mzagent_tui.agent.safety.commands import analyse  # noqa: E402
from mzagent_tui.agent.safety.reshaped_reads import DEEP_SCAN_BYTES  # noqa: E402

ORDINARY = ["ls", "git status", "git show HEAD", "git log -p | head -50", "grep -rn TODO src | head -20", "tail -n 100 app.log", "tail -n 5 huge.log"]
RESHAPED = ["tail -c 200 app.log | rev", "git show HEAD | rev", "git log -p | od -c", "grep -rh TODO src | sort", "rev bound.txt", "tail -c 200 huge.log | rev"]


def git(project: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True, env=env)


def build(project: Path) -> None:
    (project / "src").mkdir()
    git(project, "init", "-q", ".")
    for commit in range(200):
        for name in range(2):
            index = (commit * 2 + name) % 400
            (project / "src" / f"m{index}.py").write_text(f"# TODO {commit}\n" + "def f(x):\n    return x + 1\n" * 40)
        git(project, "add", "-A")
        git(project, "commit", "-qm", f"change {commit}")
    (project / "app.log").write_text("".join(f"2026-12-07 10:00:{n % 60:02d} INFO request {n} ok\n" for n in range(8000)))
    source = "".join(path.read_text() for path in sorted((ROOT / "mzagent_tui").rglob("*.py")) if "credentials" not in path.name)
    (project / "bound.txt").write_bytes((source.encode() * (DEEP_SCAN_BYTES // len(source) + 1))[:DEEP_SCAN_BYTES - 1])
    with (project / "huge.log").open("wb") as handle:
        handle.truncate(50 << 20)


def best(command: str, project: Path, runs: int) -> tuple[float, str]:
    times, said = [], ""
    for _ in range(runs):
        started = time.perf_counter()
        analysis = analyse(command, project)
        times.append(time.perf_counter() - started)
        said = "; ".join(finding for part in analysis.parts for finding in part.concerns)
    return min(times), said


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder).resolve()
        build(project)
        for title, commands in (("ordinary", ORDINARY), ("reshaped", RESHAPED)):
            print(title)
            for command in commands:
                seconds, said = best(command, project, runs)
                print(f"  {seconds * 1000:8.1f} ms  {command}" + (f"  -> asks: {said[:90]}" if said else ""))


if __name__ == "__main__":
    main()
