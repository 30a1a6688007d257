"""Pilot: background commands in the app: `!&command` starts one, the status line counts them,
ctrl+g and /bg list them with their live output, `s` stops the chosen one, and quitting the app
leaves none of their processes."""

from __future__ import annotations

import uuid
from pathlib import Path

from textual.widgets import OptionList, Static

from mzagent_tui.screens.background import BackgroundScreen
from mzagent_tui.widgets.run_status import RunStatus
from tests.test_app import make_app, state, submit, wait_for
from tests.test_background import none_left, with_marker


def status_line(app) -> str:  # noqa: ANN001
    return str(app.query_one(RunStatus).render())


def shown_output(app) -> str:  # noqa: ANN001
    return str(app.screen.query_one("#background-output", Static).render())


async def test_the_panel_lists_shows_live_output_and_stops(server, project: Path) -> None:
    marker = f"mzbg-{uuid.uuid4().hex[:12]}"
    app = make_app(server, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert not isinstance(app.screen, BackgroundScreen)  # none yet: a notice says how to start one
        await submit(pilot, f"!&for i in $(seq 1000); do echo tick-$i [/x]; sleep 0.2; done # {marker}")
        await wait_for(pilot, lambda: state(app) == "done" and "1 in background (ctrl+g)" in status_line(app), timeout=60)  # the first task assembles the agent
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, BackgroundScreen))
        listing = app.screen.query_one("#background-list", OptionList)
        assert listing.option_count == 1 and "bg1" in str(listing.get_option_at_index(0).prompt)
        assert "running" in str(listing.get_option_at_index(0).prompt)
        await wait_for(pilot, lambda: "tick-3 [/x]" in shown_output(app))  # live: later output than at the start, markup shown as text
        await pilot.press("s")
        await wait_for(pilot, lambda: "stopped" in str(app.screen.query_one("#background-list", OptionList).get_option_at_index(0).prompt))
        assert none_left(marker)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, BackgroundScreen) and "in background" not in status_line(app))


async def test_slash_bg_opens_it_and_quitting_leaves_no_process(server, project: Path) -> None:
    marker = f"mzbg-{uuid.uuid4().hex[:12]}"
    app = make_app(server, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, f"!&sleep 300 # {marker}")
        await wait_for(pilot, lambda: state(app) == "done" and bool(with_marker(marker)), timeout=60)  # the first task assembles the agent
        await submit(pilot, "/bg")
        await wait_for(pilot, lambda: isinstance(app.screen, BackgroundScreen))
        await pilot.press("escape")
        await pilot.press("ctrl+q")
    assert none_left(marker, seconds=15)
