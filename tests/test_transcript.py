"""What search matches in events behind a marker must be what their entries show."""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.event_text import searchable_text
from mzagent_tui.agent.events import (
    Action,
    ApprovalAnswered,
    ApprovalAsked,
    Error,
    Event,
    FileChanged,
    FinalAnswer,
    FormatError,
    ModelInfo,
    Notice,
    Observation,
    ReplyFinished,
    RetryWait,
    StepStarted,
    Stopped,
    StopReason,
    TaskStarted,
    TextDelta,
    ThinkingDelta,
    Thought,
    Undone,
    Usage,
)
from mzagent_tui.widgets.entries import entries_for

ROOT = Path("/proj")
SHORT_CHANGE = FileChanged("/proj/a.py", False, "/b", "1" * 64, diff="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-old_name = 1\n+new_name = 2\n", added=1, removed=1)

EVENTS: list[Event] = [
    TaskStarted("fix the parser"),
    StepStarted(1, 10),
    ThinkingDelta("hmm quietly"),
    TextDelta("<thought>par"),
    ReplyFinished("<thought>parse</thought>", "stop"),
    Thought("look at parser.py first"),
    Action("read_file", ["/proj/parser.py"]),
    Action("write_to_file", ["/proj/out.py", "print('written body')\n"]),
    Action("edit_file", ["/proj/out.py", "written body", "edited body\nsecond"]),
    Action("edit_file", ["/proj/notes.md", "", "appended line\n"]),
    Action("run_terminal_command", ["pytest -q tests"]),
    Action("custom_tool", ["alpha", 3]),
    ApprovalAsked("pytest -q tests", "/proj", "not on the safe list"),
    ApprovalAnswered(True, "pytest -q tests"),
    ApprovalAnswered(True, "make", "approved after an edit"),
    ApprovalAnswered(False, "rm -rf build", "not that folder"),
    ApprovalAnswered(False, "rm -rf build"),
    Observation("run_terminal_command", "3 passed in 0.1s\n", True, 0),
    FileChanged("/proj/out.py", True, None, "0" * 64),
    SHORT_CHANGE,
    Undone("/proj/out.py", 1, True),
    FinalAnswer("The parser **works** now."),
    FormatError("no action or final answer", 1),
    RetryWait(2.0, 1, 3, "server busy (HTTP 503)"),
    Usage(100, 20),
    ModelInfo(32768),
    Notice("context shrunk"),
    Error("the endpoint refused the key"),
    Stopped(StopReason.MAX_STEPS, "reached the step limit", 10),
    Stopped(StopReason.FINAL_ANSWER, "final answer", 3),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda event: f"{event.kind}")
def test_event_text_is_what_its_entries_show(event: Event) -> None:
    entries = entries_for(event, ROOT)
    text = searchable_text(event, ROOT)
    assert bool(text) == bool(entries), "an event shows text exactly when it has an entry"
    for word in text.split():
        assert any(entry.matches(word.casefold()) for entry in entries), word


def long_change(lines: int) -> FileChanged:
    body = "".join(f"-x{i} = {i}\n+x{i} = {i + 1}\n" for i in range(lines // 2))
    return FileChanged("/proj/big.py", False, "/b", "1" * 64, diff=f"--- a/big.py\n+++ b/big.py\n@@ -1 +1 @@\n{body}", added=lines // 2, removed=lines // 2)


async def test_a_long_diff_is_collapsed_until_expanded_and_draws_only_what_shows() -> None:
    from textual.app import App

    from mzagent_tui.widgets.entries import DIFF_SHOWN_LINES, DiffEntry

    class One(App):
        CSS_PATH = Path(__file__).parents[1] / "mzagent_tui" / "app.tcss"

        def compose(self):  # noqa: ANN202
            yield from entries_for(long_change(5000), ROOT)

    app = One()
    async with app.run_test(size=(100, 40)) as pilot:
        entry = app.query_one(DiffEntry)
        assert entry.view.size.height == DIFF_SHOWN_LINES
        assert "Diff  changed big.py (+2500 −2500)  5003 diff lines (enter to expand)" in entry.title_text
        assert len(entry.view.drawn) <= DIFF_SHOWN_LINES, "only the lines on screen are styled"
        entry.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert entry.view.size.height == 5003
        assert len(entry.view.drawn) <= 40


async def test_a_write_asking_for_approval_stays_folded_behind_the_dialog() -> None:
    """The dialog for a write opens right after the write's entry mounts, and the screen below a
    modal is not laid out again: the entry must be folded in its very first layout (it was drawn
    open, 18 lines of code, in about four of five runs)."""
    from tests import scenarios
    from tests.scripted_server import ScriptedServer

    scenarios.make_demo_project()
    with ScriptedServer(scenarios.full_run_script()) as server:
        app = scenarios.demo_app(server, writes="ask")
        async with app.run_test(size=(120, 40)) as pilot:
            await scenarios.to_approval(pilot)
            write = next(entry for entry in app.query(".entry.-action") if entry.title_text.startswith("⚙ Action  write"))
            assert write.size.height == 2, "the title and the folded body's one line"


async def test_an_entry_of_text_is_one_widget_drawn_in_its_kind_colour() -> None:
    """Textual's layout work grows with every mounted widget: a thought, a command or a notice is
    one widget that draws its title (in its kind's colour, from the stylesheet) and its text."""
    from textual.app import App

    from mzagent_tui.widgets.entries import ProgressEntry, action_entry, text_entry

    class One(App):
        CSS_PATH = Path(__file__).parents[1] / "mzagent_tui" / "app.tcss"

        def compose(self):  # noqa: ANN202
            yield text_entry("thought", "[bold]not markup[/bold]")
            yield action_entry("run_terminal_command", ["pytest -q tests/"])
            yield text_entry("error", "it failed")
            yield ProgressEntry("loading the local model")

    app = One()
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        thought, command, error, progress = app.query(".entry")
        assert not thought.children and not command.children and not error.children
        assert thought.size.height == 2 and thought.render().plain == "◆ Thought\n[bold]not markup[/bold]"
        assert command.render().plain == "⚙ Action  run command\npytest -q tests/"
        title_colour = {entry.kind: entry.render().get_style_at_offset(app.console, 0).color for entry in (thought, error)}
        assert title_colour["thought"] is not None and title_colour["error"] is not None
        assert title_colour["thought"] != title_colour["error"], "each kind's title in its own colour"
        progress.show("the local model failed to load: out of memory")
        progress.add_class("-error")
        await pilot.pause()
        assert progress.size.height == 2 and "out of memory" in progress.render().plain
        assert progress.render().get_style_at_offset(app.console, 0).color == title_colour["error"], "a failed notice shows as an error"
        assert progress.styles.border_left == error.styles.border_left
        assert command.render().style == "" and not any(span.style.bgcolor for span in command.render().spans if not isinstance(span.style, str)), (
            "a command has no background of its own: a search hit's shows through"
        )


def test_a_short_diff_is_shown_whole() -> None:
    from mzagent_tui.widgets.entries import DiffEntry

    [entry] = entries_for(SHORT_CHANGE, ROOT)
    assert isinstance(entry, DiffEntry) and not entry.has_class("-long")
    assert entry.title_text.endswith("changed a.py (+1 −1)")


async def test_paging_through_a_long_diff_jumps_without_drawing_the_lines_between() -> None:
    """Home, page down and End move the transcript at once: an animated jump styles every line it
    passes on its way (the bench's old stall), a jump only the screen it lands on."""
    from textual.app import App

    from mzagent_tui.widgets.entries import DiffEntry
    from mzagent_tui.widgets.transcript import Transcript

    class One(App):
        CSS_PATH = Path(__file__).parents[1] / "mzagent_tui" / "app.tcss"

        def compose(self):  # noqa: ANN202
            yield Transcript(ROOT, id="transcript")

    app = One()
    app.animation_level = "full"
    async with app.run_test(size=(100, 40)) as pilot:
        transcript = app.query_one(Transcript)
        await transcript.add(*entries_for(long_change(5000), ROOT))
        entry = app.query_one(DiffEntry)
        entry.focus()
        await pilot.press("enter")
        await pilot.pause(0.1)
        drawn = len(entry.view.drawn)
        await pilot.press("end")
        await pilot.pause(0.1)
        assert transcript.scroll_y == transcript.max_scroll_y > 4900
        await pilot.press("home")
        await pilot.pause(0.1)
        assert transcript.scroll_y == 0
        await pilot.press("pagedown")
        await pilot.pause(0.1)
        assert transcript.scroll_y == transcript.scrollable_content_region.height
        assert len(entry.view.drawn) - drawn <= 3 * 40, "only the screens landed on are styled"


async def test_fragments_that_arrive_while_the_stream_mounts_keep_their_order() -> None:
    """The second fragment of a reply came while the first one's entry was still mounting and was
    shown first: "<thought>" read as "ho<tught>" on screen (seen in tmux)."""
    import asyncio

    from textual.app import App

    from mzagent_tui.widgets.entries import Entry, StreamingEntry
    from mzagent_tui.widgets.transcript import Transcript

    class One(App):
        CSS_PATH = Path(__file__).parents[1] / "mzagent_tui" / "app.tcss"

        def compose(self):  # noqa: ANN202
            yield Transcript(ROOT, id="transcript")

    fragments = ["<t", "ho", "ug", "ht", ">I", " look", "</th", "ought", "><act", "ion>read_file(\"a\")</action>"]
    async with App.run_test(One(), size=(100, 40)) as pilot:
        transcript = pilot.app.query_one(Transcript)
        await asyncio.gather(*(transcript.stream(fragment, "") for fragment in fragments))
        await pilot.pause(0.1)
        stream = pilot.app.query_one(StreamingEntry)
        assert stream.text == "".join(fragments)
        shown = {part.kind: str(part.query_one(".entry-body").render()) for part in stream.query(Entry) if part is not stream}
        assert shown["thought"] == "I look" and shown["action"] == 'read_file("a")'
