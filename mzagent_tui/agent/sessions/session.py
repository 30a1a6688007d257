"""The session folder: an append-only JSON-lines log, pre-images of written files, full outputs.

Lives in the platform's state folder (`~/.local/state/mzagent/sessions/<project>/<id>/`). Each
record is flushed as it is written so a kill -9 loses at most the record being written; the
API key and other secrets are redacted before anything reaches the disk.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets as _random
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import platformdirs

from mzagent_tui.agent.events import Event
from mzagent_tui.agent.ground.app_name import APP_NAME
from mzagent_tui.agent.safety.secrets import Redactor

_SURROGATE = re.compile("[\ud800-\udfff]")


def sessions_root() -> Path:
    return Path(platformdirs.user_state_dir(APP_NAME)) / "sessions"


def project_slug(project: Path) -> str:
    digest = hashlib.sha256(str(project).encode()).hexdigest()[:8]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in project.name)[:40] or "root"
    return f"{name}-{digest}"


class Session:
    def __init__(self, folder: Path, redact: Redactor) -> None:
        self.folder = folder
        self.redact = redact
        folder.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / "log.jsonl"
        self._log = self.log_path.open("a", encoding="utf-8")
        self._lock = threading.Lock()
        self._counter = _highest_number(folder)

    @property
    def id(self) -> str:
        return self.folder.name

    @classmethod
    def create(cls, project: Path, redact: Redactor) -> Session:
        session = cls(_new_folder(sessions_root() / project_slug(project)), redact)
        session.record("session", project=str(project))
        return session

    @classmethod
    def fork(cls, original: Path, redact: Redactor) -> Session:
        """A new session of the same project whose log starts as a copy of `original`'s, which
        is not touched (the saved contents its writes name stay in the original's folder)."""
        folder = _new_folder(original.parent)
        folder.mkdir(parents=True)
        shutil.copyfile(original / "log.jsonl", folder / "log.jsonl")
        session = cls.reopen(folder, redact)
        session.record("forked", source=original.name)
        return session

    @classmethod
    def reopen(cls, folder: Path, redact: Redactor) -> Session:
        """Append to an existing session; a line cut short by a crash is ended first."""
        log = folder / "log.jsonl"
        if log.is_file() and log.stat().st_size:
            with log.open("rb") as handle:
                handle.seek(-1, 2)
                cut = handle.read(1) != b"\n"
            if cut:
                with log.open("ab") as handle:
                    handle.write(b"\n")
        return cls(folder, redact)

    def record(self, kind: str, **data: Any) -> None:
        record = {"t": round(time.time(), 3), "type": kind, **data}
        line = json.dumps(record, ensure_ascii=False, default=str)
        if not line.isascii() and _SURROGATE.search(line):  # a file name or text not valid Unicode: escaped, as JSON may
            line = json.dumps(record, default=str)
        line = self.redact(line)
        with self._lock:
            self._log.write(line + "\n")
            self._log.flush()

    def record_event(self, event: Event) -> None:
        data = event.to_dict()
        self.record("event", event=data)

    def _next(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter

    def backup_path(self, original: Path) -> Path:
        """A fresh path under `backups/` for the previous content of `original`."""
        folder = self.folder / "backups"
        folder.mkdir(exist_ok=True)
        return folder / f"{self._next():04d}-{original.name}"

    def output_path(self) -> Path:
        folder = self.folder / "outputs"
        folder.mkdir(exist_ok=True)
        return folder / f"command-{self._next():04d}.log"

    def close(self) -> None:
        with self._lock:
            self._log.close()


def _new_folder(parent: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return parent / f"{stamp}-{_random.token_hex(2)}"


def _highest_number(folder: Path) -> int:
    """Backups and outputs are numbered; a reopened session goes on after the highest."""
    highest = 0
    for path in [*folder.glob("backups/*"), *folder.glob("outputs/*")]:
        digits = path.name.removeprefix("command-")[:4]
        if digits.isdigit():
            highest = max(highest, int(digits))
    return highest
