"""Every kind of approval request through every front-end: what each shows and offers, as it
was when the kind was a string, and the guard that keeps mypy's exhaustiveness checks (the
`assert_never` after each `match`) meaningful: every kind is a member of `ApprovalRequest`."""

from __future__ import annotations

import inspect
import io
from pathlib import Path
from typing import get_args

import pytest
from textual.app import App

from mzagent_tui import acp_server
from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy, PolicyApprover
from mzagent_tui.agent.safety.approval_requests import (
    ApprovalBase,
    ApprovalRequest,
    CommandApproval,
    GitEntryApproval,
    PlantedFileApproval,
    SecretReadApproval,
    ToolCallApproval,
    WriteApproval,
)
from mzagent_tui.headless import TerminalApprover
from mzagent_tui.screens.approval import GRACE_SECONDS, ApprovalScreen
from tests.conftest import RecordingApprover
from tests.test_app import FakeClock

DIFF = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
KINDS: dict[str, ApprovalRequest] = {
    "command": CommandApproval(command="git status --short", cwd="/p", sandbox="sandbox: writes in the project, no network"),
    "tool": ToolCallApproval(cwd="/p", tool="mcp__fs__write", arguments={"path": "ü.py"}),
    "write": WriteApproval(cwd="/p", path="a.py", diff=DIFF, content="x = 2\n"),
    "planted": PlantedFileApproval(cwd="/p", path=".envrc", diff=DIFF, content="x = 2\n", reason="writing it makes tools run code: direnv runs it"),
    "kept": PlantedFileApproval(cwd="/p", path=".envrc", content="x = 2\n", reason="the command created it", after_command=True),
    "git": GitEntryApproval(cwd="/p", path=".git", reason="made a git repository"),
    "secret": SecretReadApproval(what="read .env", cwd="/p", reason="this file usually holds secrets"),
}


def kinds_missing(base: type, union: object) -> set[type]:
    """The concrete subclasses of `base` that are not members of `union`."""
    found: set[type] = set()
    pending = [base]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if not inspect.isabstract(cls):
            found.add(cls)
    return found - set(get_args(union))


def test_every_kind_of_request_is_in_the_union_the_front_ends_match_on() -> None:
    assert kinds_missing(ApprovalBase, ApprovalRequest) == set()
    fewer = CommandApproval | ToolCallApproval | WriteApproval | PlantedFileApproval | GitEntryApproval
    assert kinds_missing(ApprovalBase, fewer) == {SecretReadApproval}, "a kind left out is found"


def test_each_kind_says_what_it_asks_in_one_line() -> None:
    assert {name: request.summary for name, request in KINDS.items()} == {
        "command": "git status --short",
        "tool": 'mcp__fs__write {"path": "ü.py"}',
        "write": "write a.py",
        "planted": "write .envrc",
        "kept": "keep .envrc",
        "git": "keep .git",
        "secret": "read .env",
    }
    assert KINDS["tool"].shown_arguments == '{\n  "path": "ü.py"\n}'


@pytest.mark.parametrize(
    ("name", "title", "kind", "options"),
    [
        ("command", "Run `git status --short`", "execute", ["Allow once", "Always allow `git status`", "Reject"]),
        ("tool", 'Call mcp__fs__write {\n  "path": "ü.py"\n}', "other", ["Allow once", "Always allow mcp__fs__write", "Reject"]),
        ("write", "Write a.py", "edit", ["Allow once", "Allow all writes in this session", "Reject"]),
        ("planted", "write .envrc", "other", ["Allow once", "Reject"]),
        ("kept", "keep .envrc", "other", ["Allow once", "Reject"]),
        ("git", "keep .git", "other", ["Allow once", "Reject"]),
        ("secret", "read .env", "read", ["Allow once", "Reject"]),
    ],
)
def test_acp_asks_each_kind_with_its_title_tool_kind_and_options(name: str, title: str, kind: str, options: list[str], tmp_path: Path) -> None:
    asked = acp_server.Updates(tmp_path, lambda _: None, lambda: 1000).permission("s", KINDS[name])
    assert (asked.tool_call.title, asked.tool_call.kind, [o.name for o in asked.options]) == (title, kind, options)
    has_diff = [getattr(item, "type", "") == "diff" for item in asked.tool_call.content or []]
    assert any(has_diff) is (name == "write"), "only a gated write carries its diff to the client"


@pytest.mark.parametrize(
    ("name", "heading", "choices"),
    [
        ("command", "The agent wants to run:\n  git status --short", "[e]dit / [a]lways / [o]utside sandbox / [w]ith network"),
        ("tool", 'The agent wants to call the tool mcp__fs__write with:\n{\n  "path": "ü.py"\n}', "[a]lways allow this tool"),
        ("write", "The agent wants to do:\n  write a.py", "[a]llow writes like it"),
        ("planted", "The agent wants to do:\n  write .envrc", "[e]dit / [a]lways"),
        ("kept", "The agent wants to do:\n  keep .envrc", "[e]dit / [a]lways"),
        ("git", "The agent wants to do:\n  keep .git", "[e]dit / [a]lways"),
        ("secret", "The agent wants to do:\n  read .env", "[e]dit / [a]lways"),
    ],
)
def test_the_terminal_shows_each_kind_and_its_choices(name: str, heading: str, choices: str) -> None:
    out, prompts = io.StringIO(), []
    answers = iter(["a", "", "n", "n"])

    def read_line(prompt: str) -> str:
        prompts.append(prompt)
        return next(answers)

    decision = TerminalApprover(out, read_line=read_line).approve(KINDS[name])
    assert out.getvalue().startswith(f"\n{heading}\n")
    assert prompts[0] == f"Allow? [y]es / [N]o / [r]eject with reason / {choices}: "
    offers_rule = name in ("command", "tool", "write")
    assert decision.approved is offers_rule, "a allows a rule where one is offered; elsewhere it asks again and Enter rejects"
    assert (decision.always_prefix or decision.allow_writes) == {"command": "git status", "tool": "mcp__fs__write", "write": "*"}.get(name)


@pytest.mark.parametrize(
    ("name", "title", "buttons"),
    [
        ("command", "Run this command?", ["run", "reject", "reason", "edit", "always", "outside", "network"]),
        ("tool", "Call this tool?", ["run", "reject", "reason", "always"]),
        ("write", "Write this file?", ["run", "reject", "reason", "edit", "always"]),
        ("planted", "Write this file?", ["run", "reject", "reason", "edit"]),
        ("git", "Write this file?", ["run", "reject", "reason", "edit"]),
        ("secret", "Allow this?", ["run", "reject", "reason"]),
    ],
)
async def test_the_dialog_titles_each_kind_and_offers_its_buttons(name: str, title: str, buttons: list[str]) -> None:
    clock = FakeClock()
    results: list[ApprovalDecision] = []
    app = App()
    async with app.run_test(size=(100, 40)) as pilot:
        app.push_screen(ApprovalScreen(KINDS[name], clock=clock), callback=results.append)
        await pilot.pause()
        screen = app.screen
        assert str(screen.query_one("#approval-title").render()) == title
        assert [button.id for button in screen.query("Button")] == buttons
        clock.now += GRACE_SECONDS
        await pilot.press("y")
        assert results == [ApprovalDecision(True)]


@pytest.mark.parametrize(
    ("name", "asked"),
    [("command", False), ("tool", False), ("write", False), ("planted", False), ("kept", False), ("git", True), ("secret", False)],
)
def test_yolo_lets_each_kind_through_but_a_git_entry(name: str, asked: bool) -> None:
    user = RecordingApprover(ApprovalDecision(False, note="the user said no"))
    decision = PolicyApprover(user, Policy("yolo")).approve(KINDS[name])
    assert (decision.approved, decision.by_policy, len(user.requests)) == ((False, False, 1) if asked else (True, True, 0))


def test_yolo_still_asks_for_a_secret_the_sandbox_keeps_from_commands() -> None:
    user = RecordingApprover(ApprovalDecision(False))
    home = SecretReadApproval(what="read ../.ssh/id_rsa", cwd="/p", ask_even_if_allowed=True)
    assert not PolicyApprover(user, Policy("yolo")).approve(home).approved and user.requests == [home]
