"""Which Python functions and classes did a write take away? The write succeeds either way, so a
small model does not notice: one asked to rename a function wrote the file back holding only the
renamed function, and one asked to implement a stub wrote a single word over the whole file."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from mzagent_tui.agent.parsing import call_source

MAX_NAMED = 8
"""Names listed in the note; more are counted."""
MAX_QUOTED = 2000
"""The longest earlier source a note quotes; longer is left to a read of the backup."""
MAX_SIBLINGS = 200
"""Modules beside a written file that are searched for its names; more are not read."""
MAX_SIBLING_BYTES = 500_000


def defined_names(source: bytes) -> list[str] | None:
    """The functions, classes and constants (`NAME = ...`, upper case: what other modules import) at
    the top level of a module, and the methods of its classes (as `Class.method`), in order; None if
    the source does not parse. Asked to add a constant, a small model wrote it alone over the file."""
    tree = _parsed(source)
    if tree is None:
        return None
    names: list[str] = []
    for node in tree.body:
        names.extend(name for name in _defined_names(node) if name not in names)
        if isinstance(node, ast.ClassDef):
            names.extend(f"{node.name}.{item.name}" for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return names


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


def listed(names: list[str]) -> str:
    """Names for a note: the first MAX_NAMED, the rest counted."""
    return ", ".join(names[:MAX_NAMED]) + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")


def _parsed(source: bytes) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def stub_functions(source: bytes) -> list[str] | None:
    """The functions and methods whose whole body (after a docstring) is `raise NotImplementedError`,
    leaving out abstract methods, which are meant to stay so; None if the source does not parse."""
    tree = _parsed(source)
    if tree is None:
        return None
    stubs: list[str] = []
    for node in tree.body:
        members = node.body if isinstance(node, ast.ClassDef) else [node]
        prefix = f"{node.name}." if isinstance(node, ast.ClassDef) else ""
        stubs.extend(prefix + item.name for item in members if _only_raises_not_implemented(item))
    return stubs


def _only_raises_not_implemented(node: ast.stmt) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if any("abstract" in ast.unparse(decorator) for decorator in node.decorator_list):
        return False
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def kept_stubs(rel: str, old: bytes, new: bytes) -> list[str]:
    """The functions that only raised NotImplementedError before a write and still do after it:
    a small model told to implement one copied the file back with the stub in place."""
    if not rel.lower().endswith(".py"):
        return []
    before, after = stub_functions(old), stub_functions(new)
    if not before or not after:
        return []
    return [name for name in after if name in before]


def kept_stubs_note(rel: str, names: list[str]) -> str:
    shown = listed(names)
    return f"Note: in {rel}, {shown} still only raise{'s' if len(names) == 1 else ''} NotImplementedError, as before this write: not implemented yet."


def removed_definitions(rel: str, old: bytes, new: bytes) -> list[str]:
    """What `old` defined that `new` does not, for a Python file whose two versions both parse
    (a file that no longer parses gets its own warning). A class that went is named without its
    methods."""
    if not rel.lower().endswith(".py"):
        return []
    before, after = defined_names(old), defined_names(new)
    if before is None or after is None:
        return []
    kept = set(after) | set(imported_from(new))
    lost = [name for name in before if name not in kept]
    return [name for name in lost if "." not in name or name.partition(".")[0] not in lost]


def imported_from(source: bytes) -> dict[str, str]:
    """The names a module's top-level `from m import name` lines bind, with their module: a
    function moved out and imported back is not lost."""
    tree = _parsed(source)
    if tree is None:
        return {}
    return {
        alias.asname or alias.name: node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
        for alias in node.names
    }


def moved_changed(path: Path, old: bytes, new: bytes) -> tuple[Path, list[str], str] | None:
    """When a write took definitions out of a file and imports them from a module beside it that
    defines them otherwise: that module, the names, and its content with the definitions as the
    file had them. Asked to move helper from a.py into utils.py, a small model wrote a helper of
    its own into utils.py, then took helper out of a.py and imported it from there."""
    before, after = _parsed(old), _parsed(new)
    if before is None or after is None:
        return None
    defined_after = {name for node in after.body for name in _defined_names(node)}
    imported = imported_from(new)
    old_text = old.decode(errors="replace")
    for module in dict.fromkeys(imported.values()):
        sibling = path.parent / f"{module}.py"
        try:
            readable = "." not in module and _beside(sibling, path) and sibling.stat().st_size <= MAX_SIBLING_BYTES
            sibling_source = sibling.read_bytes() if readable else None
        except OSError:
            continue
        there = _parsed(sibling_source) if sibling_source is not None else None
        if there is None:
            continue
        text = sibling_source.decode(errors="replace")
        lines = text.splitlines(keepends=True)
        names = []
        for node in sorted(there.body, key=lambda item: item.lineno, reverse=True):  # from the end, so earlier lines keep their numbers
            moved = [name for name in _defined_names(node) if imported.get(name) == module and name not in defined_after]
            original = next((item for item in before.body if moved and moved[0] in _defined_names(item)), None)
            if original is None or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            wanted = _indented_segment(old_text, original)
            if _indented_segment(text, node).strip() == wanted.strip():
                continue
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
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
    tree = _parsed(source)
    if tree is None:
        return None
    return {
        node.name: "class" if isinstance(node, ast.ClassDef) else "function"
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def _word(word: str) -> re.Pattern[str]:
    """`word` where it stands as a whole word (not "total" in "subtotal")."""
    return re.compile(rf"(?<!\w){re.escape(word)}(?!\w)")


def has_word(text: str, word: str) -> bool:
    return _word(word).search(text) is not None


def replace_word(text: str, old: str, new: str) -> str:
    """`text` with every whole-word `old` made `new`."""
    return _word(old).sub(lambda _: new, text)


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


def removed_source(old: bytes, names: list[str]) -> str | None:
    """The earlier source of the definitions `names` (a method as its own lines), in file order;
    None when it does not parse or is longer than MAX_QUOTED. Told only that `NAME` was gone, a
    small model wrote the same content again; with the lines to put back it can copy them."""
    tree = _parsed(old)
    if tree is None:
        return None
    text = old.decode(errors="replace")
    wanted = set(names)
    pieces: list[str] = []
    for node in tree.body:
        if wanted.intersection(_defined_names(node)):
            pieces.append(_indented_segment(text, node))
        if isinstance(node, ast.ClassDef):
            pieces += [_indented_segment(text, item) for item in node.body if f"{node.name}.{getattr(item, 'name', '')}" in wanted]
    source = "\n".join(pieces)
    return source if source and len(source) <= MAX_QUOTED else None


def _defined_names(node: ast.stmt) -> list[str]:
    """What one top-level statement defines: a function or class, or upper-case constants."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return [target.id for target in targets if isinstance(target, ast.Name) and target.id.isupper()]


def _indented_segment(text: str, node: ast.stmt) -> str:
    """A node's lines as they stand in the file, decorators and leading indentation included."""
    first = min([node.lineno, *(decorator.lineno for decorator in getattr(node, "decorator_list", []))])
    lines = text.splitlines()[first - 1:node.end_lineno]
    return "\n".join(lines)


def removed_note(rel: str, names: list[str], whole: bool, earlier: str | None = None) -> str:
    """The line the observation of a whole write (`whole`) or of an edit gets, with the removed
    definitions' earlier source when it is short (`earlier`)."""
    shown = listed(names)
    quoted = f" Before it, {rel} had:\n{earlier}" if earlier else ""
    if not whole:
        return f"Note: {rel} no longer defines {shown}, which it defined before this edit. If the task did not ask to remove or rename them, put them back.{quoted}"
    return (
        f"Note: {rel} no longer defines {shown}, which it defined before this write. The content you write replaces "
        f"the whole file: if the task did not ask to remove or rename them, write the file again with them kept.{quoted}"
    )
