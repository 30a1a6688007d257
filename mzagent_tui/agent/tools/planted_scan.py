"""The files that make tools run code, before and after a command, seen without git.

The snapshots (sessions/snapshots.py) follow git's view of the project: its `.gitignore`, its
nested repositories, and they leave links out. A planted `.envrc` must not hide behind any of
that, so the question after a command (tools/planted.py) asks this scan instead: a walk of the
whole project with `lstat`, never following a link and never reading `.gitignore` or
`.gitattributes`, that keeps each file that makes tools run code (`planting.plants_code`: its
rules and its list), each link named like one of them or like one of their folders, and what git runs or reads from the
work tree (safety/hooks_path.py: the folder `core.hooksPath` names, an included config file).
`.git` folders are not walked (the repository's own checks cover them).

A scan lists again only the folders that changed: a folder's ctime moves whenever an entry is
made, removed or renamed in it, and no command can set it back (touch sets mtime; ctime is the
kernel's clock). A folder changed less than `RACY_NS` before a scan is listed again next time,
as git re-reads "racily clean" files. The files kept are `lstat`ed at every scan and read when
that changed, so the content before a command is at hand to show and to put back.

A scan is bounded (`SCAN_LIMIT` entries listed); past it, or when the project cannot be walked,
it raises `ScanIncomplete`: every later command asks (tools/shell.py). The command whose scan
failed is still checked whole, by `sweep`: the same walk with no bound (the command made those
entries; listing them once costs less than making them), with the git paths known before it
when git can no longer say them, and past the folders it cannot list (named, so the user hears of
them). A folder of ours a command closed to its owner (`chmod 100 d`) is opened to them again
first and then walked, and named too. A project is never left unchecked because a command broke
what the scan reads.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mzagent_tui.agent.ground.diffs import MAX_SIDE_BYTES
from mzagent_tui.agent.safety.asked_always import ON_PATH_REASON
from mzagent_tui.agent.safety.hooks_path import GitPaths, GitPathsUnknown, git_paths
from mzagent_tui.agent.safety.planting import (
    QUICK_NAME,
    SITE_FOLDERS,
    every_name_counts,
    module_name,
    plants_code,
    plants_code_through,
    pth_started,
    started_by_pth,
)
from mzagent_tui.agent.tools.files import peek

SCAN_LIMIT = 1_000_000
"""Folder entries one scan may list (a first scan of a project with a large `node_modules`
lists every entry once; later scans list only changed folders)."""
RACY_NS = 2_000_000_000
"""A folder or file changed this close before a scan is looked at again next time: a change in
the same tick of the file system's clock would leave its ctime as it was."""
CONTENT_BUDGET = 64 * 1024 * 1024
"""Bytes of kept files' content held in memory; past it a file's content is not kept (a change
to it is still asked about, but cannot be shown or put back)."""


class ScanIncomplete(Exception):
    """The project could not be walked whole: what a command plants cannot be checked."""


@dataclass(frozen=True)
class Kept:
    """One entry on the list, as `lstat` saw it."""

    reason: str
    kind: str
    """"file", "link" or "other" (a FIFO, a socket, a device)."""
    signature: tuple[int, ...]
    """Inode, device, size, mtime, ctime and mode: any write, rename or chmod changes it."""
    mode: int
    target: str = ""
    """A link's target, as written."""
    content: bytes | None = None
    """A file's bytes (None: unreadable, too large, or past the budget)."""
    racy: bool = False
    """Changed within RACY_NS of being read: the same signature later does not prove the same content."""


@dataclass(frozen=True)
class PlantedChange:
    """A file, link or execute bit on the list that a command created or changed."""

    status: str
    """"A" created, "M" changed (content, link target, kind, or an execute bit added)."""
    path: str
    reason: str
    old: Kept | None
    new: Kept

    @property
    def mode_only(self) -> bool:
        return self.old is not None and self.old.kind == self.new.kind == "file" and not _content_differs(self.old, self.new)


@dataclass
class _Listing:
    signature: tuple[int, ...] | None
    """The folder's inode, device, ctime and mtime when listed (None: listed too recently to trust)."""
    folders: list[str]
    kept: list[str]


@dataclass(frozen=True)
class PathFolders:
    """The project folders on PATH, as the user's shell and the commands find programs there.
    An absolute entry (a link to one included) is one folder, by its real path; a relative one
    (`bin`, `./bin`, `.`, an empty entry) is found from wherever the shell stands, so it is every
    project folder it names from any other (`bin` is `bin` and `src/bin`; `.` is every folder)."""

    exact: frozenset[str] = frozenset()
    suffixes: frozenset[str] = frozenset()
    everywhere: bool = False

    @classmethod
    def of(cls, root: Path, path_values: tuple[str, ...]) -> PathFolders:
        real_root = os.path.realpath(root)
        exact: set[str] = set()
        suffixes: set[str] = set()
        everywhere = False
        for value in path_values:
            if not value:
                continue
            for entry in value.split(os.pathsep):
                entry = os.path.expanduser(entry) if entry.startswith("~") else entry  # bash's reading (trusted_path._as_bash_reads)
                if os.path.isabs(entry):
                    real = os.path.realpath(entry)
                    if real == real_root:
                        exact.add("")
                    elif real.startswith(real_root + "/"):
                        exact.add(real[len(real_root) + 1:])
                    continue
                relative = os.path.normpath(entry or ".")
                while relative.startswith("../"):
                    relative = relative[3:]
                if relative in (".", ".."):
                    everywhere = True
                else:
                    suffixes.add(relative)
                    real = os.path.realpath(os.path.join(real_root, relative))  # a link in the project: its folder, from the root
                    if real.startswith(real_root + "/"):
                        exact.add(real[len(real_root) + 1:])
        return cls(frozenset(exact), frozenset(suffixes), everywhere)

    def holds(self, folder: str) -> bool:
        """Whether a program in this project folder ("" the root) runs by name."""
        if self.everywhere or folder in self.exact:
            return True
        return any(folder == suffix or folder.endswith(f"/{suffix}") for suffix in self.suffixes)


@dataclass
class PlantedScan:
    root: Path
    python_first: tuple[str, ...] = ("",)
    """The project folders (lower case) Python puts first on sys.path (planting.python_first_folders)."""
    path_values: tuple[str, ...] = ()
    """The PATHs programs are found on besides the user's own (mzagent's environment): the commands'."""
    _listings: dict[str, _Listing] = field(default_factory=dict)
    _kept: dict[str, Kept] = field(default_factory=dict)
    """The last scan's entries, whose content is reused while the signature holds."""
    _git: GitPaths = field(default_factory=GitPaths)
    _on_path: PathFolders = field(default_factory=PathFolders)
    _started_packages: set[str] = field(default_factory=set)
    """Packages of an environment's `site-packages` that a `.pth` there runs (planting.started_by_pth):
    every module below them is looked at."""
    reopened: list[str] = field(default_factory=list)
    """The folders the last sweep opened again to their owner (`_reopen`), to be named."""

    def take(self) -> dict[str, Kept]:
        """Every entry on the list now, by project-relative path."""
        try:
            known = git_paths(self.root)
        except GitPathsUnknown as exc:
            raise ScanIncomplete(f"where the repository's hooks are is not known: {exc}") from None
        found, _ = self._walk(known, SCAN_LIMIT)
        return found

    def sweep(self) -> tuple[dict[str, Kept], list[str]]:
        """After a scan that failed: every entry on the list that can be reached, and the folders
        and entries that could not be looked at (the walk goes on past them). A folder closed to
        its owner is opened again first (`reopened`)."""
        self.reopened.clear()
        try:
            known = git_paths(self.root)
        except GitPathsUnknown:
            known = self._git
        return self._walk(known, None)

    def _walk(self, known: GitPaths, limit: int | None) -> tuple[dict[str, Kept], list[str]]:
        """The scan: with a `limit`, any folder or entry it cannot look at ends it
        (`ScanIncomplete`); without one, it is skipped and named in the second list."""
        started = time.time_ns()
        skipped: list[str] = []
        on_path = PathFolders.of(self.root, (os.environ.get("PATH", ""), *self.path_values))
        if known != self._git or on_path != self._on_path:
            self._git = known
            self._on_path = on_path
            self._listings.clear()  # which names are kept depends on them
        listings: dict[str, _Listing] = {}
        found: dict[str, Kept] = {}
        looked_at: list[str] = []
        listed = 0
        budget = CONTENT_BUDGET
        pending = ["", *(folder for folder in known.hook_folders if ".git" in folder.lower().split("/"))]  # not reached by the walk
        while pending:
            folder = pending.pop()
            try:
                listing, count = self._listing(folder, started)
            except ScanIncomplete:
                if limit is not None:
                    raise
                if self._reopen(folder):
                    self.reopened.append(folder)
                    pending.append(folder)
                else:
                    skipped.append(folder or ".")
                continue
            if listing is None:
                continue
            listed += count
            if limit is not None and listed > limit:
                raise ScanIncomplete(f"the project has more than {limit:,} files and folders to look through")
            listings[folder] = listing
            pending.extend(listing.folders)
            looked_at.extend(listing.kept)
        looked_at.extend(path for path in known.config_files if ".git" in path.lower().split("/"))  # not reached by the walk
        for path in looked_at:
            try:
                kept = self._look_at(path, started, budget)
            except ScanIncomplete:
                if limit is not None:
                    raise
                skipped.append(path)
                continue
            if kept is not None:
                found[path] = kept
                budget -= len(kept.content or b"")
        self._listings = listings
        self._kept = found
        return found, skipped

    def _reopen(self, folder: str) -> bool:
        """Whether a project folder the sweep could not list is one a command closed to its owner
        (`chmod 100 d`: no listing, but direnv still opens d/.envrc by name), now open to them
        again — read, write and search, so what it holds is checked and can be put back. Only a
        folder of ours, not a link (the command's processes have ended: nothing races this)."""
        try:
            descriptor = os.open(f"{self.root}/{folder}" if folder else str(self.root), os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY)
        except OSError:
            return False
        try:
            info = os.fstat(descriptor)
            if info.st_uid != os.getuid() or info.st_mode & stat.S_IRWXU == stat.S_IRWXU:
                return False
            os.chmod(f"/proc/self/fd/{descriptor}", stat.S_IMODE(info.st_mode) | stat.S_IRWXU)
            return True
        except OSError:
            return False
        finally:
            os.close(descriptor)

    def _listing(self, folder: str, started: int) -> tuple[_Listing | None, int]:
        """The folder's listing, the last one while the folder is unchanged, and how many
        entries were listed for it now (None: not a folder any more)."""
        full = f"{self.root}/{folder}" if folder else str(self.root)
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            return None, 0
        except OSError as exc:
            raise ScanIncomplete(f"{folder or 'the project folder'} cannot be looked at: {exc.strerror or exc}") from None
        if not stat.S_ISDIR(info.st_mode):
            return None, 0  # replaced by a file or link after its parent was listed: the parent's listing is stale too
        signature = (info.st_ino, info.st_dev, info.st_ctime_ns, info.st_mtime_ns)
        listing = self._listings.get(folder)
        if listing is not None and listing.signature == signature:
            return listing, 0
        listing, count = self._list(folder, full)
        listing.signature = signature if info.st_ctime_ns < started - RACY_NS else None
        return listing, count

    def _list(self, folder: str, full: str) -> tuple[_Listing, int]:
        folders: list[str] = []
        kept: list[str] = []
        count = 0
        every_entry = every_name_counts(folder.lower(), self.python_first)
        in_started_package = any(folder == package or folder.startswith(f"{package}/") for package in self._started_packages)
        programs = self._on_path.holds(folder)
        started = pth_started(Path(full)) if folder.rpartition("/")[2].lower() in SITE_FOLDERS else frozenset()
        try:
            with os.scandir(full) as entries:
                for entry in entries:
                    count += 1
                    path = f"{folder}/{entry.name}" if folder else entry.name
                    if entry.name.lower() == ".git":
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(path)
                        if entry.name.lower() in started:
                            self._started_packages.add(path)
                    elif entry.is_symlink():
                        if programs or plants_code_through(path, self.python_first) is not None or self._git.leads_to(path):
                            kept.append(path)
                    elif (
                        programs or self._plants(path, entry.name.lower(), every_entry) or self._git.reason(path)
                        or in_started_package or module_name(entry.name.lower()) in started
                    ):
                        kept.append(path)
        except OSError as exc:
            raise ScanIncomplete(f"{folder or 'the project folder'} cannot be listed: {exc.strerror or exc}") from None
        return _Listing(None, folders, kept), count

    def _plants(self, path: str, name: str, every_entry: bool) -> bool:
        """`plants_code`, asked only where it may say yes (planting.every_name_counts, QUICK_NAME)."""
        return (every_entry or name.startswith(".") or QUICK_NAME.match(name) is not None) and plants_code(path, self.python_first) is not None

    def _look_at(self, path: str, started: int, budget: int) -> Kept | None:
        try:
            info = os.lstat(f"{self.root}/{path}")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ScanIncomplete(f"{path} cannot be looked at: {exc.strerror or exc}") from None
        signature = (info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_mode)
        last = self._kept.get(path)
        if last is not None and last.signature == signature and not last.racy:
            return last
        racy = info.st_ctime_ns >= started - RACY_NS
        mode = stat.S_IMODE(info.st_mode)
        on_path = ON_PATH_REASON if self._on_path.holds(path.rpartition("/")[0]) else None
        if stat.S_ISLNK(info.st_mode):
            reason = plants_code_through(path, self.python_first) or self._git.leads_to(path) or on_path or ""
            try:
                target = os.readlink(f"{self.root}/{path}")
            except OSError:
                target = "?"
            return Kept(reason, "link", signature, mode, target=target, racy=racy)
        reason = plants_code(path, self.python_first) or self._git.reason(path) or on_path or started_by_pth(self.root, path) or ""
        if not stat.S_ISREG(info.st_mode):
            return Kept(reason, "other", signature, mode, racy=racy)
        if reason == ON_PATH_REASON and not mode & 0o111:
            return Kept(reason, "file", signature, mode, racy=racy)  # not a program (yet): its content is not held (a `.` on PATH is every file)
        content = peek(self.root, path) if info.st_size <= min(MAX_SIDE_BYTES, budget) else None
        if content is not None and len(content) > min(MAX_SIDE_BYTES, budget):
            content = None
        return Kept(reason, "file", signature, mode, content=content, racy=racy)


def changes_between(before: dict[str, Kept], after: dict[str, Kept]) -> list[PlantedChange]:
    """What a command created or changed among the entries on the list (a deletion plants
    nothing; an execute bit taken away runs nothing)."""
    found: list[PlantedChange] = []
    for path, new in sorted(after.items()):
        old = before.get(path)
        if new.reason == ON_PATH_REASON and new.kind == "file" and not new.mode & 0o111:
            continue  # in a folder on PATH but not executable: nothing runs it by name (an execute bit added later asks)
        if old is None:
            found.append(PlantedChange("A", path, new.reason, None, new))
        elif _changed(old, new):
            found.append(PlantedChange("M", path, new.reason, old, new))
    return found


def _changed(old: Kept, new: Kept) -> bool:
    if old.kind != new.kind or old.target != new.target:
        return True
    if new.mode & 0o111 & ~old.mode:
        return True
    return old.kind == "file" and _content_differs(old, new)


def _content_differs(old: Kept, new: Kept) -> bool:
    if old.signature == new.signature and not old.racy:
        return False
    if old.content is not None and new.content is not None:
        return old.content != new.content
    return old.signature[:5] != new.signature[:5] or old.racy  # not held: any write counts


class Background:
    """A scan on a thread while git, in its own process, takes the snapshot (both mostly wait
    on the file system)."""

    def __init__(self, scan: Callable[[], dict[str, Kept]]) -> None:
        self._result: dict[str, Kept] | None = None
        self._error: ScanIncomplete | None = None
        self._thread = threading.Thread(target=self._run, args=(scan,), name="planted-scan", daemon=True)
        self._thread.start()

    def _run(self, scan: Callable[[], dict[str, Kept]]) -> None:
        try:
            self._result = scan()
        except ScanIncomplete as exc:
            self._error = exc
        except Exception as exc:  # noqa: BLE001 - a scan that broke checks nothing: say so, and ask
            self._error = ScanIncomplete(f"the scan failed: {exc!r}")

    def result(self) -> dict[str, Kept]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result
