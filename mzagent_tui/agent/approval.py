"""How the core asks the user: an `Approver` interface and the session's allow rules.

The loop never decides on its own to run a command. It asks a `PolicyApprover`, which first
checks the rules the user granted this session ("always allow `pytest`") and otherwise asks
the front-end's approver (the app's modal dialog, the terminal prompt, or --yes/--no).
Rules fail closed: a command with any shell syntax beyond plain words always asks.
"""

from __future__ import annotations

import re
import shlex
import threading
from dataclasses import dataclass
from typing import Protocol

from mzagent_tui.agent.events import ApprovalAsked, EventSink

MAX_RULE_COMMAND_CHARS = 1000
# Chaining, pipes, redirection, substitution, expansion, grouping, escapes, line breaks.
_SHELL_SYNTAX = re.compile(r"[;&|<>$`(){}\\\n\r\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class ApprovalRequest:
    kind: str
    """"command" for a terminal command, "read_sensitive" for a file that may hold secrets."""
    command: str
    cwd: str
    reason: str = ""
    """Why the model wants it (its thought), shown to the user."""


@dataclass(frozen=True)
class ApprovalDecision:
    approved: bool
    command: str | None = None
    """The command to run when the user edited it; None runs the one asked for."""
    note: str = ""
    """The user's reason (sent to the model on rejection) or the rule that allowed it."""
    always_prefix: str | None = None
    """Allow commands starting with this prefix for the rest of the session."""


class Approver(Protocol):
    def approve(self, request: ApprovalRequest) -> ApprovalDecision: ...


class StaticApprover:
    """Approves or rejects everything: `--yes`, `--no`, and runs without a terminal."""

    def __init__(self, approved: bool, note: str = "") -> None:
        self._decision = ApprovalDecision(approved, note=note)

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return self._decision


def plain_words(command: str) -> list[str] | None:
    """The command's words if it is one simple command with no shell syntax, else None."""
    if len(command) > MAX_RULE_COMMAND_CHARS or _SHELL_SYNTAX.search(command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words or None


class SessionRules:
    """Prefix rules granted with "always allow"; thread-safe because the UI adds them."""

    def __init__(self, prefixes: list[str] | None = None) -> None:
        self._lock = threading.Lock()
        self._prefixes: list[list[str]] = []
        for prefix in prefixes or []:
            self.add(prefix)

    def add(self, prefix: str) -> bool:
        words = plain_words(prefix)
        if not words:
            return False
        with self._lock:
            if words not in self._prefixes:
                self._prefixes.append(words)
        return True

    def match(self, command: str) -> str | None:
        """The rule allowing `command`, or None when it must ask."""
        words = plain_words(command)
        if words is None:
            return None
        with self._lock:
            for prefix in self._prefixes:
                if words[: len(prefix)] == prefix:
                    return " ".join(prefix)
        return None

    @property
    def prefixes(self) -> list[str]:
        with self._lock:
            return [" ".join(p) for p in self._prefixes]


class PolicyApprover:
    """Session rules first, then the front-end's approver; remembers "always allow" answers."""

    def __init__(self, ask: Approver, rules: SessionRules | None = None, emit: EventSink | None = None) -> None:
        self.ask = ask
        self.rules = rules or SessionRules()
        self._emit = emit

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        if request.kind == "command":
            rule = self.rules.match(request.command)
            if rule is not None:
                return ApprovalDecision(True, note=f"allowed by the rule '{rule}'")
        if self._emit is not None:
            self._emit(ApprovalAsked(request.command, request.cwd, request.reason))
        decision = self.ask.approve(request)
        if decision.approved and decision.always_prefix:
            self.rules.add(decision.always_prefix)
        return decision
