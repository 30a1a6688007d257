"""What the task box completes: `/` commands at the start of a task, `@` files anywhere in it.

Pure functions over the box's text and cursor, so the rules are tested without a screen; the
completion menu shows what they return.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from mzagent_tui.agent.prompt_commands import PromptCommand

MAX_ITEMS = 30
BUILT_INS: dict[str, str] = {
    "new": "Forget the conversation and start fresh",
    "undo": "Take back the agent's last step",
    "compact": "Summarise the older steps to free the context",
    "export": "Save the session as Markdown",
    "model": "Switch provider and model (/model PROVIDER MODEL)",
    "mode": "Set the approval mode (/mode ask | auto-safe | plan | yolo)",
    "resume": "Reopen an earlier session of this project",
    "help": "List the commands",
    "rewind": "Take the files and the conversation back to before a task (esc esc)",
    "fork": "Start a new session from before a task; this one stays whole",
    "theme": "Choose the colours, saved in your config (/theme NAME)",
    "bg": "Background commands: their live output, s stops one (ctrl+g)",
}
"""The app's own slash commands and what each does (the app runs them; a prompt file cannot take their names)."""


@dataclass(frozen=True)
class Token:
    """The word being completed: `kind` is "/" or "@", `start`/`end` its span in the text, `text` what follows the sign up to the cursor."""

    kind: Literal["/", "@"]
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Completion:
    value: str
    """What replaces the token ("/review ", "@src/app.py ")."""
    label: str
    detail: str = ""


def token_at(value: str, cursor: int) -> Token | None:
    """The `/name` a task starts with while the cursor is in it, or the `@path` word the cursor is in."""
    cursor = max(0, min(cursor, len(value)))
    start = max(value.rfind(" ", 0, cursor), value.rfind("\t", 0, cursor)) + 1
    end = next((i for i in range(cursor, len(value)) if value[i].isspace()), len(value))
    word = value[start:cursor]
    if start == 0 and word.startswith("/") and not word.startswith("//"):
        return Token("/", 0, end, word[1:])
    if word.startswith("@"):
        return Token("@", start, end, word[1:])
    return None


def slash_completions(prefix: str, prompts: Mapping[str, PromptCommand]) -> list[Completion]:
    """Built-ins, then prompt files (the project's marked as such), whose name starts with `prefix`."""
    items = [Completion(f"/{name} ", f"/{name}", about) for name, about in BUILT_INS.items() if name.startswith(prefix)]
    for name, command in prompts.items():
        if name.startswith(prefix) and name not in BUILT_INS:
            if command.source == "skill":
                items.append(Completion(f"/{name} ", f"/{name}", command.description))
                continue
            where = "from this project" if command.source == "project" else "your prompt file"
            items.append(Completion(f"/{name} ", f"/{name}", f"{command.description} ({where})".strip()))
    items.sort(key=lambda item: item.label != f"/{prefix}")  # the name typed in full first (`/mode` before `/model`)
    return items[:MAX_ITEMS]


def file_completions(query: str, files: Iterable[str]) -> list[Completion]:
    """The project's files that fuzzily match `query`, best first: a match in the file's name
    before one in its folder, a run of letters before scattered ones, a short path before a long one."""
    scored = [(score, len(path), path) for path in files if (score := fuzzy_score(query, path)) is not None]
    scored.sort()
    return [Completion(f"@{path} ", path) for _, _, path in scored[:MAX_ITEMS]]


def fuzzy_score(query: str, path: str) -> int | None:
    """Lower is better; None when the letters of `query` do not appear in `path` in order."""
    if not query:
        return 0
    needle, haystack = query.casefold(), path.casefold()
    name = haystack.rsplit("/", 1)[-1]
    if name.startswith(needle):
        return 0
    if needle in name:
        return 1
    if needle in haystack:
        return 2
    position, gaps = -1, 0
    for letter in needle:
        found = haystack.find(letter, position + 1)
        if found < 0:
            return None
        gaps += found - position - 1 if position >= 0 else 0
        position = found
    return 3 + gaps
