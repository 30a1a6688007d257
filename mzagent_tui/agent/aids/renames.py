"""Whole words: a name the task mentions, and a rename made in a file's text (not "total" in
"subtotal")."""

from __future__ import annotations

import re


def _word(word: str) -> re.Pattern[str]:
    """`word` where it stands as a whole word (not "total" in "subtotal")."""
    return re.compile(rf"(?<!\w){re.escape(word)}(?!\w)")


def has_word(text: str, word: str) -> bool:
    return _word(word).search(text) is not None


def replace_word(text: str, old: str, new: str) -> str:
    """`text` with every whole-word `old` made `new`."""
    return _word(old).sub(lambda _: new, text)
