"""Does the repository a git command reaches make it run programs?

A project folder can arrive with its `.git/config` (a tarball, a shared drive, a planted write):
`core.fsmonitor` runs a program on `git status`, `diff.external` on `git diff`, a filter on any
command that looks at the work tree, a partial clone's `uploadpack` whenever a missing object is
looked up. The user's own config is theirs; the repository's is not. A git command whose
repository, or one of its submodules, sets any of these is not read-only and asks.

Both questions are asked of git itself, through own_programs (hardened, confined): which
repository a folder reaches (`git rev-parse`, bare layouts and `.git` files included), and
what each config says (`git config --file … --list`, includes not followed: an include is a
concern of its own). A hand parser disagreed with git on a BOM, a line continuation and a form
feed; git cannot disagree with itself.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.safety import own_programs

ASK_TIMEOUT = 5.0
"""Seconds git may take to answer one question (a planted FIFO would block it for good)."""
MODULE_LIMIT = 200
"""Submodule git dirs looked at per repository."""
CONFIG_LIMIT = 1 << 24
"""Bytes of one config; a larger one asks (git may be slow on it, and nobody writes one)."""

# (section, key) -> what the setting does; "*" stands for any subsection, ("pager", "*") for any key.
RUNS_CODE = {
    ("core", "fsmonitor"): "runs a file-system monitor program",
    ("core", "hookspath"): "runs hooks from another folder",
    ("core", "sshcommand"): "runs an ssh program",
    ("core", "askpass"): "runs a password program",
    ("core", "pager"): "runs a pager program",
    ("pager", "*"): "runs a pager program",
    ("core", "editor"): "runs an editor program",
    ("core", "gitproxy"): "runs a proxy program",
    ("core", "alternaterefscommand"): "runs a program to list refs",
    ("core", "worktree"): "moves the work tree elsewhere",
    ("diff", "external"): "runs an external diff program",
    ("diff.*", "command"): "runs an external diff program",
    ("diff.*", "textconv"): "runs a text conversion program",
    ("merge.*", "driver"): "runs a merge driver program",
    ("filter.*", "clean"): "runs a filter program",
    ("filter.*", "smudge"): "runs a filter program",
    ("filter.*", "process"): "runs a filter program",
    ("gpg", "program"): "runs a signing program",
    ("gpg.*", "program"): "runs a signing program",
    ("include", "path"): "includes another config file",
    ("includeif.*", "path"): "includes another config file",
    ("credential", "helper"): "runs a credential helper",
    ("credential.*", "helper"): "runs a credential helper",
    ("sequence", "editor"): "runs an editor program",
    ("uploadpack", "packobjectshook"): "runs a hook program",
    ("extensions", "partialclone"): "fetches missing objects from a remote (a partial clone), running its upload-pack",
    ("remote.*", "promisor"): "fetches missing objects from a remote (a partial clone), running its upload-pack",
    ("remote.*", "uploadpack"): "runs an upload-pack program",
    ("remote.*", "receivepack"): "runs a receive-pack program",
    ("remote.*", "vcs"): "runs a remote helper program",
    ("submodule.*", "update"): "runs a command to update a submodule",
    ("trailer.*", "command"): "runs a trailer program",
    ("trailer.*", "cmd"): "runs a trailer program",
    ("difftool.*", "cmd"): "runs a diff tool",
    ("mergetool.*", "cmd"): "runs a merge tool",
}
_FALSE = {"false", "no", "off", "0", ""}
_READ_ONLY_HOOKS = ("post-index-change",)
"""Hooks a read-only command can set off: `git status` refreshes and writes the index."""


@dataclass(frozen=True)
class Repository:
    """A repository as git finds it from a folder."""

    git_dir: Path
    common_dir: Path
    """Where a linked worktree's shared config, hooks and modules live (its git dir otherwise)."""
    work_tree: Path | None
    """None for a bare repository."""


class GitUnanswered(Exception):
    """Git could not be asked (no git, a timeout, a config it cannot read)."""


def find_repository(cwd: Path) -> Repository | None:
    """The repository git works in from `cwd`, as the user's git would find it (a bare layout
    too), or None. Raises GitUnanswered when git cannot tell.

    One command is judged several times (the dialog, the transcript, the checks after it), so
    the answer is kept while nothing git's search looks at has changed: `cwd` and every folder
    above it (a `.git`, `HEAD` or `objects` made or removed changes the folder) and each `.git`
    file or folder on the way (a `gitdir:` line rewritten in place)."""
    key = _search_signature(cwd)
    if key in _found:
        return _found[key]
    found = _ask_for_repository(cwd)
    _found[key] = found
    return found


_found: dict[tuple[tuple[str, int, int], ...], Repository | None] = {}


def _search_signature(cwd: Path) -> tuple[tuple[str, int, int], ...]:
    stats: list[tuple[str, int, int]] = []
    for folder in (cwd, *cwd.parents):
        for path in (folder, folder / ".git", folder / ".git" / "commondir"):
            try:
                info = path.stat()
            except OSError:
                continue
            stats.append((str(path), info.st_mtime_ns, info.st_ino))
    return tuple(stats)


def _ask_for_repository(cwd: Path) -> Repository | None:
    try:
        done = own_programs.git(
            "-c", "safe.bareRepository=all", "rev-parse", "--absolute-git-dir", "--git-common-dir", "--is-bare-repository",
            cwd=cwd, timeout=ASK_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise GitUnanswered(f"git did not say in {ASK_TIMEOUT:.0f} s which repository {cwd} is in") from None
    except OSError as exc:
        if not cwd.is_dir():
            return None
        raise GitUnanswered(f"git could not be run: {exc.strerror or exc}") from None
    lines = done.stdout.decode("utf-8", "surrogateescape").splitlines()
    if done.returncode != 0 or len(lines) < 3:
        message = done.stderr.decode("utf-8", "replace")
        if "not a git repository" in message:
            _unreadable_git(cwd)
            return None
        raise GitUnanswered(f"git could not read the repository at {cwd}: {message.strip().splitlines()[-1] if message.strip() else 'no answer'}")
    git_dir = Path(lines[0])
    common = Path(os.path.normpath(cwd / lines[1]))  # relative to the folder git was asked in
    work_tree = None if lines[2] == "true" else _top(cwd)
    return Repository(git_dir, common, work_tree)


def _unreadable_git(cwd: Path) -> None:
    """None when there is no `.git` on the way up; a `.git` that git could not follow from here
    (a `gitdir:` into a folder our git does not see) asks: the command's git may see it."""
    for folder in (cwd, *cwd.parents):
        if os.path.lexists(folder / ".git"):
            raise GitUnanswered(f"{folder / '.git'} names a repository git could not read from here")
    return None


def _top(cwd: Path) -> Path | None:
    done = own_programs.git("rev-parse", "--show-toplevel", cwd=cwd, timeout=ASK_TIMEOUT)
    return Path(done.stdout.decode("utf-8", "surrogateescape").strip()) if done.returncode == 0 else None


def repository_config_concerns(cwd: Path) -> list[str]:
    """What the config of the repository `cwd` reaches, or of one of its submodules, makes git
    run ([] when nothing). `git status` and `git diff` run git in each submodule, with that
    submodule's config. A `core.worktree` inside the repository's folder is git's own setting
    for a submodule, not a concern; one outside it is (`git diff` would show files from there)."""
    try:
        repository = find_repository(cwd)
    except GitUnanswered as exc:
        return [str(exc)]
    if repository is None:
        return []
    inside = repository.common_dir.parent if repository.common_dir.name == ".git" else repository.work_tree or repository.common_dir
    try:
        configs = _configs(repository)
    except GitUnanswered as exc:
        return [str(exc)]
    concerns: list[str] = []
    for config in configs:
        concerns.extend(c for c in _concerns_of(config, inside) if c not in concerns)
    for hook in _READ_ONLY_HOOKS:
        path = repository.common_dir / "hooks" / hook
        if os.access(path, os.X_OK) and path.is_file():
            concerns.append(f"{path} is a hook that git status runs")
    return concerns


def _configs(repository: Repository) -> list[Path]:
    """The repository's configs, then those of every submodule git dir under its `modules/`
    and of every submodule in the work tree whose `.git` points elsewhere."""
    folders = [repository.git_dir, repository.common_dir]
    files = [repository.git_dir / "config", repository.git_dir / "config.worktree", repository.common_dir / "config"]
    for git_dir in _module_dirs(repository.common_dir):
        files.append(git_dir / "config")
        folders.append(git_dir)
    if repository.work_tree is not None:
        for gitlink in _gitlink_dirs(repository):
            if isinstance(gitlink, str):
                raise GitUnanswered(gitlink)
            files.extend((gitlink / "config", gitlink / "config.worktree"))
    seen: set[Path] = set()
    unique = []
    for path in files:
        real = Path(os.path.realpath(path))
        if real not in seen and os.path.lexists(path):
            seen.add(real)
            unique.append(path)
    return unique


def _module_dirs(common_dir: Path) -> list[Path]:
    """Submodule git dirs under `modules/` (names with slashes, nested submodules); a git dir's
    own folders (objects, refs) are not walked."""
    found: list[Path] = []
    pending = [common_dir / "modules"]
    while pending and len(found) < MODULE_LIMIT:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        names = {entry.name for entry in entries}
        if "config" in names and "HEAD" in names:
            found.append(folder)
            pending.append(folder / "modules")
            continue
        pending.extend(Path(entry.path) for entry in entries if entry.is_dir(follow_symlinks=False))
    return found


def _gitlink_dirs(repository: Repository) -> list[Path | str]:
    """The git dir of each submodule the index records (a gitlink), wherever its `.git` points;
    the list of gitlinks is kept until the index changes."""
    assert repository.work_tree is not None
    found: list[Path | str] = []
    for path in gitlink_paths(repository):
        try:
            nested = find_repository(repository.work_tree / path)
        except GitUnanswered as exc:
            found.append(f"the submodule {path}: {exc}")
            continue
        if nested is not None and nested.git_dir != repository.git_dir:
            found.append(nested.git_dir)
    return found


def gitlink_paths(repository: Repository) -> list[str]:
    """The paths the index records as gitlinks (submodules, embedded repositories), relative to
    the work tree; kept until the index changes."""
    assert repository.work_tree is not None
    try:
        index = (repository.git_dir / "index").stat()
        key = (str(repository.git_dir), index.st_mtime_ns, index.st_size)
    except OSError:
        return []
    if key not in _gitlinks:
        _gitlinks[key] = _list_gitlinks(repository)
    return _gitlinks[key]


_gitlinks: dict[tuple[str, int, int], list[str]] = {}


def _list_gitlinks(repository: Repository) -> list[str]:
    assert repository.work_tree is not None
    try:
        done = own_programs.git("ls-files", "--stage", "-z", cwd=repository.work_tree, timeout=ASK_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return []
    entries = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [entry.split("\t", 1)[1] for entry in entries if entry.startswith("160000 ") and "\t" in entry][:MODULE_LIMIT]


_cache: dict[tuple[str, int, int, str], list[str]] = {}


def _concerns_of(config: Path, inside: Path) -> list[str]:
    try:
        info = config.stat()
    except OSError:
        return []
    if not config.is_file():
        return [f"{config} is not a regular file, so what git would read from it is not known"]
    if info.st_size > CONFIG_LIMIT:
        return [f"{config} is larger than {CONFIG_LIMIT} bytes, too large to check"]
    key = (str(config), info.st_mtime_ns, info.st_size, str(inside))
    if key not in _cache:
        _cache[key] = _ask(config, inside)
    return _cache[key]


def _ask(config: Path, inside: Path) -> list[str]:
    try:
        done = own_programs.git("config", "--file", str(config), "--no-includes", "--list", "-z", cwd=config.parent, timeout=ASK_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return [f"{config} could not be read by git in {ASK_TIMEOUT:.0f} s"]
    if done.returncode != 0:
        return [f"{config} could not be read by git: {done.stderr.decode('utf-8', 'replace').strip() or 'no answer'}"]
    found: list[str] = []
    for item in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        name, _, value = item.partition("\n")
        reason = _runs_code(name, value, config, inside)
        if reason and reason not in found:
            found.append(reason)
    return found


def _runs_code(name: str, value: str, config: Path, inside: Path) -> str | None:
    """Why one setting (`section.sub.key` as git lists it) makes git run a program, or None."""
    section, _, rest = name.partition(".")
    sub, _, key = rest.rpartition(".")
    section, key = section.lower(), key.lower()
    pattern = (f"{section}.*" if sub else section, key)
    reason = RUNS_CODE.get(pattern) or RUNS_CODE.get((section, "*"))
    if reason is None:
        return None
    if pattern == ("core", "fsmonitor") and value.strip().lower() in _FALSE:
        return None
    if pattern == ("remote.*", "promisor") and value.strip().lower() in _FALSE:
        return None
    if pattern == ("submodule.*", "update") and not value.startswith("!"):
        return None
    if pattern == ("core", "worktree") and _inside(config.parent, value, inside):
        return None
    shown = f"{section}.…" if sub else section
    return f"{config} sets {shown}.{key}, which {reason}"


def _inside(git_dir: Path, value: str, work_tree: Path) -> bool:
    """Whether a `core.worktree` value (relative to the git dir) names a folder inside the
    repository's own."""
    try:
        return (git_dir / os.path.expanduser(value)).resolve().is_relative_to(work_tree.resolve())
    except (OSError, RuntimeError, ValueError):
        return False
