"""What the realistic checkers share: running the project's own commands with a time limit, hidden
test cases run against a copy, files compared byte for byte, values read from the final answer.
Every helper raises Failed with a reason instead of returning False, so a record says why."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from bench.realistic.task import Failed, expect

TIMEOUT = 20


def run(root: Path, argv: list[str], stdin: str = "", env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command in the project as the user would type it (`./tool.py` runs through its shebang)."""
    environ = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    try:
        return subprocess.run(argv, cwd=root, input=stdin, capture_output=True, text=True, timeout=TIMEOUT, env=environ)
    except subprocess.TimeoutExpired:
        raise Failed(f"`{' '.join(argv)}` ran longer than {TIMEOUT} s") from None
    except OSError as error:
        raise Failed(f"`{' '.join(argv)}` could not start: {error.strerror}") from None


def python(root: Path, *args: str, stdin: str = "", env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The project's Python code, run without site-packages (`-S`): the tasks use the standard
    library only, and it starts three times faster, which keeps the validation under a minute."""
    return run(root, [sys.executable, "-S", *args], stdin, env)


def succeeds(done: subprocess.CompletedProcess[str]) -> str:
    """The command's output, if it exited 0."""
    command = " ".join(done.args)
    expect(done.returncode == 0, f"`{command}` exited {done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}")
    return done.stdout


def output_is(done: subprocess.CompletedProcess[str], expected: str) -> None:
    out = succeeds(done)
    expect(out.strip() == expected.strip(), f"`{' '.join(done.args)}` printed {out.strip()[:200]!r}, expected {expected.strip()[:200]!r}")


def evaluate(root: Path, code: str) -> str:
    """Python run in the project folder (its modules importable); what it prints, stripped."""
    return succeeds(python(root, "-c", f"import sys\nsys.path.insert(0, '.')\n{code}")).strip()


def same_file(root: Path, name: str, original: str) -> None:
    path = root / name
    expect(path.is_file(), f"{name} is gone")
    expect(path.read_bytes() == original.encode(), f"{name} changed, and the task said to leave it alone")


def text(root: Path, name: str) -> str:
    path = root / name
    expect(path.is_file(), f"{name} does not exist")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise Failed(f"{name} is not UTF-8 text") from None


def runs_directly(root: Path, name: str) -> None:
    """The user named `./name`: it needs the execute permission (and a shebang, checked by running it)."""
    path = root / name
    expect(path.is_file(), f"{name} does not exist")
    expect(os.access(path, os.X_OK), f"{name} is not executable, so `./{name}` does not run")


@contextmanager
def copy_of(root: Path) -> Iterator[Path]:
    """A scratch copy of the project, for hidden cases and restored originals."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "project"
        shutil.copytree(root, copy, symlinks=True)
        yield copy


def unittests_pass(root: Path, originals: Mapping[str, str], hidden: Mapping[str, str] = {}, minimum: int = 1) -> None:  # noqa: B006 - never mutated
    """The project's tests as they were given (an edited test file is put back) plus hidden ones
    (so code that only fits the visible cases fails) pass under `python -m unittest`."""
    with copy_of(root) as copy:
        for name, content in {**originals, **hidden}.items():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            (copy / name).write_text(content)
        done = python(copy, "-m", "unittest", "discover", "-t", ".", "-s", ".", "-p", "test*.py")
    ran = re.search(r"Ran (\d+) test", done.stderr)
    expect(done.returncode == 0, "the tests (with hidden cases) fail: " + _last_failure(done.stderr))
    expect(ran is not None and int(ran.group(1)) >= minimum, f"fewer than {minimum} tests ran")


def _last_failure(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    firsts = [line for line in lines if line.startswith(("FAIL:", "ERROR:"))]
    return "; ".join(firsts[:3]) or " ".join(lines[-3:])[:300]


NUMBER = r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w])"


def answer_has(answer: str | None, *values: str) -> None:
    """Every value appears in the final answer as a whole word, name or number."""
    expect(answer is not None, "no final answer")
    for value in values:
        found = re.search(_whole(value), answer or "", re.IGNORECASE)
        expect(found is not None, f"the answer does not say {value!r}")


def _whole(value: str) -> str:
    """`value` as a whole word: a name may follow a dot (`functools.lru_cache`), a number may not
    (`12` is not in `3.12`)."""
    before = r"(?<![\w.])" if value[:1].isdigit() else r"(?<!\w)"
    return rf"{before}{re.escape(value)}(?![\w]|\.\d)"


def answer_number(answer: str | None, value: float, places: int = 2) -> None:
    """The answer states the number (thousands separators and trailing zeros allowed, compared
    rounded to `places` decimals)."""
    expect(answer is not None, "no final answer")
    numbers = [float(found.replace(",", "")) for found in re.findall(NUMBER, answer or "")]
    expect(any(round(number, places) == round(value, places) for number in numbers), f"the answer does not state {value:g}")


def output_before(files: Mapping[str, str], args: list[str], extra: Mapping[str, str] = {}) -> str:  # noqa: B006 - never mutated
    """What the project as given printed for `python3 ARGS` (with `extra` files added): "the old
    behaviour". Kept per input: every case of a validation asks for the same one."""
    return _output_before(tuple(sorted({**files, **extra}.items())), tuple(args))


@functools.cache
def _output_before(files: tuple[tuple[str, str], ...], args: tuple[str, ...]) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for name, content in files:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(content)
        return succeeds(python(root, *args))


def python_files(root: Path) -> dict[str, str]:
    """Every .py file of the project by relative name (for "no trace of the old name is left")."""
    return {str(path.relative_to(root)): path.read_text(errors="replace") for path in sorted(root.rglob("*.py"))}
