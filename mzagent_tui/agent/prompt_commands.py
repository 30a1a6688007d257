"""Prompt files run as slash commands: `/NAME args` sends the text of NAME.md as the task.

They come from the user's `~/.config/mzagent/commands/` and the project's `.mzagent/commands/`.
A prompt file is only ever text for the model: whatever it says (front matter included), it is
never read as configuration, so a project's file cannot change settings, approval, tools or the
sandbox. A project's file is read beneath the project without following symlinks (a planted link
to a private file must not send it to the model), and a user's file of the same name wins.
`$ARGUMENTS` becomes everything after the name, `$1`…`$9` its words.

A skill (agent/skills.py) is a command too, under its own name when no prompt file has it:
`/release-notes v2.1` asks the model to read the skill's SKILL.md first and follow it.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mzagent_tui.agent.config import user_config_path
from mzagent_tui.agent.ground.beneath import open_beneath
from mzagent_tui.agent.ground.errors import ToolError
from mzagent_tui.agent.ground.textfiles import read_regular
from mzagent_tui.agent.skills import SKILL_FILE, find_skills

PROJECT_FOLDER = ".mzagent/commands"
MAX_BYTES = 64 * 1024
"""A prompt file is read up to this size (a prompt, not a data file)."""
MAX_FILES = 200
"""Files listed per folder: a huge folder must not slow the completion list down."""
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
SLASH = re.compile(r"/(?P<name>[A-Za-z0-9][A-Za-z0-9_-]*)(?:\s+(?P<args>.*))?\Z", re.DOTALL)
_POSITIONAL = re.compile(r"\$([1-9])")
_FRONT_MATTER = re.compile(r"\A---\n(?P<head>.*?)\n---\n", re.DOTALL)


class PromptCommandError(Exception):
    """A prompt file that cannot be used (unreadable, empty); said to the user, never a traceback."""


@dataclass(frozen=True)
class PromptCommand:
    name: str
    source: Literal["user", "project", "skill"]
    path: Path
    description: str
    """Its front matter's `description:`, else its first line (for the completion list only)."""
    skill_location: str = ""
    """For a skill: where the model reads its SKILL.md (Skill.location)."""

    def expand(self, arguments: str, root: Path) -> str:
        """The task this command sends with `arguments` (raises PromptCommandError). A prompt
        file is text for the model: one that would start with `!` would run a command without a
        dialog (a project's file could pick it), so it is refused. A skill's task is written here,
        not read from a file: the model reads the skill itself, through read_file."""
        if self.source == "skill":
            wanted = arguments or "Do what the skill is for, in this project."
            return f"Use the skill {self.name}: first read {self.skill_location} with read_file and follow it.\n\n{wanted}"
        text = expand(self.read(root), arguments)
        if text.lstrip().startswith("!"):
            raise PromptCommandError(f"/{self.name}: {self.path} starts with `!`; a prompt file is text for the model, not a command to run")
        return text

    def read(self, root: Path) -> str:
        text = _read(self.path, root if self.source == "project" else None, MAX_BYTES)
        if text is None:
            raise PromptCommandError(f"/{self.name}: cannot read {self.path}")
        body = _without_front_matter(text).strip()
        if not body:
            raise PromptCommandError(f"/{self.name}: {self.path} is empty")
        return body


def user_commands_folder() -> Path:
    return user_config_path().parent / "commands"


def parse_slash(task: str) -> tuple[str, str] | None:
    """(name, arguments) for a task that is a slash command (`/review src/app.py`), else None
    (`/usr/bin/env is missing` names a path, not a command)."""
    found = SLASH.match(task.strip())
    return (found["name"], (found["args"] or "").strip()) if found else None


def resolve_task(task: str, root: Path, user_folder: Path | None = None, skill_folders: tuple[Path, ...] | None = None) -> str:
    """The task to send for what the user typed: a slash command becomes its prompt file's text,
    `//text` sends `/text` as it is, anything else is unchanged. Raises PromptCommandError for a
    name no prompt file has."""
    if task.startswith("//"):
        return task[1:]
    parsed = parse_slash(task)
    if parsed is None:
        return task
    name, arguments = parsed
    command = load_prompt_commands(root, user_folder, skill_folders).get(name)
    if command is None:
        raise PromptCommandError(
            f"/{name} is not a prompt file in {user_folder or user_commands_folder()} or {PROJECT_FOLDER}/, nor a skill "
            "(start the task with // to send it as it is)"
        )
    return command.expand(arguments, root)


def expand(template: str, arguments: str) -> str:
    """Fill `$ARGUMENTS` and `$1`…`$9`; arguments the text has no place for are added after it,
    so they are never lost."""
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()
    placed = "$ARGUMENTS" in template or _POSITIONAL.search(template) is not None
    text = template.replace("$ARGUMENTS", arguments)
    text = _POSITIONAL.sub(lambda m: words[int(m[1]) - 1] if int(m[1]) <= len(words) else "", text)
    if arguments and not placed:
        text += f"\n\nArguments: {arguments}"
    return text


def load_prompt_commands(root: Path, user_folder: Path | None = None, skill_folders: tuple[Path, ...] | None = None) -> dict[str, PromptCommand]:
    """Every usable prompt file by name, the user's first (a project's of the same name is dropped),
    then every skill whose name no prompt file has (`skill_folders`: the user's, for tests)."""
    found: dict[str, PromptCommand] = {}
    for command in _listed(user_folder or user_commands_folder(), "user", None):
        found[command.name] = command
    for command in _listed(root / PROJECT_FOLDER, "project", root):
        found.setdefault(command.name, command)
    for skill in find_skills(root, skill_folders).found:
        about = f"{skill.description[:70]} (skill{', this project' if skill.scope == 'project' else ''})"
        found.setdefault(skill.name, PromptCommand(skill.name, "skill", skill.folder / SKILL_FILE, about, skill.location))
    return dict(sorted(found.items()))


def _listed(folder: Path, source: Literal["user", "project"], root: Path | None) -> list[PromptCommand]:
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(".md"))[:MAX_FILES]
    except OSError:
        return []
    commands = []
    for file_name in names:
        name = file_name.removesuffix(".md")
        if not NAME.fullmatch(name):
            continue
        head = _read(folder / file_name, root, 4096)
        if head is not None:
            commands.append(PromptCommand(name, source, folder / file_name, _description(head)))
    return commands


def _read(path: Path, root: Path | None, limit: int) -> str | None:
    """A user's file as it is; a project's only beneath the project, with no symlink on the way."""
    if root is None:
        return read_regular(path, limit)
    try:
        fd = open_beneath(root, path.relative_to(root).as_posix(), os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ToolError, ValueError):
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read(limit).decode("utf-8", errors="replace")


def _without_front_matter(text: str) -> str:
    return _FRONT_MATTER.sub("", text.replace("\r\n", "\n"), count=1)


def _description(text: str) -> str:
    text = text.replace("\r\n", "\n")
    head = _FRONT_MATTER.match(text)
    if head is not None:
        for line in head["head"].splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "description" and value.strip():
                return value.strip().strip("\"'")[:80]
    first = next((line.strip() for line in _without_front_matter(text).splitlines() if line.strip()), "")
    return first.lstrip("# ")[:80]
