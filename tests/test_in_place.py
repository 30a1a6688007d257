"""Which commands edit files in place (`sed -i`): the files they name are not counted as seen."""

from __future__ import annotations

import pytest

from mzagent_tui.agent.aids.seen import in_place_words
from mzagent_tui.agent.safety.shell_parse import parse


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
    assert bool(in_place_words(parse(command))) is in_place


