"""Existing paths near one that does not exist. A small model that guesses `docs/README.md` when
the file is `README.md` needs a pointer, not just "does not exist"."""

from __future__ import annotations

import difflib
from collections.abc import Collection
from pathlib import Path, PurePosixPath

from mzagent_tui.agent.filelist import project_files

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


def missing_text(root: Path, wanted: str, targets: Collection[str] = ()) -> str:
    """That `wanted` does not exist, and what to do instead. For a file the task asks to create
    (`targets`), that it is made, not found: a small model sorted listing.txt before it had
    written it, then wrote the name of the sorted copy into it. A path through the project
    folder's own name is not said to be missing: told "project does not exist", a small model
    made an empty folder named project."""
    if PurePosixPath(wanted).as_posix() in {PurePosixPath(target).as_posix() for target in targets}:
        return (
            f"{wanted} does not exist. It is the file the task asks you to create, so there is nothing in it to read or use yet: "
            f"work out its content from the other files, then write it with write_to_file(\"{wanted}\", ...)."
        )
    parts = PurePosixPath(wanted).parts
    if parts[:1] == (root.name,):
        text = (
            f"{root.name} is the name of the project folder itself, the current folder of every command and the start "
            f"of every relative path: leave {root.name}/ out of paths, and write . for the folder itself."
        )
        inside = PurePosixPath(*parts[1:]).as_posix() if len(parts) > 1 else ""
        if inside and (root / inside).exists():
            text += f" {wanted} is {inside}."
        return text
    found = closest_paths(root, wanted)
    if found:
        return f"{wanted} does not exist. Closest existing paths: {', '.join(found)}."
    return f"{wanted} does not exist. No similar path exists in the project; the files are listed in the system prompt, or list them with ls."
