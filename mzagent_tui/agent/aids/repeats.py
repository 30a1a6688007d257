"""Repeats: what a run did since the last file change, and which answers a reminder sent back.

The state behind four aids — `repeat_reask` (a reply repeating a call, or an answer a reminder
called a guess, is asked for again), `repeat_note`, `repeated_failure` and `stuck` — in one
object, fed by the loop after each call and each sent-back answer.
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
REPEAT_NOTE = "you already did exactly this and got the same result. Do something different, or give the final answer."
REPEATED_FAILURE = (
    "{tool} has now failed {times} times with this same result, each call a little different. The changes you are "
    "making do not touch the cause: read the error above again, look at the file or folder it names, and try another way."
)
"""A failure noticed by its outcome, not only by identical calls: a small model sent the same
broken write again and again, changing a word each time, and the identical-call check never fired."""

_VOLATILE = re.compile(r"\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)?\s?(?:s|ms|sec|seconds)\b|command-\d+\.log")
"""What differs between two runs of one command with the same outcome: object addresses in
messages (pip's retries), timings ("3 failed in 0.72s"), the file the full output went to."""


def plain(answer: str) -> str:
    """An answer with its spacing made uniform, to tell a copy from a new answer."""
    return " ".join(answer.split())


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
    unchanged: list[tuple[str, str]] = field(default_factory=list)
    """The calls since the last file change, less those that failed before a file was first
    seen: a write refused because its file had not been read is the right call once it has."""
    failed: set[tuple[str, str]] = field(default_factory=set)
    """Those of them that failed."""
    reminded: set[str] = field(default_factory=set)
    """Final answers a reminder called a guess or an error, as `plain` has them, with an action
    run since, and those claiming a change a reminder found undone, with no file changed since."""
    awaiting: set[str] = field(default_factory=set)
    """Guesses with no action run since: given again, they stand."""
    contradicted: set[str] = field(default_factory=set)
    """Claims found undone, with no file changed since: after a change, the claim may be true."""

    def why_ask_again(self, tool: str | None, args: list[Any], answer: str | None) -> str | None:
        """Why a reply should be dropped and asked for again, or None. A small model went round
        "run the tests, reinstall pytest, run the tests"; told to run the tests, another ran them
        and copied its earlier wrong answer; a third answered "I added the section" twice with
        the file unchanged. An answer is asked again for once (it is taken out here)."""
        if answer is not None:
            if plain(answer) not in self.reminded:
                return None
            self.reminded.discard(plain(answer))
            return "the model gave again, word for word, the answer a reminder had called a guess or found untrue"
        call = (tool or "", repr(args))
        if call not in self.unchanged:
            return None
        which = "last action" if self.unchanged[-1] == call else "action from an earlier step"
        return f"the model repeated its {which} ({tool}) word for word, with no file changed since"

    def answer_sent_back(self, answer: str, guessed: bool, contradicted: bool) -> None:
        if contradicted:
            self.contradicted.add(plain(answer))
            self.reminded.add(plain(answer))
        elif guessed:
            self.awaiting.add(plain(answer))

    def call_done(self, tool: str, args: list[Any], result: str, ok: bool, files_changed: bool, files_seen: bool) -> Seen:
        """Record a call's outcome; how often it was seen before."""
        self.reminded |= self.awaiting
        self.awaiting.clear()
        key = (tool, repr(args), comparable(result))
        seen = Seen(self.recent.count(key), 0 if ok else sum(1 for t, _, r in self.recent if (t, r) == (key[0], key[2])))
        self.recent = (self.recent + [key])[-STUCK_WINDOW:]
        if files_changed:
            self.unchanged, self.failed = [], set()
            self.reminded -= self.contradicted
            self.contradicted.clear()
            return seen
        if files_seen:
            self.unchanged = [call for call in self.unchanged if call not in self.failed]
        self.unchanged.append(key[:2])
        if not ok:
            self.failed.add(key[:2])
        return seen
