"""An in-place edit (`sed -i`) that succeeds and changes nothing is said to have matched nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mzagent_tui.agent.events import Observation
from mzagent_tui.agent.aids.in_place import NOTHING_CHANGED, edits_in_place
from mzagent_tui.agent.safety.shell_parse import parse
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply


@pytest.mark.parametrize(
    ("command", "in_place"),
    [
        ("sed -i 's/a/b/' x.py", True),
        ("sed -Ei 's/a+/b/' x.py", True),
        ("sed -i.bak 's/a/b/' x.py", True),
        ("sed --in-place=.orig 's/a/b/' x.py", True),
        ("/usr/bin/sed -i 's/a/b/' x.py", True),
        ("cd src && sed -i 's/a/b/' x.py", True),
        ("perl -pi -e 's/a/b/' x.py", True),
        ("sed 's/a/b/' x.py > y.py", False),
        ("sed -e 's/i/b/' x.py", False),
        ("sed -n '/i/p' x.py", False),
        ("grep -i total x.py", False),
        ("sed -- -i x.py", False),
    ],
)
def test_which_commands_edit_in_place(command: str, in_place: bool) -> None:
    assert edits_in_place(parse(command)) is in_place


def run_reply(command: str) -> Reply:
    return Reply(f"<thought>edit</thought><action>run_terminal_command({json.dumps(command)})</action>")


@pytest.mark.parametrize(
    ("command", "noted"),
    [
        ("sed -i 's/total(sum_all)/sum_all/' app.py", True),
        ("sed -i 's/total/sum_all/' app.py", False),
        ("sed 's/nothing/here/' app.py", False),
        ("sed -i 's/a/b/' missing.py", False),
    ],
    ids=["matched nothing", "changed the file", "not in place", "failed"],
)
def test_an_in_place_edit_that_changed_nothing_is_said_to_have_matched_nothing(server, project: Path, command: str, noted: bool) -> None:
    """A small model ran a sed whose pattern was not in the file, saw "succeeded", and reported
    the rename done."""
    (project / "app.py").write_text("from util import total\n\nprint(total([1, 2]))\n")
    server.script(run_reply(command), answer_reply())
    agent, rec = make_agent(server, project)
    agent.run("Rename total to sum_all in app.py")
    observation = rec.of(Observation)[-1].text
    assert (NOTHING_CHANGED in observation) is noted
    assert ("Files changed by the command: app.py (modified)" in observation) is (command == "sed -i 's/total/sum_all/' app.py")
