"""mzagent's own installation, wherever it is: read-only to commands, asked about for writes.

Why: the README's install puts a `.venv` in the folder the user runs it from. When that folder is
the project, a command (or `write_to_file`) could rewrite mzagent's own site-packages, a `.pth`
there or the interpreter, and the next start would run the model's code as the user, outside
every wall. So the installation the running mzagent came from — its prefixes (the virtual
environment and the Python it is made from), the package's folder (an editable install's
source, a `PYTHONPATH` entry) and the interpreter's real file — is never the model's to change.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import mzagent_tui

PREFIX_ENTRIES = ("bin", "lib", "lib64", "include", "pyvenv.cfg", "Lib", "Scripts")
"""What of a prefix that is the project's own root is the installation (the rest is the project)."""
REASON = "it is mzagent's own installation (its Python, packages or settings): the next start of mzagent would run it outside the sandbox"


def own_installation() -> tuple[str, ...]:
    """The real paths mzagent runs from, read now (a test may move `sys.prefix`)."""
    paths = (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix, os.path.dirname(mzagent_tui.__file__), sys.executable)
    return tuple(dict.fromkeys(os.path.realpath(path) for path in paths if path))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def own_paths_in(root: Path) -> tuple[Path, ...]:
    """The parts of the installation inside `root` (a folder that contains the project is not
    the project's to protect: commands cannot write above the root). A prefix that is the root
    itself (`python -m venv .`) gives its own entries, not the whole project."""
    project = os.path.realpath(root)
    found: list[Path] = []
    for path in own_installation():
        if path == project:
            found.extend(Path(project, entry) for entry in PREFIX_ENTRIES if os.path.lexists(os.path.join(project, entry)))
        elif _within(path, project):
            found.append(Path(path))
    return tuple(dict.fromkeys(found))


def is_own_installation(root: Path, relative: str) -> bool:
    """Whether writing this project path would change mzagent's own installation (its real path,
    so a link or `..` in the project leads where it leads)."""
    real = os.path.realpath(root / relative)
    return any(_within(real, str(path)) for path in own_paths_in(root))
