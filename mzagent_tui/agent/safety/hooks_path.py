"""Files in the work tree that the project's git runs or reads as its config.

The sandbox keeps `.git/config` and `.git/hooks` read-only, but the repository may keep its hooks
in the work tree (`core.hooksPath`: husky's `.husky/_`, a team's `tools/hooks`) and may include
a config file from there (`[include] path = ../tools/gitconfig`). A command could write either,
and the user's next `git commit` would run it. Asked of our confined git (own_programs), includes
followed as the user's git follows them, and kept while the repository's config files and the
included ones are unchanged.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.safety import own_programs
from mzagent_tui.agent.safety.git_config import GitUnanswered, find_repository

ASK_TIMEOUT = 5.0
HOOKS_REASON = "git hooks (the folder core.hooksPath names)"
INCLUDE_REASON = "the repository's git config includes it (hooks, fsmonitor and filters set there run programs)"


class GitPathsUnknown(Exception):
    """Git could not say where the hooks are: every path may be one."""


@dataclass(frozen=True)
class GitPaths:
    hook_folders: tuple[str, ...] = ()
    """Project-relative folders whose files git runs as hooks."""
    config_files: tuple[str, ...] = ()
    """Project-relative files git reads as part of the repository's config."""

    def reason(self, relative_path: str) -> str | None:
        """Why git runs or reads this project file, or None."""
        if relative_path in self.config_files:
            return INCLUDE_REASON
        if any(relative_path.startswith(f"{folder}/") for folder in self.hook_folders):
            return HOOKS_REASON
        return None

    def leads_to(self, relative_path: str) -> str | None:
        """Why a link at this path matters: it is one of them, or a folder on the way to one."""
        named = [(p, HOOKS_REASON) for p in self.hook_folders] + [(p, INCLUDE_REASON) for p in self.config_files]
        for path, reason in named:
            if path == relative_path or path.startswith(f"{relative_path}/"):
                return reason
        return self.reason(relative_path)


def git_paths(root: Path) -> GitPaths:
    """The hook folders and included config files of the repository `root` is in, those inside
    `root`. Raises GitPathsUnknown when git cannot tell."""
    try:
        repository = find_repository(root)
    except GitUnanswered as exc:
        raise GitPathsUnknown(str(exc)) from None
    if repository is None or repository.work_tree is None:
        return GitPaths()
    configs = [path for path in (repository.common_dir / "config", repository.git_dir / "config.worktree") if path.is_file()]
    key = (str(root), *(_signature(path) for path in configs))
    known = _known.get(key)
    if known is not None and all(_signature(Path(path)) == signature for path, signature in known[1]):
        return known[0]
    hooks: set[str] = set()
    includes: set[str] = set()
    watched: list[tuple[str, tuple[int, ...]]] = []
    for config in configs:
        for value in _values(config, "core.hooksPath"):
            hooks |= _inside(root, repository.work_tree, value)
        for value in _values(config, r"^include(if\..*)?\.path$", regexp=True):
            included = Path(os.path.expanduser(value))
            included = included if included.is_absolute() else config.parent / included
            includes |= _inside(root, root, str(included))
            watched.append((str(included), _signature(included)))
    found = GitPaths(tuple(sorted(hooks)), tuple(sorted(includes)))
    _known[key] = (found, tuple(watched))
    return found


_known: dict[tuple[object, ...], tuple[GitPaths, tuple[tuple[str, tuple[int, ...]], ...]]] = {}


def _signature(path: Path) -> tuple[int, ...]:
    try:
        info = os.stat(path)
    except OSError:
        return ()
    return (info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _values(config: Path, name: str, regexp: bool = False) -> list[str]:
    """Every value of a setting (or of the settings a regular expression names), includes followed."""
    asking = ("--get-regexp", name) if regexp else ("--get-all", name)
    try:
        done = own_programs.git("config", "--file", str(config), "--includes", "-z", *asking, cwd=config.parent, timeout=ASK_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        raise GitPathsUnknown(f"git could not read {config} in {ASK_TIMEOUT:.0f} s") from None
    if done.returncode not in (0, 1):  # 1: not set
        raise GitPathsUnknown(f"git could not read {config}: {done.stderr.decode('utf-8', 'replace').strip() or 'no answer'}")
    items = [item for item in done.stdout.decode("utf-8", "surrogateescape").split("\0") if item]
    return [item.partition("\n")[2] if regexp else item for item in items if (item.partition("\n")[2] if regexp else item).strip()]


def _inside(root: Path, base: Path, value: str) -> set[str]:
    """A path's project-relative forms, as written and with its links resolved (git follows
    them), or none when it lies outside the project. A relative one is relative to `base`."""
    path = Path(os.path.expanduser(value))
    path = path if path.is_absolute() else base / path
    found: set[str] = set()
    for candidate in (Path(os.path.normpath(path)), Path(os.path.realpath(path))):
        for top in (root, Path(os.path.realpath(root))):
            if candidate.is_relative_to(top) and candidate != top:
                found.add(candidate.relative_to(top).as_posix())
    return found
