"""The dialog for a tool server's tool: server, tool and JSON arguments; y, n, r and a."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Button, Input

from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.safety.approval_requests import ToolCallApproval
from mzagent_tui.headless import TerminalApprover
from mzagent_tui.screens.approval import GRACE_SECONDS, ApprovalScreen
from tests.test_app import FakeClock

REQUEST = ToolCallApproval(cwd="/p", reason="clean up", tool="mcp__files__delete", arguments={"path": "a.py"})


class Styled(App):
    CSS_PATH = Path(__file__).parents[1] / "mzagent_tui" / "app.tcss"


async def answer(*keys: str, text: str | None = None) -> tuple[list[ApprovalDecision], str]:
    clock = FakeClock()
    results: list[ApprovalDecision] = []
    app = Styled()
    async with app.run_test(size=(100, 40)) as pilot:
        app.push_screen(ApprovalScreen(REQUEST, clock=clock), callback=results.append)
        await pilot.pause()
        clock.now += GRACE_SECONDS
        screen = app.screen
        shown = "\n".join(str(getattr(widget.content, "code", widget.content)) for widget in screen.query("Label, Static"))
        assert [str(b.label) for b in screen.query(Button)] == ["Call once [y]", "Reject [n]", "Reason [r]", "Always [a]"]
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
            if key in ("r", "a"):
                box = screen.query_one(Input)
                if key == "a":
                    assert box.value == "mcp__files__delete"
                if text is not None:
                    box.value = text
    return results, shown


async def test_the_dialog_shows_server_tool_and_arguments() -> None:
    _, shown = await answer()
    assert "Call this tool?" in shown
    assert 'delete  (MCP server "files")' in shown
    assert '"path": "a.py"' in shown and "clean up" in shown


@pytest.mark.parametrize(
    ("keys", "text", "decision"),
    [
        (("y",), None, ApprovalDecision(True)),
        (("n",), None, ApprovalDecision(False)),
        (("r", "enter"), "not that file", ApprovalDecision(False, note="not that file")),
        (("a", "enter"), None, ApprovalDecision(True, always_prefix="mcp__files__delete")),
        (("a", "enter"), "mcp__files__*", ApprovalDecision(True, always_prefix="mcp__files__*")),
        (("a", "ctrl+s"), None, ApprovalDecision(True, always_prefix="mcp__files__delete", save_rule=True)),
    ],
)
async def test_each_key(keys: tuple[str, ...], text: str | None, decision: ApprovalDecision) -> None:
    results, _ = await answer(*keys, text=text)
    assert results == [decision]


def test_the_terminal_asks_for_a_tool_call() -> None:
    import io

    out = io.StringIO()
    answers = iter(["a", "n"])
    decision = TerminalApprover(out, read_line=lambda prompt: next(answers)).approve(REQUEST)
    assert decision == ApprovalDecision(True, always_prefix="mcp__files__delete", save_rule=False)
    assert "call the tool mcp__files__delete with:" in out.getvalue() and '"path": "a.py"' in out.getvalue()
