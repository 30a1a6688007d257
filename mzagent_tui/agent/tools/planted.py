"""Files a command wrote that make tools run code (`.envrc`, `.vscode/tasks.json`, a `.pth`):
`write_to_file` asks before writing one, and a command is asked about after it ran.

The sandbox cannot refuse them: Landlock only adds rights, so a command allowed to create files
in the project's root may create `.envrc` there too. A test run under an allow rule could leave
one for direnv to run the next time the user enters the folder, outside mzagent. So each such
file, link or execute bit a command created or changed is shown to the user, as a write is; one
not kept is put back as it was before the command, and the model is told. What changed is
found by tools/planted_scan.py, not by the snapshots: a `.gitignore`, a nested repository or a
link does not hide it.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from mzagent_tui.agent.ground.beneath import open_beneath, write_atomically_at
from mzagent_tui.agent.ground.diffs import MAX_SIDE_BYTES, file_diff, read_side
from mzagent_tui.agent.safety.approval_requests import PlantedFileApproval
from mzagent_tui.agent.safety.asked_always import ON_PATH_REASON, asked_in_every_mode
from mzagent_tui.agent.safety.planting import START_REASON, imported_at_own_start, plants_code
from mzagent_tui.agent.sessions.snapshots import Change
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.files import peek
from mzagent_tui.agent.tools.planted_scan import Kept, PlantedChange
from mzagent_tui.agent.tools.registry import ToolError


def ask_to_keep(ctx: ToolContext, changes: list[PlantedChange], backups: dict[str, Path]) -> tuple[set[str], str]:
    """Ask about each entry on the list the command created or changed; put back those the user
    does not keep (the content before comes from the scan, or from the snapshots' `backups` for
    a file too large for the scan to hold). The paths put back (no longer changes of the
    command) and the notes for the model."""
    put_back: set[str] = set()
    notes = ""
    for change in changes:
        old = change.old.content if change.old is not None else None
        if change.old is not None and change.old.kind == "file" and old is None:
            old = read_side(backups.get(change.path))
        new = change.new.content if change.new.kind == "file" else None
        if new is not None and len(new) > MAX_SIDE_BYTES:
            new = None
        diff = None
        if new is not None and not change.mode_only and (change.status == "A" or old is not None):
            diff = file_diff(change.path, old if change.old is not None and change.old.kind == "file" else None, new)
        what = _what_it_did(change)
        at_start = imported_at_own_start(ctx.root, change.path)
        decision = ctx.approver.approve(PlantedFileApproval(
            cwd=str(ctx.root), reason=f"the command {what}, and it makes tools run code: {START_REASON if at_start else change.reason}",
            path=change.path, diff=ctx.redact.exact(diff.text) if diff else "",
            content=new.decode("utf-8", "replace") if new is not None else "", after_command=True,
            ask_even_if_allowed=at_start or asked_in_every_mode(change.reason),  # yolo too: mzagent's next start imports it, your shell or git runs it
        ))
        try:
            if not decision.approved:
                _put_back(ctx.root, change, old)
                put_back.add(change.path)
                reason = f" Their reason: {decision.note.rstrip('.')}." if decision.note else ""
                notes += (
                    f"\nThe user did not keep {change.path}, which the command {_past(change)} "
                    f"({change.reason}); it is back as it was before the command.{reason}"
                )
            elif decision.content is not None and change.new.kind == "file" and decision.content.encode() != new:  # new is None: too large to show
                _rewrite(ctx.root, change.path, decision.content.encode())
        except (OSError, ToolError) as exc:
            notes += f"\nWarning: {change.path} could not be put back as the user asked: {exc}."
    return put_back, notes


def seen_by_the_snapshots(root: Path, changes: list[Change], before: dict[str, Kept], python_first: tuple[str, ...]) -> list[PlantedChange]:
    """The files on the list among the snapshots' changes: what can still be asked about when
    the scan after a command could not be finished (the command made more entries than it may
    list, or a folder it cannot read, or a config git includes it broke). Ignored, nested and
    linked files are not among them. A file the scan before the command kept for git's sake (a
    config file the repository includes, a hook in core.hooksPath) is on the list here too: a
    command that breaks git's reading of the one makes the scan fail, and must not get the other
    through unasked."""
    found: list[PlantedChange] = []
    for change in changes:
        kept = before.get(change.path)
        reason = plants_code(change.path, python_first) or (kept.reason if kept is not None and kept.reason else None)
        if reason is None or change.status == "D" or change.mode_only:
            continue
        old = before.get(change.path)
        if change.status == "M" and old is None:
            old = Kept(reason, "file", (), change.old_mode if change.old_mode is not None else 0o644, racy=True)  # content: the snapshots' backup
        new = Kept(reason, "file", (), 0, content=peek(root, change.path))
        found.append(PlantedChange("A" if old is None else "M", change.path, reason, old, new))
    return found


def _what_it_did(change: PlantedChange) -> str:
    """For the dialog: "created it", "changed it", "made it executable", "created it as a link to x"."""
    if change.new.kind == "link":
        return f"{'created it' if change.status == 'A' else 'made it'} as a link to {change.new.target}"
    if change.mode_only:
        return "made it executable"
    return f"{_past(change)} it"


def _past(change: PlantedChange) -> str:
    return "created" if change.status == "A" else "changed"


def _put_back(root: Path, change: PlantedChange, old: bytes | None) -> None:
    """The entry as it was before the command: a new one removed, a file's content and mode
    written back, a link made again; from a descriptor of its folder, no link followed."""
    folder, name = os.path.split(change.path)
    fd = open_beneath(root, folder or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        before = change.old
        if before is None:
            os.unlink(name, dir_fd=fd)
        elif before.kind == "link":
            temporary = f".{name}.{secrets.token_hex(4)}.mzagent-tmp"
            os.symlink(before.target, temporary, dir_fd=fd)
            os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
        elif before.kind != "file":
            raise ToolError("put_back.not_a_file_before")
        elif change.mode_only:
            _chmod_at(fd, name, before.mode)
        elif old is None and change.reason == ON_PATH_REASON:
            _chmod_at(fd, name, before.mode)  # its content was not held (not a program then): no longer one now
        elif old is None:
            raise ToolError("put_back.content_not_kept")
        else:
            write_atomically_at(fd, root / folder, name, old, before.mode)
    finally:
        os.close(fd)


def _chmod_at(folder: int, name: str, mode: int) -> None:
    """chmod through a descriptor of the file itself (Linux has no chmod that refuses a link)."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ToolError("put_back.no_longer_a_file")
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _rewrite(root: Path, relative: str, data: bytes) -> None:
    """The content the user edited in the dialog, in place of what the command wrote."""
    folder, name = os.path.split(relative)
    fd = open_beneath(root, folder or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        mode = stat.S_IMODE(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
        write_atomically_at(fd, root / folder, name, data, mode)
    finally:
        os.close(fd)
