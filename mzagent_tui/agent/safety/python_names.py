"""The top-level module names your Python interpreters import from outside the project: a root
module named like one (`pip.py`, `pip/__main__.py`, `_pytest/`) is imported in its place by the
next `python -m pip` or `python -m pytest` started there (planting.py, rule 3).

Why ask the interpreters: a hand list of well-known packages misses the one you have installed.
Each interpreter you would run there (`python3` and `python` on the trusted PATH, and the one
mzagent runs in) is asked once, confined, from `/`, what its `sys.path` holds: the standard
library, every module and package on it (pip, setuptools, pytest, a plugin), and the top-level
names its installed distributions declare (an editable install's finder). A name found only
inside a project this process works in (an editable install of the project itself) is the
project's own: rewriting it is working on the project, not shadowing something of yours.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mzagent_tui.agent.safety import own_programs, trusted_path
from mzagent_tui.agent.safety.own_install import own_installation

INTERPRETERS = ("python3", "python")
"""The names you start Python by, looked up on the trusted PATH."""
PROBE_TIMEOUT = 30.0
PROBE = """
import json, pkgutil, sys
del sys.path[0]
found = {}
def add(name, where):
    found.setdefault(name, []).append(where)
for name in getattr(sys, "stdlib_module_names", ()):
    add(name, "")
for name in sys.builtin_module_names:
    add(name, "")
for module in pkgutil.iter_modules():
    add(module.name, getattr(module.module_finder, "path", ""))
try:
    import importlib.metadata, importlib.util
    declared = importlib.metadata.packages_distributions()
except (ImportError, AttributeError):
    declared = {}
for name in declared:
    if name in found or not name.isidentifier():
        continue
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        continue
    if spec is not None:
        add(name, (list(spec.submodule_search_locations or ()) or [spec.origin or ""])[0])
print(json.dumps(found))
"""
"""Run as `python -E -c PROBE` from `/`: its first `sys.path` entry (that folder) is dropped.
A name's locations are the `sys.path` entries (or origins) it is found in; "" for the standard
library and built-in modules."""


def importable_names() -> frozenset[str]:
    """The lower-case top-level names your interpreters import from outside the projects this
    process works in, the standard library's included."""
    return _names_for(os.environ.get("PATH", os.defpath), trusted_path.projects())


@functools.lru_cache(maxsize=8)
def _names_for(path_value: str, projects: tuple[str, ...]) -> frozenset[str]:
    """Kept for a PATH and the projects (rule 3 asks for every module file a scan meets)."""
    return _outside(projects, _interpreters(path_value))


def _interpreters(path_value: str) -> tuple[str, ...]:
    found = [trusted_path.which(name, path_value) for name in INTERPRETERS]  # not their real paths: a virtual environment's link is its own interpreter
    if not trusted_path.is_untrusted(sys.executable):
        found.append(sys.executable)
    return tuple(sorted({program for program in found if program}))


@functools.lru_cache(maxsize=8)
def _outside(projects: tuple[str, ...], interpreters: tuple[str, ...]) -> frozenset[str]:
    names = {name.lower() for name in sys.stdlib_module_names}
    with ThreadPoolExecutor(max_workers=len(interpreters) or 1) as pool:  # each takes a second or two
        answers = list(pool.map(names_of, interpreters))
    for answer in answers:
        for name, locations in answer.items():
            if any(not _within_any(location, projects) for location in locations):
                names.add(name.lower())
    return frozenset(names)


def _within_any(location: str, folders: tuple[str, ...]) -> bool:
    if not location:
        return False
    real = os.path.realpath(location)
    return any(real == folder or real.startswith(folder.rstrip("/") + "/") for folder in folders)


@functools.cache
def names_of(program: str) -> Mapping[str, tuple[str, ...]]:
    """Each top-level name `program` imports, with where it finds it; empty when it cannot be
    asked (then only the standard library's names count for it). mzagent's own installation is
    kept in the probe's view: an editable install from a checkout under /tmp (as CI makes one)
    is otherwise hidden by the view's blank /tmp, and its name missed."""
    try:
        done = own_programs.run([program, "-E", "-c", PROBE], Path("/"), timeout=PROBE_TIMEOUT, seen=map(Path, own_installation()))
        answer = json.loads(done.stdout) if done.returncode == 0 else {}
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}
    if not isinstance(answer, dict):
        return {}
    return {
        name: tuple(where for where in locations if isinstance(where, str))
        for name, locations in answer.items() if isinstance(name, str) and isinstance(locations, list)
    }
