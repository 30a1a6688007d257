"""Taking a definition out of a module and importing it back (`tools/moves.py`)."""

from __future__ import annotations

import pytest

from mzagent_tui.agent.aids.moves import without_definition


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # No import: the import goes first, two blank lines before the code.
        ("def f():\n    return 1\n\n\ndef g():\n    return f()\n", "from helpers import f\n\n\ndef g():\n    return f()\n"),
        # After the last import; a decorator goes with its function.
        ("import os\n\n\n@cache\ndef f():\n    return 1\n\n\nX = f()\n", "import os\nfrom helpers import f\n\n\nX = f()\n"),
        # After a module docstring when nothing is imported.
        ('"""Doc."""\n\n\nclass f:\n    pass\n\n\nY = f()\n', '"""Doc."""\nfrom helpers import f\n\n\nY = f()\n'),
    ],
)
def test_a_definition_taken_out_is_imported_back(source: str, expected: str) -> None:
    assert without_definition(source.encode(), "f", "helpers") == expected


@pytest.mark.parametrize("source", ["def g():\n    pass\n", "def f(:\n", "class A:\n    def f(self):\n        pass\n"])
def test_nothing_is_offered_when_the_module_does_not_define_it_at_the_top_or_does_not_parse(source: str) -> None:
    assert without_definition(source.encode(), "f", "helpers") is None
