"""Unified diffs of what the agent changed, for the transcript, the export, the headless output
and the write dialog. Built with `difflib` when the change happens, so a later edit of the file
cannot change what the log says was written."""

from __future__ import annotations

import codecs
import difflib
from dataclasses import dataclass
from pathlib import Path

MAX_DIFF_LINES = 20_000
"""A diff longer than this is cut (the counts still cover all of it)."""
MAX_SIDE_BYTES = 4 * 1024 * 1024
"""Bigger files are not diffed: only their sizes are reported."""
CONTEXT_LINES = 3
BINARY_PROBE = 8000
"""Bytes searched for a NUL, as git does to call a file binary."""


@dataclass(frozen=True)
class FileDiff:
    text: str
    """A unified diff (`--- a/path`, `+++ b/path`, hunks); empty when there is nothing to show."""
    added: int
    removed: int


def read_side(path: Path | None) -> bytes | None:
    """A saved side of a change (a backup) to diff: None when there is none, it cannot be read,
    or it is bigger than MAX_SIDE_BYTES."""
    if path is None:
        return None
    try:
        if path.stat().st_size > MAX_SIDE_BYTES:
            return None
        return path.read_bytes()
    except OSError:
        return None


def is_binary(data: bytes) -> bool:
    """As git decides: a NUL in the first 8000 bytes; and, since diffs are shown as UTF-8, content
    that is not UTF-8 (decoded with "replace" it would show U+FFFD). `data` may be the head of a
    larger file: a character cut at its end does not count."""
    if b"\x00" in data[:BINARY_PROBE]:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError:
        return True
    return False


def binary_text(verb: str, size: int) -> str:
    """What is shown instead of a diff for a binary file: `binary file changed, 1234 bytes`."""
    return f"binary file {verb}, {size} byte{'s' if size != 1 else ''}"


def _text(data: bytes | None) -> str | None:
    """The content as text, or None for a binary, non-UTF-8 or huge file."""
    if data is None:
        return ""
    if len(data) > MAX_SIDE_BYTES or is_binary(data):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def file_diff(path: str, old: bytes | None, new: bytes | None) -> FileDiff | None:
    """The change from `old` to `new` (None: the file did not exist, or was deleted), or None
    when either side is not text."""
    before, after = _text(old), _text(new)
    if before is None or after is None:
        return None
    old_lines = before.splitlines(keepends=True)
    new_lines = after.splitlines(keepends=True)
    lines: list[str] = []
    added = removed = 0
    for line in difflib.unified_diff(
        old_lines, new_lines, "/dev/null" if old is None else f"a/{path}", "/dev/null" if new is None else f"b/{path}", n=CONTEXT_LINES
    ):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
        if len(lines) < MAX_DIFF_LINES:
            lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    text = "".join(lines)
    if len(lines) >= MAX_DIFF_LINES:
        text += f"[diff cut at {MAX_DIFF_LINES} lines]\n"
    return FileDiff(text, added, removed)
