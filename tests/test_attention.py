"""The app calls the user back (bell or desktop-notification escapes) when a dialog opens or a
run ends, and not while they type. Sequences are captured from the terminal driver."""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.app import MzAgentApp
from mzagent_tui.attention import TYPING_PAUSE, Attention, attention_sequence
from mzagent_tui.widgets.task_input import TaskInput
from tests.conftest import config_for
from tests.test_app import COMMAND_THEN_ANSWER, SIZE, FakeClock, approval, state, submit, wait_for


def test_the_sequences() -> None:
    assert attention_sequence("bell", "t", "b") == "\a"
    assert attention_sequence("off", "t", "b") == ""
    osc = attention_sequence("osc", "mzagent run ended", "final; answer\x1b]0;evil\x07 given")
    assert osc == "\x1b]9;mzagent run ended: final, answer given\x07\x1b]777;notify;mzagent run ended;final, answer given\x07"


def test_no_signal_while_typing() -> None:
    clock = FakeClock()
    attention = Attention("bell", clock)
    attention.typed()
    assert attention.signal("t", "b") == ""
    clock.now += TYPING_PAUSE
    assert attention.signal("t", "b") == "\a"


@pytest.mark.parametrize(("mode", "expected"), [
    ("bell", ["\a", "\a"]),
    ("osc", ["\x1b]9;mzagent needs approval: echo listed > out.txt\x07\x1b]777;notify;mzagent needs approval;echo listed > out.txt\x07",
             "\x1b]9;mzagent run ended: final answer\x07\x1b]777;notify;mzagent run ended;final answer\x07"]),
    ("off", []),
])
async def test_the_dialog_and_the_end_of_a_run_signal(server, project: Path, mode: str, expected: list[str]) -> None:
    server.script(*COMMAND_THEN_ANSWER)
    clock = FakeClock()
    app = MzAgentApp(config_for(server, project, notify=mode), clock=clock)
    written: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        app._driver.write = written.append  # the driver is where Textual's own bell goes
        await submit(pilot, "list")
        await approval(pilot)
        await pilot.pause(0.4)
        await pilot.press("y")
        await wait_for(pilot, lambda: state(app) == "done")
    assert [w for w in written if w.startswith(("\a", "\x1b]9"))] == expected


async def test_typing_in_the_task_box_holds_the_signal_back(server, project: Path) -> None:
    server.script(*COMMAND_THEN_ANSWER)
    clock = FakeClock()
    app = MzAgentApp(config_for(server, project), clock=clock)
    written: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        app._driver.write = written.append
        app.query_one(TaskInput).focus()
        await pilot.press("l", "i", "s", "t", "enter")
        await approval(pilot)
        assert "\a" not in written, "the user was typing a moment ago"
        clock.now += TYPING_PAUSE
        await pilot.pause(0.4)
        await pilot.press("n")
        await wait_for(pilot, lambda: state(app) == "done")
    assert written.count("\a") == 1, "the end of the run, after the pause, rings"
