"""Repeats: the last calls of a run and their results, the state behind the `stuck` aid, fed by
the loop after each call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mzagent_tui.agent.ground.words import say


def stuck_note(repeats: int) -> str:
    """What the model is told when it is stuck (Settings.stuck_repeats)."""
    return say("aid.stuck", repeats=repeats)


def plan_idle_note() -> str:
    """What a model that keeps rewriting its task list is told (the `plan.idle` aid): a 1.5B model
    toggled three steps between pending and done until it was stuck, then answered that it had done them."""
    return say("aid.plan_idle")


def idle_plan(tool: str, previous: str | None) -> bool:
    """The task list updated right after an update: nothing was done between."""
    return tool == previous == "update_plan"


_VOLATILE = re.compile(r"\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)?\s?(?:s|ms|sec|seconds)\b|command-\d+\.log")
"""What differs between two runs of one command with the same outcome: object addresses in
messages (pip's retries), timings ("3 failed in 0.72s"), the file the full output went to."""


def comparable(result: str) -> str:
    """A tool result with its volatile parts blanked, so that a repeat is seen as one."""
    return _VOLATILE.sub("#", result)


@dataclass
class Repeats:
    window: int = 6
    """Stuck: the same action with the same result N times within the last 2N steps (catches A, B, A, B, A)."""
    recent: list[tuple[str, str, str]] = field(default_factory=list)
    """(tool, arguments, comparable result) of the last `window` calls."""

    def last_tool(self) -> str | None:
        """The tool of the last call recorded (None: none yet)."""
        return self.recent[-1][0] if self.recent else None

    def call_done(self, tool: str, args: list[Any], result: str) -> int:
        """Record a call's outcome; how often the same call with the same result was seen before,
        within the window."""
        key = (tool, repr(args), comparable(result))
        seen = self.recent.count(key)
        self.recent = (self.recent + [key])[-self.window :]
        return seen
