"""The list above the task box while a `/` command or an `@` file is typed.

It never takes the focus: the task box keeps the keys and moves its highlight (Up/Down), takes
the highlighted item (Tab, Enter) or closes it (Esc).
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from mzagent_tui.agent.safety.textsafe import for_display
from mzagent_tui.task_completions import Completion, Token


class CompletionMenu(OptionList):
    can_focus = False

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.items: list[Completion] = []
        self.token: Token | None = None
        self.display = False

    @property
    def is_open(self) -> bool:
        return self.display and bool(self.items)

    def show(self, token: Token, items: list[Completion]) -> None:
        """List `items` for `token` (none: the menu closes). Labels are untrusted (file names): plain text."""
        self.token, self.items = token, items
        self.clear_options()
        if not items:
            self.display = False
            return
        self.add_options(Option(_label(item)) for item in items)
        self.highlighted = 0
        self.display = True

    def hide(self) -> None:
        self.display = False
        self.items, self.token = [], None

    def move(self, step: int) -> None:
        if self.items:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.items)

    @property
    def chosen(self) -> Completion | None:
        if not self.is_open or self.highlighted is None:
            return None
        return self.items[self.highlighted]


def _label(item: Completion) -> Text:
    text = Text(for_display(item.label), style="bold")
    if item.detail:
        text.append("  " + for_display(item.detail), style="dim")
    return text
