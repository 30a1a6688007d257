"""Why a project script the model ran did not start, said plainly: the missing execute bit or the
missing `#!` line, not the sandbox, and the one command that fixes it. A small model read both
failures as something else (the sandbox's refusal, errors to `sed` out of the file)."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

_DENIED = re.compile(r"(?:^|: )([\w./-]+): Permission denied$", re.MULTILINE)


def without_execute_permission(output: str, root: Path) -> list[str]:
    """Project files a shell could not run for want of the execute permission (exit code 126,
    "./count.sh: Permission denied"), as the command named them: write_to_file makes files without
    it, and a small model read the refusal as the sandbox's and went on to try sudo."""
    found = []
    for name in dict.fromkeys(_DENIED.findall(output)):
        path = (root / name).resolve()
        if path.is_relative_to(root) and path.is_file() and not os.access(path, os.X_OK):
            found.append(name)
    return found


def execute_permission_note(names: list[str]) -> str:
    """What the report says of those files: the permission, not the sandbox, and two ways to run them."""
    shown = ", ".join(names)
    first = names[0].removeprefix("./")
    return (
        f"Note: {shown} {'is' if len(names) == 1 else 'are'} not executable: the file has no execute permission (files "
        f"write_to_file creates have none), not a sandbox rule. Run it through its interpreter (bash {first}, python3 "
        f"{first}), or make it executable first: chmod +x {first}"
    )


_READ_AS_SHELL = re.compile(
    r"(?:^|: )(?P<name>[\w./-]+): (?:line )?\d+: .*(?:command )?not found$"
    r"|(?:^|: )(?P<exec>[\w./-]+): (?:cannot execute binary file: )?Exec format error",
    re.MULTILINE,
)
"""A script run without its `#!` line: bash reads it as shell ("./stat.py: line 3: import: command
not found", dash says "3: import: not found"), and execve refuses it ("Exec format error")."""
INTERPRETERS = {".py": "python3", ".rb": "ruby", ".pl": "perl", ".js": "node", ".mjs": "node"}
"""By suffix, the program a script needs; a `.sh` without the line is read by bash as it should be.
A name is resolved from the project's root, as the command named it (`cd sub && ../x.py` is not)."""


def without_interpreter_line(output: str, root: Path) -> list[str]:
    """Project scripts, named as the command named them, that were run directly and have no `#!`
    line: a small model chmod-ed colstats.py, saw "import: command not found" and went on to `sed`
    the error message into the file."""
    found = []
    for match in _READ_AS_SHELL.finditer(output):
        name = match["name"] or match["exec"]
        path = (root / name).resolve()
        if name in found or not path.is_relative_to(root) or path.suffix not in INTERPRETERS or not path.is_file():
            continue
        try:
            with path.open("rb") as file:
                first = file.read(2)
        except OSError:
            continue
        if first != b"#!":
            found.append(name)
    return found


def interpreter_line_note(names: list[str]) -> str:
    """What the report says of those files: the missing line, and the command that adds it (perl
    keeps the file's permissions, and is there wherever git is)."""
    first = names[0].removeprefix("./")
    line = f"#!/usr/bin/env {INTERPRETERS[Path(first).suffix]}"
    add = f"perl -pi -e {shlex.quote(f'print {json.dumps(line + chr(10))} if $. == 1')} {shlex.quote(first)}"
    return (
        f"Note: {', '.join(names)} {'has' if len(names) == 1 else 'have'} no interpreter line, so the system does not know it is "
        f"a {INTERPRETERS[Path(first).suffix]} program (the shell read it as a shell script). Its first line must be {line} — "
        f"add it and keep the rest: {add}"
    )
