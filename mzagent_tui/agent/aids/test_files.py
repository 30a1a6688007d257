"""Which files are tests, and whether a task forbids changing them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TEST_FILE = re.compile(r"(?:^|/)(?:tests?/|test_[^/]*$|[^/]*_test\.\w+$|[^/]*\.(?:test|spec)\.\w+$)")
"""A test file: "the tests in test_x.py fail, fix the code" names it, but the change goes elsewhere."""
KEEP_TESTS = re.compile(
    r"(?:\bnot|n't|\bnever|\bwithout)(?:\s+(?:change|changing|modify|modifying|touch|touching|edit|editing|alter|altering))?"
    r"\s+(?:the\s+|any\s+|its\s+)?tests?\b(?:\s+files?)?(?!\s+(?:pass|fail))",
    re.IGNORECASE,
)
"""A task that says its tests stay as they are ("fix the code, not the tests", "without changing the tests")."""
MAX_PARSED_BYTES = 1_000_000


def keeps_tests(task: str) -> bool:
    return KEEP_TESTS.search(task) is not None


def imported_modules(root: Path, test_file: Path) -> list[str]:
    """The project's own modules a test file imports (`from words import shout`: words.py), which is
    where a change that makes it pass goes."""
    try:
        if not test_file.is_file() or test_file.stat().st_size > MAX_PARSED_BYTES:  # not /dev/zero behind a link
            return []
        tree = ast.parse(test_file.read_bytes())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    found = [name.replace(".", "/") + ".py" for name in names]
    return [name for name in dict.fromkeys(found) if (root / name).is_file() and not TEST_FILE.search(name)]
