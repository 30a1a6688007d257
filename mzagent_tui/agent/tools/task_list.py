"""`update_plan`: the task list the agent keeps and the user watches, as Codex's tool of that name.

The model sends the whole list each time (each step's text and status); `TaskList` checks it,
keeps it and reports it as one `TaskListUpdated` event, which the app's checklist, the session
log, the export, `--json` and ACP's `plan` update all read. A wrong list changes nothing and the
model is told exactly what was wrong, as for any tool's bad input.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from typing import Any

from mzagent_tui.agent.events import TASK_STATUSES, EventSink, TaskListUpdated
from mzagent_tui.agent.ground.errors import ToolError
from mzagent_tui.agent.tools.registry import Tool

MAX_STEPS = 30
MAX_STEP_CHARS = 300
"""A step is a line of a checklist, not a paragraph."""
EXAMPLE = '[{"step": "Find where options are parsed", "status": "done"}, {"step": "Add the --verbose flag", "status": "in_progress"}, {"step": "Run the tests", "status": "pending"}]'
_SPACES = re.compile(r"\s+")
_STATUSES = ", ".join(f'"{status}"' for status in TASK_STATUSES[:-1]) + f' or "{TASK_STATUSES[-1]}"'
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "steps": {
            "type": "array",
            "description": "The whole task list, in order; at most one step in_progress.",
            "items": {
                "type": "object",
                "properties": {"step": {"type": "string"}, "status": {"type": "string", "enum": list(TASK_STATUSES)}},
                "required": ["step", "status"],
            },
        }
    },
    "required": ["steps"],
}
"""The native protocol's parameters: some APIs refuse an array without `items`."""
DOC = (
    "Keep a task list for a task of several steps, and keep it current: each call replaces the "
    "whole list, so send every step each time with its status, and mark a step done as soon as it is."
)
DETAILS = f"steps is a list such as {EXAMPLE}; status is {_STATUSES}; at most one step is in_progress; [] clears the list."


class TaskList:
    """The current list (what the last good call sent) and the tool that replaces it."""

    def __init__(self, emit: EventSink, steps: Sequence[dict[str, str]] = ()) -> None:
        """`steps` continues a logged session's list (its last `TaskListUpdated`)."""
        self._emit = emit
        self.steps: list[dict[str, str]] = [dict(step) for step in steps]

    def update_plan(self, steps: list[dict[str, str]]) -> str:
        self.steps = checked(steps)
        event = TaskListUpdated([dict(step) for step in self.steps])
        self._emit(event)
        if not self.steps:
            return "Task list cleared."
        return f"Task list updated: {len(self.steps)} step{'s' if len(self.steps) != 1 else ''} ({event.counts()})."

    def tool(self) -> Tool:
        """The registry's entry, with a schema that says what each step holds."""
        return Tool("update_plan", self.update_plan, inspect.signature(self.update_plan, eval_str=True), DOC, SCHEMA, DETAILS)


def checked(steps: Any) -> list[dict[str, str]]:
    """The steps as kept (each text on one line), or ToolError saying what is wrong and how to write it."""
    if not isinstance(steps, list):
        raise ToolError("plan.not_a_list", kind=_kind(steps), example=EXAMPLE)
    if len(steps) > MAX_STEPS:
        raise ToolError("plan.too_many", count=len(steps), limit=MAX_STEPS)
    kept = []
    for number, item in enumerate(steps, start=1):
        if not isinstance(item, dict):
            raise ToolError("plan.step_not_an_object", number=number, kind=_kind(item))
        unknown = sorted(str(key) for key in item if key not in ("step", "status"))
        if unknown:
            raise ToolError("plan.step_unknown_keys", number=number, keys=", ".join(repr(key) for key in unknown))
        text, status = item.get("step"), item.get("status")
        if not isinstance(text, str) or not text.strip():
            raise ToolError("plan.step_no_text", number=number)
        if len(text) > MAX_STEP_CHARS:
            raise ToolError("plan.step_too_long", number=number, length=len(text), limit=MAX_STEP_CHARS)
        if status not in TASK_STATUSES:
            raise ToolError("plan.step_status", number=number, status=status, statuses=_STATUSES)
        kept.append({"step": _SPACES.sub(" ", text).strip(), "status": status})
    running = [str(number) for number, step in enumerate(kept, start=1) if step["status"] == "in_progress"]
    if len(running) > 1:
        named = f"{', '.join(running[:-1])} and {running[-1]}"
        raise ToolError("plan.many_in_progress", named=named)
    return kept


def _kind(value: Any) -> str:
    """How a wrong value is named to the model: `a string ("...")`, `a number`."""
    names = {str: "a string", int: "a number", float: "a number", bool: "true/false", dict: "an object", list: "a list", type(None): "nothing (None)"}
    name = names.get(type(value), type(value).__name__)
    if isinstance(value, str):
        return f"{name} ({value[:40]!r}{'…' if len(value) > 40 else ''})"
    return name
