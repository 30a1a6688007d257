"""The project's file list for the system prompt: relative, sorted, gitignore-aware, capped."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from mzagent_tui.agent.ground.textfiles import read_regular
from mzagent_tui.agent.safety import own_programs, trusted_path

if TYPE_CHECKING:
    import pathspec

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".idea", ".vscode", "dist", "build",
    ".eggs", ".cache", ".next", "target",
})
DEFAULT_CAP = 200
GITIGNORE_READ = 1 << 20
"""Bytes of the root `.gitignore` read (a planted FIFO or a huge file must not stall the listing)."""
_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


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
    trusted_path.note_project(root)  # the app lists the project before any agent works in it
    try:
        done = own_programs.git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=root, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    names = dict.fromkeys(done.stdout.decode("utf-8", errors="replace").split("\0"))
    skipped: dict[str, bool] = {}
    kept = []
    for name in names:
        folder = name.rpartition("/")[0]
        if folder not in skipped:  # a few hundred folders for 100k files: decide each once
            skipped[folder] = not SKIP_DIRS.isdisjoint(folder.split("/"))
        if name and not skipped[folder]:
            kept.append(name)
    kept.sort()  # git lists tracked then untracked files, each sorted: two runs that Timsort merges
    return kept


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


class IgnoreMatcher:
    """A .gitignore as one compiled regex when it has no `!` negations (one C-level search per
    path instead of one Python call per pattern: 3x faster on 100k files), else pathspec."""

    def __init__(self, spec: pathspec.PathSpec) -> None:
        patterns = [p for p in spec.patterns if getattr(p, "include", None) is not None]
        self._spec = spec
        self._regex: re.Pattern[str] | None = None
        if patterns and all(p.include and getattr(p, "regex", None) is not None for p in patterns):
            parts = [_NAMED_GROUP.sub("(?:", p.regex.pattern) for p in patterns]
            self._regex = re.compile("|".join(f"(?:{part})" for part in parts))
        self._empty = not patterns

    def match_file(self, rel: str) -> bool:
        if self._empty:
            return False
        if self._regex is not None:
            return self._regex.search(rel) is not None
        return self._spec.match_file(rel)


def load_gitignore(root: Path) -> IgnoreMatcher | None:
    """The root .gitignore as a matcher, or None when there is none."""
    text = read_regular(root / ".gitignore", GITIGNORE_READ)
    if text is None:
        return None
    import pathspec  # only for a project with a .gitignore

    return IgnoreMatcher(pathspec.GitIgnoreSpec.from_lines(text.splitlines()))
