"""The line above the footer: state, step count, tokens in/out and elapsed time of the run."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static


class RunStatus(Static):
    state: reactive[str] = reactive("idle")
    step: reactive[int] = reactive(0)
    max_steps: reactive[int] = reactive(0)
    tokens_in: reactive[int] = reactive(0)
    tokens_out: reactive[int] = reactive(0)
    estimated: reactive[bool] = reactive(False)
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
        approx = "~" if self.estimated else ""
        text.append(f"   tokens {approx}{self.tokens_in:,} in / {approx}{self.tokens_out:,} out")
        text.append(f"   {int(self.elapsed) // 60}:{int(self.elapsed) % 60:02d}")
        if self.queued:
            text.append(f"   {self.queued} task(s) queued", style="bold")
        return text
