"""Did a write replace a file with a copy of another one? A small model asked to fix `money.py`
after reading `test_money.py` has been seen to write the test's content into `money.py`. Such a
write is legal, so it is not refused; it is pointed out to the user and to the model."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from mzagent_tui.agent.filelist import project_files

MOSTLY_REPLACED = 0.5
"""The old and new content share less than this share of their lines."""
COPY = 0.8
"""The new content shares at least this share of its lines with the other file."""
MIN_LINES = 3
"""The new content has at least this many lines; the old one may be as short as one (a two-line
module was overwritten with its test file's content, unflagged)."""
MAX_CANDIDATES = 2_000
MAX_BYTES = 1_000_000


def similarity(a: list[bytes], b: list[bytes]) -> float:
    """Shared lines (with repeats) over the mean length: 1.0 for the same lines in any order."""
    if not a or not b:
        return 0.0
    common = sum((Counter(a) & Counter(b)).values())
    return 2 * common / (len(a) + len(b))


def _lines(data: bytes) -> list[bytes]:
    return [line.strip() for line in data.splitlines() if line.strip()]


def copied_from(root: Path, rel: str, old: bytes, new: bytes) -> str | None:
    """The project file whose content replaced most of `rel`'s, or None."""
    old_lines, new_lines = _lines(old), _lines(new)
    if not old_lines or len(new_lines) < MIN_LINES or similarity(old_lines, new_lines) >= MOSTLY_REPLACED:
        return None
    low, high = len(new) / 2, len(new) * 2
    checked = 0
    for other in project_files(root):
        if other == rel:
            continue
        path = root / other
        try:
            size = path.stat().st_size
            if not low <= size <= high or size > MAX_BYTES:
                continue
            checked += 1
            if checked > MAX_CANDIDATES:
                return None
            if similarity(_lines(path.read_bytes()), new_lines) >= COPY:
                return other
        except OSError:
            continue
    return None
