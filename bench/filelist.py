"""Prompt file list on a generated 100k-file tree: a plain walk with .gitignore, and git ls-files.

    python bench/filelist.py [--files 100000]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mzagent_tui.agent.filelist import format_file_list, project_files  # noqa: E402


def make_tree(root: Path, count: int) -> None:
    per_dir = 100
    for i in range(count):
        folder = root / f"pkg{i // (per_dir * 50)}" / f"mod{(i // per_dir) % 50}"
        if i % per_dir == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i}.py").touch()
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    nm = root / "node_modules" / "big"
    nm.mkdir(parents=True)
    for i in range(5000):
        (nm / f"dep{i}.js").touch()


def timed(root: Path, runs: int = 5) -> tuple[float, int]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        files = project_files(root)
        format_file_list(files)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), len(files)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    count = parser.parse_args().files
    root = Path(tempfile.mkdtemp()) / "tree"
    root.mkdir()
    make_tree(root, count)
    walk_ms, listed = timed(root)
    print(f"walk+pathspec: median {walk_ms:.0f} ms for {listed} files")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    git_ms, listed = timed(root)
    print(f"git ls-files:  median {git_ms:.0f} ms for {listed} files")


if __name__ == "__main__":
    main()
