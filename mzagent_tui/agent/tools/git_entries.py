"""A `.git` a command replaced, re-pointed, made or removed: shown to the user afterwards, in every
mode (yolo and plan included), and put back as it was if they do not keep it.

The sandbox makes the repository read-only for a command (safety/git_entry), but it cannot bind
over a link, nor over an entry that is not there yet: a command may re-point a `.git` link at a
copy whose `core.fsmonitor` it wrote, make a `.git` where there was none (`git init`), or make a
repository in a folder (`git init sub`) that a later `git add` records as a gitlink, which the
user's `git status` then enters. Each would run a program in the user's next git command,
outside mzagent. The user's own git commands (`!git commit`) are theirs and are not asked about.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.safety.approval import ApprovalRequest
from mzagent_tui.agent.safety.git_entry import ENTRY, EntryState, entry_names, entry_states
from mzagent_tui.agent.tools.beneath import open_beneath, write_atomically_at
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.registry import ToolError

RUNS = "git runs the config and hooks it leads to in your next git command (a core.fsmonitor on git status, a hook on git commit)"


@dataclass(frozen=True)
class Before:
    """The `.git` entries and the nested repositories as a command starts."""

    states: dict[str, EntryState]
    nested: frozenset[str]
    """Folders the snapshots record as repositories of their own."""


def before_command(root: Path, nested: set[str]) -> Before:
    return Before(entry_states(root, entry_names(root)), frozenset(nested))


def ask_about_changes(ctx: ToolContext, before: Before, nested_after: set[str]) -> str:
    """Ask about each entry the command changed and each repository it made in a folder; put
    back what the user does not keep. The notes for the model ("" when nothing changed)."""
    notes = ""
    after = entry_states(ctx.root, list(before.states))
    for name, old in before.states.items():
        new = after[name]
        if new != old:
            notes += _ask(ctx, name, old, new, f"the command {_what_happened(name, old, new)}")
    for folder in sorted(nested_after - before.nested):
        name = f"{folder}/{ENTRY}"
        new = entry_states(ctx.root, [name])[name]
        if new.kind != "missing" and name not in before.states:
            notes += _ask(ctx, name, EntryState("missing"), new, f"the command made a git repository in {folder}; once committed as a gitlink, {RUNS}")
    return notes


def _what_happened(name: str, old: EntryState, new: EntryState) -> str:
    if old.kind == "missing":
        return f"made a git repository ({name}, a {new.kind}{_target(new)}), and {RUNS}"
    if new.kind == "missing":
        return f"removed {name} (a {old.kind}{_target(old)})"
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
    decision = ctx.approver.approve(ApprovalRequest(
        kind="write_sensitive", command=f"keep {name}", cwd=str(ctx.root), reason=reason, path=name, ask_even_if_allowed=True,
    ))
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
    """The entry as it was: a link or a file made again, a made one removed. A folder that is
    gone cannot be made again (its content was not saved); the sandbox's read-only bind keeps
    one from being moved while a command runs."""
    folder, entry = os.path.split(name)
    fd = open_beneath(root, folder or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        if old.kind == "folder":
            raise ToolError("the folder it was is gone and its content was not saved")
        _remove(fd, entry)
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
