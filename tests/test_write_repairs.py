"""Repairs of a small model's Python slips: only when they, and nothing else, make a Python file
that did not compile compile."""

from __future__ import annotations

import pytest

from mzagent_tui.agent.aids.write_repairs import repair, repair_python

CLOSED = "The docstring's closing quotes on line{} were completed (two quotes became three)."
SPLIT = "Line{} put a block statement after ; so {} written as separate, indented lines."


@pytest.mark.parametrize(("content", "repaired", "said"), [
    ('def f(s):\n    """Count.\n    >>> f("x")\n    1\n    ""\n    return len(s)', 'def f(s):\n    """Count.\n    >>> f("x")\n    1\n    """\n    return len(s)', [CLOSED.format(" 5")]),
    ('def f():\n    """Doc.""\n    return 1\n', 'def f():\n    """Doc."""\n    return 1\n', [CLOSED.format(" 2")]),
    ("def f():\n    '''Doc.''\n    return 1\n", "def f():\n    '''Doc.'''\n    return 1\n", [CLOSED.format(" 2")]),
    ('"""Mod.""\n\n\ndef f():\n    """Doc.\n    ""  \n    return 1\n', '"""Mod."""\n\n\ndef f():\n    """Doc.\n    """  \n    return 1\n', [CLOSED.format("s 1, 6")]),
])
def test_a_docstring_closed_with_two_quotes_gets_its_third(content: str, repaired: str, said: list[str]) -> None:
    assert repair_python("m.py", content) == (repaired, said)
    compile(repaired, "m.py", "exec")


def test_block_statements_after_semicolons_become_nested_lines() -> None:
    """The model's own line (a conversion script), written three times after it was told why it fails."""
    line = "import csv; with open('a.csv') as f, open('a.json', 'w') as out: rows = list(csv.DictReader(f)); for row in rows: out.write(str(row))"
    content, said = repair_python("convert.py", line)
    assert content == (
        "import csv\n"
        "with open('a.csv') as f, open('a.json', 'w') as out:\n"
        "    rows = list(csv.DictReader(f))\n"
        "    for row in rows:\n"
        "        out.write(str(row))"
    )
    assert said == [SPLIT.format(" 1", "it was")]


def test_only_the_lines_the_compiler_stops_at_are_split_and_their_indent_kept() -> None:
    """A docstring that reads like a one-line block stays as it is: it is text, not code."""
    content = 'def f(xs):\n    """Sum; for x in xs: add x"""\n    total = 0; for x in xs: total += x\n    n = 0; while n < 3: n += 1\n    return total, {"k": n}["k"]\n'
    repaired, said = repair_python("m.py", content)
    assert repaired == (
        'def f(xs):\n    """Sum; for x in xs: add x"""\n    total = 0\n    for x in xs:\n        total += x\n'
        '    n = 0\n    while n < 3:\n        n += 1\n    return total, {"k": n}["k"]\n'
    )
    assert said == [SPLIT.format("s 3, 4", "they were")]


def test_both_slips_in_one_file_are_repaired_together() -> None:
    content = 'def f(xs):\n    """Doc.\n    ""\n    s = 0; for x in xs: s += x\n    return s\n'
    repaired, said = repair_python("m.py", content)
    assert repaired == 'def f(xs):\n    """Doc.\n    """\n    s = 0\n    for x in xs:\n        s += x\n    return s\n'
    assert said == [CLOSED.format(" 3"), SPLIT.format(" 4", "it was")]


@pytest.mark.parametrize(("name", "content"), [
    ("m.py", 'def f():\n    """Doc."""\n    x = ""\n    return x\n'),  # compiles already: never touched
    ("m.py", "x = 1; y = 2\nif x: print(y)\n"),  # compiles: one-line blocks at the start of a line are Python
    ("m.py", 'def f():\n    """Doc.\n    return 1\n'),  # open, but no two-quote line to complete
    ("m.py", 'def f():\n    """\n    ""\n    return (\n'),  # the third quote alone does not make it compile
    ("m.py", 'def f():\n    """Doc.\n    x = "\\""\n'),  # an escaped quote before the pair is not a closing
    ("m.py", "if a: b(); else: c()\n"),  # which block an else belongs to cannot be read from one line
    ("m.py", "x = 1; for i in range(3): y = (\n"),  # split, it still does not compile
    ("m.py", "x = 1; for i in range(3) print(i)\n"),  # no header colon: not a block to open
    ("notes.txt", 'def f():\n    """Doc.""\n    return 1\n'),  # not Python
    ("run.sh", "x=1; for i in 1 2: do echo; done\n"),
])
def test_anything_else_is_written_as_it_came(name: str, content: str) -> None:
    assert repair_python(name, content) == (content, [])


TABBED = "Line{} began with \\t written out (a backslash and a t, not a tab), so it became indentation."


@pytest.mark.parametrize(("content", "repaired", "lines"), [
    ("def is_even(n):\n    \\treturn n % 2 == 0\n", "def is_even(n):\n        return n % 2 == 0\n", " 2"),
    ("def f(x):\n\\tif x:\n\\t\\treturn '\\t'\n\\treturn 0\n", "def f(x):\n    if x:\n        return '\\t'\n    return 0\n", "s 2, 3, 4"),
])
def test_written_out_tab_escapes_at_line_starts_become_indentation(content: str, repaired: str, lines: str) -> None:
    """The model's own write (a fenced block, where nothing is escaped), sent twice after the
    file was said not to parse. A \\t inside a string stays as it is."""
    assert repair_python("even.py", content) == (repaired, [TABBED.format(lines)])
    compile(repaired, "even.py", "exec")


@pytest.mark.parametrize("content", ["print('\\tx')\n", "x = 1\n\\tprint(x)\n"], ids=["compiles already", "still does not compile"])
def test_written_out_tabs_are_left_unless_that_alone_makes_the_file_compile(content: str) -> None:
    assert repair_python("m.py", content) == (content, [])


def test_an_escaped_substitution_in_a_shell_script_loses_its_backslash() -> None:
    """The model's own script, written four times after it was told that \\$ is a literal dollar."""
    content, said = repair("squares.sh", "#!/bin/bash\nfor i in {1..5}; do\n  echo \\$((i * i))\ndone\n")
    assert content == "#!/bin/bash\nfor i in {1..5}; do\n  echo $((i * i))\ndone\n"
    assert said == ["\\$( became $( on line 3 (a backslash makes $ a literal dollar sign)."]


@pytest.mark.parametrize(("name", "content"), [
    ("price.sh", "echo \\$5 and \\$HOME\n"),  # literal dollars that parse: meant
    ("ok.sh", "echo '\\$((1))'\n"),  # parses: inside single quotes it is text
    ("broken.sh", "echo \\$((1))\nif then\n"),  # still broken without the backslash
    ("notes.txt", "echo \\$((1))\n"),
])
def test_a_shell_script_is_repaired_only_when_that_alone_makes_it_parse(name: str, content: str) -> None:
    assert repair(name, content) == (content, [])


TRAILING = "It had a comma after the last item of a list or object, which JSON does not allow, so it was written without it."


def test_trailing_commas_in_a_json_file_are_removed_and_nothing_else_changes() -> None:
    content = '{\n  "name": "box, with commas,]",\n  "sizes": [1, 2, 3,],\n  "open": true,\n}\n'
    assert repair("data.json", content) == ('{\n  "name": "box, with commas,]",\n  "sizes": [1, 2, 3],\n  "open": true\n}\n', [TRAILING])


@pytest.mark.parametrize(("name", "content"), [
    ("data.json", '{"a": [1, 2]}\n'),  # parses already
    ("data.json", '{"a": [1 2,]}\n'),  # another fault is left: written as it came, and the write says why it does not parse
    ("data.json", "[,]\n"),  # a comma with no item before it is no trailing comma
    ("list.txt", "[1, 2,]\n"),  # not JSON
])
def test_json_is_repaired_only_when_trailing_commas_are_its_only_fault(name: str, content: str) -> None:
    assert repair(name, content) == (content, [])
