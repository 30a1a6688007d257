"""Pick a past session of this project to reopen: returns its folder, or None on Esc."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from mzagent_tui.agent.history import SessionHistory
from mzagent_tui.session_commands import session_line


class SessionPickerScreen(ModalScreen[Path | None]):
    AUTO_FOCUS = "#sessions-list"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="sessions.cancel")]

    def __init__(self, sessions: list[SessionHistory]) -> None:
        super().__init__()
        self.sessions = sessions

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-dialog"):
            yield Label(Text(f"Reopen a session ({len(self.sessions)}, most recent first) — Enter opens, Esc cancels"), id="sessions-title")
            yield OptionList(*(Option(Text(session_line(s)), id=str(s.folder)) for s in self.sessions), id="sessions-list")

    @on(OptionList.OptionSelected, "#sessions-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(Path(event.option.id) if event.option.id else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
