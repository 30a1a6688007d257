"""Does the repository's own config make read-only git commands run programs?

A project folder can arrive with its `.git/config` (a tarball, a shared drive, a planted write):
`core.fsmonitor` runs a program on `git status`, `diff.external` on `git diff`, a filter on any
command that looks at the work tree. The user's own config is theirs; the repository's is not.
A git command whose repository config sets any of these is not read-only and asks.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from mzagent_tui.agent.textfiles import read_regular

_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
_FALSE = {"false", "no", "off", "0", ""}

# (section, key) -> what the setting does; "*" stands for any subsection.
RUNS_CODE = {
    ("core", "fsmonitor"): "runs a file-system monitor program",
    ("core", "hookspath"): "runs hooks from another folder",
    ("core", "sshcommand"): "runs an ssh program",
    ("core", "askpass"): "runs a password program",
    ("core", "pager"): "runs a pager program",
    ("core", "editor"): "runs an editor program",
    ("core", "gitproxy"): "runs a proxy program",
    ("core", "worktree"): "moves the work tree elsewhere",
    ("diff", "external"): "runs an external diff program",
    ("diff.*", "command"): "runs an external diff program",
    ("diff.*", "textconv"): "runs a text conversion program",
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
}

_SUBMODULE_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE | re.IGNORECASE)
MODULE_LIMIT = 200
"""Submodule configs looked at per repository."""
CONFIG_READ = 1 << 24
"""Bytes of one config read; a larger config asks (what git would obey past it is not seen)."""

_cache: dict[tuple[str, int, int, str], list[str]] = {}


def repository_config_concerns(cwd: Path) -> list[str]:
    """What the config of the repository containing `cwd`, or of one of its submodules, makes
    git run ([] when nothing). `git status` and `git diff` run git in each submodule, with that
    submodule's config. A `core.worktree` inside the repository's folder is git's own setting
    for a submodule, not a concern; one outside it is (`git diff` would show files from there)."""
    found = _config_files(cwd)
    if found is None:
        return []
    work_tree, configs = found
    concerns: list[str] = []
    seen: set[Path] = set()
    for config in configs:
        if config.resolve() not in seen:
            seen.add(config.resolve())
            concerns.extend(_concerns_of(config, work_tree))
    return concerns


def _config_files(cwd: Path) -> tuple[Path, list[Path]] | None:
    """The repository's folder, and its configs and its submodules' configs."""
    try:
        work_tree = repository_folder(cwd)
        if work_tree is None:
            return None
        configs = _repository_configs(work_tree / ".git")
    except OSError:
        return None
    return work_tree.resolve(), configs + _submodule_configs(work_tree, configs)


def repository_folder(cwd: Path) -> Path | None:
    """The nearest folder at or above `cwd` with a `.git` folder or file: where git finds the
    repository it works in."""
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir() or dot_git.is_file():
            return folder
    return None


def git_folders(dot_git: Path) -> list[Path]:
    """The git dir a `.git` folder or file stands for (a worktree's or submodule's `.git` file
    names it), then the common dir it shares with the main repository, if it names one."""
    if dot_git.is_dir():
        git_dir = dot_git
    else:
        line = (read_regular(dot_git, CONFIG_READ) or "").strip()
        if not line.startswith("gitdir:"):
            return []
        git_dir = (dot_git.parent / line.removeprefix("gitdir:").strip()).resolve()
    common = read_regular(git_dir / "commondir", CONFIG_READ)
    return [git_dir, (git_dir / common.strip()).resolve()] if common and common.strip() else [git_dir]


def _repository_configs(dot_git: Path) -> list[Path]:
    folders = git_folders(dot_git)
    if not folders:
        return []
    return [folders[0] / "config", folders[0] / "config.worktree", *(folder / "config" for folder in folders[1:])]


def _submodule_configs(work_tree: Path, repository_configs: list[Path]) -> list[Path]:
    """Every config under the repository's git dirs' `modules/` (nested submodules too), and
    the git dir of each path `.gitmodules` names, wherever its `.git` file points."""
    git_dirs = {config.parent for config in repository_configs}
    files = [config for git_dir in sorted(git_dirs) for config in _module_configs(git_dir)]
    for path in _gitmodules_paths(work_tree / ".gitmodules"):
        files.extend(_repository_configs(work_tree / path / ".git"))
    return files


def _module_configs(git_dir: Path) -> list[Path]:
    """`modules/NAME/config` of every submodule's git dir: names with slashes, nested
    submodules; a git dir's own folders (objects, refs) are not walked."""
    found: list[Path] = []
    pending = [git_dir / "modules"]
    while pending and len(found) < MODULE_LIMIT:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        names = {entry.name for entry in entries}
        if "config" in names and "HEAD" in names:
            found.append(folder / "config")
            pending.append(folder / "modules")
            continue
        pending.extend(Path(entry.path) for entry in entries if entry.is_dir(follow_symlinks=False))
    return found


def _inside(git_dir: Path, value: str, work_tree: Path) -> bool:
    """Whether a `core.worktree` value (relative to the git dir) names a folder inside the
    repository's own."""
    try:
        return (git_dir / os.path.expanduser(value)).resolve().is_relative_to(work_tree)
    except (OSError, RuntimeError, ValueError):
        return False


def _gitmodules_paths(gitmodules: Path) -> list[str]:
    text = read_regular(gitmodules, CONFIG_READ)
    if text is None:
        return []
    return [match.group(1).strip().strip('"') for match in _SUBMODULE_PATH.finditer(text)][:MODULE_LIMIT]


def _concerns_of(config: Path, work_tree: Path) -> list[str]:
    try:
        stat = config.stat()
    except OSError:
        return []
    key = (str(config), stat.st_mtime_ns, stat.st_size, str(work_tree))
    if key not in _cache:
        text = read_regular(config, CONFIG_READ)
        if text is None:
            return []
        too_big = [f"{config} is larger than {CONFIG_READ} bytes, too large to check"] if stat.st_size > CONFIG_READ else []
        _cache[key] = too_big + _scan(text, config, work_tree)
    return _cache[key]


def _scan(text: str, config: Path, work_tree: Path) -> list[str]:
    found: list[str] = []
    section = ""
    for raw in text.splitlines():
        line = raw.split("#")[0].split(";")[0] if '"' not in raw else raw
        match = _SECTION.match(line)
        if match:
            name, sub, rest = match.groups()
            section = name.lower() + (".*" if sub is not None else "")
            line = rest
            if not line.strip():
                continue
        key_match = _KEY.match(line)
        if not key_match:
            continue
        key, value = key_match.group(1).lower(), (key_match.group(2) or "true").strip().strip('"')
        # An old-style `[section.sub]` header counts as a subsection too.
        candidates = {(section, key), (section.split(".")[0] + ".*", key)} if "." in section else {(section, key)}
        for candidate in candidates:
            reason = RUNS_CODE.get(candidate)
            if candidate == ("core", "worktree") and _inside(config.parent, value, work_tree):
                continue
            if reason and not (key == "fsmonitor" and value.lower() in _FALSE):
                found.append(f"{config} sets {candidate[0].replace('.*', '.…')}.{key}, which {reason}")
                break
    return found
