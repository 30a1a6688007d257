"""The line above the footer: state, step count, tokens, context fill, cost and elapsed time."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static


class RunStatus(Static):
    state: reactive[str] = reactive("idle")
    step: reactive[int] = reactive(0)
    max_steps: reactive[int] = reactive(0)
    usage: reactive[str] = reactive("tokens 0 in / 0 out")
    """The meter's summary: tokens, context fill, cost."""
    elapsed: reactive[float] = reactive(0.0)
    queued: reactive[int] = reactive(0)
    mode: reactive[str] = reactive("ask")

    def render(self) -> Text:
        text = Text()
        if self.mode == "yolo":
            text.append(" YOLO: COMMANDS RUN WITHOUT ASKING ", style="bold reverse red")
            text.append("  ")
        elif self.mode == "auto-safe":
            text.append("auto-safe  ", style="bold")
        text.append(f"● {self.state}", style="bold")
        if self.max_steps:
            text.append(f"   step {self.step}/{self.max_steps}")
        text.append(f"   {self.usage}")
        text.append(f"   {int(self.elapsed) // 60}:{int(self.elapsed) % 60:02d}")
        if self.queued:
            text.append(f"   {self.queued} task(s) queued", style="bold")
        return text
