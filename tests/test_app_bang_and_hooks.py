"""Pilot: `!command` in the task box runs at once, as its own transcript entries, with no dialog;
a hook that blocks a call shows as a notice."""

from __future__ import annotations

from pathlib import Path

from mzagent_tui.screens.approval import ApprovalScreen
from tests.scripted_server import answer_reply, write_reply
from tests.test_app import entries, entry_texts, make_app, state, submit, wait_for
from tests.test_hooks import hook, user_config


async def test_bang_runs_without_a_dialog_and_shows_its_output(server, project: Path) -> None:
    app = make_app(server, project)
    screens: list[object] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, "!echo hi [/x] && echo made > made.txt")
        await wait_for(pilot, lambda: (screens.append(pilot.app.screen) or state(app) == "done"))
        actions = entries(app, "action")
        assert len(actions) == 1 and actions[0].plain == "echo hi [/x] && echo made > made.txt"
        assert "hi [/x]" in entry_texts(app, "observation")[0]
        assert not any(isinstance(screen, ApprovalScreen) for screen in screens)
        assert not isinstance(pilot.app.screen, ApprovalScreen)
        assert (project / "made.txt").read_text() == "made\n"
        assert server.requests == []
        assert [e.kind for e in entries(app)].count("question") == 0


async def test_bare_bang_says_how_to_use_it(server, project: Path) -> None:
    app = make_app(server, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, "!")
        await wait_for(pilot, lambda: bool(entries(app, "error")))
        assert "`!` needs a command" in entries(app, "error")[0].plain
        assert server.requests == []


async def test_a_blocking_hook_shows_in_the_transcript(server, project: Path) -> None:
    user_config(hook("before_tool", "echo 'no writes here [/x]' >&2; exit 2", tool="write_to_file") + hook("before_tool", "true"))
    server.script(write_reply("a.txt", "hi\n"), answer_reply(), answer_reply())  # the answer is sent back once: a.txt is missing
    app = make_app(server, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, "write a.txt")
        await wait_for(pilot, lambda: state(app) == "done")
        hooks = [e for e in entries(app, "notice") if e.plain.startswith("before_tool write_to_file")]
        assert len(hooks) == 1 and "no writes here [/x]" in hooks[0].plain  # the hook that exited 0 is not shown
        assert not (project / "a.txt").exists()
