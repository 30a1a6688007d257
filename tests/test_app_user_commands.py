"""Pilot: `!command` in the task box runs at once, as its own transcript entries, with no dialog."""

from __future__ import annotations

from pathlib import Path

from mzagent_tui.screens.approval import ApprovalScreen
from tests.test_app import entries, entry_texts, make_app, state, submit, wait_for


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
