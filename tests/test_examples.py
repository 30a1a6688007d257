"""Docstring examples: a command that prints calls they give other results for is told so, and
once every checked example has printed what it should, the model is told that once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mzagent_tui.agent.aids.examples import checked_calls, docstring_examples, printed_examples
from mzagent_tui.agent.events import Observation
from mzagent_tui.agent.safety.shell_parse import parse
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
    found = printed_examples(parse(f"python3 -c {json.dumps(code)}"), printed + "\n", [solution])
    assert [(one.printed, one.expected, one.path, one.matches) for one in found] == [(printed, expected, solution, False)]


@pytest.mark.parametrize(
    ("command", "stdout"),
    [
        ('python3 -c "from solution import mad; print(mad([1.0,2.0,3.0,4.0]))"', "1.0000000001\n"),
        ('python3 -c "from solution import *; print(label(\'a\'))"', "a!\n"),
        ('python3 -c "from solution import *; print(pair(1))"', "(1, 2)\n"),
        ('python3 -c "from solution import mad; print(mad([1.0]))"', "9\n"),
        ('python3 -c "from solution import mad; print(mad([1.0, 2.0, 3.0, 4.0])); print(2)"', "10.0\n"),
        ('python3 -c "from solution import mad; x = 1; print(mad([1.0, 2.0, 3.0, 4.0]))"', "10.0\n"),
        ('python3 -c "print(mad([1.0, 2.0, 3.0, 4.0]))" && echo done', "10.0\ndone\n"),
        ('python3 solution.py', "10.0\n"),
    ],
    ids=["same value", "a string printed bare", "same tuple", "no example for it", "two prints, one line", "code besides prints", "two commands", "no -c"],
)
def test_nothing_is_said_when_the_output_matches_or_cannot_be_matched(solution: Path, command: str, stdout: str) -> None:
    assert [found for found in printed_examples(parse(command), stdout, [solution]) if not found.matches] == []


def test_each_print_of_several_is_set_beside_its_own_example(solution: Path) -> None:
    command = 'python3 -c "from solution import *; print(mad([1.0, 2.0, 3.0, 4.0])); print(label(\'a\')); print(pair(1))"'
    found = printed_examples(parse(command), "1.0\nb\n[1, 2]\n", [solution])
    assert [(one.call, one.printed, one.matches) for one in found] == [
        ("mad([1.0, 2.0, 3.0, 4.0])", "1.0", True), ("label('a')", "b", False), ("pair(1)", "[1, 2]", False),
    ]


ONE_LINE = """def fly(q, w):
    '''True if q is balanced and light enough.

    Examples:
    fly([1, 2], 5) ➞ False
    * fly([3], 5) => true
    fly( [3,2,3], 9 ) == True
    fly([1], 0) -> False  # too heavy
    fly([2], 1) gives an error, as said above
    '''
"""


def test_one_line_examples_are_read_with_their_arrows_and_plain_words(tmp_path: Path) -> None:
    """`➞`, `=>`, `==` and `->` forms, a bullet before, `true` for True, a comment after the value
    left out; prose after the call is not an example."""
    path = tmp_path / "fly.py"
    path.write_text(ONE_LINE + "    return None\n")
    assert docstring_examples(path) == {
        "fly([1, 2], 5)": "False", "fly([3], 5)": "True", "fly([3, 2, 3], 9)": "True", "fly([1], 0)": "False",
    }


INPUT_OUTPUT = """def top(arr, k):
    \"\"\"The k largest numbers of arr, sorted.

    Example 1:
        Input: arr = [4, -4, 4], k = 2
        Output: [4, 4]
    Example 2:
        Input: k = 1, arr = [1,2]

        Output: [2]
    Example 3:
        Input: arr = [1]
        Output: [1]
    Example 4:
        Input: arr = some list, k = 3
        Output: its top three
    \"\"\"
"""


def test_input_and_output_lines_make_an_example_when_they_give_every_parameter(tmp_path: Path) -> None:
    """Keywords in any order, a blank line between; a missing parameter or prose is not an example."""
    path = tmp_path / "top.py"
    path.write_text(INPUT_OUTPUT + "    return sorted(arr)[-k:]\n")
    assert docstring_examples(path) == {"top(arr=[4, -4, 4], k=2)": "[4, 4]", "top(k=1, arr=[1, 2])": "[2]"}
    one = tmp_path / "first.py"
    one.write_text("def first(items):\n    \"\"\"\n    Input: [3, 1]\n    Output: 3\n    \"\"\"\n    return items[0]\n")
    assert docstring_examples(one) == {"first([3, 1])": "3"}


def test_the_checked_calls_are_the_first_examples_of_functions_the_file_defines(tmp_path: Path) -> None:
    path = tmp_path / "pkg" / "fly.py"
    path.parent.mkdir()
    path.write_text(ONE_LINE.replace("    Examples:", '    >>> helper("x")\n    1\n    >>> fly([5], 9)\n    True\n    Examples:') + "    return None\n")
    assert checked_calls(path) == ["fly([5], 9)", "fly([1, 2], 5)", "fly([3], 5)", "fly([3, 2, 3], 9)"]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("no examples.py", "def f(x):\n    \"\"\"Double x.\"\"\"\n    return 2 * x\n"),
        ("quotes.py", "def f(x):\n    \"\"\"\n    >>> f('a\"b')\n    2\n    >>> f('$HOME')\n    3\n    \"\"\"\n"),
        ("method.py", "class A:\n    def f(self):\n        \"\"\"\n        >>> A().f()\n        2\n        \"\"\"\n"),
        ("broken.py", "def f(x:\n    \"\"\"\n    >>> f(1)\n    2\n"),
    ],
    ids=["no examples", "quotes and $ a command would change", "no top-level function", "does not parse"],
)
def test_no_checked_calls_where_no_command_could_print_them(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert checked_calls(path) == []


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
        "Nothing written: solution.py already holds exactly this content (10 lines, 179 bytes).\nNote: since it last changed, "
        "a command printed 10.0 for mad([1.0, 2.0, 3.0, 4.0]), where its docstring says 1.0."
    )


WRONG_FLY = ONE_LINE + "    return sum(q) <= w\n"


def test_once_every_checked_example_printed_right_since_the_last_change_the_model_is_told_once(server, project: Path) -> None:
    """A small model tried each example in its own command, then invented more cases until the
    step limit. Examples printed by two commands count together; a change starts the count again."""
    fixed = WRONG_FLY.replace("return sum(q) <= w", "return q == q[::-1] and sum(q) <= w")
    first = 'python3 -c "from fly import fly; print(fly([1, 2], 5)); print(fly([3], 5))"'
    rest = 'python3 -c "from fly import fly; print(fly([3, 2, 3], 9)); print(fly([1], 0))"'
    server.script(
        write_reply("fly.py", fixed), run_reply(first), run_reply(rest), run_reply(rest.replace(", ", ",")),
        write_reply("fly.py", fixed + "\n"), run_reply(first), run_reply(rest), answer_reply("Implemented fly."),
    )
    agent, rec = make_agent(server, project)
    agent.run("Implement fly in fly.py")
    told = ["now all print what the docstring says" in o.text for o in rec.of(Observation) if o.tool == "run_terminal_command"]
    assert told == [False, True, False, False, True]
    assert rec.of(Observation)[2].text.endswith(
        "Note: the docstring examples of fly.py now all print what the docstring says. If nothing else is left, give your final answer."
    )


def test_deeply_nested_code_in_a_docstring_or_a_command_is_no_example_and_raises_nothing(tmp_path: Path) -> None:
    """50,000 terms: too deep for the parser's recursion, in every place an example is read from."""
    deep = "+".join(["1"] * 50_000)
    path = tmp_path / "deep.py"
    path.write_text(f'def g(x):\n    """\n    >>> g({deep})\n    1\n    g([{deep}]) ➞ 2\n    Input: {deep}\n    Output: {deep}\n    """\n    return x\n')
    assert docstring_examples(path) == {}
    assert checked_calls(path) == []
    assert printed_examples(parse(f'python3 -c "print(g({deep}))"'), "1\n", [path]) == []
