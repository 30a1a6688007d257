"""A command that prints a call whose result a docstring example of a file the model wrote gives
(`>>> f([1.0, 2.0])` then `1.0`), and printed something else: the observation says so.

A small model ran its docstring's own example, got 4.0 where the docstring says 1.0, and answered
that the function "works correctly". Nothing extra runs: the command is the model's, approved as
any other; only its printed line is set beside the example's expected one.
"""

from __future__ import annotations

import ast
import doctest
import math
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from mzagent_tui.agent.shell_parse import parse

PYTHON = re.compile(r"python(?:3(?:\.\d+)?)?")
MAX_FILE_BYTES = 200_000


@dataclass(frozen=True)
class Mismatch:
    path: Path
    call: str
    expected: str
    printed: str

    def note(self, rel: str) -> str:
        return (
            f"Note: the docstring in {rel} says {self.call} gives {self.expected}, but this printed {self.printed}: "
            "the code does not do what its docstring says yet."
        )


def example_mismatch(command: str, stdout: str, files: list[Path]) -> Mismatch | None:
    """The first docstring example among `files` whose call the command prints alone (one
    `print(call)` in a `python -c`), when the printed line is not what the example expects."""
    call = _printed_call(command)
    if call is None:
        return None
    printed = stdout.strip()
    if "\n" in printed:
        return None
    for path in files:
        expected = _examples(path).get(call)
        if expected is not None and not _same(printed, expected):
            return Mismatch(path, call, expected, printed)
    return None


def _printed_call(command: str) -> str | None:
    """The one expression `python -c` code prints, in a canonical form; None for anything else."""
    commands = parse(command).commands
    if len(commands) != 1:
        return None
    words = [word.text for word in commands[0].words if word.literal]
    if len(words) < 3 or not PYTHON.fullmatch(PurePosixPath(words[0]).name) or words[1] != "-c":
        return None
    try:
        tree = ast.parse(words[2])
    except (SyntaxError, ValueError):
        return None
    prints = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
    ]
    if len(prints) != 1 or len(prints[0].args) != 1 or prints[0].keywords:
        return None
    return ast.unparse(prints[0].args[0])


def _examples(path: Path) -> dict[str, str]:
    """Each docstring example of a Python file: its call in canonical form, and the expected output."""
    try:
        if path.suffix != ".py" or path.stat().st_size > MAX_FILE_BYTES:
            return {}
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return {}
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        docstring = ast.get_docstring(node)
        if not docstring:
            continue
        try:
            examples = doctest.DocTestParser().get_examples(docstring)
        except ValueError:
            continue
        for example in examples:
            try:
                call = ast.unparse(ast.parse(example.source, mode="eval").body)
            except (SyntaxError, ValueError):
                continue
            if example.want.strip():
                found.setdefault(call, example.want.strip())
    return found


def _same(printed: str, expected: str) -> bool:
    """Whether a printed line is what an example expects: the same text, the same value (a
    printed string has no quotes), or numbers equal to six places. Unsure means the same."""
    if printed == expected:
        return True
    try:
        want = ast.literal_eval(expected)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return True
    if str(want) == printed:
        return True
    try:
        got = ast.literal_eval(printed)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return _close(got, want)


def _close(got: object, want: object) -> bool:
    if isinstance(got, bool) or isinstance(want, bool):
        return got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)):
        return type(got) is type(want) and len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want, strict=True))
    return got == want
