"""Names a Python write uses but never defines or imports (aids/undefined.py), as the answer check
`answer.undefined` reads and says them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mzagent_tui.agent.aids.undefined import new_undefined_names, sibling_imports, undefined_note
from mzagent_tui.agent.ground.call_syntax import call_source

STUB_FILE = 'FIX = """\nAdd more tests.\n"""\n\n\ndef count(s):\n    """How many vowels s has.\n\n    >>> count("abe")\n    2\n    """\n    raise NotImplementedError\n'


def note(path: Path, new: str, old: str | None = None) -> str:
    """What is said of `new` written over `old` at `path` ("" when it uses no new undefined name)."""
    names = new_undefined_names(path.name, old.encode() if old is not None else None, new.encode())
    return undefined_note(path.name, names, new, sibling_imports(path, names)) if names else ""


def test_a_name_the_write_leaves_undefined_is_named_with_its_line(tmp_path: Path) -> None:
    """A model wrote `FIX` alone where the file had `FIX = \"\"\"...\"\"\"`: the file parsed, and
    the module stopped with NameError on import."""
    said = note(tmp_path / "vowels.py", "FIX\n\ndef count(s):\n    return sum(1 for c in s if c in voewls)\n", STUB_FILE)
    assert (
        "Note: vowels.py uses FIX (line 1), voewls (line 4, in count), which it never defines or imports, so the code stops with "
        "NameError when that line runs. Give each one its value before that line, inside the function that uses it; or import it, "
        "or write the name you meant." in said
    )
    assert note(tmp_path / "vowels.py", "def count(s):\n    vowels = 'aeiou'\n    return sum(1 for c in s if c in vowels)\n", STUB_FILE) == ""


def test_names_a_module_beside_the_file_defines_are_shown_as_the_write_with_their_imports(tmp_path: Path) -> None:
    """A small model created version.py with VERSION, then wrote app.py using VERSION and a
    helper from util.py without importing them."""
    (tmp_path / "version.py").write_text("VERSION = '1.2'\n")
    (tmp_path / "util.py").write_text("def shout(text):\n    return text.upper()\n")
    old = '"""The app."""\nprint(1)\n'
    content = '"""The app."""\nprint(shout("version " + VERSION))\n'
    fixed = '"""The app."""\nfrom util import shout\nfrom version import VERSION\nprint(shout("version " + VERSION))\n'
    assert note(tmp_path / "app.py", content, old).endswith(
        "Note: app.py uses shout (line 2), VERSION (line 2), which it never defines or imports, so the code stops with "
        "NameError when that line runs. from util import shout; from version import VERSION brings them in from beside "
        f"app.py: send this call, which adds those imports at the top:\n{call_source('write_to_file', ['app.py', fixed])}"
    )
    assert note(tmp_path / "app.py", fixed, content) == ""
    (tmp_path / "app.py").write_text(fixed)
    assert subprocess.run([sys.executable, "app.py"], cwd=tmp_path, capture_output=True, text=True).stdout == "VERSION 1.2\n"


def test_a_name_only_some_modules_beside_define_gets_the_plain_note(tmp_path: Path) -> None:
    (tmp_path / "version.py").write_text("VERSION = '1.2'\n")
    assert note(tmp_path / "app.py", "print(VERSION, missing)\n").endswith(
        "Give each one its value before that line, inside the function that uses it; or import it, or write the name you meant."
    )


def test_names_the_file_used_undefined_before_the_write_are_not_blamed_on_it(tmp_path: Path) -> None:
    """A script run with injected globals (`spark`, `__salt__`) had them undefined before; only new ones count.
    Builtins, star imports, names bound later in the module and conditional imports are defined."""
    assert note(tmp_path / "job.py", "rows = spark.read()\nprint(len(rows), __file__)\n", "rows = spark.read()\n") == ""
    assert note(tmp_path / "new.py", "from os.path import *\n\ndef f():\n    return later(join('a'))\n\n\ndef later(x):\n    return x\n") == ""
    assert note(tmp_path / "notes.txt", "FIX\n") == ""


def test_a_local_used_before_it_is_assigned_is_named(tmp_path: Path) -> None:
    assert "acc.py uses total (line 4, in add)" in note(tmp_path / "acc.py", "total = 0\n\ndef add(x):\n    total += x\n    return total\n")


def test_a_name_used_in_a_nested_function_names_the_innermost(tmp_path: Path) -> None:
    assert "nest.py uses mean (line 3, in inner)" in note(tmp_path / "nest.py", "def outer():\n    def inner():\n        return mean\n    return inner\n\n\nx = outer()\n")
