"""Which Python functions and classes did a write take away? The write succeeds either way, so a
small model does not notice: one asked to rename a function wrote the file back holding only the
renamed function, and one asked to implement a stub wrote a single word over the whole file."""

from __future__ import annotations

import ast

MAX_NAMED = 8
"""Names listed in the note; more are counted."""


def defined_names(source: bytes) -> list[str] | None:
    """The functions and classes at the top level of a module, and the methods of its classes
    (as `Class.method`), in order; None if the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        if isinstance(node, ast.ClassDef):
            names.extend(f"{node.name}.{item.name}" for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return names


def removed_definitions(rel: str, old: bytes, new: bytes) -> list[str]:
    """What `old` defined that `new` does not, for a Python file whose two versions both parse
    (a file that no longer parses gets its own warning). A class that went is named without its
    methods."""
    if not rel.lower().endswith(".py"):
        return []
    before, after = defined_names(old), defined_names(new)
    if before is None or after is None:
        return []
    kept = set(after)
    lost = [name for name in before if name not in kept]
    return [name for name in lost if "." not in name or name.partition(".")[0] not in lost]


def removed_note(rel: str, names: list[str], whole: bool) -> str:
    """The line the observation of a whole write (`whole`) or of an edit gets."""
    shown = ", ".join(names[:MAX_NAMED]) + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")
    if not whole:
        return f"Note: {rel} no longer defines {shown}, which it defined before this edit. If the task did not ask to remove or rename them, put them back."
    return (
        f"Note: {rel} no longer defines {shown}, which it defined before this write. The content you write replaces "
        "the whole file: if the task did not ask to remove or rename them, write the file again with them kept."
    )
