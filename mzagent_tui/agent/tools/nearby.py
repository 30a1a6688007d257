"""Existing paths near one that does not exist. A small model that guesses `docs/README.md` when
the file is `README.md` needs a pointer, not just "does not exist"."""

from __future__ import annotations

import difflib
from collections.abc import Collection
from pathlib import Path, PurePosixPath

from mzagent_tui.agent.filelist import project_files
from mzagent_tui.agent.ground.errors import ToolError
from mzagent_tui.agent.ground.words import say

SHOWN = 3
MAX_FILES = 20_000


def closest_paths(root: Path, wanted: str) -> list[str]:
    """Up to three project paths: the same name elsewhere first, then the most similar paths."""
    files = project_files(root)[:MAX_FILES]
    folders = sorted({str(parent) + "/" for name in files for parent in PurePosixPath(name).parents if str(parent) != "."})
    name = PurePosixPath(wanted.rstrip("/")).name
    same_name = [path for path in files + folders if PurePosixPath(path.rstrip("/")).name == name]
    similar = difflib.get_close_matches(wanted, files + folders, n=SHOWN, cutoff=0.6)
    by_name = {PurePosixPath(path).name: path for path in files}
    similar_names = [by_name[found] for found in difflib.get_close_matches(name, list(by_name), n=SHOWN, cutoff=0.75)]
    return list(dict.fromkeys(same_name + similar + similar_names))[:SHOWN]


def missing(root: Path, wanted: str, targets: Collection[str] = ()) -> ToolError:
    """The refusal that `wanted` does not exist, saying what to do instead. For a file the task asks to create
    (`targets`), that it is made, not found: a small model sorted listing.txt before it had
    written it, then wrote the name of the sorted copy into it. A path through the project
    folder's own name is not said to be missing: told "project does not exist", a small model
    made an empty folder named project."""
    if PurePosixPath(wanted).as_posix() in {PurePosixPath(target).as_posix() for target in targets}:
        return ToolError("missing.target", wanted=wanted)
    parts = PurePosixPath(wanted).parts
    if parts[:1] == (root.name,):
        inside = PurePosixPath(*parts[1:]).as_posix() if len(parts) > 1 else ""
        said = say("missing.project_name.inside", wanted=wanted, inside=inside) if inside and (root / inside).exists() else ""
        return ToolError("missing.project_name", project=root.name, inside=said)
    found = closest_paths(root, wanted)
    if found:
        return ToolError("missing.closest", wanted=wanted, paths=", ".join(found))
    return ToolError("missing.nothing_near", wanted=wanted)
