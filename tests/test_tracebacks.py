"""Where a failed command's traceback ends in the project, and the write that repeats failing code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mzagent_tui.agent.aids.tracebacks import Failure, python_failure
from mzagent_tui.agent.events import Observation
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, write_reply

FAILING = "def pick(xs):\n    best = None\n    return best[0]\n\n\nprint(pick([1]))\n"


def run_reply(command: str) -> Reply:
    return Reply(f"<thought>run it</thought><action>run_terminal_command({json.dumps(command)})</action>")


def test_the_last_frame_in_the_project_and_the_error_after_it(project: Path) -> None:
    (project / "lib.py").write_text("x\n" * 20)
    (project / "app.py").write_text("x\n")
    output = (
        "Traceback (most recent call last):\n"
        f'  File "{project}/app.py", line 1, in <module>\n    main()\n'
        '  File "lib.py", line 13, in pick\n    return best[0]\n'
        '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads\n    return _default_decoder.decode(s)\n'
        "TypeError: 'NoneType' object is not subscriptable\n"
    )
    failure = python_failure(output, project)
    assert failure == Failure(project / "lib.py", 13, "TypeError: 'NoneType' object is not subscriptable")
    assert failure.describe() == "TypeError: 'NoneType' object is not subscriptable (line 13)"


@pytest.mark.parametrize(
    "output",
    [
        "Error: something else went wrong\n",
        'Traceback (most recent call last):\n  File "/usr/lib/python3.11/runpy.py", line 9, in run\nKeyError: 1\n',
        'Traceback (most recent call last):\n  File "../outside.py", line 2, in f\nValueError: no\n',
        'Traceback (most recent call last):\n  File "gone.py", line 2, in f\nValueError: no\n',
        'Traceback (most recent call last):\n  File "app.py", line 1, in <module>\n',
    ],
    ids=["no traceback", "outside the project", "a relative path out", "no such file", "no error line"],
)
def test_no_failure_without_a_traceback_ending_in_a_project_file(project: Path, output: str) -> None:
    (project / "app.py").write_text("x\n")
    (project.parent / "outside.py").write_text("x\n")
    assert python_failure(output, project) is None


def observations(rec) -> list[str]:  # noqa: ANN001
    return [o.text for o in rec.of(Observation)]


SAME = "Nothing written: pick.py already holds exactly this content (6 lines, 68 bytes).\n"
FAILED_AGAIN = (
    SAME + "Note: since it last changed, it failed when a command ran it: "
    "TypeError: 'NoneType' object is not subscriptable (line 3). The same content again changes nothing: "
    "write different content that fixes that."
)
STEP_DONE = SAME + "Note: that content is from your earlier write, so that step is done"


@pytest.mark.parametrize(
    ("between", "said"),
    [
        ([], FAILED_AGAIN),
        ([write_reply("pick.py", "print(1)\n"), write_reply("pick.py", FAILING)], STEP_DONE),
        ([run_reply("sed -i 's/best = None/best = [2]/' pick.py"), run_reply("sed -i 's/best = \\[2\\]/best = None/' pick.py")], STEP_DONE),
    ],
    ids=["written again at once", "rewritten by the model since", "changed by a command since"],
)
def test_code_written_again_after_it_failed_is_said_to_fail_until_the_file_changes(
    server, project: Path, between: list[Reply], said: str,
) -> None:
    """A small model wrote its code, ran it, saw a TypeError, and wrote the same code again; it was
    told "that step is done" and went round until the time limit. Once the file has changed since
    the failure, the same content is a step done again."""
    server.script(
        write_reply("pick.py", FAILING),
        run_reply(f"{sys.executable} pick.py"),
        *between,
        write_reply("pick.py", FAILING),
        answer_reply("Done."),
    )
    agent, rec = make_agent(server, project)
    agent.run("Write pick.py")
    assert "Command FAILED" in observations(rec)[1]
    assert observations(rec)[-1].startswith(said)


def test_a_failure_is_forgotten_once_another_file_changes(server, project: Path) -> None:
    """The traceback ended in a.py, but the cause was the helper the model had written in utils.py;
    after it rewrote utils.py, writing a.py again was still refused as "it failed when a command
    ran it", and the model broke utils.py again to get past that."""
    caller = "from utils import helper\nprint(helper(4))\n"
    server.script(
        write_reply("utils.py", "def helper():\n    return 1\n"),
        write_reply("a.py", caller),
        run_reply(f"{sys.executable} a.py"),
        write_reply("a.py", caller),
        write_reply("utils.py", "def helper(x):\n    return x * 3\n"),
        write_reply("a.py", caller),
        answer_reply("Done."),
    )
    agent, rec = make_agent(server, project)
    agent.run("Write a.py and utils.py")
    said = observations(rec)
    assert "TypeError: helper() takes 0 positional arguments but 1 was given" in said[2]
    same = "Nothing written: a.py already holds exactly this content (2 lines, 42 bytes).\n"
    assert said[3].startswith(same + "Note: since it last changed, it failed when a command ran it")
    assert said[5].startswith(same + "Note: that content is from your earlier write, so that step is done")


def test_a_failure_in_a_file_the_model_did_not_write_is_not_remembered(server, project: Path) -> None:
    (project / "pick.py").write_text(FAILING)
    server.script(
        run_reply(f"{sys.executable} pick.py"),
        write_reply("pick.py", FAILING),
        answer_reply("Done."),
    )
    agent, rec = make_agent(server, project)
    agent.run("Fix pick.py")
    assert observations(rec)[-1] == SAME + "Note: the file did not change. Write something different if a change is needed."
