"""The aids that comment on a write, at one point: after the write landed, from its plain
outcome. The file tools write and report the truth (written, created, the user edited it, it no
longer parses); everything said here is advice for a small model, each piece switchable by its
name in the seam's catalogue."""

from __future__ import annotations

from mzagent_tui.agent.aids.copies import copied_from
from mzagent_tui.agent.aids.definitions import (
    dropped_parameters,
    dropped_parameters_note,
    kept_stubs,
    kept_stubs_note,
    listed,
    removed_definitions,
    removed_note,
    removed_source,
    stopped_running,
    stopped_running_note,
)
from mzagent_tui.agent.aids.seam import Aids
from mzagent_tui.agent.events import Notice
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.registry import WriteOutcome


def after_write(ctx: ToolContext, aids: Aids, write: WriteOutcome) -> str:
    """The notes for one write, each on a line of its own ("" when none applies)."""
    notes = ""
    if write.old is not None and (stubs := kept_stubs(write.rel, write.old, write.new)):
        notes += aids.note("kept_stubs", "\n" + kept_stubs_note(write.rel, stubs))
    notes += _definitions(ctx, aids, write)
    if str(ctx.root) in write.content:
        notes += aids.note("absolute_path", (
            f"\nNote: {write.rel} contains the project's absolute path ({ctx.root}). Commands run in the project folder, "
            "so a relative path works there, and wherever the project is copied or cloned."
        ))
    source = copied_from(ctx.root, write.rel, write.old, write.new) if write.old is not None else None
    if source is not None and aids.on("copied_file"):
        aids.fired("copied_file")
        ctx.emit(Notice(f"The write replaced most of {write.rel} with the content of {source}. Check it; undo restores the old {write.rel}."))
        notes += (
            f"\nWarning: most of the old content of {write.rel} is gone, and it now holds nearly the same lines as {source}. "
            f"If that was not intended, write {write.rel} again with its own correct content."
        )
    return notes


def _definitions(ctx: ToolContext, aids: Aids, write: WriteOutcome) -> str:
    """What a Python write did to the names the file defines and uses: names taken away (not
    said where the task renames one of them), a script left running nothing, parameters left
    unused."""
    rel, old, data, path = write.rel, write.old, write.new, write.path
    notes = ""
    removed = removed_definitions(rel, old, data) if old is not None else []
    start = ctx.task_start.setdefault(path, old)
    lost_since_start = removed_definitions(rel, start, data) if start is not None else []
    renamed_by_task = any(before in lost_since_start for before, _ in ctx.facts.renames)
    if removed and not renamed_by_task:
        note = removed_note(rel, removed, whole=write.whole, earlier=removed_source(old or b"", removed))
        notes += aids.note("removed_definitions", "\n" + note)
        if notes:
            ctx.failed[path] = f"the write that put it there was told it no longer defines {listed(removed)}"
    idle = stopped_running(rel, old, data) if old is not None else None
    if idle is not None:
        notes += aids.note("stopped_running", "\n" + stopped_running_note(rel, idle))
    dropped = dropped_parameters(rel, old, data) if old is not None else []
    if dropped:
        notes += aids.note("dropped_parameters", "\n" + dropped_parameters_note(rel, dropped, old or b"", data))
    return notes
