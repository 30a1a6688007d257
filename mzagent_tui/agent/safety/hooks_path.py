"""Files in the work tree that the user's git runs or reads as its config.

The sandbox keeps `.git/config` and `.git/hooks` read-only, but git may find its hooks in the
work tree (`core.hooksPath`: husky's `.husky/_`, a team's `tools/hooks`) and may include a
config file from there (`[include] path = ../tools/gitconfig`). A command could write either,
and the user's next `git commit` would run it.

Where the hooks are is read the way the user's git reads it, not from one file: every scope it
uses (system, user and XDG config as the user's environment names them, the repository's, the
worktree's, `GIT_CONFIG_KEY_n`) with includes followed, for every repository with a work tree
in the project — the root's (which may hold the project) and each one a `.git` entry inside it
leads to (a nested repository, a submodule, a linked worktree): a relative `core.hooksPath` in
the user's `~/.gitconfig` names a folder of each of them. Asked of our confined git
(own_programs), and kept while the config files it read, and those it would read, are unchanged.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.safety import own_programs
from mzagent_tui.agent.safety.git_config import GitUnanswered, Repository, find_repository
from mzagent_tui.agent.safety.git_entry import ENTRY, entry_names, leads_nowhere, nested_entries

ASK_TIMEOUT = 5.0
INCLUDE_DEPTH = 10
"""Rounds of includes followed (git's own limit): each round lets our git read the files the last named."""
ASKED = r"^(core\.hookspath|include(if\..*)?\.path)$"
HOOKS_KEY = "core.hookspath"
HOOKS_REASON = "git hooks (the folder core.hooksPath names)"
INCLUDE_REASON = "git reads it as config: the repository's config, or yours, includes it (hooks, fsmonitor and filters set there run programs)"


class GitPathsUnknown(Exception):
    """Git could not say where the hooks are: every path may be one."""


@dataclass(frozen=True)
class GitPaths:
    hook_folders: tuple[str, ...] = ()
    """Project-relative folders whose files git runs as hooks."""
    config_files: tuple[str, ...] = ()
    """Project-relative files git reads as config, besides the repositories' own."""

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
    """The hook folders and config files inside `root` of every repository with a work tree
    there. Raises GitPathsUnknown when git cannot tell."""
    try:
        repositories = _repositories(root)
    except GitUnanswered as exc:
        raise GitPathsUnknown(str(exc)) from None
    hooks: set[str] = set()
    configs: set[str] = set()
    for repository in repositories:
        found = _paths_of(root, repository)
        hooks.update(found.hook_folders)
        configs.update(found.config_files)
    return GitPaths(tuple(sorted(hooks)), tuple(sorted(configs)))


def _repositories(root: Path) -> list[Repository]:
    """The root's repository and each other one a `.git` entry in the project leads to, as git
    finds them from there. An entry git gives up on (no `gitdir:` line, a folder that is not
    there) runs nothing: git run beside it fails."""
    found: dict[Path, Repository] = {}
    for name in [ENTRY, *(n for n in entry_names(root, nested_entries(root)) if n != ENTRY)]:
        try:
            repository = find_repository((root / name).parent)
        except GitUnanswered:
            if name != ENTRY and leads_nowhere(root / name):
                continue
            raise
        if repository is not None and repository.work_tree is not None:
            found.setdefault(repository.git_dir, repository)
    return list(found.values())


def _paths_of(root: Path, repository: Repository) -> GitPaths:
    assert repository.work_tree is not None
    env = own_programs.user_config_env()
    key = (str(root), str(repository.git_dir), str(repository.work_tree), tuple(sorted(env.items())))
    known = _known.get(key)
    if known is not None and all(_signature(Path(path)) == signature for path, signature in known[1]):
        return known[0]
    entries, read = _ask(repository)
    own = {repository.git_dir / "config", repository.common_dir / "config", repository.git_dir / "config.worktree"}
    hooks: set[str] = set()
    for _, name, value in entries:
        if name == HOOKS_KEY:
            hooks |= _inside(root, repository.work_tree, value)
    configs: set[str] = set()
    for path in read - own:
        configs |= _inside(root, root, str(path))
    found = GitPaths(tuple(sorted(hooks)), tuple(sorted(configs)))
    watched = sorted({*read, *own, repository.git_dir / "HEAD"})  # HEAD: an `onbranch:` include
    _known[key] = (found, tuple((str(path), _signature(path)) for path in watched))
    return found


_known: dict[tuple[object, ...], tuple[GitPaths, tuple[tuple[str, tuple[int, ...]], ...]]] = {}


def _ask(repository: Repository) -> tuple[list[tuple[str, str, str]], set[Path]]:
    """Every hooks and include setting git reads for the repository, as (origin, name, value),
    and every config file it reads or was named. Our confined git only reads the files it is
    granted, so the files an answer includes are granted and it is asked again, until none is new."""
    assert repository.work_tree is not None
    files = {*own_programs.user_config_files()}
    for _ in range(INCLUDE_DEPTH + 1):
        entries = _entries(repository, files)
        named = _included(entries, repository.work_tree)
        if named <= files:
            return entries, files
        files |= named
    raise GitPathsUnknown(f"the config of {repository.work_tree} includes files more than {INCLUDE_DEPTH} deep")


def _entries(repository: Repository, granted: set[Path]) -> list[tuple[str, str, str]]:
    assert repository.work_tree is not None
    env = {"GIT_DIR": str(repository.git_dir)}
    try:
        done = own_programs.git(
            "config", "--includes", "--show-origin", "-z", "--get-regexp", ASKED, cwd=repository.work_tree, timeout=ASK_TIMEOUT,
            env=env, readable=[repository.common_dir, *(path for path in granted if path.exists())], user_config=True,
        )
    except (OSError, subprocess.TimeoutExpired):
        raise GitPathsUnknown(f"git could not read the config of {repository.work_tree} in {ASK_TIMEOUT:.0f} s") from None
    if done.returncode not in (0, 1):  # 1: none set
        message = done.stderr.decode("utf-8", "replace").strip()
        raise GitPathsUnknown(f"git could not read the config of {repository.work_tree}: {message or 'no answer'}")
    items = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    found = []
    for origin, setting in zip(items[0::2], items[1::2], strict=False):
        name, _, value = setting.partition("\n")
        if value.strip():
            found.append((origin, name, value))
    return found


def _included(entries: list[tuple[str, str, str]], work_tree: Path) -> set[Path]:
    """The files the include settings name: each relative to the config file that names it
    (git's rule); a relative one given on the command line names none (git refuses it)."""
    found: set[Path] = set()
    for origin, name, value in entries:
        path = Path(os.path.expanduser(value))
        if name == HOOKS_KEY or not (path.is_absolute() or origin.startswith("file:")):
            continue
        found.add(Path(os.path.normpath(work_tree / origin.removeprefix("file:") / ".." / path)))
    return found


def _signature(path: Path) -> tuple[int, ...]:
    try:
        info = os.stat(path)
    except OSError:
        return ()
    return (info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


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
