"""The index of the holes still open: every strict xfail in the tests, by file, with its reason.

A hole that is known is a test that fails today and would pass once it is closed
(`xfail(strict=True)`): its reason says how the attack gets through. They are spread over the
test files of the wall they attack (a folder per wall: tests/gate/, tests/sandbox/, ...);
docs/open-holes.md lists them in one place, by file, and
tests/test_open_holes.py fails when that list and the tests differ. Regenerate it with

    python -m tests.open_holes > docs/open-holes.md
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).parent


@dataclass(frozen=True)
class Hole:
    file: str  # the path from the tests folder, with / between its parts
    test: str
    reason: str


def _strict_reason(decorator: ast.expr) -> str | None:
    """The reason of a `pytest.mark.xfail(strict=True, reason=...)` decorator, else None."""
    if not (isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.xfail"):
        return None
    keywords = {keyword.arg: keyword.value for keyword in decorator.keywords}
    strict = keywords.get("strict")
    if not (isinstance(strict, ast.Constant) and strict.value is True):
        return None
    reason = keywords.get("reason")
    value = ast.literal_eval(reason) if reason is not None else ""
    return " ".join(str(value).split())


def open_holes(folder: Path = TESTS) -> list[Hole]:
    holes = []
    for path in sorted(folder.rglob("test_*.py"), key=lambda found: found.relative_to(folder).parts):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for decorator in node.decorator_list:
                reason = _strict_reason(decorator)
                if reason is not None:
                    holes.append(Hole(path.relative_to(folder).as_posix(), node.name, reason))
    return holes


def render(holes: list[Hole]) -> str:
    lines = [
        "# Holes still open",
        "",
        "Attacks that get through today, each kept as a test that fails until it is closed",
        "(`xfail(strict=True)`: when the hole closes the test passes, the suite fails, and the marker",
        "comes off). Made from the tests by `python -m tests.open_holes`; `tests/test_open_holes.py`",
        "fails when this list and the tests differ.",
        "",
        f"{len(holes)} open.",
    ]
    current = ""
    for hole in holes:
        if hole.file != current:
            current = hole.file
            lines += ["", f"## tests/{hole.file}", ""]
        lines.append(f"- `{hole.test}`: {hole.reason}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(open_holes()), end="")
