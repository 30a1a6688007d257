"""A unified diff drawn line by line: a +/- gutter, the line's background, pygments colours.

Built on Textual's line API (`ScrollView.render_line`), so only the lines on screen are styled:
a 5,000-line change costs the same to show as a 5-line one. Each line is lexed on its own, which
is exact for most code and close enough for the rest (a line inside a multi-line string).
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatch
from functools import lru_cache
from pathlib import PurePath

from rich.segment import Segment
from rich.style import Style
from textual import work
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from mzagent_tui.agent.safety.textsafe import for_display


@dataclass(frozen=True)
class DiffStyles:
    """The diff's own colours, read from the theme through app.tcss (`DiffView.COMPONENT_CLASSES`);
    the plain defaults draw a diff without a screen."""

    added: Style = Style()
    """The shade of an added line, to the right edge."""
    removed: Style = Style()
    added_mark: Style = Style(bold=True)
    removed_mark: Style = Style(bold=True)
    hunk: Style = Style()
    header: Style = Style(bold=True)


UNCHANGED_MARK = Style(dim=True)


@lru_cache(maxsize=64)
def lexer_for(name: str):  # noqa: ANN202 - a pygments lexer or None
    """The lexer for a file name, from pygments' built-in table. `get_lexer_for_filename` also
    scans every installed package for plugins: 2 s on the development machine."""
    from pygments.lexers import _mapping, get_lexer_by_name

    for _module, _name, aliases, patterns, _mimes in _mapping.LEXERS.values():
        if aliases and any(fnmatch(name, pattern) for pattern in patterns):
            return get_lexer_by_name(aliases[0], stripnl=False, ensurenl=False)
    return None


@lru_cache(maxsize=1)
def _theme():  # noqa: ANN202 - a Rich syntax theme
    from rich.syntax import Syntax

    return Syntax.get_theme("ansi_dark")


def styled_line(line: str, lexer, styles: DiffStyles) -> list[Segment]:  # noqa: ANN001 - a pygments lexer or None
    """One diff line as segments: headers, hunks and the +/- marks in the theme's colours, code
    coloured by its lexer, an added or removed line on its shade. Built straight from pygments'
    tokens: going through Rich's Text and console costs about twice as much per line."""
    if line.startswith(("+++", "---")):
        return [Segment(line, styles.header)]
    if line.startswith("@@"):
        return [Segment(line, styles.hunk)]
    mark, code = (line[:1], line[1:]) if line[:1] in ("+", "-", " ") else (" ", line)
    shade = _background(line, styles)
    gutter = {"+": styles.added_mark, "-": styles.removed_mark}.get(mark, UNCHANGED_MARK)
    segments = [Segment(mark, gutter + shade)]
    if lexer is None:
        segments.append(Segment(code, shade))
        return segments
    for token, value in lexer.get_tokens(code):
        value = value.rstrip("\n")
        if value:
            segments.append(Segment(value, _token_style(token) + shade))
    return segments


@lru_cache(maxsize=512)
def _token_style(token) -> Style:  # noqa: ANN001 - a pygments token type
    return _theme().get_style_for_token(token)


class DiffView(ScrollView, can_focus=False):
    """The lines of one diff; `height` in CSS decides how many show (the entry collapses it).

    Lines are drawn plain until the file's lexer is loaded on a thread (importing a pygments
    lexer module can take 100 ms), then drawn again in colour. Its colours are component
    classes styled in app.tcss, so a new theme draws the lines again in its colours."""

    COMPONENT_CLASSES = {"diff-view--added", "diff-view--removed", "diff-view--added-mark", "diff-view--removed-mark", "diff-view--hunk", "diff-view--header"}

    def __init__(self, diff: str, path: str, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.lines = for_display(diff).splitlines()
        self.path = path
        self.lexer = None
        self._fills: dict[Style, Style] = {}
        self._styles: DiffStyles | None = None
        """The colours to draw with; None once the styles changed, until read again."""
        self._drawn_with: DiffStyles | None = None
        """The colours the lines in `drawn` have: focus or hover updates styles without changing them."""
        self.drawn: dict[int, Strip] = {}
        """The lines styled so far: only ever those that were on screen."""
        self.virtual_size = Size(max((len(line) for line in self.lines[:2000]), default=1) + 1, len(self.lines))

    def on_mount(self) -> None:
        self._load_lexer()

    @work(thread=True, exclusive=True)
    def _load_lexer(self) -> None:
        lexer = lexer_for(PurePath(self.path).name)
        if lexer is not None:
            self.app.call_from_thread(self._use_lexer, lexer)

    def _use_lexer(self, lexer) -> None:  # noqa: ANN001 - a pygments lexer
        self.lexer = lexer
        self.drawn.clear()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = y + scroll_y
        width = self.size.width
        if index >= len(self.lines):
            return Strip.blank(width, self.rich_style)
        styles = self.diff_styles
        strip = self.drawn.get(index)
        if strip is None:
            strip = self.drawn[index] = Strip(styled_line(self.lines[index], self.lexer, styles))
        return strip.crop(scroll_x, scroll_x + width).extend_cell_length(width, self._fill(self.lines[index]))

    @property
    def diff_styles(self) -> DiffStyles:
        """The theme's colours for the diff, read once until the styles change (a new theme)."""
        if self._styles is None:
            def shade(name: str) -> Style:
                return Style(bgcolor=self.get_component_rich_style(name).bgcolor)

            def part(name: str) -> Style:
                return self.get_component_rich_style(name, partial=True)

            styles = DiffStyles(
                added=shade("diff-view--added"), removed=shade("diff-view--removed"),
                added_mark=part("diff-view--added-mark"), removed_mark=part("diff-view--removed-mark"),
                hunk=part("diff-view--hunk"), header=part("diff-view--header"),
            )
            if styles != self._drawn_with:
                self.drawn.clear()
                self._drawn_with = styles
            self._styles = styles
        return self._styles

    def _fill(self, line: str) -> Style:
        """The style to the right edge: the widget's own, shaded for an added or removed line.
        Read once per shade until the styles change (`rich_style` walks the CSS)."""
        shade = _background(line, self.diff_styles)
        fill = self._fills.get(shade)
        if fill is None:
            fill = self._fills[shade] = self.rich_style + shade
        return fill

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._fills.clear()
        self._styles = None


def _background(line: str, styles: DiffStyles) -> Style:
    """An added or removed line is shaded to the right edge, like the code on it."""
    if line.startswith("+") and not line.startswith("+++"):
        return styles.added
    if line.startswith("-") and not line.startswith("---"):
        return styles.removed
    return Style()

