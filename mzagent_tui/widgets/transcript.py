"""The transcript: a bounded, anchored, searchable list of entries (`widgets/entries.py`).

The container uses `layout: stream` and is anchored (it follows new output unless the user
scrolls up). Past a high-water mark the oldest entries leave the screen and are kept as the
events they came from, behind an "earlier entries" marker that brings them back on request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from weakref import WeakSet

from rich.text import Text
from textual import on
from textual.actions import SkipAction
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import AwaitMount, Widget
from textual.widgets import Static

from mzagent_tui.agent.event_text import searchable_text
from mzagent_tui.agent.events import Event
from mzagent_tui.widgets.entries import Entry, ObservationEntry, StreamingEntry, ThinkingEntry, entries_for, safe

HIGH_WATER = 100
LOW_WATER = 80
EARLIER_BATCH = 60
"""Entries a reopened session shows at first, and about how many more each "show earlier" adds."""
REVEAL_CONTEXT = 6
"""Events shown on each side of a search hit found behind a marker."""

KEY_HINTS = (
    ("ctrl+p", "commands"),
    ("ctrl+b", "files"),
    ("ctrl+f", "find"),
    ("ctrl+z", "undo the last step"),
    ("ctrl+g", "background commands"),
    ("shift+tab", "approval mode"),
    ("esc", "cancel a run"),
    ("esc esc", "rewind (task box empty)"),
    ("ctrl+q", "quit"),
)
"""The keys the welcome text names, each one of the app's bindings (a test holds them to it)."""

FIRST_HINT = Text.assemble(
    ("Type a task below and press Enter", "bold"),
    ", for example: add a --verbose flag to the command line and run the tests.\n\n",
    "The agent reads and writes the files of this project. Every command it wants to run asks you first: "
    "y runs it, n rejects it, e edits it, a always allows commands like it.\n\n",
    ("Keys: ", "bold"),
    " · ".join(f"{key} {what}" for key, what in KEY_HINTS),
)

class EarlierEntry(Entry):
    """Stands for entries not on screen (`events`, oldest first): at the top of a long transcript,
    or for a gap left when search showed a hit far back. Enter (or a click) shows the newest
    batch of them just below it."""

    can_focus = True
    BINDINGS = [Binding("enter,space", "load", "Show earlier", id="earlier.load")]

    class Load(Message):
        def __init__(self, marker: EarlierEntry) -> None:
            super().__init__()
            self.marker = marker

    def __init__(self, events: list[Event]) -> None:
        text = "earlier entries are not shown here: select this (enter) to show more; the export has all"
        super().__init__("notice", title="earlier", plain=text, text=safe(text))
        self.events = events

    def action_load(self) -> None:
        self.post_message(self.Load(self))

    def on_click(self) -> None:
        self.action_load()


Hit = Entry | tuple[EarlierEntry, Event]
"""A search hit: an entry on screen, or an event behind a marker."""


def hit_index(hits: list[Hit], hit: Hit, default: int) -> int:
    """Where `hit` is in a newer list of hits (the same entry, or the same event on or off
    screen, since pruning and revealing move events between the two); else near `default`."""
    event = _hit_event(hit)
    for index, candidate in enumerate(hits):
        if candidate is hit or (event is not None and _hit_event(candidate) is event):
            return index
    return max(0, min(default, len(hits) - 1))


def _hit_event(hit: Hit) -> Event | None:
    return hit[1] if isinstance(hit, tuple) else hit.event


class Transcript(VerticalScroll):
    """Anchored, streaming, bounded list of entries.

    Entries past the high-water mark leave the screen (Textual's style and layout work grows
    with every mounted widget) and wait as the events they showed in an `EarlierEntry` marker
    at the top; a reopened session starts the same way. Search sees both.
    """

    def __init__(self, root: Path, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.root = root
        self._hits: list[Hit] = []
        self._hit = -1
        """The selected hit of the search in progress (len(hits): none selected yet)."""
        self._stream: StreamingEntry | None = None
        self._streamed_answer: StreamingEntry | None = None
        self._thinking: ThinkingEntry | None = None
        self._leaving: WeakSet[Widget] = WeakSet()
        """Children being removed: they stay in `children` until Textual's message loop is done with them."""
        self._texts: dict[int, str] = {}
        """The casefolded search text of events behind markers, by identity (events are immutable):
        a find in a 3,000-step session matched 18,000 events again on every key and every jump.
        Plain strings, no tuple per event: 18,000 new tracked objects set off full collections."""
        self._texted: list[Event] = []
        """The events `_texts` knows, kept alive so that no other event can take one's id."""

    def on_mount(self) -> None:
        self.anchor()
        self._show_hint()

    # Keys that jump: at once, never animated. Each frame of an animated jump draws the lines it
    # passes, so paging through a long diff or log cost ten times the lines one jump shows
    # (bench/diff_render.py); a terminal pager does not animate either.

    def action_page_down(self) -> None:
        self._jump(self.scroll_page_down)

    def action_page_up(self) -> None:
        self._jump(self.scroll_page_up)

    def action_scroll_end(self) -> None:
        self._jump(self.scroll_end, x_axis=False)

    def action_scroll_home(self) -> None:
        self._jump(self.scroll_home, x_axis=False)

    def _jump(self, scroll: Callable[..., None], **options: bool) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction()
        scroll(animate=False, **options)

    def _show_hint(self) -> None:
        """The empty transcript says what to type, that commands ask first, and where the keys are."""
        self.mount(Static(FIRST_HINT, classes="first-hint"))

    def add(self, *entries: Widget) -> AwaitMount:
        with self.app.batch_update():
            self._remove(self.query(".first-hint"))
            mounted = self.mount_all(entries)
            self._prune()
        return mounted

    def clear(self) -> None:
        self._remove(self.children)
        self._texts.clear()
        self._texted.clear()
        self._stream = self._thinking = self._streamed_answer = None
        self._show_hint()

    # The reply as it streams in -------------------------------------------------------------

    async def stream(self, text: str, thinking: str) -> None:
        """A piece of the model's reply: reasoning into a thinking entry, text into a streaming
        entry (both made on the first piece of a step)."""
        if thinking:
            if self._thinking is None:
                self._thinking = ThinkingEntry()
                self.add(self._thinking)
            self._thinking.add(thinking)
        if text:
            if self._stream is not None:
                self._stream.feed(text)
                await self._stream.show()
                return
            stream = self._stream = StreamingEntry()
            stream.feed(text)
            await self.add(stream)
            if self._stream is stream:  # not cleared while it mounted
                await stream.show()

    def step_started(self) -> None:
        self._thinking = None
        self._drop_streamed_answer()

    def reply_finished(self, incomplete: bool) -> None:
        """A cut reply stays, marked; a streamed answer stays until the parsed one is on screen;
        other raw text goes (its thought and action entries follow)."""
        stream, self._stream = self._stream, None
        if stream is None:
            return
        if incomplete:
            stream.mark_incomplete()
        elif stream.answer_shown:
            self._streamed_answer = stream
        else:
            self._remove([stream])

    def answer_shown(self) -> None:
        self._drop_streamed_answer()

    def run_stopped(self) -> None:
        self._drop_streamed_answer()
        if self._stream is not None:
            self._stream.mark_incomplete()
            self._stream = None

    def _drop_streamed_answer(self) -> None:
        if self._streamed_answer is not None:
            self._remove([self._streamed_answer])
            self._streamed_answer = None

    def _remove(self, widgets: Iterable[Widget]) -> None:
        widgets = list(widgets)
        self._leaving.update(widgets)
        self.remove_children(widgets)

    def _present(self) -> list[Widget]:
        """The children that are staying."""
        return [child for child in self.children if child not in self._leaving]

    def show_session(self, events: list[Event]) -> None:
        """A reopened session, into a cleared transcript: its newest entries on screen, the rest behind a marker."""
        marker = EarlierEntry(list(events))
        entries = self._take_newest(marker)
        with self.app.batch_update():
            if entries or marker.events:
                self._remove(self.query(".first-hint"))
            if marker.events:
                self.mount(marker)
            self.mount_all(entries)

    @on(EarlierEntry.Load)
    def _load_earlier(self, message: EarlierEntry.Load) -> None:
        message.stop()
        self.show_earlier(message.marker)

    def show_earlier(self, marker: EarlierEntry) -> None:
        """The newest batch of the marker's entries, just below it (not pruned until the next add)."""
        entries = self._take_newest(marker)
        with self.app.batch_update():
            self.mount_all(entries, after=marker)
            if not marker.events:
                self._remove([marker])

    def _take_newest(self, marker: EarlierEntry) -> list[Entry]:
        """Entries for the marker's newest events, about EARLIER_BATCH of them; taken off the marker."""
        entries: list[Entry] = []
        while marker.events and len(entries) < EARLIER_BATCH:
            entries[:0] = entries_for(marker.events.pop(), self.root)
        return entries

    def _prune(self) -> None:
        """Move the oldest entries past the high-water mark into the marker at the top; not while
        a search is open, so the hit the user jumped to stays where it was shown."""
        if self._hit != -1:
            return
        children = self._present()
        shown = sum(1 for child in children if not isinstance(child, EarlierEntry))
        if shown <= HIGH_WATER:
            return
        excess = shown - LOW_WATER
        top = children[0] if isinstance(children[0], EarlierEntry) else None
        events: list[Event] = []
        gone: list[Widget] = []
        for child in children:
            if isinstance(child, EarlierEntry):
                events += child.events  # the top marker, and gaps the pruned part reaches
            elif excess > 0:
                excess -= 1
                event = child.event if isinstance(child, Entry) else None
                if event is not None and not (events and events[-1] is event):
                    events.append(event)
            else:
                break
            if child is not top:
                gone.append(child)
        if top is None:
            top = EarlierEntry(events)
            self.mount(top, before=0)
        top.events = events
        self._remove(gone)

    def entries(self) -> Iterable[Entry]:
        """The entries on screen (markers excluded)."""
        return (child for child in self._present() if isinstance(child, Entry) and not isinstance(child, EarlierEntry))

    def markers(self) -> list[EarlierEntry]:
        return [child for child in self._present() if isinstance(child, EarlierEntry)]

    def mark_hits(self, query: str) -> list[Hit]:
        """Every hit of `query`, oldest first: entries on screen (marked with class `-hit`) and
        events behind markers (matched on their text, without building widgets)."""
        needle = query.casefold()
        hits: list[Hit] = []
        for child in self._present():
            if isinstance(child, EarlierEntry):
                if needle:
                    hits += [(child, event) for event in child.events if needle in self._search_text(event)]
            elif isinstance(child, Entry):
                hit = bool(needle) and child.matches(needle)
                if hit or child.has_class("-hit"):
                    child.show_matches(query if hit else "")
                child.set_class(hit, "-hit")
                child.remove_class("-current-hit")
                if hit:
                    hits.append(child)
        return hits

    def _search_text(self, event: Event) -> str:
        text = self._texts.get(id(event))
        if text is None:
            text = self._texts[id(event)] = searchable_text(event, self.root).casefold()
            self._texted.append(event)
        return text

    async def reveal(self, marker: EarlierEntry, event: Event) -> Entry | None:
        """Show the entries around `event` where the marker stands; the events before and after
        that window stay behind markers. Returns the entry that shows `event`."""
        index = next(i for i, candidate in enumerate(marker.events) if candidate is event)
        start, end = max(0, index - REVEAL_CONTEXT), index + REVEAL_CONTEXT + 1
        window = [entry for shown in marker.events[start:end] for entry in entries_for(shown, self.root)]
        after = marker.events[end:]
        with self.app.batch_update():
            if after:
                self.mount(EarlierEntry(after), after=marker)
            mounted = self.mount_all(window, after=marker)
            marker.events = marker.events[:start]
            if not marker.events:
                self._remove([marker])
        await mounted
        return next((entry for entry in window if entry.event is event), None)

    def show_hit(self, entry: Entry, line: int | None = None) -> None:
        """Scroll to one hit (to `line` of an expanded output); the anchor is released so new
        output does not scroll it away."""
        for other in self.query(".-current-hit"):
            other.remove_class("-current-hit")
        entry.add_class("-current-hit")
        self.release_anchor()
        if line is not None and isinstance(entry, ObservationEntry):
            self.call_after_refresh(self._show_output_line, entry, line)
        else:
            self.call_after_refresh(self.scroll_to_widget, entry, animate=False, top=True)

    def _show_output_line(self, entry: ObservationEntry, line: int) -> None:
        """Scroll the expanded output's log, then the transcript, so that `line` shows near the top."""
        log = entry.log
        if log is None:
            return
        top = max(0, line - 2)
        log.scroll_to(y=top, animate=False, immediate=True)
        self.scroll_to(y=entry.virtual_region.y + log.virtual_region.y + top - round(log.scroll_offset.y), animate=False, immediate=True)

    async def find(self, query: str, step: int) -> tuple[int, int]:
        """Search: a new query (step 0) selects the newest hit on screen; steps move to older (-1)
        or newer (+1) hits, wrapping, and a hit behind an "earlier entries" marker is brought on
        screen. Returns (the selected hit's number from 1, or 0 for none; the number of hits)."""
        previous = self._hits[self._hit] if 0 <= self._hit < len(self._hits) else None
        self._hits = self.mark_hits(query)
        if not self._hits:
            self._hit = 0
        elif step == 0:
            shown = [index for index, hit in enumerate(self._hits) if isinstance(hit, Entry)]
            self._hit = shown[-1] if shown else len(self._hits)  # none selected: the first step picks
        elif previous is None:
            self._hit = len(self._hits) - 1 if step < 0 else 0
        else:
            self._hit = (hit_index(self._hits, previous, self._hit) + step) % len(self._hits)
        if self._hit < len(self._hits):
            hit = self._hits[self._hit]
            if isinstance(hit, tuple):
                revealed = await self.reveal(*hit)
                self._hits = self.mark_hits(query)
                self._hit = hit_index(self._hits, revealed or hit, self._hit)
            shown = self._hits[self._hit]
            line = await shown.expand_to(query.casefold()) if isinstance(shown, ObservationEntry) else None
            self.show_hit(shown, line)
        return (self._hit + 1 if self._hit < len(self._hits) else 0), len(self._hits)

    def end_find(self) -> None:
        """The search bar closed: no marks, no selection, follow new output again."""
        self.mark_hits("")
        self._hits = []
        self._hit = -1
        self.anchor()
