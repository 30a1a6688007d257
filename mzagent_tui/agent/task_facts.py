"""What a task's words name and ask, read once when the task starts.

`completion.read_task` reads them (the task-reading patterns live there, with the answer checks
that share them). The file tools read them too, from `ToolContext.facts` (a missing file the task
asks for is said to be made, not found), so they live here, not among the aids."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskFacts:
    named: tuple[str, ...] = ()
    """The file names the task mentions, in order."""
    targets: tuple[str, ...] = ()
    """The files the task asks to create or change: one that does not exist yet is pointed out as
    such, not as a wrong path."""
    existed: frozenset[str] = frozenset()
    """The files the task names that existed when it started."""
    no_change: bool = False
    """The task says to change nothing at all ("don't change anything, just explain why"), not
    only a part ("don't touch the tests") or a limit on a fix ("without changing its output")."""
