"""The task box's completion list, as a user types: `/` commands and prompt files, `@` files."""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.prompt_commands import user_commands_folder
from mzagent_tui.screens.choose import ChooseScreen
from mzagent_tui.task_completions import file_completions, token_at
from mzagent_tui.widgets.completion_menu import CompletionMenu
from mzagent_tui.widgets.task_input import TaskInput
from tests.scripted_server import answer_reply
from tests.test_app import SIZE, entries, entry_texts, make_app, state, wait_for


def labels(app) -> list[str]:  # noqa: ANN001
    menu = app.query_one(CompletionMenu)
    return [item.label for item in menu.items] if menu.is_open else []


async def type_in(pilot, text: str) -> None:  # noqa: ANN001
    pilot.app.query_one(TaskInput).focus()
    await pilot.press(*text)
    await pilot.pause()


@pytest.mark.parametrize(
    ("value", "cursor", "expected"),
    [
        ("/rev", 4, ("/", 0, 4, "rev")),
        ("/review src", 11, None),
        ("fix @src/ap now", 11, ("@", 4, 11, "src/ap")),
        ("fix @src/ap now", 8, ("@", 4, 11, "src")),
        ("mail me@x.org", 13, None),
        ("//tmp", 5, None),
    ],
)
def test_the_word_being_completed(value: str, cursor: int, expected: tuple | None) -> None:
    token = token_at(value, cursor)
    assert (None if token is None else (token.kind, token.start, token.end, token.text)) == expected


def test_files_match_fuzzily_names_first() -> None:
    files = ["docs/apple.md", "src/app.py", "src/mzagent/application.py", "tests/test_app.py", "README.md"]
    assert [c.label for c in file_completions("app", files)] == ["src/app.py", "docs/apple.md", "src/mzagent/application.py", "tests/test_app.py"]
    assert [c.label for c in file_completions("sapy", files)] == ["src/app.py", "tests/test_app.py", "src/mzagent/application.py"]
    assert file_completions("zzz", files) == []


async def test_slash_lists_built_ins_and_prompt_files_marking_the_projects(server, project: Path) -> None:
    (user_commands_folder()).mkdir(parents=True)
    (user_commands_folder() / "review.md").write_text("Review $ARGUMENTS\n")
    (project / ".mzagent" / "commands").mkdir(parents=True)
    (project / ".mzagent" / "commands" / "release.md").write_text("# Cut a [/x] release\nBump to $1\n")
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await type_in(pilot, "/")
        assert labels(app)[:8] == ["/new", "/undo", "/compact", "/export", "/model", "/mode", "/resume", "/help"]
        menu = app.query_one(CompletionMenu)
        details = {item.label: item.detail for item in menu.items}
        assert details["/release"] == "Cut a [/x] release (from this project)" and details["/review"] == "Review $ARGUMENTS (your prompt file)"
        await pilot.press("r", "e")
        assert labels(app) == ["/resume", "/rewind", "/release", "/review"]
        await pilot.press("down", "down", "down", "tab")
        box = app.query_one(TaskInput)
        assert box.value == "/review " and not menu.is_open
        await pilot.press("escape")  # closed menu: Esc is the app's again, and nothing breaks


async def test_a_prompt_file_runs_with_its_arguments_and_an_unknown_name_says_so(server, project: Path) -> None:
    (project / ".mzagent" / "commands").mkdir(parents=True)
    (project / ".mzagent" / "commands" / "release.md").write_text("Bump the version to $1 and tag it.\n")
    server.script(answer_reply("tagged"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await type_in(pilot, "/rel")
        await pilot.press("enter")  # takes the completion
        await type_in(pilot, "2.0")
        await pilot.press("enter")
        await wait_for(pilot, lambda: state(app) == "done")
        assert server.requests[0]["messages"][1]["content"] == "<question>Bump the version to 2.0 and tag it.</question>"
        await type_in(pilot, "/nosuch thing")
        await pilot.press("escape", "enter")
        await wait_for(pilot, lambda: any("/nosuch is not a prompt file" in t for t in entry_texts(app, "error")))
        assert len(server.requests) == 1


async def test_built_in_commands_do_what_their_keys_do(server, project: Path) -> None:
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await type_in(pilot, "/mode plan")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.policy.mode == "plan")
        await type_in(pilot, "/mode")
        await pilot.press("enter")  # typed in full: Enter runs it rather than completing
        await wait_for(pilot, lambda: isinstance(app.screen, ChooseScreen))
        await pilot.press("escape")
        await type_in(pilot, "/mode sideways")
        await pilot.press("enter")
        await pilot.pause()
        assert app.policy.mode == "plan"
        await type_in(pilot, "/help")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("/compact" in t for t in entry_texts(app, "notice")))
        await type_in(pilot, "/new")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not entries(app))
        assert server.requests == []


async def test_at_completes_a_project_file_and_respects_gitignore(server, project: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("print(1)\n")
    (project / "src" / "app.log").write_text("noise\n")
    (project / ".gitignore").write_text("*.log\n")
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await type_in(pilot, "explain @sapp")
        await wait_for(pilot, lambda: labels(app) != [])
        assert labels(app) == ["src/app.py"]
        await pilot.press("enter")
        box = app.query_one(TaskInput)
        assert box.value == "explain @src/app.py " and not app.query_one(CompletionMenu).is_open
