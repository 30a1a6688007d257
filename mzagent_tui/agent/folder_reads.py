"""Read-only commands that read every file below a folder: does such a read reach a secret or
leave the project?

The safe list checks the paths a command names; `grep -r KEY .` names only `.`, yet prints the
`.env` below it. These programs read whole folders: `grep -r`/`-R`/`-d recurse`; `rg`, always
but with `--files` (it skips hidden files by default, but a `-g` glob, a type or an ignore
file's `!` line brings them back, so they are counted); `diff` with a folder operand (`-N`
prints files only one side has); `git diff`/`git grep` outside the index (`--no-index`,
`--untracked`, or `git diff A B`, which compares two folders when git finds no repository, even
an empty `.git`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.sensitive import is_secret

SCAN_LIMIT = 20_000
"""Entries looked at below one folder; a folder with more asks."""
_NOT_SCANNED = {".git", "node_modules", "__pycache__"}


@dataclass(frozen=True)
class FolderRead:
    """How a command reads the folders it is given."""

    follows_links: bool
    """Links below the folder are read through (`grep -R`, `diff`): a link out of the project
    is a read outside it."""


def folder_read(words: list[str], paths: list[str]) -> FolderRead | None:
    """How `words` (the program's base name first, git's global options dropped) reads whole
    folders, or None when it reads only the files it names. `paths` are its path operands."""
    program, args = words[0], words[1:]
    if program == "grep":
        follows = any(a in ("-R", "--dereference-recursive") or _in_cluster(a, "R") for a in args)
        return FolderRead(follows_links=follows) if follows or _grep_recurses(args) else None
    if program == "rg":
        listing = any(a in ("--files", "--type-list") for a in args)
        return None if listing else FolderRead(follows_links=False)  # `-L` asks on its own
    if program == "diff":
        return FolderRead(follows_links="--no-dereference" not in args)
    if program == "git" and args[:1] == ["diff"] and ("--no-index" in args or len(paths) == 2):
        return FolderRead(follows_links=False)
    if program == "git" and args[:1] == ["grep"] and ("--no-index" in args or "--untracked" in args):
        return FolderRead(follows_links=False)
    return None


def _grep_recurses(args: list[str]) -> bool:
    """`-r`, `-rn`, `--recursive`, `-d recurse`, `-drecurse`, `--directories=recurse`."""
    for index, arg in enumerate(args):
        if arg in ("-r", "--recursive", "--directories=recurse") or _in_cluster(arg, "r"):
            return True
        if arg in ("-d", "--directories") and args[index + 1:index + 2] == ["recurse"]:
            return True
    return False


def _in_cluster(word: str, letter: str) -> bool:
    """`-rn`, `-Rl`: a cluster of short options holding `letter`."""
    return word.startswith("-") and not word.startswith("--") and letter in word[1:]


def folder_read_concern(words: list[str], paths: list[str], cwds: set[Path], root: Path) -> str | None:
    """Why a command that reads whole folders should ask, or None when it reads none or only
    harmless files. Every path is looked at from every folder the command may run in."""
    reads = folder_read(words, paths)
    if reads is None:
        return None
    for path in paths or ["."]:
        for cwd in cwds:
            folder = Path(path) if os.path.isabs(path) else cwd / path
            found = _reached_below(folder, root, reads.follows_links)
            if found:
                return f"reads every file below {path}, which holds {found}"
    return None


def _reached_below(folder: Path, root: Path, follows_links: bool) -> str | None:
    """A secret file below `folder`, or a link out of the project the read would follow. When
    links are followed, a folder already looked at is not walked again (`a -> ..` would loop);
    otherwise every folder is reached once anyway."""
    seen = 0
    walked = {os.path.realpath(folder)}
    for current, dirs, files in os.walk(folder, followlinks=follows_links):
        seen += len(dirs) + len(files)
        for name in [*dirs, *files]:
            path = Path(current) / name
            shown = os.path.relpath(path, folder)
            if is_secret(path):
                return f"{shown} (secrets)"
            if follows_links and path.is_symlink():
                try:
                    target = path.resolve()
                except (OSError, RuntimeError):
                    return f"{shown}, a link that cannot be resolved"
                if not target.is_relative_to(root):
                    return f"{shown}, a link out of the project"
                if is_secret(target):
                    return f"{shown}, a link to {os.path.relpath(target, root)} (secrets)"
        if ".git" in dirs and is_secret(Path(current) / ".git" / "config"):
            return f"{os.path.relpath(Path(current) / '.git' / 'config', folder)} (a password in a remote URL)"
        if seen > SCAN_LIMIT:
            return f"more than {SCAN_LIMIT} files (not all checked)"
        dirs[:] = [d for d in dirs if d not in _NOT_SCANNED and (not follows_links or _first_visit(os.path.join(current, d), walked))]
    return None


def _first_visit(path: str, walked: set[str]) -> bool:
    real = os.path.realpath(path)
    if real in walked:
        return False
    walked.add(real)
    return True
