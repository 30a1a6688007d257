"""Pilot tests for rewind and fork in the app: Esc Esc and /rewind, the choice screens, the files
back, the transcript and the conversation cut, the question before a user's edit is lost."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import OptionList

from mzagent_tui.agent.sessions.history import find_session, list_sessions, load_session
from mzagent_tui.app import MzAgentApp
from mzagent_tui.screens.choose import ChooseScreen
from mzagent_tui.screens.confirm import ConfirmScreen
from tests.scripted_server import Reply, answer_reply, read_reply, write_reply
from tests.test_app import SIZE, approval, entries, make_app, submit, wait_for


def finished(app: MzAgentApp) -> bool:
    return app.conversation.run.state == "done" and not app.conversation.run_active


def choices(app: MzAgentApp) -> list[str]:
    options = app.screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def choose(pilot, downs: int) -> list[str]:  # noqa: ANN001
    """On the choice screen now open: move down `downs` times and press Enter; its labels."""
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChooseScreen))
    screen = pilot.app.screen
    labels = choices(pilot.app)
    await pilot.press(*["down"] * downs, "enter")
    await wait_for(pilot, lambda: pilot.app.screen is not screen)
    return labels


def sent_text(request: dict) -> str:
    return json.dumps(request["messages"])


async def two_tasks(pilot, app: MzAgentApp) -> None:  # noqa: ANN001
    """Task 1 rewrites notes.txt; task 2 runs a command (approved) that changes data.txt."""
    await submit(pilot, "FIRST-TASK rewrite the notes")
    await wait_for(pilot, lambda: finished(app))
    await submit(pilot, "SECOND-TASK change the data")
    await approval(pilot)
    await pilot.press("y")
    await wait_for(pilot, lambda: finished(app) and len(entries(app, "final")) == 2)


SCRIPT = [
    read_reply("notes.txt"), write_reply("notes.txt", "rewritten by the agent\n"), answer_reply("wrote"),
    Reply('<thought>change</thought><action>run_terminal_command("echo changed > data.txt")</action>'), answer_reply("changed"),
]


async def test_esc_esc_rewinds_files_and_conversation_to_before_the_first_task(server, project: Path) -> None:
    (project / "notes.txt").write_text("my notes\n")
    (project / "data.txt").write_text("data v1\n")
    server.script(*SCRIPT, answer_reply("fresh start"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await two_tasks(pilot, app)
        assert (project / "data.txt").read_text() == "changed\n"
        await pilot.press("escape", "escape")
        points = await choose(pilot, downs=1)
        assert points == ["before task 2: SECOND-TASK change the data", "before task 1: FIRST-TASK rewrite the notes"]
        modes = await choose(pilot, downs=0)
        assert modes[0] == "files and conversation" and len(modes) == 3
        await wait_for(pilot, lambda: (project / "notes.txt").read_text() == "my notes\n")
        assert (project / "data.txt").read_text() == "data v1\n"
        assert entries(app, "question") == [] and entries(app, "final") == []
        notices = [e.plain for e in entries(app, "notice")]
        assert "rewound to before the first task (files and conversation)" in notices[-2]
        assert notices[-1].startswith("Files taken back: data.txt, notes.txt.")

        await submit(pilot, "THIRD-TASK")
        await wait_for(pilot, lambda: finished(app) and len(entries(app, "final")) == 1)
        sent = sent_text(server.requests[-1])
        assert "THIRD-TASK" in sent and "FIRST-TASK" not in sent and "SECOND-TASK" not in sent
        assert [e.plain for e in entries(app, "question")] == ["THIRD-TASK"]


async def test_a_single_esc_or_esc_esc_with_text_in_the_box_does_not_rewind(server, project: Path) -> None:
    server.script(answer_reply())
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "FIRST-TASK")
        await wait_for(pilot, lambda: finished(app))
        await pilot.press("escape")
        await pilot.pause(1.0)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ChooseScreen)
        await pilot.press("x", "escape", "escape")
        await pilot.pause()
        assert not isinstance(app.screen, ChooseScreen)  # a positive control: the test above opens it with an empty box


async def test_slash_rewind_asks_before_losing_an_edit_of_yours(server, project: Path) -> None:
    (project / "notes.txt").write_text("my notes\n")
    server.script(read_reply("notes.txt"), write_reply("notes.txt", "agent\n"), answer_reply("wrote"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "FIRST-TASK")
        await wait_for(pilot, lambda: finished(app))
        (project / "notes.txt").write_text("my edit since\n")
        for answer in ("n", "y"):
            await submit(pilot, "/rewind")
            await choose(pilot, downs=0)
            await choose(pilot, downs=0)
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            assert "notes.txt was changed after the agent wrote it" in app.screen.question
            assert (project / "notes.txt").read_text() == "my edit since\n"  # nothing is touched while it asks
            await pilot.press(answer)
            await pilot.pause()
            if answer == "n":
                assert (project / "notes.txt").read_text() == "my edit since\n"
                assert [e.plain for e in entries(app, "question")] == ["FIRST-TASK"]
        await wait_for(pilot, lambda: (project / "notes.txt").read_text() == "my notes\n")
        assert entries(app, "question") == []


async def test_files_only_keeps_the_transcript_and_tells_the_model(server, project: Path) -> None:
    (project / "notes.txt").write_text("my notes\n")
    server.script(read_reply("notes.txt"), write_reply("notes.txt", "agent\n"), answer_reply("wrote"), answer_reply("ok"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "FIRST-TASK")
        await wait_for(pilot, lambda: finished(app))
        await submit(pilot, "/rewind")
        await choose(pilot, downs=0)
        modes = await choose(pilot, downs=2)
        assert modes[2].startswith("files only")
        await wait_for(pilot, lambda: (project / "notes.txt").read_text() == "my notes\n")
        assert [e.plain for e in entries(app, "question")] == ["FIRST-TASK"]
        await submit(pilot, "SECOND-TASK")
        await wait_for(pilot, lambda: len(entries(app, "final")) == 2)
        sent = sent_text(server.requests[-1])
        assert "FIRST-TASK" in sent and "Note: the user undid write 1" in sent


async def test_fork_starts_a_new_session_and_keeps_the_original_log(server, project: Path) -> None:
    server.script(write_reply("a.txt", "A\n"), answer_reply("one"), write_reply("b.txt", "B\n"), answer_reply("two"), answer_reply("forked on"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "FIRST-TASK")
        await wait_for(pilot, lambda: finished(app))
        await submit(pilot, "SECOND-TASK")
        await wait_for(pilot, lambda: finished(app) and len(entries(app, "final")) == 2)
        original = app.conversation.session_folder
        assert original is not None
        log = (original / "log.jsonl").read_bytes()
        await submit(pilot, "/fork")
        points = await choose(pilot, downs=0)
        assert points[0] == "before task 2: SECOND-TASK"
        modes = await choose(pilot, downs=0)
        assert len(modes) == 2  # files only is no fork
        await wait_for(pilot, lambda: app.conversation.session_folder != original)
        assert not (project / "b.txt").exists() and (project / "a.txt").exists()
        assert [e.plain for e in entries(app, "question")] == ["FIRST-TASK"]
        assert f"This is a new session, {app.conversation.session_folder.name}" in entries(app, "notice")[-1].plain
        await submit(pilot, "THIRD-TASK")
        await wait_for(pilot, lambda: len(entries(app, "final")) == 2)
        sent = sent_text(server.requests[-1])
        assert "FIRST-TASK" in sent and "SECOND-TASK" not in sent
    assert (original / "log.jsonl").read_bytes() == log
    assert [t.text for t in load_session(original).tasks] == ["FIRST-TASK", "SECOND-TASK"]
    assert len(list_sessions(project)) == 2


async def test_a_reopened_session_rewinds_and_continues_from_there(server, project: Path) -> None:
    (project / "notes.txt").write_text("my notes\n")
    (project / "data.txt").write_text("data v1\n")
    server.script(*SCRIPT, answer_reply("after the rewind"))
    first = make_app(server, project)
    async with first.run_test(size=SIZE) as pilot:
        await two_tasks(pilot, first)
    app = make_app(server, project, history=find_session(project, "last"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape", "escape")
        await choose(pilot, downs=0)  # before task 2
        await choose(pilot, downs=0)
        await wait_for(pilot, lambda: (project / "data.txt").read_text() == "data v1\n")
        assert (project / "notes.txt").read_text() == "rewritten by the agent\n"
        assert [e.plain for e in entries(app, "question")] == ["FIRST-TASK rewrite the notes"]
        await submit(pilot, "THIRD-TASK")
        await wait_for(pilot, lambda: len(entries(app, "final")) == 2)
        sent = sent_text(server.requests[-1])
        assert "FIRST-TASK" in sent and "SECOND-TASK" not in sent and "echo changed" not in sent and "THIRD-TASK" in sent
