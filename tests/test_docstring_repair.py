"""Completing a docstring a small model closed with two quotes: only when that, and nothing
else, makes a Python file that did not compile compile."""

from __future__ import annotations

import pytest

from mzagent_tui.agent.docstring_repair import close_docstrings


@pytest.mark.parametrize(("content", "repaired", "lines"), [
    ('def f(s):\n    """Count.\n    >>> f("x")\n    1\n    ""\n    return len(s)', 'def f(s):\n    """Count.\n    >>> f("x")\n    1\n    """\n    return len(s)', [5]),
    ('def f():\n    """Doc.""\n    return 1\n', 'def f():\n    """Doc."""\n    return 1\n', [2]),
    ("def f():\n    '''Doc.''\n    return 1\n", "def f():\n    '''Doc.'''\n    return 1\n", [2]),
    ('"""Mod.""\n\n\ndef f():\n    """Doc.\n    ""  \n    return 1\n', '"""Mod."""\n\n\ndef f():\n    """Doc.\n    """  \n    return 1\n', [1, 6]),
])
def test_a_docstring_closed_with_two_quotes_gets_its_third(content: str, repaired: str, lines: list[int]) -> None:
    assert close_docstrings("m.py", content) == (repaired, lines)
    compile(repaired, "m.py", "exec")


@pytest.mark.parametrize(("name", "content"), [
    ("m.py", 'def f():\n    """Doc."""\n    x = ""\n    return x\n'),  # compiles already: never touched
    ("m.py", 'def f():\n    """Doc.\n    return 1\n'),  # open, but no two-quote line to complete
    ("m.py", 'def f():\n    """\n    ""\n    return (\n'),  # the third quote alone does not make it compile
    ("m.py", 'def f():\n    """Doc.\n    x = "\\""\n'),  # an escaped quote before the pair is not a closing
    ("notes.txt", 'def f():\n    """Doc.""\n    return 1\n'),  # not Python
])
def test_anything_else_is_written_as_it_came(name: str, content: str) -> None:
    assert close_docstrings(name, content) == (content, [])
