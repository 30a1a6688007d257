"""The one seam between the aids and the rest of the agent: every aid by name, the point of the
run where it hooks in, a switch for each, and an `AidFired` event each time one acts.

Without it an aid could be neither switched off nor counted: the benchmarks' ablations were done
by editing code, and a note an aid appended to an observation left no trace. Now each one is a
name in `CATALOGUE`; `disable_aids = ["name", ...]` in the user config (or `--disable-aid NAME`)
switches it off, and the session log and `--json` show every firing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from mzagent_tui.agent.aids.state import AidState
from mzagent_tui.agent.events import AidFired, EventSink


@dataclass(frozen=True)
class Aid:
    name: str
    point: str
    """Where it acts: task (a task starts), before_write (what a write of the model will write),
    after_command (a command ran), after_write (a write of the model), after_tool (any call's observation), final_answer (the model answers: is the
    work there?)."""
    does: str


CATALOGUE: tuple[Aid, ...] = (
    Aid("examples", "after_command", "printed results compared with the docstring examples of a written file"),
    Aid("write.not_read", "before_write", "write_to_file may replace an existing file only once the model has read it (or written it, or named it in a command)"),
    Aid("write.recipe_tabs", "before_write", "a Makefile's recipe lines written with spaces get the tab make needs; the model is told which"),
    Aid("write.removed", "after_write", "a rewrite of a Python file took away code the task did not name: said at once, with the old code"),
    Aid("write.same", "after_write", "a write that changed nothing: a step done (go on), or one to do again differently (it was found wrong, or is unfinished)"),
    Aid("write.unread", "after_write", "a write that changed nothing, while the task names files not read yet: they are named"),
    Aid("stuck", "after_tool", "the same action and result three times: the run asks for a final answer"),
    Aid("task.no_change", "task", "a task that says to change nothing runs with the project read-only (writes refused, commands read-only)"),
    Aid("plan.idle", "after_tool", "the task list updated twice with no other call between: a list does no work"),
    *(
        Aid(f"answer.{kind}", "final_answer", does)
        for kind, does in (
            ("missing", "a file the task asks for does not exist"),
            ("undefined", "a written file uses undefined names"),
            ("unchanged", "the file the task asks to change is unchanged"),
            ("idle", "a task that asks for work answered after only reading"),
            ("removed", "a rewrite of a Python file took away code the task did not name (a function, the main block)"),
            ("renamed", "the task renames a name or a file, and the old one is still used in the project"),
            ("command", "a command the task names has not run successfully since the last change"),
            ("computed", "a question about what code computes answered without running anything"),
            ("unasked", "a task that says to change nothing answered after files were changed"),
        )
    ),
)
NAMES = frozenset(aid.name for aid in CATALOGUE)
_POINTS = {aid.name: aid.point for aid in CATALOGUE}


class UnknownAid(ValueError):
    """A name in `disable_aids` that is not in the catalogue: said at once, not ignored."""


class Aids:
    """The switches, the counter and the memory of one agent's aids."""

    def __init__(self, disabled: Iterable[str] = (), emit: EventSink | None = None) -> None:
        self.disabled = frozenset(disabled)
        unknown = sorted(self.disabled - NAMES)
        if unknown:
            raise UnknownAid(f"unknown aid {', '.join(unknown)} in disable_aids (mzagent config lists the names)")
        self._emit = emit
        self.counts: Counter[str] = Counter()
        self.state = AidState()
        """What the aids remember of the session's work (the agent feeds it its events)."""

    def on(self, name: str) -> bool:
        """Whether the aid may act; asking about a name not in the catalogue is a bug."""
        if name not in NAMES:
            raise KeyError(name)
        return name not in self.disabled

    def fired(self, name: str) -> None:
        """The aid acted: counted, and reported as an event."""
        self.counts[name] += 1
        if self._emit is not None:
            self._emit(AidFired(name, _POINTS[name]))

    def note(self, name: str, text: str) -> str:
        """`text` if the aid is on (a firing), else "": for aids that only add a note."""
        if not text or not self.on(name):
            return ""
        self.fired(name)
        return text
