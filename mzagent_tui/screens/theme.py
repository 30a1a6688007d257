"""Choose the app's theme: the highlighted theme is shown at once behind the dialog, Enter keeps
it and returns its name, Esc puts the theme that was on back and returns None.

Previewing while moving through the list is how a theme is judged: by the transcript it colours,
not by its name. The caller saves the choice; this screen only shows and returns it.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option


class ThemeScreen(ModalScreen[str | None]):
    AUTO_FOCUS = "#theme-list"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="theme.cancel")]

    def __init__(self, names: list[str]) -> None:
        """`names`: the themes to offer, in order (the app's `available_themes`)."""
        super().__init__()
        self.names = names
        self._before = ""
        """The theme on when the dialog opened, put back on Esc."""

    def compose(self) -> ComposeResult:
        self._before = self.app.theme
        with Vertical(id="theme-dialog"):
            yield Label(Text("Theme — ↑↓ shows each one, Enter keeps it (saved in your config), Esc cancels"), id="theme-title")
            yield OptionList(*(Option(self._label(name), id=name) for name in self.names), id="theme-list")

    def _label(self, name: str) -> Text:
        theme = self.app.get_theme(name)
        shade = "dark" if theme is None or theme.dark else "light"
        current = "  (current)" if name == self.app.theme else ""
        return Text.assemble(name, (f"  {shade}{current}", "dim"))

    def on_mount(self) -> None:
        if self._before in self.names:
            self.query_one(OptionList).highlighted = self.names.index(self._before)

    @on(OptionList.OptionHighlighted, "#theme-list")
    def _preview(self, event: OptionList.OptionHighlighted) -> None:
        self.app.theme = self.names[event.option_index]

    @on(OptionList.OptionSelected, "#theme-list")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        name = self.names[event.option_index]
        self.app.theme = name
        self.dismiss(name)

    def action_cancel(self) -> None:
        self.app.theme = self._before
        self.dismiss(None)
