"""A command that prints a call a docstring example gives another result for is told so."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mzagent_tui.agent.events import Observation
from mzagent_tui.agent.tools.examples import example_mismatch
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, write_reply

SOLUTION = (
    'def mad(numbers):\n    """Mean absolute deviation.\n    >>> mad([1.0, 2.0, 3.0, 4.0])\n    1.0\n    >>> label("a")\n'
    "    'a!'\n    >>> pair(1)\n    (1, 2)\n    \"\"\"\n    return sum(numbers)\n"
)


@pytest.fixture
def solution(tmp_path: Path) -> Path:
    path = tmp_path / "solution.py"
    path.write_text(SOLUTION)
    return path


@pytest.mark.parametrize(
    ("code", "printed", "expected"),
    [
        ("from solution import mad; print(mad([1.0, 2.0, 3.0, 4.0]))", "10.0", "1.0"),
        ("from solution import *; print(label('a'))", "a", "'a!'"),
        ("from solution import *; print(pair(1))", "[1, 2]", "(1, 2)"),
    ],
)
def test_a_printed_call_that_differs_from_its_example_is_found(solution: Path, code: str, printed: str, expected: str) -> None:
    found = example_mismatch(f"python3 -c {json.dumps(code)}", printed + "\n", [solution])
    assert found is not None and (found.printed, found.expected, found.path) == (printed, expected, solution)


@pytest.mark.parametrize(
    ("command", "stdout"),
    [
        ('python3 -c "from solution import mad; print(mad([1.0,2.0,3.0,4.0]))"', "1.0000000001\n"),
        ('python3 -c "from solution import *; print(label(\'a\'))"', "a!\n"),
        ('python3 -c "from solution import *; print(pair(1))"', "(1, 2)\n"),
        ('python3 -c "from solution import mad; print(mad([1.0]))"', "9\n"),
        ('python3 -c "from solution import mad; print(mad([1.0, 2.0, 3.0, 4.0])); print(2)"', "10.0\n2\n"),
        ('python3 -c "print(mad([1.0, 2.0, 3.0, 4.0]))" && echo done', "10.0\ndone\n"),
        ('python3 solution.py', "10.0\n"),
    ],
    ids=["same value", "a string printed bare", "same tuple", "no example for it", "two prints", "two commands", "no -c"],
)
def test_nothing_is_said_when_the_output_matches_or_cannot_be_matched(solution: Path, command: str, stdout: str) -> None:
    assert example_mismatch(command, stdout, [solution]) is None


def run_reply(command: str) -> Reply:
    return Reply(f"<thought>check</thought><action>run_terminal_command({json.dumps(command)})</action>")


def test_the_command_is_told_and_the_same_content_again_is_not_a_step_done(server, project: Path) -> None:
    """A small model got 4.0 for its docstring's example that says 1.0, said it "works correctly",
    and would have been told the same content again was a step done."""
    command = f'{sys.executable} -c "from solution import mad; print(mad([1.0, 2.0, 3.0, 4.0]))"'
    server.script(write_reply("solution.py", SOLUTION), run_reply(command), write_reply("solution.py", SOLUTION), answer_reply())
    agent, rec = make_agent(server, project)
    agent.run("Implement mad in solution.py")
    ran, again = [o.text for o in rec.of(Observation)][1:]
    assert ran.startswith("Command succeeded (exit code 0).\nOutput:\n10.0")
    assert "Note: the docstring in solution.py says mad([1.0, 2.0, 3.0, 4.0]) gives 1.0, but this printed 10.0" in ran
    assert again.startswith(
        "Nothing written: solution.py already holds exactly this content (10 lines, 179 bytes), and a command printed 10.0 for "
        "mad([1.0, 2.0, 3.0, 4.0]), where its docstring says 1.0."
    )
