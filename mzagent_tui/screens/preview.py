"""A read-only preview of a project file: highlighted, numbered, guarded against huge or binary files."""

from __future__ import annotations

from pathlib import Path

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from mzagent_tui.agent.textsafe import for_display

PREVIEW_MAX_BYTES = 256 * 1024


def load_preview(path: Path) -> Syntax | Text:
    """Highlighted text, or a plain explanation when the file cannot be shown."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            data = handle.read(PREVIEW_MAX_BYTES)
    except OSError as exc:
        return Text(f"cannot read this file: {exc.strerror}")
    if b"\x00" in data[:8192]:
        return Text(f"binary file ({size:,} bytes), not shown")
    code = for_display(data.decode("utf-8", errors="replace"))
    if size > PREVIEW_MAX_BYTES:
        code += f"\n… showing the first {PREVIEW_MAX_BYTES // 1024} KB of {size:,} bytes"
    lexer = Syntax.guess_lexer(str(path), code)
    return Syntax(code, lexer, line_numbers=True, word_wrap=False, theme="ansi_dark", background_color="default")


class PreviewScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "close", "Close", id="preview.close"),
        Binding("q", "close", "Close", show=False, id="preview.quit"),
    ]

    def __init__(self, path: Path, title: str) -> None:
        super().__init__()
        self.path = path
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(id="preview-dialog"):
            yield Label(Text(for_display(self.title_text)), id="preview-title")
            with VerticalScroll(id="preview-body"):
                yield Static(load_preview(self.path), id="preview-code")

    def on_mount(self) -> None:
        self.query_one("#preview-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
