"""The project's file list for the system prompt: relative, sorted, gitignore-aware, capped."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pathspec

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".idea", ".vscode", "dist", "build",
    ".eggs", ".cache", ".next", "target",
})
DEFAULT_CAP = 200


def project_files(root: Path) -> list[str]:
    """Every listed file, relative to root, sorted. Uses `git ls-files` in a git repo."""
    if (root / ".git").exists():
        files = _git_files(root)
        if files is not None:
            return files
    return _walk(root)


def format_file_list(files: list[str], cap: int = DEFAULT_CAP) -> str:
    if not files:
        return "(the project folder is empty)"
    shown = "\n".join(files[:cap])
    if len(files) > cap:
        shown += f"\n+{len(files) - cap} more"
    return shown


def _git_files(root: Path) -> list[str] | None:
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root, capture_output=True, timeout=10, check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    names = {n for n in done.stdout.decode("utf-8", errors="replace").split("\0") if n}
    return sorted(n for n in names if not SKIP_DIRS.intersection(n.split("/")[:-1]))


def _walk(root: Path) -> list[str]:
    spec = load_gitignore(root)
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        prefix = "" if rel_folder == "." else rel_folder.replace(os.sep, "/") + "/"
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not (spec and spec.match_file(prefix + d + "/"))]
        for name in files:
            rel = prefix + name
            if spec is None or not spec.match_file(rel):
                found.append(rel)
    found.sort()
    return found


def load_gitignore(root: Path) -> pathspec.PathSpec | None:
    """The root .gitignore as a matcher, or None when there is none."""
    ignore = root / ".gitignore"
    try:
        lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)
