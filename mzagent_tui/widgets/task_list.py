"""The agent's task list above the task box: one line per step, ☐ pending, ◐ in progress, ☑ done.

It shows the last `TaskListUpdated` of the conversation, live or reopened, and is hidden while
there is none (or the list is empty). Step texts come from the model: plain `Text`, never markup.
A long list shows the steps around the one in progress and counts the others.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from mzagent_tui.agent.event_text import TASK_MARKS
from mzagent_tui.agent.safety.textsafe import for_display

MAX_SHOWN = 8
"""Steps on screen at most; the transcript keeps its room."""
_STYLES = {"pending": "", "in_progress": "bold", "done": "dim"}


class TaskListView(Static):
    steps: reactive[tuple[tuple[str, str], ...]] = reactive(tuple, layout=True)
    """(text, status) per step, replaced whole with each update."""

    def show(self, steps: list[dict[str, str]]) -> None:
        self.steps = tuple((step.get("step", ""), step.get("status", "")) for step in steps)

    def watch_steps(self, steps: tuple[tuple[str, str], ...]) -> None:
        self.display = bool(steps)

    def render(self) -> Text:
        steps = self.steps
        done = sum(status == "done" for _, status in steps)
        text = Text(f"Task list · {done} of {len(steps)} done", style="bold")
        start = _window_start(steps)
        shown = steps[start:start + MAX_SHOWN]
        if start:
            text.append(f"\n  … {start} more above", style="dim")
        for step, status in shown:
            text.append("\n")
            text.append(f"{TASK_MARKS.get(status, '?')} {for_display(' '.join(step.split()))}", style=_STYLES.get(status, ""))
        hidden = len(steps) - start - len(shown)
        if hidden:
            text.append(f"\n  … {hidden} more", style="dim")
        return text


def _window_start(steps: tuple[tuple[str, str], ...]) -> int:
    """The first step shown: the list's start, or, for a long list, one done step before the first
    step not done, so the current work is on screen."""
    if len(steps) <= MAX_SHOWN:
        return 0
    current = next((index for index, (_, status) in enumerate(steps) if status != "done"), len(steps))
    return max(0, min(current - 1, len(steps) - MAX_SHOWN))
