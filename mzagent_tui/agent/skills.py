"""Agent Skills: folders with a `SKILL.md` (the cross-agent convention, agentskills.io).

The model sees each skill's name and description in its prompt and reads a skill's `SKILL.md`
(and the files it points to) with `read_file` when a task matches. A skill is text only: nothing
in one runs by itself, changes a setting or a tool. The user's skills come from
`~/.config/mzagent/skills/` and `~/.agents/skills/`; a project's from its `.agents/skills/`,
read without following links, like AGENTS.md. On a name found in both, the user's skill wins
(the convention lets the project's win; here a cloned repository must not replace a skill the
user relies on), and `mzagent config` says which one was left out.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from mzagent_tui.agent.ground.app_name import APP_NAME
from mzagent_tui.agent.ground.beneath import open_beneath
from mzagent_tui.agent.ground.errors import ToolError
from mzagent_tui.agent.ground.textfiles import read_regular_bytes

SKILL_FILE = "SKILL.md"
PROJECT_FOLDER = ".agents/skills"
MAX_HEAD_BYTES = 16 * 1024
"""What is read of a SKILL.md to find its front matter; the body is the model's to read."""
MAX_DESCRIPTION = 1024
MAX_SKILLS = 100
"""Per folder: a folder with thousands of entries must not fill the prompt."""
NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    """The skill's folder (its SKILL.md and the files it names)."""
    scope: str
    """"user" or "project"."""

    @property
    def location(self) -> str:
        """Where the model reads it: a project's relative to the project, a user's absolute."""
        return f"{PROJECT_FOLDER}/{self.folder.name}/{SKILL_FILE}" if self.scope == "project" else str(self.folder / SKILL_FILE)


@dataclass(frozen=True)
class Skills:
    found: tuple[Skill, ...] = ()
    problems: tuple[str, ...] = ()
    """Skills left out, and why (bad front matter, a name taken), for `mzagent config`."""

    def user_file(self, path: str) -> tuple[Skill, str] | None:
        """The user's skill whose folder holds `path` (absolute) and the path inside it."""
        if not os.path.isabs(path):
            return None
        wanted = Path(os.path.normpath(path))
        for skill in self.found:
            if skill.scope == "user" and wanted.is_relative_to(skill.folder) and wanted != skill.folder:
                return skill, wanted.relative_to(skill.folder).as_posix()
        return None

    def notice(self) -> str:
        """What the transcript says once about the skills the model was told of."""
        if not self.found:
            return ""
        return f"Skills listed to the model ({len(self.found)}): {', '.join(s.name for s in self.found)}"


def user_folders() -> tuple[Path, ...]:
    return (Path(platformdirs.user_config_dir(APP_NAME)) / "skills", Path.home() / ".agents" / "skills")


def find_skills(project: Path, user: Sequence[Path] | None = None) -> Skills:
    """Every skill of the user's folders, then the project's; the first of a name is kept."""
    found: dict[str, Skill] = {}
    problems: list[str] = []
    for folder in user_folders() if user is None else user:
        for skill_folder in _subfolders(folder):
            _add(found, problems, _read_user_skill(skill_folder))
    for name in _project_subfolders(project):
        _add(found, problems, _read_project_skill(project, name))
    return Skills(tuple(found.values()), tuple(problems))


def _add(found: dict[str, Skill], problems: list[str], read: Skill | str | None) -> None:
    if read is None:
        return
    if isinstance(read, str):
        problems.append(read)
    elif read.name in found:
        kept = found[read.name]
        problems.append(f"{read.location}: left out, the name {read.name!r} is taken by {kept.location}")
    else:
        found[read.name] = read


def _subfolders(folder: Path) -> list[Path]:
    try:
        return sorted(entry for entry in folder.iterdir() if entry.is_dir())[:MAX_SKILLS]
    except OSError:
        return []


def _project_subfolders(project: Path) -> list[str]:
    """The names under the project's `.agents/skills`, reached without links."""
    try:
        fd = open_beneath(project, PROJECT_FOLDER, os.O_RDONLY | os.O_DIRECTORY)
    except (OSError, ToolError):
        return []
    try:
        names = sorted(os.listdir(fd))
        return [n for n in names if stat.S_ISDIR(os.stat(n, dir_fd=fd, follow_symlinks=False).st_mode)][:MAX_SKILLS]
    finally:
        os.close(fd)


def _read_user_skill(folder: Path) -> Skill | str | None:
    head = read_regular_bytes(folder / SKILL_FILE, MAX_HEAD_BYTES)  # a FIFO there must not hang the start
    return None if head is None else _parse(head, folder, "user", str(folder / SKILL_FILE))


def _read_project_skill(project: Path, name: str) -> Skill | str | None:
    relative = f"{PROJECT_FOLDER}/{name}/{SKILL_FILE}"
    try:
        with os.fdopen(open_beneath(project, relative, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            head = handle.read(MAX_HEAD_BYTES)
    except (OSError, ToolError):  # missing, a link, unreadable: not a skill
        return None
    return _parse(head, project / PROJECT_FOLDER / name, "project", relative)


def _parse(head: bytes, folder: Path, scope: str, shown: str) -> Skill | str:
    """A skill from its front matter, or why not. Lenient where other agents are (a name that
    differs from the folder's is the folder's), strict where the prompt needs it."""
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    match = re.match(r"---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", text, re.DOTALL)
    if match is None:
        return f"{shown}: no front matter (a `---` block with name and description)"
    fields = _front_matter(match.group(1))
    if fields is None:
        return f"{shown}: the front matter is not YAML"
    description = fields.get("description")
    if not isinstance(description, str) or not description.strip():
        return f"{shown}: no description"
    name = fields.get("name")
    name = name.strip() if isinstance(name, str) and NAME.match(name.strip()) else folder.name
    description = " ".join(description.split())[:MAX_DESCRIPTION]
    return Skill(name[:64], description, folder, scope)


def _front_matter(block: str) -> dict[str, object] | None:
    """YAML, or, as other agents accept, `key: value` lines whose value holds a colon."""
    import yaml  # only where skills exist: 25 ms of the app's start-up otherwise

    try:
        loaded = yaml.safe_load(block)
    except yaml.YAMLError:
        loaded = _plain_lines(block)
    return loaded if isinstance(loaded, dict) else None


def _plain_lines(block: str) -> dict[str, object] | None:
    fields: dict[str, object] = {}
    for line in block.splitlines():
        key, sep, value = line.partition(":")
        if sep and re.fullmatch(r"[A-Za-z_-]+", key):
            fields[key] = value.strip()
    return fields or None
