"""The task box: Enter submits, Up/Down recall earlier tasks, huge pastes are cut with a notice."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input

MAX_TASK_CHARS = 20_000


class TaskInput(Input):
    BINDINGS = [
        Binding("up", "history(-1)", "Previous task", show=False, id="task.previous"),
        Binding("down", "history(1)", "Next task", show=False, id="task.next"),
    ]

    def __init__(self, **kwargs: object) -> None:
        super().__init__(max_length=MAX_TASK_CHARS, **kwargs)  # type: ignore[arg-type]
        self.history: list[str] = []
        self._cursor = 0

    class Typed(Message):
        """The user is typing in the box: a key other than Enter (which sends the task and ends the typing)."""

    def on_key(self, event: events.Key) -> None:
        if event.key != "enter":
            self.post_message(self.Typed())

    def remember(self, task: str) -> None:
        if not self.history or self.history[-1] != task:
            self.history.append(task)
        self._cursor = len(self.history)

    def action_history(self, step: int) -> None:
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
