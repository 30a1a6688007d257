"""Renames: what a write in a rename task should have changed, and a write that renamed on its
own. A small model asked to rename a function rewrote its body as well, and one asked to fix a
function wrote the fix under a new name of its own."""

from __future__ import annotations

import ast
import re

from mzagent_tui.agent.model.parsing import call_source
from mzagent_tui.agent.aids.definitions import parsed


def _word(word: str) -> re.Pattern[str]:
    """`word` where it stands as a whole word (not "total" in "subtotal")."""
    return re.compile(rf"(?<!\w){re.escape(word)}(?!\w)")


def has_word(text: str, word: str) -> bool:
    return _word(word).search(text) is not None


def replace_word(text: str, old: str, new: str) -> str:
    """`text` with every whole-word `old` made `new`."""
    return _word(old).sub(lambda _: new, text)


def renamed_definition(old: bytes, new: bytes, removed: list[str]) -> tuple[str, str] | None:
    """(the old name, the new one) when a write took away exactly one top-level function or class
    and added exactly one of the same kind the file did not define: asked to fix a conversion
    function, a small model wrote the fixed code under a longer name of its own, and wrote that
    again three times after being told the old name was gone."""
    if len(removed) != 1:
        return None
    before, after = _top_level_kinds(old), _top_level_kinds(new)
    if before is None or after is None:
        return None
    added = [name for name in after if name not in before]
    if len(added) != 1 or after[added[0]] != before.get(removed[0]):
        return None
    return removed[0], added[0]


def _top_level_kinds(source: bytes) -> dict[str, str] | None:
    tree = parsed(source)
    if tree is None:
        return None
    return {
        node.name: "class" if isinstance(node, ast.ClassDef) else "function"
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def renamed_note(rel: str, content: str, old_name: str, new_name: str) -> str:
    """The note for a whole write that put `new_name` where `old_name` was, with the same write
    under the old name to send (every whole-word use renamed back)."""
    kept = replace_word(content, new_name, old_name)
    return (
        f"Note: {rel} no longer defines {old_name}, which it defined before this write; it defines {new_name} "
        f"instead, a name it did not have. If the task did not ask for the name {new_name}, send this call, which "
        f"keeps the name {old_name}:\n{call_source('write_to_file', [rel, kept])}"
    )


def with_renames(old: bytes, renames: tuple[tuple[str, str], ...]) -> str:
    """The earlier content with each old name of `renames`, as a whole word, made the new one."""
    text = old.decode(errors="replace")
    for before, after in renames:
        text = replace_word(text, before, after)
    return text


def rename_note(rel: str, renames: tuple[tuple[str, str], ...], kept: str) -> str:
    """The note for a write that took away a name the task renames and changed more than that
    (a small model wrote `def welcome(): return "Hello, world!"` for `def greet(name)`, was told
    greet was gone, and wrote greet back)."""
    asked = ", ".join(f"{before} to {after}" for before, after in renames)
    return (
        f"Note: the task renames {asked}, and this write changed more of {rel} than that. If the task asks only "
        f"for the rename, send this call, which makes only the rename and keeps everything else as it was:\n"
        f"{call_source('write_to_file', [rel, kept])}"
    )
