"""Which argument of a tool server or a hook names the code it runs, read as its interpreter or
runner reads its command line: mcp/program.py confines a server whose code is in the project, and
the hooks' runner a hook.

Why: a folder among a server's arguments is data for most servers (`server-filesystem /proj`
serves it; confined, it could not write), but code for an interpreter or a runner: `python
/proj/srv` runs `srv/__main__.py`, `node /proj/srv` its `index.js`, `uv run --directory /proj
srv` and `uvicorn --app-dir /proj/srv` the project's modules. So an interpreter's or runner's
own arguments — its options and their values, and the script, module or package it runs (the
first argument that is not an option) — count whole: a project path there, as the argument, after
its `=` or as a word inside it, relative ones from the server's working folder and links
followed, makes the server run the project's code. What follows the script is the script's
data, unless the script is itself an interpreter or runner (`uv run python /proj/x`, `npx tsx
/proj/x.ts`, `env python /proj/x`), which is read the same way. Any program's option that says
where its code is (`--app-dir`, `--directory`, `-C`) counts too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mzagent_tui.agent.safety import trusted_path


@dataclass(frozen=True)
class Reader:
    """How one family of interpreters or runners reads its command line."""

    pattern: str
    """Its program names (a regular expression on the basename)."""
    code_options: frozenset[str] = frozenset()
    """Options whose value is code (`python -c`, `node -e`, `sh -c`): it and every argument after
    it count (the code may run them: `sh -c '"$0"' /proj/srv`)."""
    value_options: frozenset[str] = frozenset()
    """Options that take the next argument as their value (which counts whole)."""
    module_options: frozenset[str] = frozenset()
    """Options whose value is a module found on its path (`python -m`): what follows is its data."""
    subcommands: frozenset[str] = frozenset()
    """Words before its options that name the act (`uv run`, `npm exec`, `pipx run`)."""


_RUNNER_VALUES = frozenset({
    "--from", "--with", "--with-editable", "--with-requirements", "--python", "-p", "--package", "--directory",
    "--project", "--cwd", "--prefix", "--index", "--index-url", "--extra-index-url", "--env-file", "-C", "--config",
    "--config-file", "--registry", "--workspace", "-w", "--spec", "--pip-args", "-n", "--name", "--environment",
})
READERS = (
    Reader(r"(python|pypy)[0-9.]*", frozenset({"-c"}), frozenset({"-X", "-W", "--check-hash-based-pycs"}), frozenset({"-m"})),
    Reader(r"(node|nodejs)[0-9.]*", frozenset({"-e", "--eval", "-p", "--print"}), frozenset({
        "-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--env-file", "--title",
    })),
    Reader(r"(ruby|perl|php|lua|luajit)[0-9.]*", frozenset({"-e", "-E", "-r"}), frozenset({"-I", "-C", "-M", "-x", "-d", "-l"})),
    Reader(r"(sh|bash|zsh|dash|ksh|mksh|fish)", frozenset({"-c"}), frozenset({"-o", "-O", "--rcfile", "--init-file"})),
    Reader(
        r"deno|bun|bunx|tsx|ts-node|ts-node-esm", frozenset({"-e", "--eval", "-p", "--print"}),
        _RUNNER_VALUES | {"-c", "-r", "--require", "--import"}, subcommands=frozenset({"run", "x", "exec"}),
    ),
    Reader(
        r"uv|uvx|pipx|poetry|pdm|hatch|rye|conda|mamba|micromamba", frozenset(), _RUNNER_VALUES,
        frozenset({"-m", "--module"}), frozenset({"run", "tool", "exec"}),
    ),
    Reader(r"npx|pnpx|npm|pnpm|yarn", frozenset({"-c", "--call"}), _RUNNER_VALUES, subcommands=frozenset({"exec", "dlx", "x", "run", "start"})),
    Reader(r"env", value_options=frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"})),
)
CODE_LOCATION_OPTIONS = frozenset({
    "--app-dir", "--directory", "--dir", "--cwd", "--chdir", "--project", "--project-dir", "--prefix", "--from", "--with",
    "--with-editable", "--manifest-path", "--working-directory", "--app", "-C",
})
"""Options of any program that say where its code is (uvicorn `--app-dir`, `make -C`, `--directory`)."""
_WORDS = re.compile(rf"[\s={re.escape(os.pathsep)},;'\"`()\[\]{{}}<>|&]+")
"""What cuts an argument into the paths it may name: a list (`a:b`), an option's `=`, and the
quotes and brackets of code (`runpy.run_path('/proj/srv')`)."""


def project_code(command: str, args: Sequence[str], cwd: str, projects: Iterable[str]) -> str | None:
    """The argument that makes this server run code in one of the `projects`, or None."""
    folders = tuple(projects)
    return _read(os.path.basename(command), list(args), cwd, folders) or _code_location(args, cwd, folders)


def _reader(program: str) -> Reader | None:
    return next((reader for reader in READERS if re.fullmatch(reader.pattern, program)), None)


def _read(program: str, args: list[str], cwd: str, projects: tuple[str, ...]) -> str | None:
    """An interpreter's or runner's own arguments, up to and with the code it runs, and on into
    the code's own arguments when that code is an interpreter or runner too."""
    reader = _reader(program)
    if reader is None:
        return None
    index = 0
    while index < len(args) and args[index] in reader.subcommands:
        index += 1
    while index < len(args):
        argument = args[index]
        if argument == "--":
            index += 1
            break
        if program == "env" and "=" in argument and not argument.startswith("-"):
            if _names_project(argument, cwd, projects):  # VAR=value: PYTHONPATH=/proj/src
                return argument
            index += 1
            continue
        if not argument.startswith("-") or argument == "-":
            break
        option = argument.partition("=")[0]
        takes_value = "=" not in argument and option in reader.code_options | reader.value_options | reader.module_options
        value = args[index + 1] if takes_value and index + 1 < len(args) else ""
        rest = args[index + (2 if takes_value else 1):]
        if _names_project(argument, cwd, projects):
            return argument
        if value and _names_project(value, cwd, projects):
            return f"{argument} {value}"
        if option in ("-S", "--split-string"):
            return _read("env", [*value.split(), *rest], cwd, projects)
        if option in reader.code_options:
            return next((later for later in rest if _names_project(later, cwd, projects)), None)
        if option in reader.module_options:
            return None  # a module found on its path (the working folder is judged apart); what follows is its data
        index += 2 if takes_value else 1
    if index >= len(args):
        return None
    code = args[index]
    if _names_project(code, cwd, projects):
        return code
    return _read(_package_name(code), args[index + 1:], cwd, projects)


def _package_name(code: str) -> str:
    """The program a runner's package argument names: `@scope/name@1.2` → name, `tsx` → tsx."""
    name = code.rsplit("/", 1)[-1]
    return name.split("@", 1)[0] if not name.startswith("@") else name


def _code_location(args: Sequence[str], cwd: str, projects: tuple[str, ...]) -> str | None:
    """An option of any program that says where its code is, given a project path."""
    for index, argument in enumerate(args):
        option, equals, value = argument.partition("=")
        if option not in CODE_LOCATION_OPTIONS:
            continue
        value = value if equals else (args[index + 1] if index + 1 < len(args) else "")
        if _names_project(value, cwd, projects) is not None:
            return argument if equals else f"{argument} {value}"
    return None


def _names_project(argument: str, cwd: str, projects: tuple[str, ...]) -> str | None:
    """`argument` when it, or a word inside it, is a path in one of the projects (relative from
    `cwd`, a leading `~` from the home, links followed)."""
    for word in {argument, *_WORDS.split(argument)} - {""}:
        path = os.path.join(cwd, os.path.expanduser(word))
        if trusted_path.is_untrusted(path, projects):
            return argument
    return None


def imports_from_working_folder(command: str, args: Sequence[str]) -> bool:
    """Whether Python, so started, puts its working folder first on its import path: with `-m`,
    `-c` or a script read from stdin, and with no script at all (`python3 -m fmt` in the project
    imports the project's `fmt.py`); given a script, the script's own folder comes first instead.
    `-I` and `-P` switch it off, and are not trusted to here: it only confines more."""
    python = READERS[0]
    if _reader(os.path.basename(command)) is not python:
        return False
    index = 0
    while index < len(args):
        argument = args[index]
        if argument == "-" or (argument.startswith(("-m", "-c")) and not argument.startswith("--")):
            return True
        if not argument.startswith("-"):
            return False
        index += 2 if argument in python.value_options else 1
    return True
