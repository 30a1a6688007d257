"""Moves between modules: a function taken out of a file and imported back from a module beside
it, and the modules beside a file that an import can name. A small model asked to move a
function wrote one of its own into the new module instead of the original."""

from __future__ import annotations

import ast
from pathlib import Path

from mzagent_tui.agent.model.parsing import call_source
from mzagent_tui.agent.aids.definitions import (
    defined_names,
    first_line,
    imported_from,
    indented_segment,
    listed,
    parsed,
    statement_names,
)
from mzagent_tui.agent.aids.renames import has_word

MAX_SIBLINGS = 200
"""Modules beside a written file that are searched for its names; more are not read."""
MAX_SIBLING_BYTES = 500_000


def modules_beside(path: Path) -> list[tuple[Path, bytes]]:
    """The Python modules in `path`'s folder that an import can name, with their content: not
    `path`, not one larger than MAX_SIBLING_BYTES, not a link that leads elsewhere (its content
    must not reach the model through a note); the first MAX_SIBLINGS."""
    found = []
    for sibling in sorted(path.parent.glob("*.py"))[:MAX_SIBLINGS]:
        if sibling.name == path.name or not sibling.stem.isidentifier() or not _beside(sibling, path):
            continue
        try:
            if sibling.stat().st_size <= MAX_SIBLING_BYTES:
                found.append((sibling, sibling.read_bytes()))
        except OSError:
            continue
    return found


def sibling_definitions(path: Path) -> dict[str, list[str]]:
    """The top-level names each Python module beside `path` defines, by module name."""
    return {sibling.stem: [name for name in defined_names(source) or [] if "." not in name] for sibling, source in modules_beside(path)}


def _beside(sibling: Path, path: Path) -> bool:
    """A regular file in `path`'s folder, not a link that leads elsewhere."""
    return sibling.is_file() and sibling.resolve().parent == path.resolve().parent


def unread_origins(path: Path, source: bytes, task: str, seen: set[Path]) -> dict[str, list[str]]:
    """Names the task mentions that `source` defines and an unread module beside it defines too, by
    that module's file name: asked to move helper from a.py into utils.py, a small model wrote a
    helper of its own into utils.py before it had read a.py."""
    mentioned = [name for name in defined_names(source) or [] if "." not in name and has_word(task, name)]
    if not mentioned:
        return {}
    origins: dict[str, list[str]] = {}
    for module, names in sibling_definitions(path).items():
        sibling = path.parent / f"{module}.py"
        both = [name for name in mentioned if name in names]
        if both and sibling.resolve() not in seen:
            origins[sibling.name] = both
    return origins


def unread_origins_note(origins: dict[str, list[str]]) -> str:
    said = "; ".join(f"{module} defines {listed(names)} too" for module, names in origins.items())
    return (
        f"Note: {said}, and you have not read {'it' if len(origins) == 1 else 'them'}. If the task moves or copies code "
        f"from there, read it first and write the code as it stands there."
    )


def moved_changed(path: Path, old: bytes, new: bytes) -> tuple[Path, list[str], str] | None:
    """When a write took definitions out of a file and imports them from a module beside it that
    defines them otherwise: that module, the names, and its content with the definitions as the
    file had them. Asked to move helper from a.py into utils.py, a small model wrote a helper of
    its own into utils.py, then took helper out of a.py and imported it from there."""
    before, after = parsed(old), parsed(new)
    if before is None or after is None:
        return None
    defined_after = {name for node in after.body for name in statement_names(node)}
    imported = imported_from(new)
    old_text = old.decode(errors="replace")
    for module in dict.fromkeys(imported.values()):
        sibling = path.parent / f"{module}.py"
        try:
            readable = "." not in module and _beside(sibling, path) and sibling.stat().st_size <= MAX_SIBLING_BYTES
            sibling_source = sibling.read_bytes() if readable else None
        except OSError:
            continue
        there = parsed(sibling_source) if sibling_source is not None else None
        if there is None:
            continue
        text = sibling_source.decode(errors="replace")
        lines = text.splitlines(keepends=True)
        names = []
        for node in sorted(there.body, key=lambda item: item.lineno, reverse=True):  # from the end, so earlier lines keep their numbers
            moved = [name for name in statement_names(node) if imported.get(name) == module and name not in defined_after]
            original = next((item for item in before.body if moved and moved[0] in statement_names(item)), None)
            if original is None or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            wanted = indented_segment(old_text, original)
            if indented_segment(text, node).strip() == wanted.strip():
                continue
            first = first_line(node)
            lines[first - 1:node.end_lineno] = [wanted + "\n"]
            names.insert(0, moved[0])
        if names:
            return sibling, names, "".join(lines)
    return None


def moved_changed_note(rel: str, sibling: str, names: list[str], content: str) -> str:
    shown = listed(names)
    return (
        f"Note: {rel} now imports {shown} from {sibling}, but {sibling} defines {'it' if len(names) == 1 else 'them'} "
        f"otherwise than {rel} did. To move code, keep it as it was: send this call, which puts {rel}'s {shown} into "
        f"{sibling} unchanged:\n{call_source('write_to_file', [sibling, content])}"
    )

