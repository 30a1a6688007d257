"""Which names does a Python write use that the file never defines or imports? The file parses,
the write succeeds, and the mistake shows only when the code runs: a small model wrote a bare
`FIX` line where the file had `FIX = \"\"\"...\"\"\"`, and the module stopped with NameError on import.
Aider lints every edit for the same reason; pyflakes reads the code without running it."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from pyflakes import checker, messages

from mzagent_tui.agent.tools.definitions import listed

MAX_CHECKED_BYTES = 500_000
"""Larger files are not linted on every write."""


@dataclass(frozen=True)
class Use:
    """Where a name is first used: its line, and the function around it (None: module level)."""

    line: int
    function: str | None

    def __str__(self) -> str:
        return f"line {self.line}, in {self.function}" if self.function else f"line {self.line}"


def undefined_names(source: bytes, name: str = "module.py") -> dict[str, Use] | None:
    """Each name the module uses without defining or importing it, with the first use; None if
    the source does not parse or is too large to check."""
    if len(source) > MAX_CHECKED_BYTES:
        return None
    try:
        tree = ast.parse(source, filename=name)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        found = checker.Checker(tree, filename=name).messages
    except RecursionError:
        return None
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    names: dict[str, Use] = {}
    for message in sorted(found, key=lambda item: item.lineno):
        if isinstance(message, (messages.UndefinedName, messages.UndefinedLocal)):
            names.setdefault(str(message.message_args[0]), Use(message.lineno, _innermost(functions, message.lineno)))
    return names


def _innermost(functions: list[ast.FunctionDef | ast.AsyncFunctionDef], line: int) -> str | None:
    """The name of the innermost function whose body holds `line`."""
    holding = [f for f in functions if f.lineno <= line <= (f.end_lineno or f.lineno)]
    return max(holding, key=lambda f: f.lineno).name if holding else None


def new_undefined_names(rel: str, old: bytes | None, new: bytes) -> dict[str, Use]:
    """The undefined names of a Python file's new content that its old content did not already
    use undefined (a file that relied on some injected name before is not blamed for it now)."""
    if not rel.lower().endswith(".py"):
        return {}
    after = undefined_names(new, rel)
    if not after:
        return {}
    before = undefined_names(old, rel) if old is not None else None
    return {name: use for name, use in after.items() if not before or name not in before}


def undefined_note(rel: str, names: dict[str, Use]) -> str:
    """The line a write's observation gets. Told only "define it", a small model put `mean = 0.0`
    under the function that needed the mean: the note says which function uses the name."""
    shown = listed([f"{name} ({use})" for name, use in names.items()])
    return (
        f"Note: {rel} uses {shown}, which it never defines or imports, so the code stops with NameError when that line runs. "
        "Give each one its value before that line, inside the function that uses it; or import it, or write the name you meant."
    )
