"""Read-only commands that read every file below a folder: does such a read reach a secret or
leave the project?

The safe list checks the paths a command names; `grep -r KEY .` names only `.`, yet prints the
`.env` below it. These programs read whole folders: `grep -r`/`-R`/`-d recurse` (but not the
files its `--include`/`--exclude`/`--exclude-dir` globs leave out); `rg`, always but with
`--files` (hidden files and folders only when `--hidden`, `-uu`, a glob or a type brings them
all back, or an ignore file's `!` line names them, in the folder, above it, or in git's
exclude files);
`diff` with a folder operand (`-N` prints files only one side has); `git diff`/`git grep`
outside the index (`--no-index`, `--untracked`, or `git diff A B`, which compares two folders
when git finds no repository, even an empty `.git`).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from mzagent_tui.agent.ground.textfiles import read_regular
from mzagent_tui.agent.safety.sensitive import is_secret

SCAN_LIMIT = 20_000
"""Entries looked at below one folder; a folder with more asks."""
_NOT_SCANNED = {".git", "node_modules", "__pycache__"}
"""Folders a read that does not follow links is not checked inside: no secret of the user's is
kept there. A read that follows links checks them too: `npm link` puts a link out of the
project in node_modules."""
IGNORE_FILE_READ = 1 << 20
"""Bytes of one ignore file looked at for a `!` line."""
_IGNORE_FILES = (".ignore", ".rgignore", ".gitignore")
_EXCLUDES_FILE = re.compile(r"^\s*excludesfile\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class FolderRead:
    """How a command reads the folders it is given."""

    follows_links: bool
    """Links below the folder are read through (`grep -R`, `diff`): a link out of the project
    is a read outside it."""
    skips_hidden: bool = False
    """Hidden files and folders are not read (`rg` without `--hidden`), unless an ignore file
    brings them back."""
    filters: tuple[tuple[str, str], ...] = ()
    """grep's `--include`/`--exclude` globs in order, as ("include" or "exclude", glob)."""
    excluded_folders: tuple[str, ...] = ()
    """grep's `--exclude-dir` globs."""


def folder_read(words: list[str], paths: list[str], options: list[tuple[str, str]]) -> FolderRead | None:
    """How `words` (the program's base name first, git's global options dropped) reads whole
    folders, or None when it reads only the files it names. `paths` are its path operands,
    `options` its options as the safe list read them, with their values."""
    program, args = words[0], words[1:]
    if program == "grep":
        follows = any(a in ("-R", "--dereference-recursive") or _in_cluster(a, "R") for a in args)
        if not (follows or _grep_recurses(args)):
            return None
        filters, folders = _grep_filters(options)
        return FolderRead(follows_links=follows, filters=filters, excluded_folders=folders)
    if program == "rg":
        listing = any(name in ("--files", "--type-list") for name, _ in options)  # not `-e --files`, a pattern
        return None if listing else FolderRead(follows_links=False, skips_hidden=_rg_skips_hidden(options))  # `-L` asks on its own
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


def _grep_filters(options: list[tuple[str, str]]) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """`--include`/`--exclude` globs in order, and `--exclude-dir` globs. Globs with brackets
    are dropped, each kind as a whole (so everything counts as read): Python reads `[^.]env` as
    `^` or `.`, grep as anything but `.`."""
    filters = tuple((name.removeprefix("--"), value) for name, value in options if name in ("--include", "--exclude"))
    folders = tuple(value for name, value in options if name == "--exclude-dir")
    return (() if any("[" in glob for _, glob in filters) else filters), (() if any("[" in glob for glob in folders) else folders)


def _grep_reads(name: str, filters: tuple[tuple[str, str], ...]) -> bool:
    """GNU grep: the last glob that matches the base name wins; when none matches, the file is
    read unless the first filter is an `--include`."""
    for kind, glob in reversed(filters):
        if fnmatch.fnmatchcase(name, glob):
            return kind == "include"
    return not filters or filters[0][0] != "include"


def _rg_skips_hidden(options: list[tuple[str, str]]) -> bool:
    """Whether rg leaves hidden files out, as it does by default: not with `--hidden`, `-.`,
    `-uu`, a type (`-t py`), a glob that is not a negation (`-g '*'` whitelists), another
    ignore file, or a config file (RIPGREP_CONFIG_PATH) that may say any of these."""
    if os.environ.get("RIPGREP_CONFIG_PATH"):
        return False
    names = [name for name, _ in options]
    if names.count("-u") >= 2 or any(name in ("--hidden", "-.", "-uu", "-uuu", "-t", "--type", "--ignore-file") for name in names):
        return False
    return all(value.startswith("!") for name, value in options if name in ("-g", "--glob", "--iglob"))


class _Whitelist:
    """The `!` lines of the ignore files rg reads: a hidden file or folder one of them names is
    read (checked with ripgrep 13). A pattern is tried against the path from every folder above
    it, so where the ignore file sits (and whether the pattern is anchored) cannot make it miss."""

    def __init__(self) -> None:
        self.specs: list[pathspec.GitIgnoreSpec] = []

    def add(self, ignore_file: Path) -> None:
        text = read_regular(ignore_file, IGNORE_FILE_READ)
        patterns = [line.lstrip()[1:] for line in (text or "").splitlines() if line.lstrip().startswith("!")]
        if patterns:
            self.specs.append(pathspec.GitIgnoreSpec.from_lines(patterns))

    def add_outside(self, folder: Path) -> None:
        """Ignore files of the folders above `folder`, repositories' `.git/info/exclude`, and
        the user's global git excludes file."""
        above = folder.resolve().parents
        for parent in above:
            for name in _IGNORE_FILES:
                self.add(parent / name)
        for parent in (folder.resolve(), *above):
            self.add(parent / ".git" / "info" / "exclude")
        config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
        self.add(config_home / "git" / "ignore")
        for config in (Path.home() / ".gitconfig", config_home / "git" / "config"):
            for match in _EXCLUDES_FILE.finditer(read_regular(config, IGNORE_FILE_READ) or ""):
                self.add(Path(os.path.expanduser(match.group(1).strip('"'))))

    def names(self, path: Path, is_dir: bool) -> bool:
        if not self.specs:
            return False
        for base in path.parents:
            relative = path.relative_to(base).as_posix() + ("/" if is_dir else "")
            if any(spec.match_file(relative) for spec in self.specs):
                return True
        return False


def _in_cluster(word: str, letter: str) -> bool:
    """`-rn`, `-Rl`: a cluster of short options holding `letter`."""
    return word.startswith("-") and not word.startswith("--") and letter in word[1:]


def folders_read(words: list[str], paths: list[str], options: list[tuple[str, str]], cwds: set[Path]) -> list[tuple[str, Path, FolderRead]]:
    """Each folder a command that reads whole folders reads, as (the path as written, the
    folder from one of the folders the command may run in, how it reads it); empty when it
    reads none. `paths` are its path operands (option values are not walked, but diff's
    `--from-file`/`--to-file` are operands by another name)."""
    reads = folder_read(words, paths, options)
    if reads is None:
        return []
    if words[0] == "diff":
        paths = paths + [value for name, value in options if name in ("--from-file", "--to-file")]
    return [(path, Path(path) if os.path.isabs(path) else cwd / path, reads) for path in paths or ["."] for cwd in cwds]


def folder_read_concern(words: list[str], paths: list[str], options: list[tuple[str, str]], cwds: set[Path], root: Path) -> str | None:
    """Why a command that reads whole folders should ask, or None when it reads none or only
    harmless files. Every path is looked at from every folder the command may run in."""
    for path, folder, reads in folders_read(words, paths, options, cwds):
        found = _reached_below(folder, root, reads)
        if found:
            return f"reads every file below {path}, which holds {found}"
    return None


def files_read_below(folder: Path, reads: FolderRead) -> Iterator[Path]:
    """The files below `folder` the read reads (as `_reached_below` walks them), and a
    repository's `.git/config`, where a token is kept (`http.extraheader`): their content is
    what the command may print. A link is read through only when the read follows links."""
    for current, dirs, files, _ in _walk(folder, reads):
        for name in files:
            path = Path(current) / name
            if reads.follows_links or not path.is_symlink():
                yield path
        if ".git" in dirs:
            yield Path(current) / ".git" / "config"


def _walk(folder: Path, reads: FolderRead) -> Iterator[tuple[str, list[str], list[str], int]]:
    """The folders below `folder` the read goes into: each with the subfolders and files the
    read takes there (filtered as the program filters them) and how many entries it holds. The
    walk goes on into the subfolders yielded: when links are followed, a folder already looked
    at is not walked again (`a -> ..` would loop); otherwise every folder is reached once anyway,
    but for those no secret of the user's is kept in (_NOT_SCANNED). A read that skips hidden
    files reads those an ignore file's `!` line names."""
    whitelist = _Whitelist()
    if reads.skips_hidden:
        whitelist.add_outside(folder)
    walked = {os.path.realpath(folder)}
    for current, dirs, files in os.walk(folder, followlinks=reads.follows_links):
        entries = len(dirs) + len(files)
        if reads.skips_hidden:
            for name in files:
                if name in _IGNORE_FILES:
                    whitelist.add(Path(current) / name)
            dirs[:] = [d for d in dirs if not d.startswith(".") or whitelist.names(Path(current) / d, is_dir=True)]
            files = [f for f in files if not f.startswith(".") or whitelist.names(Path(current) / f, is_dir=False)]
        dirs[:] = [d for d in dirs if not any(fnmatch.fnmatchcase(d, glob) for glob in reads.excluded_folders)]
        files = [f for f in files if _grep_reads(f, reads.filters)]
        yield current, dirs, files, entries
        if reads.follows_links:
            dirs[:] = [d for d in dirs if _first_visit(os.path.join(current, d), walked)]
        else:
            dirs[:] = [d for d in dirs if d not in _NOT_SCANNED]


def _reached_below(folder: Path, root: Path, reads: FolderRead) -> str | None:
    """A secret file below `folder` the read reaches, or a link out of the project it would follow."""
    follows_links = reads.follows_links
    seen = 0
    for current, dirs, files, entries in _walk(folder, reads):
        seen += entries
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
    return None


def _first_visit(path: str, walked: set[str]) -> bool:
    real = os.path.realpath(path)
    if real in walked:
        return False
    walked.add(real)
    return True
