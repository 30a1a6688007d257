"""Find in the transcript (ctrl+f): the app runs in the alternate screen, so the terminal's own
scrollback and search cannot see it.

The bar only reports what the user wants (`Find` with a query and a direction, `Closed`); the
app asks the transcript for hits and tells the bar what to show in its counter.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static


class SearchBar(Horizontal):
    BINDINGS = [
        Binding("escape", "close", "Close search", id="search.close"),
        Binding("up,shift+f3", "find(-1)", "Older hit", id="search.older"),
        Binding("down,f3", "find(1)", "Newer hit", id="search.newer"),
    ]

    @dataclass
    class Find(Message):
        """Search for `query`; `step` is 0 for a new query, -1 for an older hit, 1 for a newer one."""

        query: str
        step: int

    class Closed(Message):
        pass

    def compose(self) -> ComposeResult:
        yield Input(placeholder="Find in transcript (Enter/↑ older hit, ↓ newer, Esc closes)", id="search-input")
        yield Static("", id="search-count")

    def open(self) -> None:
        self.display = True
        self.query_one(Input).focus()

    def show_count(self, current: int, total: int) -> None:
        """`3/12`, `12 found` (none selected yet), or `no match`; `current` counts from 1."""
        query = self.query_one(Input).value
        text = "" if not query else "no match" if total == 0 else f"{current}/{total}" if current else f"{total} found"
        self.query_one("#search-count", Static).update(Text(text))

    @on(Input.Changed, "#search-input")
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Find(event.value, 0))

    @on(Input.Submitted, "#search-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Find(event.value, -1))

    def action_find(self, step: int) -> None:
        self.post_message(self.Find(self.query_one(Input).value, step))

    def action_close(self) -> None:
        self.display = False
        self.post_message(self.Closed())
