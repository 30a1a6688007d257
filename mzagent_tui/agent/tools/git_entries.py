"""A `.git` a command replaced, re-pointed, made or removed: shown to the user afterwards, in every
mode (yolo and plan included), and put back as it was if they do not keep it.

The sandbox makes the repository read-only for a command (safety/git_entry), but it cannot bind
over a link, nor over an entry that is not there yet: a command may re-point a `.git` link at a
copy whose `core.fsmonitor` it wrote, make a `.git` where there was none (`git init`), or make a
repository or a `gitdir:` file in a folder (`git init sub`, `src/.git`): git run in that folder
uses it, and so does the user's `git status` once a `git add` records it as a gitlink. Nor is a
`.git` needed: a folder holding HEAD, objects/ and refs/ is a git directory to git's discovery,
whatever it is called (`git init --bare src`, or the same written by hand), so a folder a
command turned into one is asked about as a made `.git` is, and what it made there of git's
names is taken away if the user does not keep it. Each would run a program in the user's next git command,
outside mzagent. The user's own git commands (`!git commit`) are theirs and are not asked about.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from mzagent_tui.agent.ground.beneath import open_beneath, write_atomically_at
from mzagent_tui.agent.safety.approval_requests import GitEntryApproval
from mzagent_tui.agent.safety.git_entry import EntryState, entry_names, entry_states, is_git_directory, read_only_paths, walk
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.registry import ToolError

RUNS = "git runs the config and hooks it leads to in your next git command (a core.fsmonitor on git status, a hook on git commit)"


@dataclass(frozen=True)
class Before:
    """The `.git` entries as a command starts, and what the sandbox makes read-only for it."""

    states: dict[str, EntryState]
    read_only: tuple[Path, ...]
    layouts: dict[str, frozenset[str]] = field(default_factory=dict)
    """The folders holding any of git's names for a git directory, with those they hold (git_entry.walk)."""
    folders: frozenset[tuple[int, int]] = frozenset()
    """The (device, inode) of each read-only folder: a repository that was there, moved by the
    command (`mv .git .g`, without the sandbox's mounts), is not one it made."""


def before_command(root: Path) -> Before:
    found = walk(root)
    names = entry_names(root, found.entries)
    read_only = read_only_paths(root, names, found.git_directories())
    return Before(entry_states(root, names), read_only, found.layouts, frozenset(_identities(read_only)))


def _identities(paths: tuple[Path, ...]) -> list[tuple[int, int]]:
    found = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue
        found.append((info.st_dev, info.st_ino))
    return found


def ask_about_changes(ctx: ToolContext, before: Before) -> str:
    """Ask about each entry the command changed, and each it made below the root; put back what
    the user does not keep. The notes for the model ("" when nothing changed)."""
    notes = ""
    found = walk(ctx.root)
    made = [name for name in found.entries if name not in before.states]
    after = entry_states(ctx.root, [*before.states, *made])
    for name, new in after.items():
        old = before.states.get(name, EntryState("missing"))
        if new == old or new.kind == "missing":
            continue  # one removed plants nothing: git then finds the repository above, read-only too
        notes += _ask(ctx, name, old, new, f"the command {_what_happened(name, old, new)}")
    for folder in found.git_directories():
        had = before.layouts.get(folder, frozenset())
        if not is_git_directory(had) and not set(_identities((ctx.root / folder,))) & before.folders:
            notes += _ask_about_git_directory(ctx, folder, had, found.layouts[folder])
    return notes


def _ask_about_git_directory(ctx: ToolContext, folder: str, had: frozenset[str], has: frozenset[str]) -> str:
    """A folder the command turned into a git directory (it holds HEAD, objects/ and refs/ now):
    asked about as a made `.git` is; not kept, the names of git's it made there are removed
    (what the folder held before stays)."""
    shown = folder or "the project folder"
    made = sorted(has - had)
    reason = (
        f"the command made {shown} a git repository without a .git entry (it now holds {', '.join(made)}): git takes "
        "a folder holding HEAD, objects and refs for one, and git run in it or below it uses it: "
        f"{RUNS}, and its config may give it a work tree (core.worktree)"
    )
    decision = ctx.approver.approve(GitEntryApproval(cwd=str(ctx.root), reason=reason, path=folder or "."))
    if decision.approved:
        return ""
    try:
        fd = open_beneath(ctx.root, folder or ".", os.O_RDONLY | os.O_DIRECTORY)
        try:
            for name in made:
                _remove(fd, name)
        finally:
            os.close(fd)
    except OSError as exc:
        return f"\nWarning: the git repository the command made in {shown} could not be taken away as the user asked: {exc}."
    said = f" Their reason: {decision.note.rstrip('.')}." if decision.note else ""
    return f"\nThe user did not keep the git repository the command made in {shown}; what it made there ({', '.join(made)}) was removed.{said}"


def _what_happened(name: str, old: EntryState, new: EntryState) -> str:
    folder = name.rpartition("/")[0]
    if old.kind == "missing" and folder:
        return (
            f"made a git repository in {folder} ({name}, a {new.kind}{_target(new)}): git run in that folder uses it, "
            "and so does your git status once a git add records the folder as a gitlink"
        )
    if old.kind == "missing":
        return f"made a git repository ({name}, a {new.kind}{_target(new)}), and {RUNS}"
    if old.kind == new.kind == "link":
        return f"re-pointed {name} ({_target(new).removeprefix(' to ')}, was {old.detail!s}), and {RUNS}"
    if old.kind == new.kind == "file":
        return f"rewrote {name}, and {RUNS}"
    return f"replaced {name} (a {old.kind}{_target(old)}) with a {new.kind}{_target(new)}, and {RUNS}"


def _target(state: EntryState) -> str:
    if state.kind == "link":
        return f" to {state.detail!s}"
    if state.kind == "file" and isinstance(state.detail, bytes):
        return f" holding {state.detail.decode('utf-8', 'replace').strip()[:200]!r}"
    return ""


def _ask(ctx: ToolContext, name: str, old: EntryState, new: EntryState, reason: str) -> str:
    decision = ctx.approver.approve(GitEntryApproval(cwd=str(ctx.root), reason=reason, path=name))
    if decision.approved:
        return ""
    try:
        _put_back(ctx.root, name, old)
    except (OSError, ToolError) as exc:
        return f"\nWarning: {name} could not be put back as the user asked: {exc}."
    said = f" Their reason: {decision.note.rstrip('.')}." if decision.note else ""
    if old.kind == "missing":
        return f"\nThe user did not keep the git repository {name} the command made; it was removed.{said}"
    return f"\nThe user did not keep {name} as the command left it; it is back as it was before the command.{said}"


def _put_back(root: Path, name: str, old: EntryState) -> None:
    """The entry as it was: the command's removed, a link or a file made again. A folder it
    replaced cannot be made again (its content was not saved; the sandbox's read-only mount
    keeps one from being moved, where there are namespaces), so that is said."""
    folder, entry = os.path.split(name)
    fd = open_beneath(root, folder or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        _remove(fd, entry)
        if old.kind == "folder":
            raise ToolError("put_back.folder_lost")
        if old.kind == "link":
            os.symlink(str(old.detail), entry, dir_fd=fd)
        elif old.kind == "file" and isinstance(old.detail, bytes):
            write_atomically_at(fd, root / folder, entry, old.detail, old.mode)
    finally:
        os.close(fd)


def _remove(folder_fd: int, name: str) -> None:
    """`name` in that folder and everything under it, never through a link."""
    try:
        kind = os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(kind):
        shutil.rmtree(name, dir_fd=folder_fd)
    else:
        os.unlink(name, dir_fd=folder_fd)
