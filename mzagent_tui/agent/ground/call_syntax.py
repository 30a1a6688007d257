"""How a tool call is written for the model to send back: a file's content as a fenced block on
lines of its own, other strings double-quoted. The parser (`model.parsing`) reads exactly this;
it is on the ground floor because the tools' registry and the aids write calls for the model too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

FENCE = "```"
"""Opens and closes a file's content written as it stands, on lines of its own (see the prompt)."""
LANGUAGE_CHARS = "A-Za-z0-9_+.-"
"""What a language name after an opening fence (```python, ```c++) is made of, as the body of a
character class; the reply grammar uses the same, so every call shown to the model can be sent."""
_FENCE_END_LINE = re.compile(rf"^[ \t]*```(?![{LANGUAGE_CHARS}])", re.MULTILINE)
"""A line the grammar reads as a fenced block's end: ``` not followed by a language name."""


def call_source(tool: str, args: Sequence[Any]) -> str:
    """A call written the way the parser reads it back as exactly `args`, shown to a model as the
    call to send: text of whole lines as the prompt teaches a file's content, a fenced block,
    where that holds it as it stands; other strings double-quoted with JSON escapes; other
    literals as Python writes them."""
    written = [_string_source(arg) if isinstance(arg, str) else repr(arg) for arg in args]
    return f"{tool}({', '.join(written)})"


def _string_source(text: str) -> str:
    """Text of whole lines as a fenced block, unless a line of it would end the block."""
    if text.endswith("\n") and not _FENCE_END_LINE.search(text):
        return f"{FENCE}\n{text}{FENCE}"
    return json.dumps(text, ensure_ascii=False)
