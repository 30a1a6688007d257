"""Syntax highlighting through pygments (via Rich), imported on first use to keep start-up light."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from mzagent_tui.agent.safety.textsafe import for_display


def guess_lexer(path: str, code: str) -> str:
    from rich.syntax import Syntax

    return Syntax.guess_lexer(path, code)


def highlight(code: str, lexer: str, line_numbers: bool = False, word_wrap: bool = True) -> RenderableType:
    """Untrusted code, control sequences removed, highlighted in the terminal's own colours."""
    from rich.syntax import Syntax

    return Syntax(for_display(code), lexer, word_wrap=word_wrap, line_numbers=line_numbers, theme="ansi_dark", background_color="default")


def highlighted(code: str, lexer: str) -> Text:
    """`highlight` as a Text, for an entry that draws its own lines (one widget instead of two);
    no background of its own, so the entry's (a search hit's) shows through."""
    from rich.syntax import Syntax

    shown = for_display(code)
    text = Syntax(shown, lexer, theme="ansi_dark").highlight(shown)
    text.rstrip_end(len(text.plain.rstrip("\n")))
    return text
