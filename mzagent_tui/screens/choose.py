"""Pick one item from a list (sessions to reopen, writes to undo, a task to rewind to): returns
the chosen item's value, of whatever type the caller gave, or None on Esc."""

from __future__ import annotations

from typing import TypeVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from mzagent_tui.agent.safety.textsafe import for_display

T = TypeVar("T")


class ChooseScreen(ModalScreen[T | None]):
    AUTO_FOCUS = "#choose-list"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="choose.cancel")]

    def __init__(self, title: str, items: list[tuple[str, T]]) -> None:
        """`items` are (label, value) pairs; labels are untrusted (file names, tasks): plain text, control characters removed."""
        super().__init__()
        self.title_text = title
        self.items = items

    def compose(self) -> ComposeResult:
        with Vertical(id="choose-dialog"):
            yield Label(Text(f"{self.title_text} — Enter chooses, Esc cancels"), id="choose-title")
            yield OptionList(*(Option(Text(for_display(label))) for label, _ in self.items), id="choose-list")

    @on(OptionList.OptionSelected, "#choose-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.items[event.option_index][1])

    def action_cancel(self) -> None:
        self.dismiss(None)
