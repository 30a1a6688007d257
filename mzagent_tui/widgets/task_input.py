"""The task box: Enter submits, Up/Down recall earlier tasks, huge pastes are cut with a notice.

While the completion menu is open, Up/Down move its highlight, Tab and Enter take the highlighted
item into the text, and Esc closes it (otherwise Esc cancels the run, as everywhere).
"""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input

from mzagent_tui.widgets.completion_menu import CompletionMenu

MAX_TASK_CHARS = 20_000


class TaskInput(Input):
    BINDINGS = [
        Binding("up", "history(-1)", "Previous task", show=False, id="task.previous"),
        Binding("down", "history(1)", "Next task", show=False, id="task.next"),
        Binding("tab", "complete", "Complete", show=False, id="task.complete"),
        Binding("escape", "close_menu", "Close the list", show=False, id="task.close_menu"),
    ]

    def __init__(self, **kwargs: object) -> None:
        super().__init__(max_length=MAX_TASK_CHARS, **kwargs)  # type: ignore[arg-type]
        self.history: list[str] = []
        self._cursor = 0
        self.menu: CompletionMenu | None = None
        """The completion menu this box drives (set by its owner)."""

    class Typed(Message):
        """The user is typing in the box: a key other than Enter (which sends the task and ends the typing)."""

    def on_key(self, event: events.Key) -> None:
        if event.key != "enter":
            self.post_message(self.Typed())

    def remember(self, task: str) -> None:
        if not self.history or self.history[-1] != task:
            self.history.append(task)
        self._cursor = len(self.history)

    @property
    def _menu_open(self) -> bool:
        return self.menu is not None and self.menu.is_open

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Tab and Esc belong to the menu only while it is open; otherwise they do what they do elsewhere."""
        if action in ("complete", "close_menu"):
            return self._menu_open
        return True

    def action_complete(self) -> bool:
        """Put the highlighted item in place of the word being completed; False when there is none."""
        if self.menu is None or (item := self.menu.chosen) is None or (token := self.menu.token) is None:
            return False
        self.value = self.value[: token.start] + item.value + self.value[token.end :]
        self.cursor_position = token.start + len(item.value)
        self.menu.hide()
        return True

    def action_close_menu(self) -> None:
        if self.menu is not None:
            self.menu.hide()

    async def action_submit(self) -> None:
        """Enter takes a completion first, unless the text already is it (`/new` typed in full)."""
        if self._menu_open and self.menu is not None and (token := self.menu.token) is not None:
            typed = self.value[token.start : token.end]
            if all(typed != item.value.rstrip() for item in self.menu.items):
                self.action_complete()
                return
            self.menu.hide()
        await super().action_submit()

    def action_history(self, step: int) -> None:
        if self._menu_open and self.menu is not None:
            self.menu.move(step)
            return
        if not self.history:
            return
        self._cursor = max(0, min(len(self.history), self._cursor + step))
        self.value = self.history[self._cursor] if self._cursor < len(self.history) else ""
        self.cursor_position = len(self.value)

    def _on_paste(self, event: events.Paste) -> None:
        room = MAX_TASK_CHARS - len(self.value)
        text = " ".join(event.text.split("\n"))
        if len(text) > room:
            self.notify(f"The paste was cut to {room:,} of {len(text):,} characters.", severity="warning")
            text = text[: max(0, room)]
        if text:
            self.insert_text_at_cursor(text)
        event.stop()
