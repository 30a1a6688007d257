"""What a rewrite of a Python file took away that the task never named: a function, a class, a
constant, the `if __name__ == "__main__":` block. Told to fix one function, a small model wrote
the file back with only that function, then ran the script, read its empty output as success and
answered. Peers report the same for models under ~20B; the cure they converge on is to show what
a rewrite removed (small-models.md)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

MAX_READ_BYTES = 500_000
MAIN_BLOCK = 'the if __name__ == "__main__": block'
MAX_QUOTED_LINES = 40
"""Removed code quoted back to the model, at most this many lines; more is said, not shown."""


@dataclass(frozen=True)
class Part:
    """A top-level part of a module: its name as the model reads it, and its source lines."""

    name: str
    source: str


def top_level_parts(source: bytes) -> dict[str, Part] | None:
    """Functions, classes, UPPER_CASE constants and the main block, by name; None when the file
    does not parse or is too large to read."""
    if len(source) > MAX_READ_BYTES:
        return None
    try:
        text = source.decode()
        tree = ast.parse(text)
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        return None
    lines = text.splitlines()
    parts: dict[str, Part] = {}
    for node in tree.body:
        name = _name(node)
        if name is not None:
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            parts[name] = Part(name, "\n".join(lines[first - 1 : node.end_lineno]))
    return parts


def _name(node: ast.stmt) -> str | None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()]
        return names[0] if names else None
    if isinstance(node, ast.If) and _is_main_test(node.test):
        return MAIN_BLOCK
    return None


def _is_main_test(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def removed_parts(before: bytes, after: bytes, task: str) -> list[Part]:
    """The parts `before` had and `after` lacks, less those the task names (a task that says to
    remove or rename `helper` may take it away); [] when either side cannot be read."""
    old, new = top_level_parts(before), top_level_parts(after)
    if old is None or new is None:
        return []
    words = set(re.findall(r"\w+", task))
    named = {MAIN_BLOCK} if words & {"main", "__main__"} else set()
    return [part for name, part in old.items() if name not in new and name not in words and name not in named]


def removed_note(rel: str, parts: list[Part], otherwise: str = "give your final answer again") -> str:
    """The reminder: what went, and its old text to put back; `otherwise`: what to do if the
    removal was meant (at a write, "go on")."""
    names = ", ".join(part.name if part.name == MAIN_BLOCK else f"`{part.name}`" for part in parts)
    quoted = "\n\n".join(part.source for part in parts)
    lines = quoted.splitlines()
    if len(lines) > MAX_QUOTED_LINES:
        quoted = "\n".join(lines[:MAX_QUOTED_LINES]) + f"\n... ({len(lines) - MAX_QUOTED_LINES} more lines)"
    return (
        f"Reminder: your changes to {rel} removed {names}, which the task did not ask to remove, so code that used "
        f"{'them' if len(parts) > 1 else 'it'} no longer works (a script may now do nothing). Put it back: write {rel} "
        f"again with this old code kept, and your change:\n{quoted}\nIf removing it was intended, {otherwise}."
    )
