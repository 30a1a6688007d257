"""The transcript's entries: one widget per core event, colour-coded by kind.

`entries_for` turns an event into its entries (none for bookkeeping events); it is pure, so a
reopened session's events become entries without the app. All untrusted text goes through
`rich.text.Text` (never markup) after control sequences are removed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult, RenderResult
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible, Log, Static

from mzagent_tui.agent.event_text import action_text, describe, edit_label
from mzagent_tui.agent.events import (
    Action,
    ApprovalAnswered,
    Compacted,
    Event,
    FileChanged,
    FinalAnswer,
    FormatError,
    Observation,
    RetryWait,
    Rewound,
    Stopped,
    TaskListUpdated,
    Undone,
    UserCommand,
    UserCommandOutput,
    call_text,
)
from mzagent_tui.agent.ground.textfiles import lines_label
from mzagent_tui.agent.model.reply_stream import stream_parts, untagged
from mzagent_tui.agent.safety.textsafe import for_display
from mzagent_tui.display.diff_view import DiffView
from mzagent_tui.display.highlight import guess_lexer, highlight, highlighted

if TYPE_CHECKING:
    from textual.widgets.markdown import MarkdownStream

STREAM_TAIL_CHARS = 3000
OBSERVATION_MAX_LINES = 5000
SHORT_OUTPUT_LINES = 12
DIFF_SHOWN_LINES = 30
"""A longer diff is collapsed to this many lines until expanded."""

ICONS = {
    "question": "❯",
    "thinking": "…",
    "thought": "◆",
    "action": "⚙",
    "observation": "↳",
    "final": "✔",
    "error": "✖",
    "notice": "ℹ",
    "streaming": "⋯",
    "change": "±",
}
LABELS = {
    "question": "You",
    "thinking": "Thinking",
    "thought": "Thought",
    "action": "Action",
    "observation": "Observation",
    "final": "Final answer",
    "error": "Error",
    "notice": "Notice",
    "streaming": "Model",
    "change": "Diff",
}


def safe(text: str) -> Text:
    """Untrusted text as a plain Text: no markup, no escape sequences, no bidi overrides."""
    return Text(for_display(text))


class Entry(Widget):
    """A transcript entry: a coloured title line and a body. CSS classes carry the kind.

    An entry whose body is text (`text`: thoughts, commands, short notices, the earlier-entries
    marker) is one widget that draws its title and text itself: Textual's layout and drawing
    work grows with every mounted widget, and a title, a body and their container made an append
    cost about 2.4x what one widget does (bench/transcript.py). An entry whose body is a widget
    (Markdown, a diff, a folded write, a log) composes its title above it.
    """

    COMPONENT_CLASSES = {"entry--title"}
    DEFAULT_CSS = "Entry { width: 1fr; height: auto; overflow: hidden hidden; }"

    def __init__(
        self,
        kind: str,
        *body: Widget,
        title: str | Text | None = None,
        plain: str = "",
        text: Text | None = None,
        text_view: tuple[Static, Text] | None = None,
    ) -> None:
        super().__init__(classes=f"entry -{kind}")
        self.kind = kind
        self.plain = plain
        """The entry's text as the user reads it, for search."""
        self.event: Event | None = None
        """The core event shown; a pruned entry goes back to the transcript's earlier events as this."""
        self._body = body
        self._text = text
        """The body of a one-widget entry; `shown_text` is it as drawn (search may highlight words in it)."""
        self.shown_text = text
        self._text_view = text_view
        """A composed body that is plain text (the widget and its text), so search can highlight the words it found."""
        heading = Text(f"{ICONS[kind]} {LABELS[kind]}", style="bold")
        if title is not None:
            heading.append("  ")
            heading.append(title if isinstance(title, Text) else safe(title))
        self._title = heading

    def compose(self) -> ComposeResult:
        if self._body:
            yield Static(self._title, classes="entry--title")
            yield from self._body

    def render(self) -> RenderResult:
        """The title and the text of a one-widget entry; an entry with widgets draws as any container."""
        if self._body:
            return super().render()
        heading = self._title.copy()
        heading.stylize_before(self.get_component_rich_style("entry--title", partial=True))
        if self.shown_text is None:
            return heading
        return Text.assemble(heading, "\n", self.shown_text)

    def set_text(self, text: Text) -> None:
        """Replace the text of a one-widget entry (a progress notice as a wait goes on)."""
        self._text = self.shown_text = text
        self.refresh(layout=True)

    @property
    def title_text(self) -> str:
        return self._title.plain

    def matches(self, needle: str) -> bool:
        """Case-insensitive search over the title and the text; `needle` is already casefolded."""
        return needle in self._title.plain.casefold() or needle in self.plain.casefold()

    def show_matches(self, query: str) -> None:
        """Highlight `query` in a plain-text body (empty: remove the highlight)."""
        if self._text is not None:
            self.shown_text = _highlighted(self._text, query)
            self.refresh()
        elif self._text_view is not None:
            view, text = self._text_view
            view.update(_highlighted(text, query))


def _highlighted(text: Text, query: str) -> Text:
    if not query:
        return text
    text = text.copy()
    text.highlight_words([query], style="reverse", case_sensitive=False)
    return text


def folded(body: Widget, title: str) -> Collapsible:
    """A collapsed Collapsible that is drawn collapsed from its first frame.

    Textual adds the `-collapsed` class only when the widget has mounted, so a layout before that
    draws the body open; behind a dialog that opens at once (a write asking for approval) that
    frame stays on screen, since a screen under a modal is not laid out again.
    """
    return Collapsible(body, title=title, collapsed=True, classes="-collapsed")


def text_entry(kind: str, text: str, title: str | None = None) -> Entry:
    return Entry(kind, title=title, plain=text, text=safe(text))


class StreamingEntry(Entry):
    """The reply as the model writes it, shown as the entries it will become; replaced by the
    parsed entries when it is done.

    The text inside `<thought>` streams into a Thought entry, inside `<action>` into an Action
    entry, and the final answer into a Markdown widget (only its last block is re-rendered per
    fragment), so a long answer reads as it will look; no tag of the protocol is ever on screen
    (agent/model/reply_stream.py holds back a tag cut in two). A reply with no tags (native
    tool calls answer in plain text) is shown as it comes, dimmed, under "Model".
    """

    def __init__(self) -> None:
        from textual.widgets import Markdown  # markdown-it loads with the first reply, not at start-up

        self.text = ""
        self.thinking = ""
        self._view = Static("", classes="entry-body")
        self._thought = Static("", classes="entry-body")
        self._action = Static("", classes="entry-body")
        self.answer = Markdown("", classes="entry-body")
        self._parts = {
            "thought": Entry("thought", self._thought, plain=""),
            "action": Entry("action", self._action, plain=""),
            "final_answer": Entry("final", self.answer, plain=""),
        }
        for part in self._parts.values():
            part.add_class("-hidden")
        self._answer_stream: MarkdownStream | None = None
        self._sent = 0
        super().__init__("streaming", self._view, *self._parts.values())

    @property
    def answer_shown(self) -> bool:
        """The final answer has begun streaming: it stays until the parsed answer is on screen."""
        return self._answer_stream is not None

    def feed(self, text: str) -> None:
        """Take a fragment, in the order it came (synchronously: two fragments may arrive while
        the entry mounts, and showing must not reorder them)."""
        self.text += text
        self.plain = self.text

    async def show(self) -> None:
        """Show the reply so far (nothing before the entry is mounted: mounting shows it)."""
        if not self.is_mounted:
            return
        parts = stream_parts(self.text)
        if not parts:
            self._view.update(safe(_tail(untagged(self.text))))
            return
        self.add_class("-parts")
        for part in parts:
            if part.tag == "final_answer":
                await self._stream_answer(part.text)
            else:
                (self._thought if part.tag == "thought" else self._action).update(safe(_tail(part.text)))
            self._parts[part.tag].remove_class("-hidden")

    async def _stream_answer(self, answer: str) -> None:
        fragment, self._sent = answer[self._sent :], len(answer)
        if self._answer_stream is None:
            from textual.widgets.markdown import MarkdownStream

            self._answer_stream = MarkdownStream(self.answer)
            self._answer_stream.start()
        await self._answer_stream.write(for_display(fragment))

    async def on_unmount(self) -> None:
        if self._answer_stream is not None:
            await self._answer_stream.stop()

    def mark_incomplete(self) -> None:
        self.remove_class("-parts")
        self.set_class(True, "-incomplete")
        for part in self._parts.values():
            part.add_class("-hidden")
        self._view.update(Text.assemble(safe(self.text[-STREAM_TAIL_CHARS:]), ("\n[reply cut off — nothing was run]", "bold")))


def _tail(text: str) -> str:
    return text if len(text) <= STREAM_TAIL_CHARS else "…" + text[-STREAM_TAIL_CHARS:]


class ThinkingEntry(Entry):
    """Reasoning from `reasoning_content`: dim and collapsed; shown, never parsed."""

    def __init__(self) -> None:
        self.text = ""
        self._view = Static("", classes="entry-body")
        super().__init__("thinking", folded(self._view, "show reasoning"))

    def add(self, text: str) -> None:
        self.text += text
        self.plain = self.text
        self._view.update(safe(self.text))


class ProgressEntry(Entry):
    """A notice whose text is replaced as a wait goes on (assembling, loading the local model)."""

    def __init__(self, text: str) -> None:
        super().__init__("notice", title="local model", text=safe(text))

    def show(self, text: str) -> None:
        self.set_text(safe(text))


def action_entry(tool: str, args: list[object]) -> Entry:
    """A command as highlighted shell, a write as the path plus highlighted content, a read as a path."""
    if tool == "run_terminal_command" and args and isinstance(args[0], str):
        return Entry("action", title="run command", plain=args[0], text=highlighted(args[0], "bash"))
    if tool == "write_to_file" and len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], str):
        path, content = args
        code = Static(highlight(content, guess_lexer(path, content), line_numbers=True), classes="entry-body")
        body = folded(code, f"show the {lines_label(content)} written (the change follows as a diff)")
        return Entry("action", body, title=f"write {path} ({lines_label(content)})", plain=content)
    if tool == "edit_file" and len(args) == 3 and all(isinstance(arg, str) for arg in args):
        path, old_text, new_text = args
        code = Static(highlight(new_text, guess_lexer(path, new_text), line_numbers=True), classes="entry-body")
        body = folded(code, f"show the new text ({lines_label(new_text)}; the change follows as a diff)")
        return Entry("action", body, title=f"edit {path} ({edit_label(old_text, new_text)})", plain=f"{old_text}\n{new_text}")
    if tool == "read_file" and args and isinstance(args[0], str):
        return Entry("action", title=f"read {args[0]}")
    if tool == "update_plan" and len(args) == 1 and isinstance(args[0], list):
        return Entry("action", title=action_text(tool, args))
    shown = call_text(tool, args)
    return Entry("action", title=tool, plain=shown, text=safe(shown))


class ObservationEntry(Entry):
    """Tool output as plain text; long output shows its first lines until expanded into a Log
    (which renders only what is visible). The Log is made on the first expand: one in every long
    entry made each append cost about a third more (Textual lays out every scrolling widget
    again on each reflow; bench/transcript.py)."""

    can_focus = True
    BINDINGS = [
        Binding("enter,space", "toggle", "Expand", id="observation.toggle"),
        Binding("o", "open_output", "Full output", id="observation.open"),
    ]

    class OpenOutput(Message):
        def __init__(self, path: Path) -> None:
            super().__init__()
            self.path = path

    def __init__(self, text: str, ok: bool, exit_code: int | None, output_path: str | None) -> None:
        self.lines = for_display(text).splitlines() or [""]
        self.output_path = Path(output_path) if output_path else None
        self._log: Log | None = None
        long = len(self.lines) > SHORT_OUTPUT_LINES
        shown = Text("\n".join(self.lines[:SHORT_OUTPUT_LINES]))
        body = Static(shown, classes="entry-body observation-text")
        badge = Text()
        if exit_code is not None:
            badge.append(f" exit {exit_code} ", style="reverse bold")
        elif not ok:
            badge.append(" failed ", style="reverse bold")
        if long:
            badge.append(f"  {len(self.lines)} lines (enter to expand")
            badge.append(", o for the full output)" if self.output_path else ")")
        super().__init__("observation", body, title=badge, plain="\n".join(self.lines), text_view=(body, shown))
        self.set_class(not ok, "-failed")
        self.set_class(long, "-long")

    async def action_toggle(self) -> None:
        self.toggle_class("-expanded")
        if self._log is None and self.has_class("-long", "-expanded"):
            self._log = Log(max_lines=OBSERVATION_MAX_LINES, auto_scroll=False, classes="entry-body observation-log")
            await self.mount(self._log)
            self._log.write_lines(self.lines)
            self._log.scroll_home(animate=False)

    @property
    def log(self) -> Log | None:
        """The expanded view (made on the first expand)."""
        return self._log

    async def expand_to(self, needle: str) -> int | None:
        """A search hit past the first lines (only they show collapsed) expands the entry: the index
        of the first line holding `needle` (casefolded), else None and nothing changes."""
        index = next((i for i, line in enumerate(self.lines) if needle in line.casefold()), None)
        if index is None or index < SHORT_OUTPUT_LINES:
            return None
        if not self.has_class("-expanded"):
            await self.action_toggle()
        return index

    def action_open_output(self) -> None:
        if self.output_path is not None and self.output_path.exists():
            self.post_message(self.OpenOutput(self.output_path))


class DiffEntry(Entry):
    """What a write or a command changed in one file, as a diff; past 30 lines it is collapsed
    until expanded (the view draws only the lines on screen either way)."""

    can_focus = True
    BINDINGS = [Binding("enter,space", "toggle", "Expand", id="diff.toggle")]

    def __init__(self, event: FileChanged, root: Path) -> None:
        self.view = DiffView(event.diff, Path(event.path).name, classes="entry-body diff-view")
        total = len(self.view.lines)
        title = Text(for_display(event.summary(root)))
        if total > DIFF_SHOWN_LINES:
            title.append(f"  {total} diff lines (enter to expand)", style="dim")
        body: list[Widget] = [self.view] if event.diff else []
        super().__init__("change", *body, title=title, plain=event.diff or event.summary(root))
        self.set_class(total > DIFF_SHOWN_LINES, "-long")

    def action_toggle(self) -> None:
        self.toggle_class("-expanded")


def final_entry(text: str, plan: bool = False) -> Entry:
    """A plan (the answer of a run in plan mode) says so in its title."""
    from textual.widgets import Markdown  # markdown-it is imported on the first answer, not at start-up

    title = "a plan: nothing was changed" if plan else None
    return Entry("final", Markdown(for_display(text), classes="entry-body"), title=title, plain=text)


def entries_for(event: Event, root: Path) -> list[Entry]:
    """The entries one core event becomes: none for bookkeeping events (steps, usage, …).

    Pure, so a reopened session's events can be turned into entries without touching the app.
    """
    entries = _build_entries(event, root)
    for entry in entries:
        entry.event = event
    return entries


def _build_entries(event: Event, root: Path) -> list[Entry]:
    described = describe(event, root)
    if described is None:
        return []
    match event:
        case Action(tool=tool, args=args):
            return [action_entry(tool, args)]
        case Observation(text=text, ok=ok, exit_code=code, output_path=path):
            return [ObservationEntry(text, ok, code, path)]
        case UserCommand(command=command):
            return [Entry("action", title="you ran (no dialog: you typed it)", plain=command, text=highlighted(command, "bash"))]
        case UserCommandOutput(text=text, exit_code=code, output_path=path):
            return [ObservationEntry(text, code == 0, code, path)]
        case FileChanged():
            return [DiffEntry(event, root)]
        case Compacted(summary=summary):
            body = folded(Static(safe(summary), classes="entry-body"), "show the summary")
            return [Entry("notice", body, title=described.label, plain=summary)]
        case FinalAnswer(text=text, plan=plan):
            return [final_entry(text, plan)]
        case TaskListUpdated():
            return []  # the checklist above the task box shows the list (widgets/task_list.py)
        case ApprovalAnswered() | FormatError() | RetryWait() | Undone() | Rewound() | Stopped():
            return [text_entry(described.kind, described.text, title=described.label.lower())]
    return [text_entry(described.kind, described.text)]


