"""Compaction: when a request has used about 80% of the context window, the model writes a
summary of the older steps, and that summary takes their place in the conversation.

What is kept verbatim: the system prompt, every task text the user wrote, and the last steps
(the model is in the middle of them). The summary is a visible entry in the transcript, and the
session log keeps every original message, so nothing is lost to the user. Shortening old
observations (`Agent._shrink_history`) stays as the last resort when a server says the
conversation is too long before this threshold is reached.
"""

from __future__ import annotations

import re
from typing import Any

KEEP_RECENT = 4
"""Messages kept verbatim at the end: the step in progress and the one before it."""
SUMMARY_REQUEST = (
    "The conversation is getting long. Write a summary of everything above, for yourself, to continue the task from. "
    "Include: the user's tasks; which files you read and what matters in them; which files you changed and how; "
    "commands you ran and their important results; what is finished and what is left to do. "
    "Write plain text only: no <thought>, no <action>, no <final_answer>."
)
_TAGS = re.compile(r"</?(thought|action|final_answer|observation|question|think)>", re.IGNORECASE)
Message = dict[str, Any]


def split(messages: list[Message]) -> tuple[list[Message], list[Message]] | None:
    """(older, recent) after the system prompt, with `recent` starting at a reply of the model,
    so the compacted conversation still alternates; None when there is too little to compact."""
    body = messages[1:]
    start = len(body) - KEEP_RECENT
    while start > 0 and body[start]["role"] != "assistant":
        start -= 1
    if start <= 0:
        return None
    older, recent = body[:start], body[start:]
    if not any(message["role"] == "assistant" for message in older):
        return None
    return older, recent


def summary_request(messages: list[Message], older: list[Message]) -> list[Message]:
    """The system prompt, the older messages, and the request for a summary."""
    request = [messages[0], *older]
    if request[-1]["role"] == "user":
        request[-1] = {"role": "user", "content": request[-1]["content"] + "\n\n" + SUMMARY_REQUEST}
    else:
        request.append({"role": "user", "content": SUMMARY_REQUEST})
    return request


def clean_summary(text: str) -> str:
    return _TAGS.sub("", text).strip()


def compacted(messages: list[Message], older: list[Message], recent: list[Message], summary: str) -> list[Message]:
    """System prompt; one user message with the user's own task texts verbatim and the summary; the recent steps."""
    tasks = [m["content"] for m in older if m["role"] == "user" and "<question>" in m["content"]]
    earlier = "\n".join(tasks)
    content = (
        f"Earlier in this conversation the user asked:\n{earlier}\n\n" if earlier else ""
    ) + (
        "Summary of the steps taken so far (older steps were replaced by this summary to save space; "
        f"the files themselves are unchanged by it):\n{summary}"
    )
    return [messages[0], {"role": "user", "content": content}, *recent]
