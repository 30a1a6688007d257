"""Which names does a Python write use that the file never defines or imports? The file parses,
the write succeeds, and the mistake shows only when the code runs: a small model wrote a bare
`FIX` line where the file had `FIX = \"\"\"...\"\"\"`, and the module stopped with NameError on import.
Aider lints every edit for the same reason; pyflakes reads the code without running it."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from pyflakes import checker, messages

from mzagent_tui.agent.ground.call_syntax import call_source

MAX_CHECKED_BYTES = 500_000
"""Larger files are not linted on every write."""
MAX_NAMED = 8
"""Names listed in the note; more are counted."""
MAX_SIBLINGS = 200
"""Modules beside a written file that are searched for its names; more are not read."""
MAX_SIBLING_BYTES = 500_000


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


def _beside(sibling: Path, path: Path) -> bool:
    """A regular file in `path`'s folder, not a link that leads elsewhere."""
    return sibling.is_file() and sibling.resolve().parent == path.resolve().parent


def defined_names(source: bytes) -> list[str]:
    """The functions, classes and constants (`NAME = ...`, upper case: what other modules import) at
    the top level of a module, in order; [] if the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found = [node.name]
        else:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            found = [target.id for target in targets if isinstance(target, ast.Name) and target.id.isupper()]
        names.extend(name for name in found if name not in names)
    return names


def sibling_imports(path: Path, names: dict[str, Use]) -> dict[str, str]:
    """For each undefined name that a module beside `path` defines at its top level, or that is
    such a module's own name, the import line that brings it in: a small model created version.py
    with VERSION, then wrote app.py using VERSION without importing it."""
    modules = {sibling.stem: defined_names(source) for sibling, source in modules_beside(path)}
    imports: dict[str, str] = {}
    for name in names:
        if name in modules:
            imports[name] = f"import {name}"
            continue
        found = next((module for module, defined in modules.items() if name in defined), None)
        if found is not None:
            imports[name] = f"from {found} import {name}"
    return imports


def with_imports(source: str, imports: list[str]) -> str | None:
    """`source` with the import lines added after its shebang, docstring and __future__ imports;
    None if it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = source.splitlines(keepends=True)
    after = 1 if lines and lines[0].startswith("#!") else 0
    for index, node in enumerate(tree.body):
        docstring = index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        if not docstring and not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            break
        after = node.end_lineno or after
    if after and not lines[after - 1].endswith("\n"):
        lines[after - 1] += "\n"
    return "".join(lines[:after] + [line + "\n" for line in imports] + lines[after:])


def listed(names: list[str]) -> str:
    """Names for a note: the first MAX_NAMED, the rest counted."""
    return ", ".join(names[:MAX_NAMED]) + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")


def undefined_note(rel: str, names: dict[str, Use], content: str = "", imports: dict[str, str] | None = None) -> str:
    """The line a write's observation gets. Told only "define it", a small model put `mean = 0.0`
    under the function that needed the mean: the note says which function uses the name. When
    modules beside the file define every one of them, the write with the imports added is shown."""
    shown = listed([f"{name} ({use})" for name, use in names.items()])
    said = f"Note: {rel} uses {shown}, which it never defines or imports, so the code stops with NameError when that line runs."
    lines = list(dict.fromkeys(imports.values())) if imports and set(imports) == set(names) else []
    fixed = with_imports(content, lines) if lines else None
    if fixed is not None:
        return (
            f"{said} {'; '.join(lines)} brings {'it' if len(names) == 1 else 'them'} in from beside {rel}: send this call, "
            f"which adds {'that import' if len(lines) == 1 else 'those imports'} at the top:\n"
            f"{call_source('write_to_file', [rel, fixed])}"
        )
    return f"{said} Give each one its value before that line, inside the function that uses it; or import it, or write the name you meant."
