"""The files the user names in a task with `@` (`explain @src/app.py`): the agent reads them for
the model before its first reply, whatever the model, since the user asked for them."""

from __future__ import annotations

import re

MAX_MENTIONS = 10
_MENTION = re.compile(r"(?<!\S)@(?P<path>[^\s@]+)")


def mentioned_files(task: str) -> list[str]:
    """The paths the user put in the task with `@` (`explain @src/app.py`), in order, once each,
    without the punctuation that may follow one in a sentence; at most MAX_MENTIONS."""
    names = (match["path"].rstrip(",;:!?)") for match in _MENTION.finditer(task))
    return list(dict.fromkeys(name for name in names if name))[:MAX_MENTIONS]
