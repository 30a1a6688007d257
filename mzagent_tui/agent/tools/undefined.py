"""Which names does a Python write use that the file never defines or imports? The file parses,
the write succeeds, and the mistake shows only when the code runs: a small model wrote a bare
`FIX` line where the file had `FIX = \"\"\"...\"\"\"`, and the module stopped with NameError on import.
Aider lints every edit for the same reason; pyflakes reads the code without running it."""

from __future__ import annotations

import ast

from pyflakes import checker, messages

from mzagent_tui.agent.tools.definitions import listed

MAX_CHECKED_BYTES = 500_000
"""Larger files are not linted on every write."""


def undefined_names(source: bytes, name: str = "module.py") -> dict[str, int] | None:
    """Each name the module uses without defining or importing it, with the first line that uses
    it; None if the source does not parse or is too large to check."""
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
    names: dict[str, int] = {}
    for message in sorted(found, key=lambda item: item.lineno):
        if isinstance(message, (messages.UndefinedName, messages.UndefinedLocal)):
            names.setdefault(str(message.message_args[0]), message.lineno)
    return names


def new_undefined_names(rel: str, old: bytes | None, new: bytes) -> dict[str, int]:
    """The undefined names of a Python file's new content that its old content did not already
    use undefined (a file that relied on some injected name before is not blamed for it now)."""
    if not rel.lower().endswith(".py"):
        return {}
    after = undefined_names(new, rel)
    if not after:
        return {}
    before = undefined_names(old, rel) if old is not None else None
    return {name: line for name, line in after.items() if not before or name not in before}


def undefined_note(rel: str, names: dict[str, int]) -> str:
    """The line a write's observation gets."""
    shown = listed([f"{name} (line {line})" for name, line in names.items()])
    return (
        f"Note: {rel} uses {shown}, which it never defines or imports, so the code stops with NameError when that line runs. "
        "Define or import each one, or write the name you meant."
    )
