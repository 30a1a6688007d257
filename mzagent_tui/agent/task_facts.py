"""What a task's words name and ask, read once when the task starts.

`completion.read_task` reads them (the task-reading patterns live there, with the answer checks
that share them); the tools and the other aids take them from `ToolContext.facts` rather than
reading the task's text again with patterns of their own. The file tools read them too (a missing
file the task asks for is said to be made, not found), so they live here, not among the aids."""

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
    asks_for_change: bool = False
    """The task asks for a change somewhere in its words (not only about files)."""
    renames: tuple[tuple[str, str], ...] = ()
    """(old, new) words the task swaps ("rename greet to welcome"), each kept only where a file the
    task names held the old word: a write that drops the old name is not told it dropped it, and
    a module still importing the old name is shown the rename."""
