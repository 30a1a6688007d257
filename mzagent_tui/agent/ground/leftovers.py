"""Temp files a crash may leave behind, and their removal by a later session.

Every temp file (an atomic write's `.NAME.….mzagent-tmp` beside its target, a copy of the
snapshot index, the sandbox's private TMPDIR) is noted in a journal of the agent process before it is created. A kill -9 in
the middle leaves the journal; the next session removes what the journals of dead processes
list. A process is identified by its pid and start time, so a reused pid is not mistaken for it.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import platformdirs

from mzagent_tui.agent.ground.app_name import APP_NAME

_lock = threading.Lock()
_journal: Path | None = None


def journals_folder() -> Path:
    return Path(platformdirs.user_state_dir(APP_NAME)) / "pending-temp"


def note(path: Path) -> None:
    """Record a temp file about to be created (an absolute path)."""
    global _journal
    with _lock:
        if _journal is None:
            folder = journals_folder()
            folder.mkdir(parents=True, exist_ok=True)
            _journal = folder / f"{os.getpid()}-{_start_time(os.getpid())}.list"
        with _journal.open("a", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(f"{path}\n")


def sweep() -> list[Path]:
    """Remove the temp files of agent processes that are gone; return what was removed."""
    removed: list[Path] = []
    folder = journals_folder()
    if not folder.is_dir():
        return removed
    for journal in folder.glob("*.list"):
        pid, _, start = journal.stem.partition("-")
        if not pid.isdigit() or _alive(int(pid), start):
            continue
        try:
            listed = journal.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
        except OSError:
            continue
        for line in dict.fromkeys(listed):
            path = Path(line)
            if not _is_ours(path) or path.is_symlink() or not path.exists():
                continue
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(path)
        journal.unlink(missing_ok=True)
    return removed


OWN_PREFIXES = ("index-mzagent-", "mzagent-tmp-", "mzagent-view-", "mzagent-shm-", "mzagent-own-")
"""The names of the private folders the sandbox and our own programs make under the temp folder."""


def _is_ours(path: Path) -> bool:
    """Only names this app gives its temp files are ever removed, whatever a journal says."""
    name = path.name
    return path.is_absolute() and (name.endswith(".mzagent-tmp") or name.startswith(OWN_PREFIXES))


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), or "0" where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return "0"


def _alive(pid: int, start: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return start == "0" or _start_time(pid) == start
