"""What `.git` is in the project, as git reads it: the entries git follows and the folders they lead to.

A `.git` may be a folder, a link, or a file holding `gitdir: PATH`; the folder it leads to may hold
a `commondir` naming another (a linked worktree's shared one); a submodule or an embedded
repository the index records as a gitlink has a `.git` of its own, which the user's `git status`
enters; a linked worktree kept inside the project has its `.git` file too, and so does any folder
holding a repository (git run in that folder uses it). And git needs no `.git` at all: its
discovery takes any folder holding HEAD, objects/ and refs/ (or a `commondir`) for a git directory
(`safe.bareRepository` is `all` unless the user says otherwise), whatever it is called, and its
config may give it a work tree (`core.bare = false`, `core.worktree = ..`). Each leads to a
config and hooks that run programs in the user's git, outside mzagent. So a command sees every
entry, every folder they lead to and every such folder read-only (`read_only_paths`), and the
entries' state before and after it (`entry_states`), and the folders holding git's names
(`walk`), show a command that replaced, re-pointed, made or removed one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.ground.textfiles import WHITESPACE, read_git_pointer, read_regular
from mzagent_tui.agent.safety.git_config import GitUnanswered, Repository, find_repository, gitlink_paths

ENTRY = ".git"
POINTER_LIMIT = 4096
"""Bytes of a `.git` file kept to tell one content from another."""


@dataclass(frozen=True)
class EntryState:
    """One `.git` entry as it stands: its kind and what tells one of its kind from another."""

    kind: str
    """"folder", "link", "file", "missing" or "other" (a FIFO, a socket: git reads none)."""
    detail: str | bytes | tuple[int, int] = ""
    """A link's target, a file's content, a folder's (device, inode)."""
    mode: int = 0o644
    """A file's permissions, to put it back as it was."""


WALK_LIMIT = 20_000
"""Folders looked into for `.git` entries, per look (a project's own folders are far fewer)."""
NOT_WALKED = frozenset(("node_modules", "__pycache__"))
"""Folders of packages and caches: a `.git` in them is nothing the user's git enters or a shell
is opened in, and they hold most of a JavaScript project's folders."""


GIT_DIR_MARKS = frozenset(("head", "objects", "refs", "commondir"))
"""What git's own discovery looks for in a folder to take it for a git directory (setup.c
`is_git_directory`: a HEAD, and objects/ and refs/ here or in the folder `commondir` names),
lower case: a case-insensitive file system answers `head` for `HEAD`."""
GIT_DIR_NAMES = frozenset((
    *GIT_DIR_MARKS, "config", "config.worktree", "packed-refs", "hooks", "info", "description", "branches", "logs",
    "index", "worktrees", "modules", "fetch_head", "orig_head", "merge_head", "shallow", "gitdir", "reftable",
    "rr-cache", "commit_editmsg", "lfs",
))
"""The names git keeps in a git directory (lower case): those a command made in a folder it
turned into one are what is taken away when the user does not keep it."""


def is_git_directory(names: Iterable[str]) -> bool:
    """Whether git takes a folder holding entries of these names for a git directory, as its
    discovery does (with `safe.bareRepository` at its default, `all`): a HEAD, and objects/ and
    refs/ or a `commondir`. Any kind of entry counts (a link, a file where git wants a folder):
    asking about one git would refuse costs less than missing one it takes."""
    lower = {name.lower() for name in names}
    return "head" in lower and ("commondir" in lower or {"objects", "refs"} <= lower)


@dataclass(frozen=True)
class Found:
    """What one walk of the project finds: the `.git` entries below the root, and every folder
    (the root is "") holding any of git's own names for a git directory (GIT_DIR_MARKS), with
    those of GIT_DIR_NAMES it holds, as written."""

    entries: list[str]
    layouts: dict[str, frozenset[str]]

    def git_directories(self) -> list[str]:
        """The folders git takes for a git directory (a bare layout: `git init --bare`, or
        written by hand), wherever they are and whatever they are called."""
        return sorted(folder for folder, names in self.layouts.items() if is_git_directory(names))


def walk(root: Path) -> Found:
    """Every `.git` entry below the project's root, relative to it (a repository in a folder,
    a `gitdir:` file where the user may open a shell: git there uses it), and every folder that
    holds git's names for a git directory (a folder holding HEAD, objects/ and refs/ is one,
    whatever it is called: git run there or below uses it); links not followed, up to
    WALK_LIMIT folders. The insides of a git directory (its objects, refs, logs) are not walked."""
    found: list[str] = []
    layouts: dict[str, frozenset[str]] = {}
    pending = [""]
    walked = 0
    while pending and walked < WALK_LIMIT:
        folder = pending.pop()
        walked += 1
        try:
            entries = list(os.scandir(root / folder))
        except OSError:
            continue
        names = frozenset(entry.name for entry in entries if entry.name.lower() in GIT_DIR_NAMES)
        if any(name.lower() in GIT_DIR_MARKS for name in names):
            layouts[folder] = names
        inside_git_directory = is_git_directory(names)
        for entry in entries:
            relative = f"{folder}/{entry.name}" if folder else entry.name
            if entry.name == ENTRY:
                if folder:
                    found.append(relative)
            elif entry.name in NOT_WALKED or (inside_git_directory and entry.name in names):
                continue
            elif entry.is_dir(follow_symlinks=False):
                pending.append(relative)
    return Found(sorted(found), layouts)


def nested_entries(root: Path) -> list[str]:
    """The `.git` entries below the project's root (`walk`)."""
    return walk(root).entries


def entry_names(root: Path, nested: Iterable[str] = ()) -> list[str]:
    """The `.git` entries git follows in the project, relative to it: the root's, each gitlink's
    (submodules, embedded repositories, checked out or not), each linked worktree's kept inside
    the project, and the `nested` ones found below the root."""
    names = [ENTRY, *nested]
    repository = _repository(root)
    if repository is not None and repository.work_tree is not None:
        for path in gitlink_paths(repository):
            names.append(_relative(root, Path(repository.work_tree) / path / ENTRY))
    for git_dir in _pointed_folders(root / ENTRY):
        for worktree_entry in _worktree_entries(git_dir):
            names.append(_relative(root, worktree_entry))
    return [name for name in dict.fromkeys(names) if name]


def read_only_paths(root: Path, names: list[str], git_directories: Iterable[str] = ()) -> tuple[Path, ...]:
    """What a command must not write: each entry (a link stands for what it leads to: a link
    itself cannot be bound over, so it is checked after the command instead) and every folder
    the entries lead to, with what git says the root's repository is, and each folder of the
    project git takes for a git directory (`git_directories`, from `walk`). Paths outside the project
    are in the list too: the sandbox does not let a command write there anyway. Never the
    project itself or a folder holding it (a project that is a bare repository, a `gitdir: .`):
    that would be every write refused, not the repository's."""
    paths: list[Path] = []
    for name in names:
        entry = root / name
        if not os.path.lexists(entry):
            continue
        paths.append(entry)
        paths.extend(_pointed_folders(entry))
    for folder in git_directories:
        paths.append(root / folder if folder else root)
        paths.extend(_pointed_folders(root / folder if folder else root))
    repository = _repository(root)
    if repository is not None:
        paths.extend((repository.git_dir, repository.common_dir))
    real_root = os.path.realpath(root)
    real = dict.fromkeys(os.path.realpath(p) for p in paths)
    return tuple(Path(p) for p in real if not (real_root == p or real_root.startswith(p.rstrip("/") + "/")))


def entry_states(root: Path, names: list[str]) -> dict[str, EntryState]:
    """The state of each named entry now."""
    return {name: state_of(root / name) for name in names}


def state_of(path: Path) -> EntryState:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return EntryState("missing")
    except OSError:
        return EntryState("other")
    if stat.S_ISLNK(info.st_mode):
        return EntryState("link", os.readlink(path))
    if stat.S_ISDIR(info.st_mode):
        return EntryState("folder", (info.st_dev, info.st_ino))
    if stat.S_ISREG(info.st_mode):
        text = read_regular(path, POINTER_LIMIT)
        return EntryState("file", (text or "").encode("utf-8", "surrogateescape"), stat.S_IMODE(info.st_mode))
    return EntryState("other")


def in_repository(root: Path, relative: str) -> bool:
    """Whether a project file lies in a folder a `.git` entry leads to (`.gitdir/config` when
    `.git` holds `gitdir: .gitdir`), or in a folder git takes for a git directory (a bare
    layout), where writing it makes git run code."""
    real = os.path.realpath(root / relative)
    found = walk(root)
    folders = [str(p) for p in read_only_paths(root, entry_names(root, found.entries), found.git_directories())]
    return any(real == folder or real.startswith(folder.rstrip("/") + "/") for folder in folders)


def leads_nowhere(entry: Path) -> bool:
    """Whether git gives up on this `.git` entry (a file without a `gitdir:` line, or one
    naming no folder): git run beside it fails there, so it runs nothing of the entry's."""
    git_dir = _git_dir(entry)
    return git_dir is None or not git_dir.is_dir()


def _pointed_folders(entry: Path) -> list[Path]:
    """The git dir an entry leads to (the folder itself, a link's target, a `gitdir:` file's
    folder) and the common dir its `commondir` names."""
    git_dir = _git_dir(entry)
    if git_dir is None:
        return []
    found = [git_dir]
    common = read_git_pointer(git_dir / "commondir")
    if common is not None:
        found.append(Path(os.path.realpath(git_dir / common)))
    return found


def _git_dir(entry: Path) -> Path | None:
    if entry.is_dir():
        return Path(os.path.realpath(entry))
    target = read_git_pointer(entry, "gitdir: ")
    return Path(os.path.realpath(entry.parent / target)) if target else None


def _worktree_entries(git_dir: Path) -> list[Path]:
    """The `.git` files of the linked worktrees a repository records (`worktrees/NAME/gitdir`)."""
    try:
        names = sorted(os.listdir(git_dir / "worktrees"))
    except OSError:
        return []
    found = []
    for name in names:
        target = read_git_pointer(git_dir / "worktrees" / name / "gitdir", trailing=WHITESPACE)
        if target:
            found.append(Path(target))
    return found


def _relative(root: Path, path: Path) -> str:
    """`path` relative to the project ("" when outside it); the entry itself is not resolved."""
    parent = Path(os.path.realpath(path.parent))
    real_root = Path(os.path.realpath(root))
    if not parent.is_relative_to(real_root):
        return ""
    return str((parent / path.name).relative_to(real_root))


def _repository(root: Path) -> Repository | None:
    try:
        return find_repository(root)
    except GitUnanswered:
        return None
