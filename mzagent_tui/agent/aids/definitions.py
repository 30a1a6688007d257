"""Which Python functions and classes did a write take away? The write succeeds either way, so a
small model does not notice: one asked to rename a function wrote the file back holding only the
renamed function, and one asked to implement a stub wrote a single word over the whole file."""

from __future__ import annotations

import ast

from mzagent_tui.agent.model.parsing import call_source
from mzagent_tui.agent.tools.stubs import stub_functions

MAX_NAMED = 8
"""Names listed in the note; more are counted."""
MAX_QUOTED = 2000
"""The longest earlier source a note quotes; longer is left to a read of the backup."""


def defined_names(source: bytes) -> list[str] | None:
    """The functions, classes and constants (`NAME = ...`, upper case: what other modules import) at
    the top level of a module, and the methods of its classes (as `Class.method`), in order; None if
    the source does not parse. Asked to add a constant, a small model wrote it alone over the file."""
    tree = parsed(source)
    if tree is None:
        return None
    names: list[str] = []
    for node in tree.body:
        names.extend(name for name in statement_names(node) if name not in names)
        if isinstance(node, ast.ClassDef):
            names.extend(f"{node.name}.{item.name}" for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return names


def listed(names: list[str]) -> str:
    """Names for a note: the first MAX_NAMED, the rest counted."""
    return ", ".join(names[:MAX_NAMED]) + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")


def parsed(source: bytes) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


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


def dropped_parameters(rel: str, old: bytes, new: bytes) -> list[tuple[str, str]]:
    """(function, parameter) for each parameter a function still takes but no longer uses, where
    it used it before the write: asked to change a default greeting, a small model changed the
    default and wrote the new greeting into the body, so the parameter did nothing."""
    if not rel.lower().endswith(".py"):
        return []
    before, after = _functions(old), _functions(new)
    dropped = []
    for name, function in after.items():
        earlier = before.get(name)
        if earlier is None:
            continue
        used_before, used_now = _used_names(earlier), _used_names(function)
        dropped += [(name, param) for param in _parameters(function) if param in _parameters(earlier) and param in used_before and param not in used_now]
    return dropped


def dropped_parameters_note(rel: str, dropped: list[tuple[str, str]], old: bytes, new: bytes) -> str:
    said = "; ".join(f"{function} takes {param} but no longer uses it" for function, param in dropped[:MAX_NAMED])
    note = (
        f"Note: in {rel}, {said}, though it used it before this write, so what a caller passes for it changes nothing. "
        "If the task did not ask for that, use the parameter in the code again instead of a fixed value."
    )
    functions = {function for function, _ in dropped}
    kept = with_old_body(old, new, functions.pop()) if len(functions) == 1 else None
    if kept is not None:
        note += f" This call keeps the new signature with the body as it was:\n{call_source('write_to_file', [rel, kept])}"
    return note


def with_old_body(old: bytes, new: bytes, name: str) -> str | None:
    """`new` with the body of function `name` as `old` had it (the signature as `new` has it)."""
    before, after = _functions(old).get(name), _functions(new).get(name)
    if before is None or after is None or before.body[0].lineno == before.lineno or after.body[0].lineno == after.lineno:
        return None  # a one-line function: its body shares the line of its signature
    old_lines = old.decode(errors="replace").splitlines(keepends=True)
    new_lines = new.decode(errors="replace").splitlines(keepends=True)
    body = old_lines[before.body[0].lineno - 1 : before.end_lineno]
    if body and not body[-1].endswith("\n"):
        body[-1] += "\n"
    new_lines[after.body[0].lineno - 1 : after.end_lineno] = body
    return "".join(new_lines)


def _functions(source: bytes) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The top-level functions and the methods of top-level classes (as `Class.method`)."""
    tree = parsed(source)
    if tree is None:
        return {}
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            found.update({f"{node.name}.{item.name}": item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))})
    return found


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = function.args
    return [arg.arg for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs] if arg.arg not in ("self", "cls")]


def _used_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {node.id for statement in function.body for node in ast.walk(statement) if isinstance(node, ast.Name)}


def stopped_running(rel: str, old: bytes, new: bytes) -> list[str] | None:
    """The functions a script defines when a write left it running nothing: before, a top-level
    statement called something (`print(...)`, `main()`, `if __name__ == "__main__":`); now none
    does. None when it still runs code, or never did. Asked to use a renamed function, a small
    model wrapped the script's one line in `def main():` and never called main."""
    if not rel.lower().endswith(".py"):
        return None
    before, after = parsed(old), parsed(new)
    if before is None or after is None or not _runs_code(before) or _runs_code(after):
        return None
    functions = [node.name for node in after.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return functions or None


def stopped_running_note(rel: str, functions: list[str]) -> str:
    main = "main" if "main" in functions else functions[-1]
    return (
        f"Note: {rel} no longer does anything when it runs: before this write, code at its top level ran, and now it "
        f"only defines {listed(functions)}, which nothing calls. If it should still do its work when run, end it with "
        f"a call such as {main}()."
    )


def _runs_code(tree: ast.Module) -> bool:
    skipped = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    return any(isinstance(node, ast.Call) for statement in tree.body if not isinstance(statement, skipped) for node in ast.walk(statement))


def imported_from(source: bytes) -> dict[str, str]:
    """The names a module's top-level `from m import name` lines bind, with their module: a
    function moved out and imported back is not lost."""
    tree = parsed(source)
    if tree is None:
        return {}
    return {
        alias.asname or alias.name: node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
        for alias in node.names
    }


def removed_source(old: bytes, names: list[str]) -> str | None:
    """The earlier source of the definitions `names` (a method as its own lines), in file order;
    None when it does not parse or is longer than MAX_QUOTED. Told only that `NAME` was gone, a
    small model wrote the same content again; with the lines to put back it can copy them."""
    tree = parsed(old)
    if tree is None:
        return None
    text = old.decode(errors="replace")
    wanted = set(names)
    pieces: list[str] = []
    for node in tree.body:
        if wanted.intersection(statement_names(node)):
            pieces.append(indented_segment(text, node))
        if isinstance(node, ast.ClassDef):
            pieces += [indented_segment(text, item) for item in node.body if f"{node.name}.{getattr(item, 'name', '')}" in wanted]
    source = "\n".join(pieces)
    return source if source and len(source) <= MAX_QUOTED else None


def statement_names(node: ast.stmt) -> list[str]:
    """What one top-level statement defines: a function or class, or upper-case constants."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return [target.id for target in targets if isinstance(target, ast.Name) and target.id.isupper()]


def first_line(node: ast.stmt) -> int:
    """The line a statement starts on, its decorators included."""
    return min([node.lineno, *(decorator.lineno for decorator in getattr(node, "decorator_list", []))])


def indented_segment(text: str, node: ast.stmt) -> str:
    """A node's lines as they stand in the file, decorators and leading indentation included."""
    lines = text.splitlines()[first_line(node) - 1:node.end_lineno]
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
