"""What an approved command changed in the project, with the content from before.

Before and after each command the project is snapshotted with git plumbing into a private
repository next to the project's sessions (`snapshots.git`, objects shared by the sessions of
one project, an index per session): `git add -A` then `git write-tree`. Git re-reads only files
whose size or time changed, so the snapshot of an unchanged tree is one `stat` per file; a new
session starts from a copy of the index an earlier session left (`last.index`), so only the
project's first session reads every file. The project's `.gitignore` rules apply, its own
`.git` is never touched, and nothing is written into the project. The changed files then go
through the same undo as `write_to_file`.

The project's `.gitattributes` do not: the private repository's `info/attributes` (which
outranks every `.gitattributes`) unsets each attribute that changes content on the way in
(`text`, `eol`, `working-tree-encoding`, `filter`, `ident`), so a file is stored byte for byte
and a `.gitattributes` naming an encoding a file does not have cannot make `git add` fail.
Which files make tools run code is not asked of the snapshots at all (tools/planted_scan.py).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from mzagent_tui.agent.ground import leftovers
from mzagent_tui.agent.safety import own_programs

SNAPSHOT_TIMEOUT = 30.0
"""Seconds one snapshot may take; a project that needs longer is not snapshotted."""
ADD_RETRIES = 32
"""`git add`s one snapshot may take: each failure names one nested repository without a commit
(or the files it cannot read), left out of the next."""


class SnapshotError(Exception):
    """Snapshots cannot be taken here (no git, a project too large, a git failure)."""


class _GitFailed(SnapshotError):
    def __init__(self, message: str, stderr: str) -> None:
        super().__init__(message)
        self.stderr = stderr


def _unquote(name: str) -> str:
    """Git quotes `"` and `\\` in the names of its messages."""
    return re.sub(r"\\(.)", r"\1", name)


@dataclass(frozen=True)
class Change:
    status: str
    """"A" added, "M" modified (content or mode), "D" deleted."""
    path: str
    """Relative to the project, with forward slashes, as git reports it."""
    old_blob: str
    """Git's id of the content before (all zeros for an added file)."""
    old_mode: int | None = None
    """The full permission bits before (git itself keeps only 644 or 755); None if added."""
    mode_only: bool = False
    """Only the permissions changed (`chmod`): the content is the same."""


@dataclass(frozen=True)
class Snapshot:
    tree: str
    """Git's id of a tree holding the project's files."""
    modes: dict[str, int]
    """The permission bits of every file in it, read with lstat."""


_UNREADABLE = re.compile(r'^error: open\("((?:[^"\\]|\\.)*)"\): Permission denied$', re.MULTILINE)
_NO_COMMIT = re.compile(r"^error: '(.+)/' does not have a commit checked out$", re.MULTILINE)
"""A nested repository made with `git init` and no commit yet: git cannot record it as a gitlink."""
ATTRIBUTES = "* -text -crlf !eol !working-tree-encoding !filter -ident\n"
"""The private repository's `info/attributes`: no conversion of content on the way in, whatever the
project's `.gitattributes` say (`!`: unspecified, since `-working-tree-encoding` is an error)."""


class Snapshots:
    def __init__(self, root: Path, session_folder: Path) -> None:
        self.root = root
        self.git_dir = session_folder.parent / "snapshots.git"
        self.index = session_folder / "snapshot" / "index"
        """In a folder of its own: our git may write there, and must not reach the session's log."""
        self._ready = False
        self.skipped: set[str] = set()
        """Files git cannot read (no read permission): left out of every snapshot of the session."""
        self.nested: set[str] = set()
        """Nested repositories the index records: left out of later snapshots, since `git add`
        runs `git status` inside each one, under that repository's own config (a filter driver
        would run). Their content is never a change to restore anyway."""
        self.empty: set[str] = set()
        """Nested repositories without a commit (`git init` alone): git cannot record them, and
        the index does not list them, so they are kept here and left out like `nested`."""
        self._names: list[str] = []
        self._names_tree = ""
        """The files the index held when it was written as this tree: the same tree, the same files."""

    def take(self, modes_from: Snapshot | None = None) -> Snapshot:
        """A snapshot of the project's files now; files git cannot read are left out (see
        `skipped`), the rest is recorded.

        Reading every file's mode is one lstat per file (~0.1 s at 50,000 files), done while
        git works; the list of files is asked of git only when the tree changed. Before a
        command, the modes of the previous command's "after" snapshot are reused when the
        content is unchanged since (`modes_from`); a chmod the user made between two commands
        is then counted as the next command's change."""
        first = not self._ready
        if first:
            self._init()
            self.nested = self._index_names()[1] if self.index.exists() else set()  # an index an earlier session left
        prefix = f"{self.root}/"
        early = _ModeReader(prefix, self._names) if modes_from is None and self._names else None
        self._add()
        tree = self._git("write-tree").strip()
        if first:
            self._share_index()
        if modes_from is not None and modes_from.tree == tree:
            return Snapshot(tree, modes_from.modes)
        modes = early.result() if early is not None else {}
        if tree != self._names_tree:
            self._names, self.nested = self._index_names()
            self._names_tree = tree
            read = modes
            modes = {name: read[name] for name in self._names if name in read}
            modes |= _read_modes(prefix, [name for name in self._names if name not in read])
        return Snapshot(tree, modes)

    def _add(self) -> None:
        for _ in range(ADD_RETRIES):
            excluded = [f":(exclude,literal){path}" for path in sorted(self.skipped | self.nested | self.empty)]
            try:
                self._git("add", "--all", "--", ".", *excluded)
                return
            except _GitFailed as exc:
                unreadable = {_unquote(name) for name in _UNREADABLE.findall(exc.stderr)} - self.skipped
                empty = set(_NO_COMMIT.findall(exc.stderr)) - self.empty
                if not unreadable and not empty:
                    raise SnapshotError(str(exc)) from None
                self.skipped |= unreadable
                self.empty |= empty
        raise SnapshotError(f"git add kept failing on files it cannot read or nested repositories without a commit ({ADD_RETRIES} tries)")

    def _index_names(self) -> tuple[list[str], set[str]]:
        """Every file the index holds, and its nested repositories (listed again only when the
        tree changed: at 50,000 files `ls-files` and reading its answer cost ~70 ms)."""
        names: list[str] = []
        nested: set[str] = set()
        for entry in self._git("ls-files", "--stage", "-z").split("\0"):
            header, _, name = entry.partition("\t")
            if name:
                names.append(name)
                if header.startswith("160000 "):
                    nested.add(name)
        return names, nested

    def changes(self, before: Snapshot, after: Snapshot) -> list[Change]:
        """Regular files added, modified (content or permissions) or deleted between two
        snapshots (symlinks and nested repositories are left out: their content is not a file's
        to restore)."""
        changes: list[Change] = []
        if before.tree != after.tree:
            out = self._git("diff-tree", "-r", "-z", "--no-renames", "--raw", before.tree, after.tree)
            fields = out.split("\0")
            for header, path in zip(fields[0::2], fields[1::2]):
                old_mode, new_mode, old_blob, new_blob, status = header.lstrip(":").split(" ")
                if status in ("A", "M", "D") and {old_mode, new_mode} <= _FILE_MODES:
                    changes.append(Change(status, path, old_blob, before.modes.get(path), mode_only=status == "M" and old_blob == new_blob))
        seen = {change.path for change in changes}
        for path, mode in after.modes.items():
            old = before.modes.get(path)
            if old is not None and old != mode and path not in seen:
                changes.append(Change("M", path, "", old, mode_only=True))
        return changes

    def save_old_contents(self, targets: list[tuple[Change, Path]]) -> None:
        """Write each change's old content to its path, through one `git cat-file --batch`
        (a formatter may change thousands of files; one git process per file would take seconds)."""
        targets = [(change, target) for change, target in targets if not change.mode_only]
        if not targets:
            return
        ids = "".join(f"{change.old_blob}\n" for change, _ in targets).encode()
        with own_programs.git_process(*_CONFIG, "cat-file", "--batch", cwd=self.root, env=self._env(False)) as process:
            assert process.stdin is not None and process.stdout is not None
            writer = threading.Thread(target=_feed, args=(process.stdin, ids), daemon=True)
            writer.start()
            for change, target in targets:
                header = process.stdout.readline().split()
                if len(header) != 3 or header[1] != b"blob":
                    raise SnapshotError(f"the old content of {change.path} is missing from the snapshots")
                _copy(process.stdout, target, int(header[2]))
                process.stdout.read(1)  # the newline after each object
            writer.join()

    def _init(self) -> None:
        if not own_programs.have_git():
            raise SnapshotError("git is not installed")
        if self._too_slow.exists():
            raise SnapshotError(f"{self._too_slow.read_text(errors='replace').strip()} (delete {self._too_slow} to try again)")
        self.index.parent.mkdir(parents=True, exist_ok=True)  # before any git: only folders that exist are made writable
        if not (self.git_dir / "HEAD").exists():
            self.git_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # copies of every project file, .env included: the user's alone
            self._git("init", "--quiet", "--bare", work_tree=False)
        attributes = self.git_dir / "info" / "attributes"
        if not attributes.is_file() or attributes.read_text(errors="replace") != ATTRIBUTES:  # a repository an older mzagent made
            attributes.parent.mkdir(mode=0o700, exist_ok=True)
            attributes.write_text(ATTRIBUTES)
        _remove_stale_lock(self.index.with_name(self.index.name + ".lock"))
        shared = self.git_dir / "last.index"
        if not self.index.exists() and shared.exists():
            shutil.copyfile(shared, self.index)
        self._ready = True

    @property
    def _too_slow(self) -> Path:
        return self.git_dir / "too-slow"

    def _share_index(self) -> None:
        """Leave a copy of this session's index for the next session (replaced atomically, since
        sessions of one project may run at the same time; any recent copy will do)."""
        handle, temporary = tempfile.mkstemp(dir=self.git_dir, prefix="index-mzagent-")
        os.close(handle)
        leftovers.note(Path(temporary))
        try:
            shutil.copyfile(self.index, temporary)
            os.replace(temporary, self.git_dir / "last.index")
        except OSError:
            Path(temporary).unlink(missing_ok=True)

    def _git(self, *args: str, work_tree: bool = True) -> str:
        try:
            result = own_programs.git(
                *_CONFIG, *args, cwd=self.root, env=self._env(work_tree), timeout=SNAPSHOT_TIMEOUT, writable=(self.git_dir, self.index.parent)
            )
        except subprocess.TimeoutExpired:
            message = f"a snapshot of the project took longer than {SNAPSHOT_TIMEOUT:.0f} s"
            self._too_slow.write_text(message + "\n")  # later sessions skip at once instead of waiting again
            raise SnapshotError(message) from None
        except OSError as exc:
            raise SnapshotError(f"git could not be run: {exc.strerror or exc}") from None
        if result.returncode != 0:
            stderr = result.stderr.decode("utf-8", errors="replace")
            lines = stderr.strip().splitlines()
            raise _GitFailed(f"git {args[0]} failed: {lines[-1] if lines else f'exit {result.returncode}'}", stderr)
        return result.stdout.decode("utf-8", errors="surrogateescape")

    def _env(self, work_tree: bool) -> Mapping[str, str]:
        """Our private repository, never one the project holds (git runs through own_programs:
        hardened, confined, writing only there and to the session's index)."""
        env = {"GIT_DIR": str(self.git_dir)}
        env["GIT_INDEX_FILE"] = str(self.index)
        if work_tree:
            env["GIT_WORK_TREE"] = str(self.root)
        return env


class _ModeReader:
    """Reads the modes of the files of the last listing on a thread while git, in its own
    process, updates the index: the two took turns (~0.1 s each at 50,000 files)."""

    def __init__(self, prefix: str, names: list[str]) -> None:
        self._modes: dict[str, int] = {}
        self._thread = threading.Thread(target=lambda: self._modes.update(_read_modes(prefix, names)), name="snapshot-modes", daemon=True)
        self._thread.start()

    def result(self) -> dict[str, int]:
        self._thread.join()
        return self._modes


def _read_modes(prefix: str, names: list[str]) -> dict[str, int]:
    """The permission bits of each file, read with lstat (plain strings: a Path per file
    tripled the cost); a file gone since is left out."""
    modes: dict[str, int] = {}
    lstat = os.lstat
    for name in names:
        try:
            modes[name] = stat.S_IMODE(lstat(prefix + name).st_mode)
        except OSError:
            continue
    return modes


def _remove_stale_lock(lock: Path) -> None:
    """A kill -9 in the middle of a snapshot leaves git's index lock, and every later `git add`
    of the session would fail. A git of ours holds it at most SNAPSHOT_TIMEOUT (then it is
    killed), so a lock older than twice that belongs to nobody."""
    try:
        if time.time() - lock.stat().st_mtime > 2 * SNAPSHOT_TIMEOUT:
            lock.unlink()
    except OSError:
        pass


def _feed(stream: IO[bytes], data: bytes) -> None:
    try:
        with stream:
            stream.write(data)
    except OSError:
        pass  # git stopped early; the reader reports it


def _copy(source: IO[bytes], target: Path, size: int) -> None:
    with target.open("wb") as out:
        while size > 0:
            chunk = source.read(min(size, 1 << 20))
            if not chunk:
                raise SnapshotError("git stopped while handing over old contents")
            out.write(chunk)
            size -= len(chunk)


_FILE_MODES = {"000000", "100644", "100755"}
"""Git's modes for "absent" and regular files."""

_CONFIG = ("-c", "core.autocrlf=false", "-c", "core.safecrlf=false", "-c", "gc.auto=0", "-c", "core.quotePath=false", "-c", "advice.addEmbeddedRepo=false")
"""Byte-exact snapshots, no garbage collection while a session may still need a tree."""
