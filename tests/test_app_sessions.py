"""Pilot tests for sessions in the app: reopen, undo, export, cost in the footer, find."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import Input, OptionList

from mzagent_tui.agent.events import Action, Notice, Observation, StepStarted, Stopped, StopReason, TaskStarted, Thought, Usage
from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.sessions.history import SessionHistory, find_session, load_session
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.app import MzAgentApp
from mzagent_tui.screens.ask_text import AskTextScreen
from mzagent_tui.screens.choose import ChooseScreen
from mzagent_tui.widgets.entries import Entry, entries_for
from mzagent_tui.widgets.run_status import RunStatus
from mzagent_tui.widgets.search_bar import SearchBar
from mzagent_tui.widgets.transcript import HIGH_WATER, LOW_WATER, EarlierEntry, Transcript
from tests.scripted_server import Reply, answer_reply, read_reply, write_reply
from tests.test_app import SIZE, approval, entries, make_app, state, submit, wait_for


def finished(app: MzAgentApp) -> bool:
    """The run reported its end and its worker is gone (undo and reopen wait for both)."""
    return state(app) == "done" and not app.conversation.run_active




async def run_palette(pilot, name: str) -> None:  # noqa: ANN001
    """Open the command palette, type a command's name and run the first match."""
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
    pilot.app.screen.query_one(Input).value = name
    await wait_for(pilot, lambda: pilot.app.screen.query_one("CommandList", OptionList).option_count > 0)
    await pilot.press("enter")
    await pilot.pause()


async def test_close_mid_task_reopen_see_everything_and_continue(server, project: Path) -> None:
    server.script(
        write_reply("notes.txt", "first\n"),
        Reply('<thought>append</thought><action>run_terminal_command("echo more >> notes.txt")</action>'),
    )
    first = make_app(server, project)
    async with first.run_test(size=SIZE) as pilot:
        await submit(pilot, "take notes")
        await approval(pilot)
        await pilot.press("ctrl+q")
    assert (project / "notes.txt").read_text() == "first\n", "the pending command never ran"

    server.script(answer_reply("notes.txt has one line"))
    second = make_app(server, project, history=find_session(project, "last"))
    async with second.run_test(size=SIZE) as pilot:
        kinds = [e.kind for e in entries(second)]
        assert kinds[:3] == ["question", "thought", "action"]
        assert entries(second, "question")[0].plain == "take notes"
        assert any(e.title_text.startswith("ℹ Notice  reopened") for e in entries(second, "notice"))
        await submit(pilot, "what is in notes.txt?")
        await wait_for(pilot, lambda: finished(second))
        assert entries(second, "final")[-1].plain == "notes.txt has one line"
        sent = server.requests[-1]["messages"]
        assert sent[1]["content"] == "<question>take notes</question>"
        assert sent[-1]["content"] == "<question>what is in notes.txt?</question>"
        assert (project / "notes.txt").read_text() == "first\n"
    assert len(list(load_session(find_session(project, "last").folder).events)) > len(kinds)


async def test_resume_picker_lists_sessions_and_reopens_one(server, project: Path) -> None:
    server.script(answer_reply("alpha answer"), answer_reply("beta answer"))
    for task in ("alpha task", "beta task"):
        app = make_app(server, project)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, task)
            await wait_for(pilot, lambda: finished(app))
    app = make_app(server, project, pick_session=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChooseScreen))
        options = app.screen.query_one(OptionList)
        assert options.option_count == 2
        assert "beta task" in str(options.get_option_at_index(0).prompt)
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: bool(entries(app, "final")))
        assert entries(app, "question")[0].plain == "alpha task"
        assert entries(app, "final")[0].plain == "alpha answer"
        await run_palette(pilot, "Reopen a session")
        await wait_for(pilot, lambda: isinstance(app.screen, ChooseScreen))
        await pilot.press("escape")
        assert entries(app, "question")[0].plain == "alpha task"


async def test_ctrl_z_undoes_the_last_write_and_the_model_is_told(server, project: Path) -> None:
    (project / "keep.txt").write_text("mine\n")
    server.script(read_reply("keep.txt"), write_reply("keep.txt", "agent\n"), write_reply("new.txt", "new\n"), answer_reply("wrote two"), answer_reply("ok"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write files")
        await wait_for(pilot, lambda: finished(app))
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert not (project / "new.txt").exists()
        assert (project / "keep.txt").read_text() == "agent\n"
        await run_palette(pilot, "Undo last write")
        assert (project / "keep.txt").read_text() == "mine\n"
        undos = [e.plain for e in entries(app, "notice") if "undo" in e.title_text]
        assert undos == [
            "undid write 2: removed new.txt, which the agent had created",
            "undid write 1: restored keep.txt to its content before the agent changed it",
        ]
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert "nothing left to undo" in entries(app, "notice")[-1].plain
        await submit(pilot, "next")
        await wait_for(pilot, lambda: len(server.requests) == 5)
        question = server.requests[-1]["messages"][-1]["content"]
        assert "Note: the user undid write 2" in question and "Note: the user undid write 1" in question


async def test_ctrl_z_takes_back_what_an_approved_command_changed(server, project: Path) -> None:
    (project / "notes.txt").write_text("mine\n")
    server.script(Reply('<action>run_terminal_command("rm notes.txt && echo made > made.txt")</action>'), answer_reply("cleaned up"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "clean up")
        await approval(pilot)
        await pilot.press("y")
        await wait_for(pilot, lambda: finished(app))
        assert "Files changed by the command: made.txt (created), notes.txt (deleted)." in entries(app, "observation")[-1].plain
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert (project / "notes.txt").read_text() == "mine\n" and not (project / "made.txt").exists()
        undos = [e.plain for e in entries(app, "notice") if "undo" in e.title_text]
        assert undos == ["undid write 2: restored notes.txt to its content before the agent changed it", "undid write 1: removed made.txt, which the agent had created"]


async def test_undo_back_to_a_chosen_write_from_the_palette(server, project: Path) -> None:
    server.script(write_reply("a.txt", "1\n"), write_reply("b.txt", "2\n"), write_reply("c.txt", "3\n"), answer_reply("three files"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write three")
        await wait_for(pilot, lambda: finished(app))
        await run_palette(pilot, "Undo writes back to")
        await wait_for(pilot, lambda: isinstance(app.screen, ChooseScreen))
        options = app.screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert labels == ["#3  run 1  created c.txt", "#2  run 1  created b.txt", "#1  run 1  created a.txt"]
        await pilot.press("down", "enter")
        await pilot.pause()
        assert (project / "a.txt").exists() and not (project / "b.txt").exists() and not (project / "c.txt").exists()
        assert [e.plain for e in entries(app, "notice") if "undo" in e.title_text] == [
            "undid write 3: removed c.txt, which the agent had created",
            "undid write 2: removed b.txt, which the agent had created",
        ]


async def test_undo_refuses_after_a_user_edit(server, project: Path) -> None:
    server.script(write_reply("a.txt", "agent\n"), answer_reply("done"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write a")
        await wait_for(pilot, lambda: finished(app))
        (project / "a.txt").write_text("agent\nand my edit\n")
        await run_palette(pilot, "Undo all writes of the last run")
        refused = entries(app, "notice")[-1]
        assert "undo refused" in refused.title_text and "a.txt was changed after the agent wrote it" in refused.plain
        assert (project / "a.txt").read_text() == "agent\nand my edit\n"


async def test_undo_in_a_reopened_session_before_any_new_run(server, project: Path) -> None:
    server.script(write_reply("made.txt", "x\n"), answer_reply("made"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "make")
        await wait_for(pilot, lambda: finished(app))
    app = make_app(server, project, history=find_session(project, "last"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert not (project / "made.txt").exists()
        server.script(answer_reply("ok"))
        await submit(pilot, "again")
        await wait_for(pilot, lambda: finished(app))
        assert server.requests[-1]["messages"][-1]["content"].startswith("Note: the user undid write 1: removed made.txt")


async def test_export_from_the_palette(server, project: Path) -> None:
    server.script(answer_reply("Exported **answer**"))
    app = make_app(server, project, api_key="sk-export-secret-0987654321")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "explain sk-export-secret-0987654321")
        await wait_for(pilot, lambda: finished(app))
        await run_palette(pilot, "Export session as Markdown")
        await wait_for(pilot, lambda: isinstance(app.screen, AskTextScreen))
        target = Path(app.screen.query_one(Input).value)
        assert target.parent == project and target.suffix == ".md"
        await pilot.press("enter")
        await pilot.pause()
        text = target.read_text()
        assert "## Task 1" in text and "Exported **answer**" in text
        assert "sk-export-secret-0987654321" not in text
        await run_palette(pilot, "Export session as Markdown")
        await wait_for(pilot, lambda: isinstance(app.screen, AskTextScreen))
        await pilot.press("enter")
        await pilot.pause()
        assert target.read_text() == text, "an existing file is never overwritten"


async def test_footer_shows_cost_and_context_fill(server, project: Path) -> None:
    server.script(answer_reply("cheap"))
    app = make_app(server, project, price_in=2.0, price_out=10.0, context_window=1000)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        await wait_for(pilot, lambda: finished(app))
        assert app.query_one(RunStatus).run.usage == "tokens 100 in / 20 out · context 10% of 1.0k · $0.0004"


async def test_footer_learns_the_context_window_from_the_server(server, project: Path) -> None:
    server.models = [{"id": "scripted-model", "object": "model", "context_length": 2000}]
    server.script(answer_reply("ok"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        await wait_for(pilot, lambda: finished(app))
        assert app.query_one(RunStatus).run.usage == "tokens 100 in / 20 out · context 5% of 2.0k"


async def test_find_in_transcript_jumps_between_hits(server, project: Path) -> None:
    server.script(answer_reply("the needle is here"), answer_reply("nothing"), answer_reply("another NEEDLE"))
    tasks = ("look for a Needle", "second", "third")
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        for number, task in enumerate(tasks, 1):
            await submit(pilot, task)
            await wait_for(pilot, lambda: len(entries(app, "final")) == number)
        await pilot.press("ctrl+f")
        bar = app.query_one(SearchBar)
        assert bar.display and app.focused is bar.query_one(Input)
        await pilot.press(*"needle")
        await pilot.pause()
        transcript = app.query_one(Transcript)
        hits = [e for e in transcript.entries() if e.has_class("-hit")]
        assert [e.plain for e in hits] == ["look for a Needle", "the needle is here", "another NEEDLE"]
        count = bar.query_one("#search-count")
        assert str(count.render()) == "3/3" and hits[2].has_class("-current-hit")
        question = hits[0].shown_text
        assert [question.plain[span.start : span.end] for span in question.spans if span.style == "reverse"] == ["Needle"]
        await pilot.press("enter")
        assert str(count.render()) == "2/3" and hits[1].has_class("-current-hit") and not hits[2].has_class("-current-hit")
        await pilot.press("up")
        assert str(count.render()) == "1/3" and hits[0].has_class("-current-hit")
        await pilot.press("up")
        assert str(count.render()) == "3/3", "wraps around"
        await pilot.press("down")
        assert str(count.render()) == "1/3"
        bar.query_one(Input).value = "zzz"
        await pilot.pause()
        assert str(count.render()) == "no match"
        assert not hits[0].shown_text.spans
        await pilot.press("escape")
        assert not bar.display and not list(transcript.query(".-hit"))
        assert state(app) == "done", "escape closed the search, it did not cancel anything"


def long_session(project: Path, steps: int) -> tuple[SessionHistory, list[str]]:
    """A logged session of `steps` command steps, written by the real Session (3 entries a
    step), read back; and the texts of all its entries in order."""
    session = Session.create(project, Redactor([]))
    session.record_event(TaskStarted("the very first task"))
    texts = ["the very first task"]
    for step in range(1, steps + 1):
        session.record_event(StepStarted(step, steps))
        session.record_event(Thought(f"thought {step}"))
        session.record_event(Action("run_terminal_command", [f"echo {step}"]))
        session.record_event(Observation("run_terminal_command", f"{step}\n", True, 0))
        session.record_event(Usage(100, 10))
        texts += [f"thought {step}", f"echo {step}", f"{step}"]
    session.record_event(Stopped(StopReason.MAX_STEPS, "reached the step limit", steps))
    session.close()
    return load_session(session.folder), [*texts, "reached the step limit"]


async def expand_all(pilot, transcript: Transcript) -> list[str]:  # noqa: ANN001
    """Select every "earlier entries" marker until none is left; the texts of all entries then."""
    while markers := transcript.markers():
        markers[0].focus()
        await pilot.press("enter")
        await pilot.pause()
    return [entry.plain for entry in transcript.entries()]


async def test_a_long_reopened_session_shows_earlier_entries_on_request(server, project: Path) -> None:
    history, everything = long_session(project, 50)
    app = make_app(server, project, history=history)
    async with app.run_test(size=SIZE) as pilot:
        status = app.query_one(RunStatus)
        assert status.run.usage.startswith("tokens 5,000 in / 500 out") and status.run.step == 50
        transcript = app.query_one(Transcript)
        sizes = []
        while True:
            children = list(transcript.children)
            assert children[-1].title_text.endswith("reopened")
            if not isinstance(children[0], EarlierEntry):
                break
            texts = [e.plain for e in children[1:-1]]
            sizes.append(len(texts))
            assert texts == everything[-len(texts) :], "always the newest entries, in order"
            children[0].focus()
            await pilot.press("enter")
            await pilot.pause()
        assert sizes == [60, 120]
        assert [e.plain for e in children[:-1]] == everything


async def test_entries_past_the_high_water_mark_wait_behind_a_marker(server, project: Path) -> None:
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.query_one(Transcript)
        notes = [f"note {n}" for n in range(HIGH_WATER + 50)]
        for note in notes:
            transcript.add(*entries_for(Notice(note), project))
        await pilot.pause()
        shown = [entry.plain for entry in transcript.entries()]
        [marker] = transcript.markers()
        assert transcript.children[0] is marker and LOW_WATER <= len(shown) <= HIGH_WATER
        assert [event.text for event in marker.events] + shown == notes, "nothing lost, nothing reordered"
        assert await expand_all(pilot, transcript) == notes


async def test_find_reaches_entries_behind_the_marker_and_keeps_the_order(server, project: Path) -> None:
    history, everything = long_session(project, 50)
    app = make_app(server, project, history=history)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.query_one(Transcript)
        assert "echo 7" not in [entry.plain for entry in transcript.entries()]
        await pilot.press("ctrl+f")
        await pilot.press(*"echo 7")
        count = app.query_one(SearchBar).query_one("#search-count")
        await wait_for(pilot, lambda: str(count.render()) == "1 found")  # behind the marker, none selected yet
        await pilot.press("enter")
        await wait_for(pilot, lambda: str(count.render()) == "1/1")
        current = transcript.query_one(".-current-hit", Entry)
        assert current.plain == "echo 7"
        window = [entry.plain for entry in transcript.entries()]
        assert window[: window.index("echo 7") + 2][-4:] == ["6", "thought 7", "echo 7", "7"], "the hit with its neighbours"
        markers = transcript.markers()
        assert len(markers) == 2 and transcript.children[0] is markers[0], "a marker above the hit and one for the gap below"
        for n in range(HIGH_WATER):  # the run goes on while the user reads the hit
            transcript.add(*entries_for(Notice(f"while searching {n}"), project))
        await pilot.pause()
        assert current.is_attached and current.has_class("-current-hit"), "nothing is pruned while a search is open"
        await pilot.press("escape")
        for n in range(HIGH_WATER):  # live entries push the revealed ones (and the gap) behind the top marker
            transcript.add(*entries_for(Notice(f"later {n}"), project))
        await pilot.pause()
        assert len(transcript.markers()) == 1
        later = [f"while searching {n}" for n in range(HIGH_WATER)] + [f"later {n}" for n in range(HIGH_WATER)]
        assert await expand_all(pilot, transcript) == everything + later, "the app's own reopened note has no event and is dropped"


@pytest.mark.parametrize(("lines", "hit"), [(60, 40), (400, 300)])
async def test_find_opens_a_long_output_at_a_hit_past_its_first_lines(server, project: Path, lines: int, hit: int) -> None:
    """Collapsed, a long output shows its first 12 lines: a hit further down expands it and
    scrolls to the line (the log too when the output is taller than it), or the user would be
    shown an entry with nothing marked."""
    from textual.widgets import Log

    from mzagent_tui.widgets.entries import ObservationEntry

    output = "\n".join(f"line {n}" for n in range(lines)).replace(f"line {hit}\n", "the needle is here\n")
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add(*entries_for(Observation("run_terminal_command", output, True, 0), project))
        transcript.add(*entries_for(Observation("run_terminal_command", "short", True, 0), project))
        await pilot.pause()
        await pilot.press("ctrl+f")
        await pilot.press(*"NEEDLE")
        count = app.query_one(SearchBar).query_one("#search-count")
        await wait_for(pilot, lambda: str(count.render()) == "1/1")
        entry = app.query_one(ObservationEntry)
        await wait_for(pilot, lambda: transcript.scroll_offset.y > entry.virtual_region.y)
        assert entry.has_class("-expanded") and entry.has_class("-current-hit")
        log = entry.query_one(Log)
        line_row = entry.virtual_region.y + log.virtual_region.y + hit - log.scroll_offset.y
        assert transcript.scroll_offset.y <= line_row < transcript.scroll_offset.y + transcript.size.height, "the line with the hit is in view"
        await pilot.press("escape")
        await pilot.press("ctrl+f")
        await pilot.press(*"line 3")
        await wait_for(pilot, lambda: str(count.render()) == "1/1")
        assert entry.has_class("-expanded"), "a hit in the first lines changes nothing"
