"""Files a command wrote that make tools run code (`.envrc`, `.vscode/tasks.json`, a `.pth`):
`write_to_file` asks before writing one, and a command is asked about after it ran.

The sandbox cannot refuse them: Landlock only adds rights, so a command allowed to create files
in the project's root may create `.envrc` there too. A test run under an allow rule could leave
one for direnv to run the next time the user enters the folder, outside mzagent. So each such
file a command created or changed is shown to the user, as a write is; one not kept is put back
as it was before the command, and the model is told.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mzagent_tui.agent.safety.approval import ApprovalRequest
from mzagent_tui.agent.safety.sensitive import plants_code
from mzagent_tui.agent.sessions.diffs import MAX_SIDE_BYTES, file_diff, read_side
from mzagent_tui.agent.sessions.snapshots import Change
from mzagent_tui.agent.sessions.undo import Write, take_back_beneath
from mzagent_tui.agent.tools.beneath import open_beneath, write_atomically_at
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.files import peek
from mzagent_tui.agent.tools.registry import ToolError


def ask_to_keep(ctx: ToolContext, changes: list[Change], backups: dict[str, Path]) -> tuple[set[str], str]:
    """Ask about each file the command created or changed that makes tools run code; put back
    those the user does not keep. The paths put back (no longer changes of the command) and the
    notes for the model."""
    put_back: set[str] = set()
    notes = ""
    for change in changes:
        planted = plants_code(change.path)
        if planted is None or change.status == "D" or change.mode_only:
            continue
        backup = backups.get(change.path)
        new = peek(ctx.root, change.path)
        if new is not None and len(new) > MAX_SIDE_BYTES:
            new = None  # too large to show: the dialog shows no content and no diff
        old = read_side(backup)
        diff = file_diff(change.path, old, new) if new is not None and (change.status == "A" or old is not None) else None
        decision = ctx.approver.approve(ApprovalRequest(
            kind="write_sensitive", command=f"keep {change.path}", cwd=str(ctx.root),
            reason=f"the command {'created' if change.status == 'A' else 'changed'} it, and it makes tools run code: {planted}",
            path=change.path, diff=ctx.redact.exact(diff.text) if diff else "",
            content=new.decode("utf-8", "replace") if new is not None else "",
        ))
        try:
            if not decision.approved:
                _put_back(ctx.root, change, backup)
                put_back.add(change.path)
                reason = f" Their reason: {decision.note.rstrip('.')}." if decision.note else ""
                notes += (
                    f"\nThe user did not keep {change.path}, which the command {'created' if change.status == 'A' else 'changed'} "
                    f"({planted}); it is back as it was before the command.{reason}"
                )
            elif decision.content is not None and decision.content.encode() != new:  # new is None: too large to show
                _rewrite(ctx.root, change.path, decision.content.encode())
        except (OSError, ToolError) as exc:
            notes += f"\nWarning: {change.path} could not be put back as the user asked: {exc}."
    return put_back, notes


def _put_back(root: Path, change: Change, backup: Path | None) -> None:
    if change.status != "A" and backup is None:
        raise ToolError("its content before the command was not saved")
    take_back_beneath(Write(0, 0, 0, root / change.path, change.status == "A", False, backup, None, False, change.old_mode), root)


def _rewrite(root: Path, relative: str, data: bytes) -> None:
    """The content the user edited in the dialog, in place of what the command wrote."""
    folder, name = os.path.split(relative)
    fd = open_beneath(root, folder or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        mode = stat.S_IMODE(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
        write_atomically_at(fd, root / folder, name, data, mode)
    finally:
        os.close(fd)
