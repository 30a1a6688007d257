"""A read-only preview of a project file: highlighted, numbered, guarded against huge or binary files.

Highlighting renders every line at once, so only files up to `HIGHLIGHT_MAX_LINES` get it;
bigger text (and full command output) goes to a `Log`, which only renders what is visible.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Label, Log, Static

from mzagent_tui.agent.safety.textsafe import for_display
from mzagent_tui.display.highlight import guess_lexer
from mzagent_tui.display.highlight import highlight as highlight_code

PREVIEW_MAX_BYTES = 2 * 1024 * 1024
HIGHLIGHT_MAX_LINES = 2_000


def preview_widget(path: Path, highlight: bool = True) -> Widget:
    """A highlighted view, a plain fast view for big text, or an explanation."""
    try:
        # O_NONBLOCK and a regular-file check: opening a FIFO for reading would freeze the UI.
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                return Static(Text("not a regular file (a pipe, socket or device), not shown"), id="preview-code")
            size = info.st_size
            data = handle.read(PREVIEW_MAX_BYTES)
    except OSError as exc:
        return Static(Text(f"cannot read this file: {exc.strerror}"), id="preview-code")
    if b"\x00" in data[:8192]:
        return Static(Text(f"binary file ({size:,} bytes), not shown"), id="preview-code")
    code = for_display(data.decode("utf-8", errors="replace"))
    if size > PREVIEW_MAX_BYTES:
        code += f"\n… showing the first {PREVIEW_MAX_BYTES // 1024 // 1024} MB of {size:,} bytes"
    lines = code.splitlines()
    if highlight and len(lines) <= HIGHLIGHT_MAX_LINES:
        syntax = highlight_code(code, guess_lexer(str(path), code), line_numbers=True, word_wrap=False)
        return VerticalScroll(Static(syntax, id="preview-code"), id="preview-body")
    log = Log(id="preview-log")
    log.write_lines(lines)
    return log


class PreviewScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "close", "Close", id="preview.close"),
        Binding("q", "close", "Close", show=False, id="preview.quit"),
    ]

    def __init__(self, path: Path, title: str, highlight: bool = True) -> None:
        super().__init__()
        self.path = path
        self.title_text = title
        self.highlight = highlight

    def compose(self) -> ComposeResult:
        with Vertical(id="preview-dialog"):
            yield Label(Text(for_display(self.title_text)), id="preview-title")
            yield preview_widget(self.path, self.highlight)

    def on_mount(self) -> None:
        self.query_one("#preview-dialog").children[-1].focus()

    def action_close(self) -> None:
        self.dismiss(None)
