"""What `.git` is in the project, as git reads it: the entries git follows and the folders they lead to.

A `.git` may be a folder, a link, or a file holding `gitdir: PATH`; the folder it leads to may hold
a `commondir` naming another (a linked worktree's shared one); a submodule or an embedded
repository the index records as a gitlink has a `.git` of its own, which the user's `git status`
enters; a linked worktree kept inside the project has its `.git` file too, and so does any folder
holding a repository (git run in that folder uses it). Each leads to a config and hooks that run
programs in the user's git, outside mzagent. So a command sees every entry
and every folder they lead to read-only (`read_only_paths`), and the entries' state before and
after it (`entry_states`) shows a command that replaced, re-pointed, made or removed one.
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


def nested_entries(root: Path) -> list[str]:
    """Every `.git` entry below the project's root, relative to it (a repository in a folder,
    a `gitdir:` file where the user may open a shell: git there uses it), links not followed,
    up to WALK_LIMIT folders."""
    found: list[str] = []
    pending = [""]
    walked = 0
    while pending and walked < WALK_LIMIT:
        folder = pending.pop()
        walked += 1
        try:
            entries = list(os.scandir(root / folder))
        except OSError:
            continue
        for entry in entries:
            relative = f"{folder}/{entry.name}" if folder else entry.name
            if entry.name == ENTRY:
                if folder:
                    found.append(relative)
            elif entry.name not in NOT_WALKED and entry.is_dir(follow_symlinks=False):
                pending.append(relative)
    return sorted(found)


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


def read_only_paths(root: Path, names: list[str]) -> tuple[Path, ...]:
    """What a command must not write: each entry (a link stands for what it leads to: a link
    itself cannot be bound over, so it is checked after the command instead) and every folder
    the entries lead to, with what git says the root's repository is. Paths outside the project
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
    `.git` holds `gitdir: .gitdir`), where writing it makes git run code."""
    real = os.path.realpath(root / relative)
    folders = [str(p) for p in read_only_paths(root, entry_names(root, nested_entries(root)))]
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
