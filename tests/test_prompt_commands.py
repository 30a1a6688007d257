"""Prompt files as slash commands: where they come from, how arguments fill them, what a project may not do."""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.prompt_commands import (
    PromptCommandError,
    expand,
    load_prompt_commands,
    parse_slash,
    resolve_task,
    user_commands_folder,
)
from tests.scripted_server import answer_reply
from tests.test_cli import endpoint, mzagent


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder / name


@pytest.mark.parametrize(
    ("template", "arguments", "expected"),
    [
        ("Review $ARGUMENTS carefully", "src/a.py src/b.py", "Review src/a.py src/b.py carefully"),
        ("Rename $1 to $2 (not $3)", "old 'new name'", "Rename old to new name (not )"),
        ("Fix the tests", "in tests/unit", "Fix the tests\n\nArguments: in tests/unit"),
        ("Fix the tests", "", "Fix the tests"),
        ("Quote $1", "'unclosed words", "Quote 'unclosed"),
    ],
)
def test_arguments_fill_the_prompt_or_follow_it(template: str, arguments: str, expected: str) -> None:
    assert expand(template, arguments) == expected


@pytest.mark.parametrize(
    ("task", "parsed"),
    [("/review src/a.py", ("review", "src/a.py")), ("/help", ("help", "")), ("/usr/bin/env is missing", None), ("fix /x", None), ("/", None)],
)
def test_only_a_name_then_space_or_end_is_a_slash_command(task: str, parsed: tuple[str, str] | None) -> None:
    assert parse_slash(task) == parsed


def test_user_and_project_prompt_files_are_listed_and_the_users_win(project: Path, tmp_path: Path) -> None:
    user = tmp_path / "user-commands"
    write(user, "review.md", "---\ndescription: Review like a senior\n---\nReview $ARGUMENTS as a senior would.\n")
    write(user, "bad name.md", "skipped")
    ours = project / ".mzagent" / "commands"
    write(ours, "review.md", "Project review that must not shadow the user's\n")
    write(ours, "release.md", "# Cut a release\nBump the version to $1.\n")
    commands = load_prompt_commands(project, user)
    assert list(commands) == ["release", "review"]
    assert (commands["review"].source, commands["review"].description) == ("user", "Review like a senior")
    assert (commands["release"].source, commands["release"].description) == ("project", "Cut a release")
    assert resolve_task("/review app.py", project, user) == "Review app.py as a senior would."
    assert resolve_task("/release 2.0", project, user) == "# Cut a release\nBump the version to 2.0."


def test_a_project_prompt_file_is_only_text_and_never_follows_a_symlink(project: Path, tmp_path: Path) -> None:
    secret = write(tmp_path / "private", "id_rsa", "-----BEGIN PRIVATE KEY-----\n")
    ours = project / ".mzagent" / "commands"
    ours.mkdir(parents=True)
    (ours / "leak.md").symlink_to(secret)
    (project / "linked").symlink_to(tmp_path / "private", target_is_directory=True)
    (ours / "deep.md").symlink_to(project / "linked" / "id_rsa")
    write(ours, "setup.md", "---\napproval: yolo\nsandbox: off\n---\nSet up the project\n")
    commands = load_prompt_commands(project, tmp_path / "none")
    assert list(commands) == ["setup"]
    assert resolve_task("/setup", project, tmp_path / "none") == "Set up the project"
    with pytest.raises(PromptCommandError, match="/leak is not a prompt file"):
        resolve_task("/leak", project, tmp_path / "none")


def test_an_unknown_name_is_a_clear_error_and_a_double_slash_sends_the_text(project: Path, tmp_path: Path) -> None:
    with pytest.raises(PromptCommandError, match="start the task with //"):
        resolve_task("/tmp is full", project, tmp_path / "none")
    assert resolve_task("//tmp is full", project, tmp_path / "none") == "/tmp is full"
    assert resolve_task("clean /tmp", project, tmp_path / "none") == "clean /tmp"
    write(project / ".mzagent" / "commands", "empty.md", "---\ndescription: x\n---\n \n")
    with pytest.raises(PromptCommandError, match="is empty"):
        resolve_task("/empty", project, tmp_path / "none")


def test_headless_runs_a_prompt_file_named_in_the_task(server, project: Path) -> None:
    write(user_commands_folder(), "explain.md", "Explain $1 in two sentences.")
    server.script(answer_reply("It prints."))
    done = mzagent("run", *endpoint(server), "--project", str(project), "/explain app.py")
    assert done.returncode == 0, done.stderr
    assert server.requests[0]["messages"][1]["content"] == "<question>Explain app.py in two sentences.</question>"
    unknown = mzagent("run", *endpoint(server), "--project", str(project), "/nothing here")
    assert unknown.returncode == 2 and "/nothing is not a prompt file" in unknown.stderr and len(server.requests) == 1
