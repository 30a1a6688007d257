"""Pick one item from a list (sessions to reopen, writes to undo): returns its id, or None on Esc."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from mzagent_tui.agent.safety.textsafe import for_display


class ChooseScreen(ModalScreen[str | None]):
    AUTO_FOCUS = "#choose-list"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="choose.cancel")]

    def __init__(self, title: str, items: list[tuple[str, str]]) -> None:
        """`items` are (label, id) pairs; labels are untrusted (file names, tasks): plain text, control characters removed."""
        super().__init__()
        self.title_text = title
        self.items = items

    def compose(self) -> ComposeResult:
        with Vertical(id="choose-dialog"):
            yield Label(Text(f"{self.title_text} — Enter chooses, Esc cancels"), id="choose-title")
            yield OptionList(*(Option(Text(for_display(label)), id=item_id) for label, item_id in self.items), id="choose-list")

    @on(OptionList.OptionSelected, "#choose-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
