"""Does a file still parse? Python, JSON, TOML, INI and shell scripts, by the file's extension.

The write tools say it right after a write: the model hears at once that the file it wrote is
broken.
A small model often writes `\\n` where it meant a new line, which leaves a one-line file full of
backslashes: that case is named, since the parser's message does not point to it.
"""

from __future__ import annotations

import configparser
import json
import re
import subprocess
import tomllib
from pathlib import Path

from mzagent_tui.agent.safety import own_programs

LITERAL_NEWLINES = 2
"""A one-line file holding at least this many backslash-n pairs was most likely escaped twice."""


COMPOUND_AFTER_SEMICOLON = re.compile(r";\s*(with|for|while|if|def|class|try)\b")
"""`import csv; with open(...) as f: ...`: Python allows a block statement only at the start of a line."""
_BLOCK_AFTER_SEMICOLON = (
    "a with/for/while/if/def/class/try statement cannot follow ; on the same line in Python: "
    "put each statement on its own line (\\n in the string) with indentation"
)


def _block_after_semicolon(line: str) -> bool:
    """Whether a line of Python puts a block statement after a semicolon."""
    return COMPOUND_AFTER_SEMICOLON.search(line) is not None


SHELL_CHECK_SECONDS = 5
"""`bash -n` on a script is not waited for longer (no answer: not checked)."""


def syntax_problem(name: str, data: bytes, before: bytes | None = None) -> str | None:
    """Why the file `name` with content `data` does not parse, in one line; None if it does (or
    is of a kind not checked). `before` is its earlier content: many `.cfg` files are not INI,
    so one whose earlier content did not parse as INI is not checked."""
    suffix = name.rpartition(".")[2].lower() if "." in name else ""
    if suffix not in ("py", "json", "toml", "ini", "cfg", "sh", "bash"):
        return None
    if suffix == "cfg" and before is not None and syntax_problem(name, before) is not None:
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if suffix in ("sh", "bash"):
        return _shell_problem(data)
    try:
        if suffix == "py":
            compile(text, name, "exec", dont_inherit=True)
        elif suffix == "json":
            json.loads(text)
        elif suffix == "toml":
            tomllib.loads(text)
        else:
            configparser.ConfigParser(interpolation=None, strict=False).read_string(text)
    except SyntaxError as exc:
        problem = f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})"
        lines = text.splitlines()
        if exc.lineno and exc.lineno <= len(lines) and _block_after_semicolon(lines[exc.lineno - 1]):
            problem += f"; {_BLOCK_AFTER_SEMICOLON}"
    except json.JSONDecodeError as exc:
        problem = _json_problem(exc)
    except tomllib.TOMLDecodeError as exc:
        problem = f"invalid TOML: {exc}"
    except configparser.Error as exc:
        problem = f"invalid INI: {str(exc).splitlines()[0]}"
    except (ValueError, RecursionError, MemoryError):  # a value or nesting the parser cannot hold: not checked
        return None
    else:
        return None
    if "\n" not in text.rstrip("\n") and text.count("\\n") >= LITERAL_NEWLINES:
        problem += "; it is one line with \\n written out as backslash and n: in the string write \\n for a new line, not \\\\n"
    return problem


TRAILING_COMMAS_NAMED = 10
"""At most this many trailing commas are named in one message."""


def _json_problem(exc: json.JSONDecodeError) -> str:
    """The decoder's message, or the cause where it names only a symptom: after a trailing comma
    ("[1, 2,]", '"open": true,\n}') it expects a value or a property name at the bracket, and a
    small model told that line 5 column 1 expects a property name wrote the same file again.
    Every trailing comma is named at once (the decoder stops at the first)."""
    commas = _trailing_commas(exc)
    if not commas:
        return f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    places = " and ".join(_line_column(exc.doc, at) for at in commas)
    if len(commas) == 1:
        return f"invalid JSON: a comma after the last item of a list or object ({places}): JSON allows none there, remove it"
    return f"invalid JSON: {len(commas)} commas after the last item of a list or object ({places}): JSON allows none there, remove them"


def _trailing_commas(exc: json.JSONDecodeError) -> list[int]:
    """Where the trailing commas the decoder runs into one after another stand, each found by
    removing the ones before it; at most TRAILING_COMMAS_NAMED."""
    doc = exc.doc
    error: json.JSONDecodeError | None = exc
    commas: list[int] = []
    while error is not None and len(commas) < TRAILING_COMMAS_NAMED:
        before = doc[: error.pos].rstrip()
        if doc[error.pos : error.pos + 1] not in ("]", "}") or not before.endswith(","):
            break
        comma = len(before) - 1
        commas.append(comma + len(commas))  # the commas removed so far all stood before this one
        doc = doc[:comma] + doc[comma + 1 :]
        try:
            json.loads(doc)
            error = None
        except json.JSONDecodeError as later:
            error = later
        except RecursionError:  # nested too deep to read on: left as it is, a fault of its own
            break
    return commas


def _line_column(text: str, at: int) -> str:
    line = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    return f"line {line}, column {column}"


def _shell_problem(data: bytes) -> str | None:
    """`bash -n` reads the script without running any of it; its first complaint, if any. It
    starts with no start-up files, confined, in our own programs' minimal environment."""
    try:
        checked = own_programs.run(["bash", "--noprofile", "--norc", "-n"], Path("/"), input=data, timeout=SHELL_CHECK_SECONDS)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if checked.returncode == 0:
        return None
    first = checked.stderr.decode("utf-8", "replace").strip().splitlines()
    problem = f"bash syntax error: {re.sub(r'^[^:]*bash: ', '', first[0])}" if first else "bash syntax error"  # bash names itself by the path it was run by
    if b"\\$(" in data:
        problem += "; \\$ is a literal dollar sign in bash, so \\$(( ... )) is not arithmetic: write $(( ... )) with no backslash"
    return problem
