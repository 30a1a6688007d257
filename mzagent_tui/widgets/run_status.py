"""The line above the footer: state, step count, tokens, context fill, cost and elapsed time."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static


@dataclass(frozen=True)
class RunState:
    """A conversation's run as the status line shows it (replaced whole on each change)."""

    state: str = "idle"
    step: int = 0
    max_steps: int = 0
    usage: str = "tokens 0 in / 0 out"
    """The meter's summary: tokens, context fill, cost."""
    elapsed: float = 0.0
    queued: int = 0
    background: int = 0
    """Background commands running (ctrl+g lists them)."""


class RunStatus(Static):
    run: reactive[RunState] = reactive(RunState)
    mode: reactive[str] = reactive("ask")

    def render(self) -> Text:
        run = self.run
        text = Text()
        if self.mode == "yolo":
            text.append(" YOLO: COMMANDS RUN WITHOUT ASKING ", style="bold reverse red")
            text.append("  ")
        elif self.mode == "auto-safe":
            text.append("auto-safe  ", style="bold")
        elif self.mode == "plan":
            text.append(" PLAN: NOTHING IS CHANGED ", style="bold reverse")
            text.append("  ")
        text.append(f"● {run.state}", style="bold")
        if run.max_steps:
            text.append(f"   step {run.step}/{run.max_steps}")
        text.append(f"   {run.usage}")
        text.append(f"   {int(run.elapsed) // 60}:{int(run.elapsed) % 60:02d}")
        if run.queued:
            text.append(f"   {run.queued} task(s) queued", style="bold")
        if run.background:
            text.append(f"   {run.background} in background (ctrl+g)", style="bold")
        return text
