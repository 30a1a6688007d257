"""The aid `task.no_change`: a task that says to change nothing is taken at its word, and the
project is read-only for it (the write tools refuse, commands see the project read-only), as in
plan mode. Asked to explain and change nothing, the bundled model changed the file it was asked
about."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mzagent_tui.agent.aids.completion import read_task
from mzagent_tui.agent.events import AidFired, Notice, Observation, StopReason
from tests.attack_helpers import needs_namespaces
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, read_reply, write_reply

CODE = "def total(items):\n    return sum(items) * 0\n"


@pytest.mark.parametrize(
    ("task", "no_change"),
    [
        ("Why does total() in cart.py return 0? Don't change anything, just explain.", True),
        ("Which shard is customer C-20931 on? No code changes please, I just need it.", True),
        ("just explain what cart.py does", True),
        ("Fix total() in cart.py, but don't touch the tests.", False),  # a part is kept, the rest changes
        ("Make the report faster without changing its output.", False),  # a limit on a fix
        ("Fix total() in cart.py.", False),
        ("Explain why total() returns 0.", False),  # no word against changing: the answer checks judge it
    ],
)
def test_which_tasks_say_to_change_nothing(project: Path, task: str, no_change: bool) -> None:
    (project / "cart.py").write_text(CODE)
    assert read_task(project, task).no_change is no_change


def test_a_write_in_a_task_that_says_to_change_nothing_is_refused(server, project: Path) -> None:
    (project / "cart.py").write_text(CODE)
    server.script(
        read_reply("cart.py"),
        write_reply("cart.py", "def total(items):\n    return sum(items)\n"),
        Reply(f"<action>edit_file({json.dumps('cart.py')}, {json.dumps(' * 0')}, {json.dumps('')})</action>"),
        answer_reply("It multiplies the sum by 0."),
    )
    agent, rec = make_agent(server, project)
    result = agent.run("Why does total() in cart.py return 0? Don't change anything, just explain.")
    assert result.reason is StopReason.FINAL_ANSWER and (project / "cart.py").read_text() == CODE
    refused = [o.text for o in rec.of(Observation)][1:3]
    assert all("nothing was written to cart.py: the task says to change nothing" in text for text in refused), refused
    assert [e.name for e in rec.of(AidFired)] == ["task.no_change"]
    assert "the project is read-only for this task" in server.requests[0]["messages"][1]["content"]
    assert any("the project is read-only for it" in n.text for n in rec.of(Notice))


def test_the_next_task_may_change_files_again(server, project: Path) -> None:
    (project / "cart.py").write_text(CODE)
    server.script(answer_reply("It multiplies by 0."), read_reply("cart.py"), write_reply("cart.py", "fixed\n"), answer_reply("Fixed."))
    agent, _ = make_agent(server, project)
    agent.run("Why does total() in cart.py return 0? Don't change anything, just explain.")
    agent.run("Thanks. Now fix it.")
    assert (project / "cart.py").read_text() == "fixed\n"


def test_switched_off_the_write_goes_through(server, project: Path) -> None:
    """Control: with the aid off, the same write is made (and the answer check then speaks)."""
    (project / "cart.py").write_text(CODE)
    server.script(read_reply("cart.py"), write_reply("cart.py", "changed\n"), answer_reply("Done."), answer_reply("Done."))
    agent, _ = make_agent(server, project, disable_aids=["task.no_change"])
    agent.run("Why does total() in cart.py return 0? Don't change anything, just explain.")
    assert (project / "cart.py").read_text() == "changed\n"


@needs_namespaces
def test_a_command_in_such_a_task_sees_the_project_read_only(server, project: Path) -> None:
    (project / "cart.py").write_text(CODE)
    server.script(
        Reply('<action>run_terminal_command("echo changed > cart.py; touch made.txt; cat cart.py")</action>'),
        answer_reply("It multiplies by 0."),
    )
    agent, rec = make_agent(server, project, sandbox="workspace")
    agent.run("Why does total() in cart.py return 0? Don't change anything, just explain.")
    assert (project / "cart.py").read_text() == CODE and not (project / "made.txt").exists()
    assert "Read-only file system" in rec.of(Observation)[0].text
