"""Repeats: the last calls of a run and their results.

The state behind two aids, `repeated_failure` and `stuck`, in one object fed by the loop after
each call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

STUCK_REPEATS = 3
STUCK_WINDOW = 6
"""Stuck: the same action with the same result 3 times within the last 6 steps (catches A, B, A, B, A)."""
STUCK_NOTE = (
    f"you have now done exactly this {STUCK_REPEATS} times with the same result, and it will not change. "
    "Stop calling tools: give your final answer now from what you have seen, and say what is left undone, if anything."
)
REPEATED_FAILURE = (
    "{tool} has now failed {times} times with this same result, each call a little different. The changes you are "
    "making do not touch the cause: read the error above again, look at the file or folder it names, and try another way."
)
"""A failure noticed by its outcome, not only by identical calls: a small model sent the same
broken write again and again, changing a word each time, and the identical-call check never fired."""

_VOLATILE = re.compile(r"\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)?\s?(?:s|ms|sec|seconds)\b|command-\d+\.log")
"""What differs between two runs of one command with the same outcome: object addresses in
messages (pip's retries), timings ("3 failed in 0.72s"), the file the full output went to."""


def comparable(result: str) -> str:
    """A tool result with its volatile parts blanked, so that a repeat is seen as one."""
    return _VOLATILE.sub("#", result)


@dataclass(frozen=True)
class Seen:
    """How often this call's outcome was seen before, within the window."""

    same_call: int
    """The same call with the same result."""
    same_failure: int
    """The same tool failing with the same result, whatever its arguments."""


@dataclass
class Repeats:
    recent: list[tuple[str, str, str]] = field(default_factory=list)
    """(tool, arguments, comparable result) of the last STUCK_WINDOW calls."""

    def call_done(self, tool: str, args: list[Any], result: str, ok: bool) -> Seen:
        """Record a call's outcome; how often it was seen before."""
        key = (tool, repr(args), comparable(result))
        seen = Seen(self.recent.count(key), 0 if ok else sum(1 for t, _, r in self.recent if (t, r) == (key[0], key[2])))
        self.recent = (self.recent + [key])[-STUCK_WINDOW:]
        return seen
