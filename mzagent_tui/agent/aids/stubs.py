"""Functions left to fill in: those whose whole body is `raise NotImplementedError`.

A write of the same content again is called a step done only when the file holds none (see
FileTools).
"""

from __future__ import annotations

import ast
from typing import TypeGuard


def stub_functions(source: bytes) -> list[str] | None:
    """The functions and methods whose whole body (after a docstring) is `raise NotImplementedError`,
    leaving out abstract methods, which are meant to stay so; None if the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    stubs: list[str] = []
    for node in tree.body:
        members = node.body if isinstance(node, ast.ClassDef) else [node]
        prefix = f"{node.name}." if isinstance(node, ast.ClassDef) else ""
        stubs.extend(prefix + item.name for item in members if _only_raises_not_implemented(item))
    return stubs


def stubs_in(name: str, data: bytes) -> list[str]:
    """The functions left to fill in of the Python file `name` with content `data` ([] for another
    kind of file, or one that does not parse)."""
    return (stub_functions(data) or []) if name.lower().endswith(".py") else []


def _only_raises_not_implemented(node: ast.stmt) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
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
