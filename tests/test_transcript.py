"""What search matches in events behind a marker must be what their entries show."""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.events import (
    Action,
    ApprovalAnswered,
    ApprovalAsked,
    Error,
    Event,
    FileChanged,
    FinalAnswer,
    FormatError,
    ModelInfo,
    Notice,
    Observation,
    ReplyFinished,
    RetryWait,
    StepStarted,
    Stopped,
    StopReason,
    TaskStarted,
    TextDelta,
    ThinkingDelta,
    Thought,
    Undone,
    Usage,
)
from mzagent_tui.widgets.transcript import entries_for, event_text

ROOT = Path("/proj")

EVENTS: list[Event] = [
    TaskStarted("fix the parser"),
    StepStarted(1, 10),
    ThinkingDelta("hmm quietly"),
    TextDelta("<thought>par"),
    ReplyFinished("<thought>parse</thought>", "stop"),
    Thought("look at parser.py first"),
    Action("read_file", ["/proj/parser.py"]),
    Action("write_to_file", ["/proj/out.py", "print('written body')\n"]),
    Action("run_terminal_command", ["pytest -q tests"]),
    Action("custom_tool", ["alpha", 3]),
    ApprovalAsked("pytest -q tests", "/proj", "not on the safe list"),
    ApprovalAnswered(True, "pytest -q tests"),
    ApprovalAnswered(True, "make", "approved after an edit"),
    ApprovalAnswered(False, "rm -rf build", "not that folder"),
    ApprovalAnswered(False, "rm -rf build"),
    Observation("run_terminal_command", "3 passed in 0.1s\n", True, 0),
    FileChanged("/proj/out.py", True, None, "0" * 64),
    Undone("/proj/out.py", 1, True),
    FinalAnswer("The parser **works** now."),
    FormatError("no action or final answer", 1),
    RetryWait(2.0, 1, 3, "server busy (HTTP 503)"),
    Usage(100, 20),
    ModelInfo(32768),
    Notice("context shrunk"),
    Error("the endpoint refused the key"),
    Stopped(StopReason.MAX_STEPS, "reached the step limit", 10),
    Stopped(StopReason.FINAL_ANSWER, "final answer", 3),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda event: f"{event.kind}")
def test_event_text_is_what_its_entries_show(event: Event) -> None:
    entries = entries_for(event, ROOT)
    text = event_text(event, ROOT)
    assert bool(text) == bool(entries), "an event shows text exactly when it has an entry"
    for word in text.split():
        assert any(entry.matches(word.casefold()) for entry in entries), word
