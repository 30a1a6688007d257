"""The notes a write of the model gets at once, in its observation (aids `write.*`).

The answer checks see a lost function or a missed file only when the model answers; a small
model that wrote a program back without its helpers ran it, read nothing wrong and answered, with
few steps left to repair it. Said at the write, the old code is still in its recent context.
"""

from __future__ import annotations

from pathlib import Path

from mzagent_tui.agent.aids.removed import removed_note, removed_parts
from mzagent_tui.agent.aids.seam import Aids
from mzagent_tui.agent.aids.state import AidState
from mzagent_tui.agent.aids.stubs import stubs_in
from mzagent_tui.agent.ground.words import say
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.registry import WriteOutcome
from mzagent_tui.agent.tools.syntax_check import syntax_problem


def write_notes(ctx: ToolContext, aids: Aids, wrote: WriteOutcome, task: str) -> str:
    """The notes for one write, each on a line of its own ("" when none applies); the aids'
    state learns what the write changed."""
    notes: list[str] = []
    if not wrote.changed:
        notes.append(aids.note("write.same", same_note(aids.state, wrote)))
    aids.state.wrote(wrote.path, wrote.changed)
    if wrote.changed and wrote.before is not None and wrote.path.suffix == ".py" and aids.on("write.removed"):
        parts = removed_parts(wrote.before, wrote.after, task)
        if parts:
            notes.append(aids.note("write.removed", removed_note(wrote.rel, parts, otherwise="go on")))
    if not wrote.changed:
        unread = unread_named(ctx, aids.state, wrote.path)
        if unread:
            notes.append(aids.note("write.unread", say("write.unread", names=", ".join(unread))))
    return "".join(f"\n{note}" for note in notes if note)


def same_note(state: AidState, wrote: WriteOutcome) -> str:
    """Whether writing the same content again is a step done or one to redo. Content an earlier
    write of the model put there is a step done (told to write something different, a small model
    broke a finished table), unless it is not finished (it does not parse, which the tool's answer
    says above; functions that only raise NotImplementedError), or a command failed in it or a
    reminder found it wrong since it was written."""
    found_wrong = state.found_wrong(wrote.path)
    if found_wrong is not None:
        return say("aid.same_found_wrong", said=found_wrong)
    if wrote.path not in state.changed:
        return say("aid.same_unchanged")
    if syntax_problem(wrote.rel, wrote.after, wrote.before) is not None:
        return say("aid.same_broken")
    stubs = stubs_in(wrote.rel, wrote.after)
    if stubs:
        return say("aid.same_stubs", stubs=", ".join(stubs), raise_="raises" if len(stubs) == 1 else "raise")
    return say("aid.same_done")


def unread_named(ctx: ToolContext, state: AidState, written: Path) -> list[str]:
    """The project files the task names that the model has neither read nor written, but the one
    it just wrote: told that a program crashes on a data file, a small model read the data file
    and wrote it back unchanged three times, never opening the program."""
    found = []
    for name in ctx.facts.named:
        path = (ctx.root / name).resolve()
        if path != written and path.is_relative_to(ctx.root) and path.is_file() and path not in state.seen and name not in found:
            found.append(name)
    return found
