"""Which project files make tools run code: writing one asks (tools/files.py), and one a command
created or changed is asked about after it (tools/planted.py, found by tools/planted_scan.py).

Rules, not names: a list of the files tools obey always misses the next tool (lefthook, R's
`.Rprofile`, another agent's settings), so three rules find them by their form, and a short
list (`NAMED`) keeps what no rule can find.

1. Configuration by convention: a hidden name — a dot-file, or anything in a dot-folder — at any
   depth is what tools read when they start in that folder (direnv's `.envrc`, an editor's
   `.vscode/`, a git hook manager's `.lefthook.yml`, a REPL's `.irbrc`, an agent's `.gemini/`),
   and such files name programs to run. Left out: the hidden names that are data only
   (`DATA_ONLY`), and whatever lies in a folder tools fill themselves (`FILLED_BY_TOOLS`:
   installed packages, environments, caches, build output), where nobody starts a tool.
2. The rc and config forms, hidden or not: `*rc`, `*.rc`, `*.config.{js,cjs,mjs,ts,mts,cts}`
   (an editor's ESLint, Prettier or Tailwind extension runs them on opening the folder),
   `*.local.toml`.
3. What Python imports first: in a folder Python puts first on `sys.path` (the project's root,
   where `python -m pip` starts; a project folder on PYTHONPATH), a module named like one your
   interpreters import from outside the project — the standard library's and every installed
   one's (`logging.py`, `pip.py`, `json.pyc`, `json.cpython-312-….so`; python_names.py asks the
   interpreters) — or any module file in a package folder so named (`pip/__main__.py`,
   `json/__init__.py`, `_pytest/config/x.py`), or `sitecustomize`/`usercustomize`, is imported
   in place of the real one. A project folder on mzagent's own `sys.path` counts twice over:
   mzagent's next start imports from it outside the sandbox, so there it asks in yolo too.

Where the line is: a file counts when a tool runs what it says on an act that is not "run this
project's code" (entering the folder, opening it in an editor, starting Python or a REPL, any
git, npm or yarn command, a debugger). The project's own build and test files (`Makefile`,
`package.json` scripts, `conftest.py`, `setup.py`, `pyproject.toml`, `build.rs`) are not:
running them is running the project, and a command's changes to them are listed after it like
any file's. A name a rule misses costs a hole; one a rule catches wrongly costs a question.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Collection
from pathlib import Path

from mzagent_tui.agent.safety.python_names import importable_names

HIDDEN_REASON = (
    "a hidden name is, by convention, configuration that a tool reads when it starts in that folder "
    "(direnv's .envrc, editors' .vscode/, git hook managers, REPL startup files, other agents' settings), "
    "and it may name programs to run"
)
RC_REASON = "a name of the rc or config form (*rc, *.rc, *.config.js, *.local.toml) is a tool's configuration, read when it starts"
SHADOW_REASON = (
    "Python imports it in place of the module of that name your interpreters import (the standard library's or "
    "an installed one's) when it starts here (this folder comes first on sys.path: `python -m pip`, a REPL)"
)
STARTUP_REASON = "Python imports it at every start from a folder first on sys.path"
SETTINGS_REASON = (
    "mzagent reads it when it starts here: it can choose where your requests go and which API key is sent there "
    "(a .env the user keeps their key in, pointed elsewhere, would send that key to whoever it names)"
)
PTH_REASON = "Python imports it at every start of that environment: a .pth file beside it names it on a line Python runs"
STARTUP_HOOK_REASON = "Python imports it at every start (a start-up hook: sitecustomize or usercustomize, in any form)"
START_REASON = (
    "mzagent's next start imports it: it is named like a module mzagent or Python imports, in a project folder on "
    "mzagent's own sys.path (PYTHONPATH, a .pth, or `python -m` started there), so it would run outside the sandbox"
)

DATA_ONLY = frozenset({
    ".editorconfig",  # indentation and line endings
    ".nvmrc",  # a version name; nvm's aliases live in its own folder, not the project
    ".gitmodules",  # git refuses its `!command` updates and its program-running transports are off
    ".lfsconfig",  # git-lfs reads only URLs and fetch lists from it
    ".clangd",  # clangd runs a compiler only where the user's --query-driver allows
    ".gitkeep", ".keep",  # empty placeholders that keep a folder in git
    ".coverage",  # coverage.py's SQLite data, written by every test run with coverage
})
"""Hidden names a tool reads as data only: writing one does not ask. Also every hidden name
ending in `ignore` (`.gitignore`, `.dockerignore`, `.npmignore`, `.prettierignore`): a list of
paths for a tool to leave out, in which nothing runs (the after-command check does not read
`.gitignore`; the analyser reads ignore files where they decide what `rg` shows).
Not here: `.python-version` — uv takes an interpreter's path from it and runs that program."""
FILLED_BY_TOOLS = frozenset({
    "node_modules", "site-packages", "dist-packages", "__pycache__",  # installed packages, compiled modules
    ".venv", ".tox", ".nox", ".yarn",  # environments and yarn's own folder (its releases and plugins are in NAMED)
    "target", ".next", ".nuxt", ".svelte-kit", ".turbo", ".angular", ".gradle", ".dart_tool",  # build output (`target`: see TOP_ONLY)
    ".hypothesis", ".ipynb_checkpoints",  # test and notebook state
})
"""Folders tools fill themselves, which nobody starts a tool in: the convention rules (1, 2) do
not look below one, nor below any hidden folder whose name ends in `cache` (`.pytest_cache`,
`.mypy_cache`, `.ruff_cache`, `.cache`, `node_modules/.cache`; a project's own `src/cache` is
no tool's). For a hidden path only the
folders down to its first hidden one count (`node_modules/x/.eslintrc`, `.venv/bin/ruff`), so a
folder named `cache` inside a dot-folder (`.github/actions/cache/action.yml`) still asks. `NAMED`
applies everywhere (`.venv/…/x.pth`). A folder missing here costs questions after a command that
fills it, not a hole."""
TOP_ONLY = frozenset({"target"})
"""Folders of `FILLED_BY_TOOLS` that tools fill only at the project's top (cargo's `target`): a
project's own `src/target` is a module named for what it aims at, and direnv runs its `.envrc`."""
NAMED = (
    (".git", "the repository's own folder: its config and hooks run programs in git commands"),
    ("mise.toml", "mise runs its hooks and tasks when you enter the folder"),
    ("mise.*.toml", "mise runs its hooks and tasks when you enter the folder (mise.local.toml, mise.$MISE_ENV.toml)"),
    ("mise/config.toml", "mise runs its hooks and tasks when you enter the folder"),
    ("mise/conf.d/*", "mise runs its hooks and tasks when you enter the folder"),
    ("lefthook.*", "lefthook runs the commands it names on every git commit"),
    ("lefthook-local.*", "lefthook runs the commands it names on every git commit"),
    ("simple-git-hooks.*", "simple-git-hooks installs the commands it names as git hooks"),
    ("opencode.json", "another agent's settings: tool servers and commands it runs"),
    ("opencode.jsonc", "another agent's settings: tool servers and commands it runs"),
    ("*.code-workspace", "editor settings and tasks that run programs"),
    ("bitbucket-pipelines.yml", "CI jobs that run with the repository's secrets"),
    ("azure-pipelines.yml", "CI jobs that run with the repository's secrets"),
    ("jenkinsfile", "CI jobs that run with the repository's secrets"),
    (".yarn/releases/*", "yarn runs the release its yarnPath names on every command"),
    (".yarn/plugins/*", "yarn loads its plugins on every command"),
    ("*.pth", "Python runs .pth files at every start"),
    ("*sitecustomize.py", "Python imports it at every start"),
    ("*usercustomize.py", "Python imports it at every start"),
    ("pyvenv.cfg", "Python reads it at start: its home chooses the standard library it imports"),
    ("pip.conf", "pip reads it in a virtual environment (whatever its folder is called) at every command: its index-url and find-links choose the code `pip install` runs"),
    ("pip.ini", "pip reads it in a virtual environment (whatever its folder is called) at every command: its index-url and find-links choose the code `pip install` runs"),
    ("bin/activate*", "your shell runs it when you activate the virtual environment"),
)
"""The residue: names no rule finds (not hidden, not of the rc form), and the few a rule leaves
out on purpose (`.git` and Python's start-up files inside installed packages and environments,
`.yarn`'s releases and plugins). A glob on the project-relative path, lower case; a pattern
with a folder matches at any depth."""

_RC_FORM = ("*rc", "*.rc", "*.config.js", "*.config.cjs", "*.config.mjs", "*.config.ts", "*.config.mts", "*.config.cts", "*.local.toml")
_MODULE_SUFFIXES = (".py", ".pyc", ".pyw")
_EXTENSION_SUFFIXES = (".so", ".pyd")
NOT_SHADOWED = frozenset({"test", "tests"})
"""Names a root module may have though an interpreter has one: `test`, the interpreter's own
regression tests, and `tests`, which a sloppy wheel installs at the top level; no tool imports
either at start, and both are what a project calls its own tests."""
_STARTUP_MODULES = frozenset({"sitecustomize", "usercustomize"})

_NAMED_NAME = re.compile("|".join(fnmatch.translate(pattern) for pattern, _ in NAMED if "/" not in pattern))
_RC_NAME = re.compile("|".join(fnmatch.translate(pattern) for pattern in _RC_FORM))
QUICK_NAME = re.compile(f"{_NAMED_NAME.pattern}|{_RC_NAME.pattern}|__init__\\..*|(?:site|user)customize\\..*")
"""Matches (`match`) the lower-case file names, other than dot-names, that `plants_code` may name
outside the folders where every name counts (`every_name_counts`): a walk that looks at every
path of a project checks only those with `plants_code` (one regular expression of every
pattern cost ~0.2 ms a path)."""
NAMED_FOLDERS = frozenset(pattern.split("/")[0] for pattern, _ in NAMED if "/" in pattern)
"""The first folder of each folder pattern of `NAMED` (`mise`, `.yarn`, `bin`), all plain names."""


def _parts(relative_path: str) -> list[str]:
    path = relative_path.replace("\\", "/").lower()
    while path.startswith("./"):
        path = path[2:]
    return [part for part in path.split("/") if part not in ("", ".")]


def plants_code(relative_path: str, python_first: Collection[str] = ("",)) -> str | None:
    """Why writing this project file makes a tool run code, or None. Compared in lower case: on
    a case-insensitive file system `.GIT/config` is `.git/config`. `python_first`: the
    project-relative folders (lower case, "" the root) Python puts first on `sys.path`."""
    parts = _parts(relative_path)
    if not parts:
        return None
    return _settings(parts) or _named(parts) or _startup_hook(parts) or _by_convention(parts) or _imported_first(parts, python_first)


def plants_code_through(relative_path: str, python_first: Collection[str] = ("",)) -> str | None:
    """Why a link at this path makes tools run code, or None: one named like a file that does
    (`.envrc -> setup.sh`, read through by direnv), or like a folder on the way to one (`.vscode
    -> d`, `mise -> d`, `json -> d` at the root: `d/__init__.py` is then the standard `json`)."""
    planted = plants_code(relative_path, python_first)
    if planted is not None:
        return planted
    parts = _parts(relative_path)
    if parts and _imported_first([*parts, "__init__.py"], python_first):
        return SHADOW_REASON
    tails = ["/".join(parts[i:]) for i in range(len(parts))]
    for pattern, reason in NAMED:
        folders = pattern.split("/")[:-1]
        prefixes = ["/".join(folders[: i + 1]) for i in range(len(folders))]
        if any(fnmatch.fnmatchcase(tail, prefix) for tail in tails for prefix in prefixes):
            return reason
    return None


def imported_first(relative_path: str, python_first: Collection[str]) -> bool:
    """Whether Python, started with these project folders first on `sys.path`, imports this
    file in place of a module your interpreters import (or as a start-up hook): rule 3 alone."""
    parts = _parts(relative_path)
    return bool(parts) and _imported_first(parts, python_first) is not None


def python_first_folders(root: Path, *pythonpaths: str) -> tuple[str, ...]:
    """The project-relative folders (lower case) Python puts first on `sys.path`: the root
    (`python -m` and the REPL start there) and each PYTHONPATH entry inside the project, a
    relative one counted from the root, an empty one being the root."""
    entries = [entry or "." for value in pythonpaths if value for entry in value.split(os.pathsep)]
    return tuple(sorted({"", *_inside_project(root, entries)}))


def _inside_project(root: Path, entries: list[str]) -> list[str]:
    """The entries (absolute, or relative to the root) that lead into the project, as
    project-relative folders in lower case ("" the root), in order, once each."""
    real_root = os.path.realpath(root)
    found: list[str] = []
    for entry in entries:
        inside = os.path.relpath(os.path.realpath(os.path.join(real_root, entry)), real_root)
        if inside != ".." and not inside.startswith("../"):
            found.append("" if inside == "." else inside.lower())
    return list(dict.fromkeys(found))


def every_name_counts(folder: str, python_first: Collection[str] = ("",)) -> bool:
    """Whether `plants_code` may name a file in this project folder (lower case) whatever the
    file is called: a folder Python puts first or a package folder there named like a module
    your interpreters import (and what is below it), one below a `NAMED_FOLDERS` folder, or one below
    a hidden folder that tools do not fill. Elsewhere it names only a file whose name starts with
    a dot or matches `QUICK_NAME`, which is all a walk of every path need check."""
    parts = _parts(folder)
    hidden = next((index for index, part in enumerate(parts) if _is_hidden(part)), None)
    return (
        folder in python_first or any(part in NAMED_FOLDERS or part in _STARTUP_MODULES for part in parts)
        or any(_shadows(_below(parts, first)[0]) for first in python_first if _below(parts, first))
        or (hidden is not None and not any(_filled_by_tools(part, depth) for depth, part in enumerate(parts[: hidden + 1])))
    )


def _named(parts: list[str]) -> str | None:
    if ".git" in parts:
        return NAMED[0][1]
    if _NAMED_NAME.match(parts[-1]):
        return next(reason for pattern, reason in NAMED if "/" not in pattern and fnmatch.fnmatchcase(parts[-1], pattern))
    if any(part in NAMED_FOLDERS for part in parts[:-1]):
        tails = ["/".join(parts[i:]) for i in range(len(parts))]
        for pattern, reason in NAMED:
            if "/" in pattern and any(fnmatch.fnmatchcase(tail, pattern) for tail in tails):
                return reason
    return None


def _settings(parts: list[str]) -> str | None:
    """mzagent's own settings in the project: a `.env` (the project's, or the one in a folder it is
    started from), which may hold the user's key beside where it goes."""
    return SETTINGS_REASON if parts[-1] == ".env" else None


def _startup_hook(parts: list[str]) -> str | None:
    """Python's start-up hooks in every form it imports them, anywhere (an environment's
    `site-packages` too, where the folders tools fill are otherwise left alone): `sitecustomize`
    or `usercustomize` as a module file (`.py`, a sourceless `.pyc`, an extension module), any
    module file of a package so named, or its compiled form in `__pycache__`, which Python takes
    for the source when the header matches, and a command can write a header that matches."""
    module = module_name(parts[-1])
    if module is None:
        return None
    compiled = len(parts) > 1 and parts[-2] == "__pycache__" and parts[-1].split(".", 1)[0] in _STARTUP_MODULES
    if module in _STARTUP_MODULES or compiled or any(part in _STARTUP_MODULES for part in parts[:-1]):
        return STARTUP_HOOK_REASON
    return None


def _by_convention(parts: list[str]) -> str | None:
    """Rules 1 and 2: a hidden name, or a name of the rc or config form, outside the folders
    tools fill."""
    hidden = next((index for index, part in enumerate(parts) if _is_hidden(part)), None)
    folders = parts[:-1] if hidden is None else parts[: min(hidden + 1, len(parts) - 1)]
    if any(_filled_by_tools(folder, depth) for depth, folder in enumerate(folders)):
        return None
    if hidden is not None:
        return None if hidden == len(parts) - 1 and _data_only(parts[-1]) else HIDDEN_REASON
    return RC_REASON if _RC_NAME.match(parts[-1]) and parts[-1] != "src" else None  # `src`: a source folder's name, a link's too


def _is_hidden(part: str) -> bool:
    return part.startswith(".") and part != ".."


def _filled_by_tools(folder: str, depth: int) -> bool:
    """A folder tools fill, at this depth of the project (0: the top): one listed (`TOP_ONLY` ones
    only at the top), or a hidden one named like a cache (`.pytest_cache`, `.cache`,
    `node_modules/.cache`). Not a plain `cache` or `pagecache`: a project's own module is often so
    called, and its `src/cache/.envrc` runs when the user enters it."""
    if folder in TOP_ONLY:
        return depth == 0
    return folder in FILLED_BY_TOOLS or (_is_hidden(folder) and folder.endswith("cache"))


def _data_only(name: str) -> bool:
    """A hidden file name a tool reads as data: `DATA_ONLY`, an ignore list, a tool's cache file (`.eslintcache`)."""
    return name in DATA_ONLY or name.endswith(("ignore", "cache"))


def _imported_first(parts: list[str], python_first: Collection[str]) -> str | None:
    """Rule 3: a module file in a folder Python puts first named like a module your
    interpreters import or like one of Python's start-up hooks, or a module file anywhere in a
    package folder there so named (any of them, not only its `__init__`: one written first
    waits for an empty `__init__.py` to make the folder the package)."""
    if module_name(parts[-1]) is None:
        return None
    for folder in python_first:
        inside = _below(parts, folder)
        if not inside:
            continue
        module = module_name(inside[0]) if len(inside) == 1 else _compiled_module(inside) or inside[0]
        if module in _STARTUP_MODULES:
            return STARTUP_REASON
        if _shadows(module):
            return SHADOW_REASON
    return None


def _below(parts: list[str], folder: str) -> list[str]:
    """The parts of a path below a project folder (lower case, "" the root); empty when it is not below it."""
    top = _parts(folder)
    return parts[len(top):] if parts[: len(top)] == top and len(parts) > len(top) else []


def _compiled_module(inside: list[str]) -> str | None:
    """The module a file in the folder's own `__pycache__` is the compiled form of
    (`__pycache__/json.cpython-312.pyc` → json), which Python takes for `json.py` there."""
    return inside[1].split(".", 1)[0] if len(inside) == 2 and inside[0] == "__pycache__" else None


def _shadows(module: str | None) -> bool:
    return module is not None and module not in NOT_SHADOWED and module in importable_names()


def module_name(name: str) -> str | None:
    """The module a file of this name is imported as, or None: `json.py`, `json.pyc` → json;
    an extension module `json.cpython-312-x86_64-linux-gnu.so` → json."""
    if name.endswith(_EXTENSION_SUFFIXES):
        return name.split(".", 1)[0]
    for suffix in _MODULE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return None


def own_path_folders(root: Path) -> tuple[str, ...]:
    """The project folders (relative, lower case, "" the root) on mzagent's own `sys.path`:
    what mzagent imports from at its next start, as much its installation as its site-packages.
    An empty entry is the folder mzagent started in, not the project: it is left out; a relative
    one is counted from that folder, as Python counts it."""
    return tuple(_inside_project(root, [os.path.abspath(entry) for entry in sys.path if entry]))


def imported_at_own_start(root: Path, relative: str) -> bool:
    """Whether mzagent's next start would import this project file in place of a real module
    (`src/openai.py` with `PYTHONPATH=src`), or a link or folder at this path as a package
    (`src/openai -> ../evil`): asked even in yolo, as its installation is."""
    folders = own_path_folders(root)
    return bool(folders) and (imported_first(relative, folders) or imported_first(f"{relative}/__init__.py", folders))


SITE_FOLDERS = frozenset({"site-packages", "dist-packages"})
_PTH_BYTES = 64 * 1024
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def started_by_pth(root: Path, relative_path: str) -> str | None:
    """Why a module of an environment in the project runs at every start of its Python, or None:
    a `.pth` file in the same `site-packages` names it on a line Python runs (one that starts with
    `import`: setuptools' `distutils-precedence.pth` runs `_distutils_hack`, virtualenv's
    `_virtualenv.pth` imports `_virtualenv`). The `.pth` itself is on the list (`NAMED`); what it
    runs is found here, by reading it, since no name rule can know it."""
    original = [part for part in relative_path.replace("\\", "/").split("/") if part not in ("", ".")]
    parts = _parts(relative_path)
    for index, part in enumerate(parts[:-1]):
        if part not in SITE_FOLDERS:
            continue
        top = parts[index + 1]
        name = top if index + 2 < len(parts) else module_name(top)
        if name is not None and name in pth_started(root.joinpath(*original[: index + 1])):
            return PTH_REASON
    return None


def pth_started(site: Path) -> frozenset[str]:
    """The names (lower case) on the lines of a `site-packages` folder's `.pth` files that Python
    runs: every identifier of such a line, so `__import__('x')` and `importlib.import_module('x')`
    count as well as `import x`."""
    names: set[str] = set()
    try:
        entries = [entry for entry in os.scandir(site) if entry.name.lower().endswith(".pth") and entry.is_file(follow_symlinks=True)]
    except OSError:
        return frozenset()
    for entry in entries:
        try:
            with open(entry.path, "rb") as handle:
                text = handle.read(_PTH_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith(("import ", "import\t")):
                names.update(word.lower() for word in _IDENTIFIER.findall(line))
    return frozenset(names)
