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
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.safety import own_programs
from mzagent_tui.agent.safety.git_config import GitUnanswered, Repository, find_repository
from mzagent_tui.agent.safety.git_entry import ENTRY, entry_names, leads_nowhere, nested_entries

ASK_TIMEOUT = 5.0
FILE_LIMIT = 100
"""Config files one repository's answer may read (git follows includes 10 deep)."""
INCLUDES = r"^include(if\..*)?\.path$"
HOOKS_REASON = "git hooks (the folder core.hooksPath names)"
PROGRAM_REASON = (
    "git runs it: a value of the repository's config, or yours, names it (core.fsmonitor, a filter's clean or smudge, "
    "a diff or merge driver, an editor, pager, credential helper, a `!` alias, …), and your next git command runs it"
)
HOOKS_KEY = "core.hookspath"
_SHELL_SPLIT = re.compile(r"""[\s;&|()<>{}`'"=,]+""")
"""Where a config value's words end: blanks, the shell's operators and quotes (git hands most
values to `sh -c`), `=` (`--opt=path`) and commas."""
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
INCLUDE_REASON = "git reads it as config: the repository's config, or yours, includes it (hooks, fsmonitor and filters set there run programs)"


class GitPathsUnknown(Exception):
    """Git could not say where the hooks are: every path may be one."""


@dataclass(frozen=True)
class GitPaths:
    hook_folders: tuple[str, ...] = ()
    """Project-relative folders whose files git runs as hooks."""
    config_files: tuple[str, ...] = ()
    """Project-relative files git reads as config, besides the repositories' own."""
    programs: tuple[str, ...] = ()
    """Project-relative files a config value names (`program_words`): git runs them as programs
    (core.fsmonitor, a filter's clean, an alias's script, ...), or may."""

    def reason(self, relative_path: str) -> str | None:
        """Why git runs or reads this project file, or None."""
        if relative_path in self.config_files:
            return INCLUDE_REASON
        if relative_path in self.programs:
            return PROGRAM_REASON
        if any(relative_path.startswith(f"{folder}/") for folder in self.hook_folders):
            return HOOKS_REASON
        return None

    def leads_to(self, relative_path: str) -> str | None:
        """Why a link at this path matters: it is one of them, or a folder on the way to one."""
        named = [(p, HOOKS_REASON) for p in self.hook_folders] + [(p, INCLUDE_REASON) for p in self.config_files] + [(p, PROGRAM_REASON) for p in self.programs]
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
    programs: set[str] = set()
    for repository in repositories:
        found = _paths_of(root, repository)
        hooks.update(found.hook_folders)
        configs.update(found.config_files)
        programs.update(found.programs)
    return GitPaths(tuple(sorted(hooks)), tuple(sorted(configs)), tuple(sorted(programs)))


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
    key = (str(root), str(repository.git_dir), str(repository.work_tree), tuple(sorted(env.items())), tuple(own_programs.user_config_files()))
    known = _known.get(key)
    if known is not None and all(_signature(Path(path)) == signature for path, signature in known[1]):
        return known[0]
    entries, read = _ask(repository)
    hooks: set[str] = set()
    programs: set[str] = set()
    for name, value in entries:
        if name == HOOKS_KEY:
            hooks |= _inside(root, repository.work_tree, value)
        for word in program_words(value):
            programs |= _inside(root, repository.work_tree, word)
    configs: set[str] = set()
    for path in read - set(_own_configs(repository)):
        configs |= _inside(root, root, str(path))
    found = GitPaths(tuple(sorted(hooks)), tuple(sorted(configs)), tuple(sorted(programs)))
    watched = sorted({*read, repository.git_dir / "HEAD"})  # HEAD: an `onbranch:` include
    _known[key] = (found, tuple((str(path), _signature(path)) for path in watched))
    return found


_known: dict[tuple[object, ...], tuple[GitPaths, tuple[tuple[str, tuple[int, ...]], ...]]] = {}


def _ask(repository: Repository) -> tuple[list[tuple[str, str]], set[Path]]:
    """Every key and value git reads for the repository, and every config file it
    may read. Our confined git reads only the files it is granted, and git reads the user's
    config, includes followed, as it starts (whatever it is asked), stopping at a file it may
    not read (a hidden `~/.gitconfig.local`). So every file an include may name is found
    first, one file at a time, and granted; then git answers as the user's git would,
    conditions and all."""
    files = _config_files([*own_programs.user_config_files(), *_own_configs(repository)])
    return _entries(repository, files), files


def _own_configs(repository: Repository) -> list[Path]:
    return [repository.git_dir / "config", repository.common_dir / "config", repository.git_dir / "config.worktree"]


def _config_files(start: list[Path]) -> set[Path]:
    """`start` and every file their includes name, and theirs, conditions aside (a condition
    git finds false reads nothing more, and costs only a grant)."""
    found: set[Path] = set()
    pending = list(start)
    while pending:
        path = pending.pop()
        if path in found:
            continue
        found.add(path)
        if len(found) > FILE_LIMIT:
            raise GitPathsUnknown(f"git's config includes more than {FILE_LIMIT} files")
        pending.extend(_includes_of(path))
    return found


def _includes_of(path: Path) -> list[Path]:
    """The files one config file's includes name (relative to it: git's rule), kept while it is unchanged."""
    signature = _signature(path)
    if not signature:
        return []
    known = _includes.get(path)
    if known is not None and known[0] == signature:
        return known[1]
    try:
        done = own_programs.git(
            "config", "--file", str(path), "--no-includes", "-z", "--get-regexp", INCLUDES, cwd=path.parent, timeout=ASK_TIMEOUT, readable=[path],
        )
    except (OSError, subprocess.TimeoutExpired):
        raise GitPathsUnknown(f"git could not read {path} in {ASK_TIMEOUT:.0f} s") from None
    if done.returncode not in (0, 1):  # 1: none set
        raise GitPathsUnknown(f"git could not read {path}: {done.stderr.decode('utf-8', 'replace').strip() or 'no answer'}")
    values = [item.partition("\n")[2] for item in done.stdout.decode("utf-8", "surrogateescape").split("\0") if item.partition("\n")[2].strip()]
    named = [Path(os.path.normpath(path.parent / os.path.expanduser(value))) for value in values]
    _includes[path] = (signature, named)
    return named


_includes: dict[Path, tuple[tuple[int, ...], list[Path]]] = {}


def _entries(repository: Repository, granted: set[Path]) -> list[tuple[str, str]]:
    """Every key (as git writes it: section and name in lower case) and value git reads for the
    repository, from every scope."""
    assert repository.work_tree is not None
    try:
        done = own_programs.git(
            "config", "--includes", "-z", "--list", cwd=repository.work_tree, timeout=ASK_TIMEOUT,
            env={"GIT_DIR": str(repository.git_dir)}, readable=[repository.common_dir, *(path for path in granted if path.exists())], user_config=True,
        )
    except (OSError, subprocess.TimeoutExpired):
        raise GitPathsUnknown(f"git could not read the config of {repository.work_tree} in {ASK_TIMEOUT:.0f} s") from None
    if done.returncode not in (0, 1):  # 1: not set
        message = done.stderr.decode("utf-8", "replace").strip()
        raise GitPathsUnknown(f"git could not read the config of {repository.work_tree}: {message or 'no answer'}")
    found = []
    for item in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        key, _, value = item.partition("\n")
        if value.strip():
            found.append((key.lower(), value))
    return found


def program_words(value: str) -> list[str]:
    """The words of a config value that may name a file git runs, or a file a program it runs
    is given (`sh tools/fsmon.sh`, `python3 -m tools.fsmon`, `!f() { ./x; }; f`): every word,
    cut where the shell would cut it and at quotes, `=` and commas, but options. Which keys git
    runs as programs grows with git (config-based hooks, `hook.NAME.command`, came in 2.46), so
    every value is read so: a file it names in the work tree is protected whatever the key.
    An absolute path outside the project counts as relative to the work tree too (a value
    written `"$(git rev-parse --show-toplevel)/tools/x.sh"` leaves `/tools/x.sh`; a leading
    `$VAR` is dropped, `$GIT_DIR/../x` leaves `/../x`), and a module `-m` names as the files
    Python would import for it (`tools/fsmon.py`, `tools/fsmon/__main__.py`, `tools/__init__.py`)."""
    words: list[str] = []
    module_next = False
    for word in _SHELL_SPLIT.split(value):
        word = word.strip()
        module = module_next
        module_next = word == "-m"
        if word.startswith("-m") and len(word) > 2 and word[2:3] != "-":
            word, module = word[2:], True  # python3 -mtools.fsmon
        if not word or word.startswith("-") or word in (".", ".."):
            continue
        word = re.sub(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", "", word.lstrip("!")).split("$", 1)[0]
        if not word:
            continue
        words.append(word)
        if word.startswith("/"):
            words.append(word.lstrip("/"))
        if module and _MODULE.match(word):
            parts = word.split(".")
            words.extend([f"{'/'.join(parts)}.py", f"{'/'.join(parts)}/__init__.py", f"{'/'.join(parts)}/__main__.py"])
            words.extend(f"{'/'.join(parts[:n])}/__init__.py" for n in range(1, len(parts)))
    return words


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
