"""A reply as it streams in, read into the parts it will become: the text inside `<thought>`,
`<action>` and `<final_answer>` so far. No tag of the protocol is ever part of the text: a tag
cut in two by the stream (`</thou`) is held back until the next fragment shows what it is.
Front-ends show each part in the entry it will have once the reply is parsed, so a small model's
tens of seconds of writing read as a thought and an action, not as XML."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mzagent_tui.agent.model.parsing import partial_tag_length

TAGS = ("thought", "action", "final_answer")
_OPEN = re.compile(r"<(thought|action|final_answer)>", re.IGNORECASE)


@dataclass(frozen=True)
class Part:
    tag: str
    text: str
    closed: bool


def stream_parts(text: str) -> list[Part]:
    """The tagged parts of `text` so far, in order; the last may still be open."""
    parts: list[Part] = []
    position = 0
    while (opening := _OPEN.search(text, position)) is not None:
        tag = opening[1].lower()
        closing = re.compile(f"</{tag}>", re.IGNORECASE).search(text, opening.end())
        if closing is None:
            body = text[opening.end():]
            parts.append(Part(tag, body[: len(body) - partial_tag_length(body, f"</{tag}>")], False))
            break
        parts.append(Part(tag, text[opening.end(): closing.start()], True))
        position = closing.end()
    return parts


def untagged(text: str) -> str:
    """A reply that has opened no tag yet, as far as it can be shown: a possible start of an
    opening tag at its end held back (`<tho`), and nothing at all while it is only that."""
    held = max(partial_tag_length(text, f"<{tag}>") for tag in TAGS)
    return text[: len(text) - held]
