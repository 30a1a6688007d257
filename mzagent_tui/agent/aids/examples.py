"""Docstring examples of a Python file the model wrote: what a command printed is set beside them.

A small model ran its docstring's own example, got 4.0 where the docstring says 1.0, and answered
that the function "works correctly". Nothing extra runs: the command is the model's, approved as
any other; only its printed lines are set beside the examples' expected ones. Examples are read in
doctest form (`>>> f([1.0, 2.0])` then `1.0`) and in the one-line forms docstrings use
(`f(3) ➞ True`, `f(3) => true`, `f(3) == 9`, `Input: x = 3` then `Output: 9`).
"""

from __future__ import annotations

import ast
import doctest
import math
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from mzagent_tui.agent.safety.shell_parse import Script

PYTHON = re.compile(r"python(?:3(?:\.\d+)?)?")
MAX_FILE_BYTES = 200_000
ONE_LINE_EXAMPLE = re.compile(r"^\s*(?:[*-]\s+)?(?P<call>[A-Za-z_]\w*\(.*\))\s*(?:➞|=>|==|->|→)\s*(?P<want>\S.*?)\s*$")
"""`will_it_fly([1, 2], 5) ➞ False`, `* sort_array([5]) => [5]`: a call, an arrow, the value."""
INPUT = re.compile(r"^\s*Input\s*:\s*(?P<args>\S.*?)\s*$", re.IGNORECASE)
OUTPUT = re.compile(r"^\s*Output\s*:\s*(?P<want>\S.*?)\s*$", re.IGNORECASE)
"""`Input: arr = [4, -4, 4], k = 2` and on one of the next lines `Output: [4, 4]`: an example of the docstring's own function."""
PLAIN_WORDS = {"true": "True", "false": "False", "none": "None", "null": "None"}
CHECKED_EXAMPLES = 4
UNSAFE_IN_QUOTES = re.compile(r'["\\$`!\n]')
"""What a command's double-quoted `python3 -c "..."` cannot hold as it is."""


@dataclass(frozen=True)
class Printed:
    """One printed line set beside the docstring example of its call."""

    path: Path
    call: str
    expected: str
    printed: str

    @property
    def matches(self) -> bool:
        return _same(self.printed, self.expected)

    def says(self) -> str:
        return f"{self.call} gives {self.expected}, but this printed {self.printed}"


def mismatch_note(rel: str, mismatches: list[Printed]) -> str:
    return (
        f"Note: the docstring in {rel} says {'; and '.join(found.says() for found in mismatches)}: "
        "the code does not do what its docstring says yet."
    )


def matched_note(rel: str) -> str:
    """Said once the examples the check command prints have all printed what the docstring says
    (in one command or several): a small model that had tried each went on inventing more
    cases until the step limit, and never answered."""
    return f"Note: the docstring examples of {rel} now all print what the docstring says. If nothing else is left, give your final answer."


def printed_examples(script: Script, stdout: str, files: list[Path]) -> list[Printed]:
    """The printed lines that a docstring example of one of `files` has a call for, when the
    command is one `python -c` whose code is imports and prints of one value each, and each print
    gave one line; [] for any other command."""
    calls = _printed_calls(script)
    lines = stdout.strip("\n").split("\n")
    if not calls or len(lines) != len(calls):
        return []
    examples = {path: docstring_examples(path) for path in files}
    found: list[Printed] = []
    for call, line in zip(calls, lines, strict=True):
        for path in files:
            expected = examples[path].get(call)
            if expected is not None:
                found.append(Printed(path, call, expected, line.strip()))
                break
    return found


def checked_calls(path: Path) -> list[str]:
    """The calls of the file's first docstring examples that a command can print: calls of its
    top-level functions with nothing a double-quoted shell word would change."""
    functions = _top_level_functions(path)
    calls = [call for call in docstring_examples(path) if _function_of(call) in functions and not UNSAFE_IN_QUOTES.search(call)]
    return calls[:CHECKED_EXAMPLES]


def _function_of(call: str) -> str:
    """What a canonical call starts with, up to its first parenthesis: `f` of `f([1, 2])`."""
    return call.split("(", 1)[0]


def _top_level_functions(path: Path) -> set[str]:
    tree = _tree(path)
    if tree is None:
        return set()
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _printed_calls(script: Script) -> list[str]:
    """The values a `python -c` prints, one `print(value)` each, in a canonical form; [] when the
    command is anything else or its code does more than import and print."""
    commands = script.commands
    if len(commands) != 1:
        return []
    words = [word.text for word in commands[0].words if word.literal]
    if len(words) < 3 or not PYTHON.fullmatch(PurePosixPath(words[0]).name) or words[1] != "-c":
        return []
    try:
        tree = ast.parse(words[2])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    calls: list[str] = []
    for statement in tree.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            continue
        if not _is_print_of_one(statement):
            return []
        calls.append(ast.unparse(statement.value.args[0]))  # type: ignore[attr-defined]
    return calls


def _is_print_of_one(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Name) and statement.value.func.id == "print"
        and len(statement.value.args) == 1 and not statement.value.keywords
    )


def _tree(path: Path) -> ast.Module | None:
    try:
        if path.suffix != ".py" or not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        return ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def docstring_examples(path: Path) -> dict[str, str]:
    """Each docstring example of a Python file, in order: its call in canonical form, and the expected output."""
    tree = _tree(path)
    if tree is None:
        return {}
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        docstring = ast.get_docstring(node)
        if not docstring:
            continue
        examples = [*_doctest_examples(docstring), *_one_line_examples(docstring)]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            examples += _input_output_examples(docstring, node)
        for call, want in examples:
            found.setdefault(call, want)
    return found


def _doctest_examples(docstring: str) -> list[tuple[str, str]]:
    try:
        examples = doctest.DocTestParser().get_examples(docstring)
    except ValueError:
        return []
    found = []
    for example in examples:
        call = _canonical(example.source)
        if call is not None and example.want.strip():
            found.append((call, example.want.strip()))
    return found


def _one_line_examples(docstring: str) -> list[tuple[str, str]]:
    found = []
    for line in docstring.splitlines():
        match = ONE_LINE_EXAMPLE.match(line)
        call = _canonical(match["call"]) if match else None
        want = _literal(match["want"]) if match else None
        if call is not None and want is not None:
            found.append((call, want))
    return found


def _input_output_examples(docstring: str, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, str]]:
    """`Input:` lines whose text makes a call of the function with a value for each parameter
    (`arr = [4, -4, 4], k = 2`, or `[4, 2, 3]` for one), each with the `Output:` line after it."""
    parameters = [argument.arg for argument in function.args.args]
    lines = docstring.splitlines()
    found = []
    for index, line in enumerate(lines):
        given = INPUT.match(line)
        answers = [OUTPUT.match(after) for after in lines[index + 1:index + 3]]
        answer = next((match for match in answers if match), None)
        if given is None or answer is None:
            continue
        try:
            call = ast.parse(f"{function.name}({given['args']})", mode="eval").body
            if not isinstance(call, ast.Call):
                continue
            for value in [*call.args, *(keyword.value for keyword in call.keywords)]:
                ast.literal_eval(value)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        named = [keyword.arg for keyword in call.keywords]
        fits = len(call.args) + len(named) == len(parameters) and set(named) <= set(parameters[len(call.args):])
        want = _literal(answer["want"])
        if fits and want is not None:
            found.append((ast.unparse(call), want))
    return found


def _literal(text: str) -> str | None:
    """An expected value as Python writes it, once true/false/none are spelled as Python spells
    them, a comment after it left out; None when it is not a literal (prose, not a value)."""
    try:
        value = ast.parse(PLAIN_WORDS.get(text.lower(), text), mode="eval").body
        ast.literal_eval(value)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return ast.unparse(value)


def _canonical(source: str) -> str | None:
    """A call as ast.unparse writes it, so `f([1,2])` and `f([1, 2])` are one; None if not a call."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return ast.unparse(node) if isinstance(node, ast.Call) else None


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
