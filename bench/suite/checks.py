"""Checkers look at the result (files, what a program prints, a value in the answer), never at
the wording of the answer. Each returns a function of (project folder, final answer or None)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

Check = Callable[[Path, "str | None"], bool]
TIMEOUT = 30


def read(root: Path, name: str) -> str:
    path = root / name
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return ""


def run(root: Path, argv: list[str]) -> subprocess.CompletedProcess[str] | None:
    """Run a program in the project; None when it hangs or cannot start (a script with no shebang)."""
    try:
        return subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except (subprocess.TimeoutExpired, OSError):
        return None


def python_true(code: str) -> Check:
    """`code` is Python run in the project folder (importable from there); it must print True."""

    def check(root: Path, answer: str | None) -> bool:
        done = run(root, [sys.executable, "-c", f"import sys; sys.path.insert(0, '.')\n{code}"])
        return done is not None and done.stdout.strip().splitlines()[-1:] == ["True"]

    return check


def prints(argv: list[str], expected: str) -> Check:
    """The program exits 0 and prints exactly `expected` (surrounding whitespace ignored)."""

    def check(root: Path, answer: str | None) -> bool:
        done = run(root, argv)
        return done is not None and done.returncode == 0 and done.stdout.strip() == expected.strip()

    return check


def text_is(name: str, expected: str) -> Check:
    return lambda root, answer: read(root, name).strip() == expected.strip()


def json_is(name: str, expected: object) -> Check:
    def check(root: Path, answer: str | None) -> bool:
        try:
            return json.loads(read(root, name)) == expected
        except ValueError:
            return False

    return check


def answer_has(*values: str) -> Check:
    """Every value appears in the final answer as a whole word or number."""

    def check(root: Path, answer: str | None) -> bool:
        if answer is None:
            return False
        return all(re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", answer, re.IGNORECASE) for value in values)

    return check


def exists(*names: str) -> Check:
    return lambda root, answer: all((root / name).exists() for name in names)


def gone(*names: str) -> Check:
    return lambda root, answer: not any((root / name).exists() for name in names)


def unchanged(name: str, original: str) -> Check:
    return lambda root, answer: read(root, name) == original


def executable(name: str) -> Check:
    return lambda root, answer: (root / name).is_file() and os.access(root / name, os.X_OK)


def all_of(*checks: Check) -> Check:
    return lambda root, answer: all(check(root, answer) for check in checks)


def unittest_passes(test_file: str, original: str, minimum: int = 1) -> Check:
    """The original test file (not one the agent edited) passes against the project's code."""

    def check(root: Path, answer: str | None) -> bool:
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / "p"
            shutil.copytree(root, copy, symlinks=True)
            (copy / test_file).write_text(original)
            done = run(copy, [sys.executable, "-m", "unittest", "-v", test_file.removesuffix(".py")])
        if done is None or done.returncode != 0:
            return False
        ran = re.search(r"Ran (\d+) test", done.stderr)
        return ran is not None and int(ran.group(1)) >= minimum

    return check


def tests_catch(test_file: str, module: str, broken: str, minimum: int = 2) -> Check:
    """The agent's tests pass on the project's code and fail when `module` is replaced by `broken`."""

    def check(root: Path, answer: str | None) -> bool:
        if not (root / test_file).is_file():
            return False
        argv = [sys.executable, "-m", "unittest", "-v", test_file.removesuffix(".py")]
        good = run(root, argv)
        if good is None or good.returncode != 0:
            return False
        ran = re.search(r"Ran (\d+) test", good.stderr)
        if ran is None or int(ran.group(1)) < minimum:
            return False
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / "p"
            shutil.copytree(root, copy, symlinks=True)
            (copy / module).write_text(broken)
            bad = run(copy, argv)
        return bad is None or bad.returncode != 0

    return check


def answer_number(value: float) -> Check:
    """The final answer states the number (40, 40.0 and 40.00 all count)."""

    def check(root: Path, answer: str | None) -> bool:
        if answer is None:
            return False
        return any(float(found) == value for found in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])", answer))

    return check
