"""Small text-file helpers shared by the tools, undo, the config writer and the front-ends."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from mzagent_tui.agent.ground.beneath import write_atomically_at

UMASK = os.umask(0)
os.umask(UMASK)


def lines_label(text: str) -> str:
    """"1 line", "12 lines": how observations and the transcript describe a file's size."""
    count = count_lines(text)
    return f"{count} line" if count == 1 else f"{count} lines"


def count_lines(text: str) -> int:
    """Lines as an editor counts them: a last line without a newline still counts."""
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def read_regular(path: Path, limit: int) -> str | None:
    """The first `limit` bytes of a regular file as text, or None when it is missing, unreadable
    or not a regular file: a planted FIFO would block a plain read forever."""
    data = read_regular_bytes(path, limit)
    return None if data is None else data.decode("utf-8", "replace")


def read_regular_bytes(path: Path, limit: int) -> bytes | None:
    """The first `limit` bytes of a regular file, as `read_regular` reads them."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        chunks: list[bytes] = []
        wanted = min(info.st_size, limit)
        while wanted > 0:
            chunk = os.read(fd, min(wanted, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            wanted -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


GIT_POINTER_LIMIT = 4096
"""Bytes of a pointer file of git's read (a path; git's own limit is the system's PATH_MAX)."""
LINE_ENDS = b"\r\n"
WHITESPACE = b" \t\n\r\x0b\x0c"


def read_git_pointer(path: Path, prefix: str = "", trailing: bytes = LINE_ENDS) -> str | None:
    """The path a pointer file of git's names (a `.git` file's `gitdir: PATH`, a `commondir`), as
    git reads it: the whole file after `prefix`, less the `trailing` bytes at its end (git's
    `.git` file and `commondir` lose only line ends; a linked worktree's `gitdir` all trailing
    whitespace). A space, a second line or a byte that is not UTF-8 is part of the path: read
    as a first line stripped, `gitdir: gd ` named `gd`, and the repository git uses, `gd `, was
    left writable. None for a missing or special file, one without the prefix, or an empty path."""
    data = read_regular_bytes(path, GIT_POINTER_LIMIT)
    if data is None or not data.startswith(prefix.encode()):
        return None
    return os.fsdecode(data[len(prefix):].rstrip(trailing)) or None


def read_regular_chunks(path: Path, limit: int, chunk: int = 1 << 20) -> Iterator[bytes]:
    """The first `limit` bytes of a regular file in pieces of `chunk` bytes, opened as
    `read_regular_bytes` opens it (nothing for a missing, unreadable or special file): a large
    file is scanned without being held whole."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        while limit > 0:
            piece = os.read(fd, min(limit, chunk))
            if not piece:
                return
            limit -= len(piece)
            yield piece
    except OSError:
        return
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """A kill at any moment leaves the old or the new file, never a truncated one (the file keeps its mode)."""
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o666 & ~UMASK
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        write_atomically_at(folder, path.parent, path.name, data, mode)
    finally:
        os.close(folder)
