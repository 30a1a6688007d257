"""Which files a task names that the agent reads for the model before its first reply.

On "fix util.py" a small model's first step is nearly always read_file("util.py"); now and then
it writes the file unseen instead, reads a path it made up, or answers from the name alone. So
the agent takes that first step itself, through read_file (the same path checks, paging and
redaction), and the conversation shows it as the model's own step, much as Aider puts the files
added to the chat in front of the model. Only small text files the model has not seen yet are
read; a file that may hold secrets is left to the model, since read_file would have to ask.
Not for the bundled model, where it did not earn its place (`Settings.reads_ahead`).
A file the user names with `@` is read for every model, secret or big (read_file asks or pages).
"""

from __future__ import annotations

import re
from itertools import islice
from pathlib import Path

from mzagent_tui.agent.aids.completion import FILE_NAME
from mzagent_tui.agent.safety.sensitive import is_secret
from mzagent_tui.agent.tools.paths import resolve_inside
from mzagent_tui.agent.tools.registry import ToolError

MAX_FILES = 3
MAX_BYTES = 16_000
"""A bigger file is left for the model to read (or page through) if it needs it: a small model's
context would be half full before it had said a word."""
MAX_NAMES = 50
"""Only the first names of a task are looked at: a pasted log full of dotted names would
otherwise cost a file-system lookup each."""


MAX_MENTIONS = 10
_MENTION = re.compile(r"(?<!\S)@(?P<path>[^\s@]+)")


def mentioned_files(task: str) -> list[str]:
    """The paths the user put in the task with `@` (`explain @src/app.py`), in order, once each,
    without the punctuation that may follow one in a sentence; at most MAX_MENTIONS."""
    names = (match["path"].rstrip(",;:!?)") for match in _MENTION.finditer(task))
    return list(dict.fromkeys(name for name in names if name))[:MAX_MENTIONS]


def files_to_read_ahead(root: Path, task: str, seen: set[Path]) -> list[str]:
    """The project's files the task names, in the order it names them: existing, non-empty,
    regular, at most MAX_BYTES, not secret, not already seen in this conversation."""
    chosen: list[str] = []
    paths: set[Path] = set()
    for match in islice(FILE_NAME.finditer(task), MAX_NAMES):
        name = match.group(0)
        try:
            path = resolve_inside(root, name)
            if not path.is_file() or not 0 < path.stat().st_size <= MAX_BYTES:
                continue
        except (ToolError, OSError, ValueError):
            continue
        if path in seen or path in paths or is_secret(path):
            continue
        paths.add(path)
        chosen.append(name)
        if len(chosen) == MAX_FILES:
            break
    return chosen
