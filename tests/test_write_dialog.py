"""The write dialog: the diff, and each of its keys (y, n, Esc, r, e with ctrl+s, a), after the grace period."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Input, TextArea

from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.safety.approval_requests import ApprovalRequest, PlantedFileApproval, WriteApproval
from mzagent_tui.display.diff_view import DiffView
from mzagent_tui.screens.approval import GRACE_SECONDS, ApprovalScreen
from tests.test_app import FakeClock

REQUEST = WriteApproval(
    cwd="/p", reason="fix the sign", path="calc.py",
    diff="--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n",
    content="def add(a, b):\n    return a + b\n",
)


class Styled(App):
    CSS_PATH = Path(__file__).parents[1] / "mzagent_tui" / "app.tcss"


async def answer(*keys: str, text: str = "", request: ApprovalRequest = REQUEST) -> list[ApprovalDecision]:
    clock = FakeClock()
    results: list[ApprovalDecision] = []
    app = Styled()
    async with app.run_test(size=(100, 40)) as pilot:
        app.push_screen(ApprovalScreen(request, clock=clock), callback=results.append)
        await pilot.pause()
        await pilot.press("y")
        assert results == [], "the grace period swallows keys"
        clock.now += GRACE_SECONDS
        screen = app.screen
        assert str(screen.query_one("#approval-title").render()) == "Write this file?"
        assert screen.query_one(DiffView).lines[4:] == ["-    return a - b", "+    return a + b"]
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
            if key == "e" and text:
                editor = screen.query_one(TextArea)
                assert editor.display and editor.text == REQUEST.content and not screen.query_one(DiffView).display
                editor.text = text
            if key in ("r", "a") and text:
                screen.query_one(Input).value = text
    return results


async def test_y_writes() -> None:
    assert await answer("y") == [ApprovalDecision(True)]


@pytest.mark.parametrize("key", ["n", "escape"])
async def test_n_and_escape_reject(key: str) -> None:
    assert await answer(key) == [ApprovalDecision(False)]


async def test_r_rejects_with_a_reason() -> None:
    assert await answer("r", "enter", text="keep the sign") == [ApprovalDecision(False, note="keep the sign")]


async def test_e_edits_the_content_and_ctrl_s_writes_it() -> None:
    decisions = await answer("e", "ctrl+s", text="def add(a, b):\n    return b + a\n")
    assert decisions == [ApprovalDecision(True, content="def add(a, b):\n    return b + a\n", note="content edited by the user")]


async def test_escape_leaves_the_editor_without_answering() -> None:
    assert await answer("e", "escape", "n", text="changed") == [ApprovalDecision(False)]


async def test_a_allows_writes_to_a_glob_for_the_session() -> None:
    decisions = await answer("a", "enter", text="src/*")
    assert decisions == [ApprovalDecision(True, allow_writes="src/*", note="writes to 'src/*' allowed for this session")]


async def test_a_write_that_plants_code_cannot_be_always_allowed() -> None:
    planted = PlantedFileApproval(
        cwd="/p", reason="writing it makes tools run code",
        path=".git/hooks/pre-commit", diff=REQUEST.diff, content="x",
    )
    assert await answer("a", "n", request=planted) == [ApprovalDecision(False)], "a does nothing here; n rejects"
