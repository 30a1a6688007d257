"""Where the programs mzagent starts outside the sandbox may come from: the user's PATH minus
every folder a confined command may write.

Why: PATH often starts inside the project (an activated `.venv/bin`, `./bin`, `node_modules/.bin`,
`.`), and the model writes there. A `.venv/bin/ruff` it rewrote ran as the user at the next
hook, with the user's environment; a `.venv/bin/bash` an allowed test run made became the
supervisor of later commands. So a program we start outside the sandbox (the supervising shell,
hooks, MCP servers, our own git and `bash -n`) is looked up here only: absolute folders, real
paths, none inside a project this process works in, the temp folders (the session's `TMPDIR`
lives there) or `/dev/shm`, and no program whose real file is in one of those.

The model's own commands keep the user's PATH (they are confined); the safe list asks
`found_in_untrusted` what that PATH would run, so a `.venv/bin/ls` is not "read-only".
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from mzagent_tui.agent.safety.sensitive import HOME_ALLOWED

FALLBACK_PATH = "/usr/bin:/bin"
"""What programs of ours get when no entry of the user's PATH is trusted."""
TEMP_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")
"""Writable by every program (and by confined commands through their private copies)."""

_projects: set[str] = set()
_lock = threading.Lock()


def note_project(root: Path) -> None:
    """A project this process works in: from now on no program of ours is looked up inside it
    (the ACP server works in several, so it is every project noted, never only the last)."""
    with _lock:
        _projects.add(os.path.realpath(root))


def projects() -> tuple[str, ...]:
    """The real paths of the projects noted."""
    with _lock:
        return tuple(sorted(_projects))


def untrusted_folders(*extra: Path) -> tuple[str, ...]:
    """The real paths confined commands may write: the projects noted (and `extra`) and the
    temp folders."""
    with _lock:
        projects = tuple(sorted({*_projects, *(os.path.realpath(folder) for folder in extra)}))
    return (*projects, *sorted(_temp_folders()))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _read_only(project: str) -> tuple[str, ...]:
    return _toolchains(project, os.path.realpath(Path.home()))


@functools.cache
def _toolchains(project: str, home: str) -> tuple[str, ...]:
    """For a project at the home, the toolchain folders in it the sandbox keeps read-only
    (`~/.local/bin`, `~/.cargo/bin`): commands cannot write them, so they stay trusted."""
    found = (os.path.realpath(os.path.join(home, entry)) for entry in HOME_ALLOWED)
    return tuple(folder for folder in found if folder != project and _within(folder, project))


def is_untrusted(path: str, folders: Iterable[str] | None = None) -> bool:
    """`path`'s real path is in a folder confined commands may write (and not in one of the
    sandbox's read-only toolchain folders there). mzagent's own installation in a temp folder (a
    virtual environment made by `mktemp`, as CI makes it) is as trusted as the code running now:
    a command that could write there could change mzagent itself. In a project it is not."""
    real = os.path.realpath(path)
    own = _within(real, os.path.realpath(sys.prefix))
    temp = _temp_folders()
    for folder in untrusted_folders() if folders is None else folders:
        if not _within(real, folder) or any(_within(real, kept) for kept in _read_only(folder)):
            continue
        if own and folder in temp:
            continue
        return True
    return False


def _temp_folders() -> frozenset[str]:
    return frozenset(os.path.realpath(folder) for folder in (*TEMP_FOLDERS, tempfile.gettempdir()))


@functools.lru_cache(maxsize=64)
def _entries(path_value: str, folders: tuple[str, ...]) -> tuple[str, ...]:
    entries: list[str] = []
    for entry in path_value.split(os.pathsep):
        if not os.path.isabs(entry):
            continue  # "" and "." are the working folder: the project
        real = os.path.realpath(entry)
        if real not in entries and not is_untrusted(real, folders):
            entries.append(real)
    return tuple(entries)


def trusted_entries(path_value: str | None = None) -> tuple[str, ...]:
    """The folders of `path_value` (default: our PATH) programs of ours are looked up in, as
    real absolute paths, resolved now: a link on PATH into the project counts as the project."""
    value = os.environ.get("PATH", os.defpath) if path_value is None else path_value
    return _entries(value, untrusted_folders())


def trusted_path(path_value: str | None = None) -> str:
    """`trusted_entries` as a PATH value, for a program of ours and what it starts by name."""
    return os.pathsep.join(trusted_entries(path_value)) or FALLBACK_PATH


def which(name: str, path_value: str | None = None) -> str | None:
    """The absolute program `name` would be on the trusted PATH: the first executable file whose
    real file is not in an untrusted folder either (a link in `/usr/local/bin` into a project).
    A name with a slash is taken only when absolute and trusted itself."""
    return _which(name, path_value, untrusted_folders(), 0)


def _which(name: str, path_value: str | None, folders: tuple[str, ...], depth: int) -> str | None:
    if "/" in name:
        trusted = os.path.isabs(name) and _runnable(name) and not is_untrusted(name, folders)
        return name if trusted and _untrusted_interpreter(name, path_value, folders, depth) is None else None
    for entry in trusted_entries(path_value) or tuple(FALLBACK_PATH.split(os.pathsep)):
        candidate = os.path.join(entry, name)
        if _runnable(candidate) and not is_untrusted(candidate, folders) and _untrusted_interpreter(candidate, path_value, folders, depth) is None:
            return candidate
    return None


def untrusted_interpreter(program: str, path_value: str | None = None) -> str | None:
    """The interpreter `program`'s `#!` line leads to when that is not trusted, else None: a
    script in /usr/local/bin whose `#!` is the project's `.venv/bin/python` runs the project's
    interpreter. `#!/usr/bin/env NAME` (`-S` and options too) is NAME on the trusted PATH, as our
    programs run with it; an interpreter that is a script is judged the same way, to the depth
    the kernel follows; a relative interpreter (the working folder's) and one past that depth are
    not trusted."""
    return _untrusted_interpreter(program, path_value, untrusted_folders(), 0)


SHEBANG_BYTES = 256
"""How much of a script's first line Linux reads for its `#!` line (BINPRM_BUF_SIZE)."""
INTERPRETER_DEPTH = 4
"""How many interpreters that are scripts themselves Linux follows before it refuses."""


def _untrusted_interpreter(program: str, path_value: str | None, folders: tuple[str, ...], depth: int) -> str | None:
    """For a program of ours: `env NAME` is NAME as `which` finds it on the trusted PATH."""

    def env_runs(name: str) -> str | None:
        return name if _which(name, path_value, folders, depth + 1) is None else None

    return _interpreter_judged(program, folders, depth, env_runs)


def _interpreter_judged(program: str, folders: tuple[str, ...], depth: int, env_runs: Callable[[str], str | None]) -> str | None:
    """The untrusted interpreter `program`'s `#!` line leads to, `env_runs` judging what `env NAME` runs."""
    line = _shebang(program)
    if line is None:
        return None
    interpreter, argument = line
    if depth >= INTERPRETER_DEPTH or not os.path.isabs(interpreter):
        return interpreter
    if is_untrusted(interpreter, folders) or is_untrusted(os.path.dirname(interpreter), folders):
        return interpreter
    name = _env_program(argument) if os.path.basename(interpreter) == "env" else None
    if name is not None:
        found = env_runs(name)
        if found is not None:
            return found
    return _interpreter_judged(interpreter, folders, depth + 1, env_runs)


def _shebang(program: str) -> tuple[str, str] | None:
    """A script's interpreter and its one argument, as the kernel splits the `#!` line: the
    interpreter up to the first blank, the rest as one argument."""
    try:
        with open(program, "rb") as file:
            head = file.read(SHEBANG_BYTES)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", "surrogateescape").strip(" \t")
    interpreter, _, argument = line.replace("\t", " ").partition(" ")
    return (interpreter, argument.strip()) if interpreter else None


def _env_program(argument: str) -> str | None:
    """The program `env ARGUMENT` runs: its first word that is not an option or an assignment
    (`-S python3 -u`, `-i python3`, `A=1 python3`)."""
    return next((word for word in argument.split() if not word.startswith("-") and "=" not in word), None)


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def lookup(name: str, path_value: str, cwd: Path) -> str | None:
    """What the shell would run for `name` with `path_value` in `cwd`: a path with a slash as it
    stands, else the first executable file on PATH, relative and empty entries from `cwd`, an
    entry starting with `~` from the home (`_as_bash_reads`)."""
    if "/" in name:
        path = os.path.join(cwd, name)
        return path if _runnable(path) else None
    for entry in path_value.split(os.pathsep):
        candidate = os.path.join(cwd, _as_bash_reads(entry) or ".", name)
        if _runnable(candidate):
            return os.path.normpath(candidate)
    return None


def on_path(root: Path, relative_path: str, path_value: str) -> str | None:
    """The PATH entry (as written) whose folder holds the project file `relative_path` itself,
    or None. A program there runs by name: in the user's shell with an activated `.venv/bin`,
    in a hook that runs as the user for a project at the home (`~/.local/bin`), and in every
    command. A relative entry counts from the project folder, where commands start."""
    if not path_value:
        return None  # no PATH at all (not one empty entry): nothing is run by name
    folder = os.path.realpath(os.path.dirname(os.path.join(root, relative_path)))
    for entry in path_value.split(os.pathsep):
        if os.path.realpath(os.path.join(root, _as_bash_reads(entry) or ".")) == folder:
            return entry or "."
    return None


def _as_bash_reads(entry: str) -> str:
    """A PATH entry as bash reads it when it looks a program up: one starting with `~` is
    tilde-expanded (`PATH="~/bin:$PATH"`, quoted in a profile, still finds `~/bin/ls` in bash),
    so for a project at the home `~/bin` is the project's `bin`. Other shells keep it literal;
    commands run in bash."""
    return os.path.expanduser(entry) if entry.startswith("~") else entry


def found_in_untrusted(name: str, path_value: str, cwd: Path, folders: Iterable[str] | None = None) -> str | None:
    """Where `name` would be found, when that is in a folder confined commands may write (the
    folder it is found in, or the file a link there leads to), or the interpreter its `#!` line
    leads to when that is (`untrusted_interpreter`); else None. A name with a slash
    counts whether it exists or not: the model may write it before it runs."""
    return _found_in_untrusted(name, path_value, cwd, untrusted_folders() if folders is None else tuple(folders), 0)


def _found_in_untrusted(name: str, path_value: str, cwd: Path, folders: tuple[str, ...], depth: int) -> str | None:
    found = os.path.normpath(os.path.join(cwd, name)) if "/" in name else lookup(name, path_value, cwd)
    if found is None:
        return None
    if is_untrusted(os.path.dirname(found), folders) or is_untrusted(found, folders):
        return found
    return _interpreter_judged(found, folders, depth, lambda env_name: _found_in_untrusted(env_name, path_value, cwd, folders, depth + 1))
