"""What the core asks the user about: one frozen type per kind of question.

Every front-end (the app's dialog, the terminal, ACP) dispatches on the type with `match`, so a
new kind is a type error (mypy) wherever it is not handled, instead of a string that falls
through to a default. What every kind has is in `ApprovalBase`: the folder, why it is asked,
and the question in one line (`summary`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from mzagent_tui.agent.safety.commands import Analysis


@dataclass(frozen=True)
class PartVerdict:
    """What the policy decided for one part of a command, and why."""

    text: str
    verdict: str
    reason: str
    risks: tuple[str, ...] = ()
    network: bool = False
    """Allowed by a rule that also grants the network (`{ prefix = "pip install", network = true }`)."""


@dataclass(frozen=True, kw_only=True)
class ApprovalBase(ABC):
    """What every question has, whatever its kind."""

    cwd: str
    """The project folder, shown to the user."""
    reason: str = ""
    """Why it is asked: the model's thought, or what makes the file or output sensitive."""

    @property
    @abstractmethod
    def summary(self) -> str:
        """The question in one line (the command, `write a.py`, `read .env`): the `ApprovalAsked`
        event, the app's call for attention, the ACP title where a kind has no other."""


@dataclass(frozen=True, kw_only=True)
class CommandApproval(ApprovalBase):
    """A terminal command the model wants to run."""

    command: str
    sandbox: str = ""
    """How the command will be confined ("sandbox: writes in the project, no network")."""
    warning: str = ""
    """Something the user should know before answering ("vim is an interactive editor: it will get no input")."""
    ask_even_if_allowed: bool = False
    """The user decides even where the mode or a rule would allow: the sandbox may have blocked
    this command last time."""
    ask_unless_yolo: bool = False
    """The user decides even where a rule or the safe list would allow, in every mode but yolo:
    what the command plants cannot be checked after it (tools/planted_scan.py)."""
    parts: tuple[PartVerdict, ...] = ()
    """Each part's verdict, filled in by the policy before a person is asked."""
    analysis: Analysis | None = field(default=None, compare=False, repr=False)
    """The command as the tool read it (`commands.analyse`), so the gate does not parse it again."""

    @property
    def sandboxed(self) -> bool:
        """It will run in the sandbox, which the user (never the model) may lift for it once."""
        return self.sandbox.startswith("sandbox:")

    @property
    def summary(self) -> str:
        return self.command


@dataclass(frozen=True, kw_only=True)
class ToolCallApproval(ApprovalBase):
    """A call to a tool server's tool."""

    tool: str
    """The tool's name (`mcp__SERVER__TOOL`)."""
    arguments: Mapping[str, Any]
    """The arguments it will be called with."""
    read_only: bool = False
    """The server marks the tool read-only."""
    parts: tuple[PartVerdict, ...] = ()
    """The policy's verdict on the tool, filled in before a person is asked."""
    ask_even_if_allowed: bool = False
    """Asked even where a rule or yolo would allow it (web_fetch of a host on this machine or a
    private network); the reason then says why."""

    @property
    def shown_arguments(self) -> str:
        """The arguments as indented JSON, as the user reads them."""
        return json.dumps(self.arguments, indent=2, ensure_ascii=False)

    @property
    def summary(self) -> str:
        return f"{self.tool} {json.dumps(self.arguments, ensure_ascii=False)}"


@dataclass(frozen=True, kw_only=True)
class FileChangeApproval(ApprovalBase):
    """A change to one file, shown as a diff; the user may edit the new content before it is kept."""

    path: str
    """The file, relative to the project."""
    diff: str = ""
    """The change as a unified diff (all added for a new file; none when it cannot be shown)."""
    content: str = ""
    """The new content, which the user may edit."""


@dataclass(frozen=True, kw_only=True)
class WriteApproval(FileChangeApproval):
    """A write by the model while writes are gated (`writes = "ask"`)."""

    @property
    def summary(self) -> str:
        return f"write {self.path}"


@dataclass(frozen=True, kw_only=True)
class PlantedFileApproval(FileChangeApproval):
    """A file that makes tools run code (`.envrc`, a git hook): the model's write of one, or one a
    command created or changed, kept or put back. Asked in every mode but yolo, refused in plan."""

    after_command: bool = False
    """A command made the change: the question is whether to keep it."""
    ask_even_if_allowed: bool = False
    """Asked in yolo too: a write into mzagent's own installation would run unconfined at the
    next start."""

    @property
    def summary(self) -> str:
        return f"{'keep' if self.after_command else 'write'} {self.path}"


@dataclass(frozen=True, kw_only=True)
class GitEntryApproval(FileChangeApproval):
    """A `.git` entry a command made or replaced (a repository git would then use), kept or
    removed. Asked in yolo too, refused in plan. It has no diff: the reason says what it holds."""

    @property
    def summary(self) -> str:
        return f"keep {self.path}"


@dataclass(frozen=True, kw_only=True)
class SecretReadApproval(ApprovalBase):
    """Showing the model something that may hold secrets: a file such as `.env`, or a file or a
    command's output that looks like it holds a credential."""

    what: str
    """What is shown ("read .env", "show the output of: env")."""
    ask_even_if_allowed: bool = False
    """Asked in yolo mode too: a home entry the sandbox keeps from commands."""

    @property
    def summary(self) -> str:
        return self.what


ApprovalRequest: TypeAlias = (
    CommandApproval | ToolCallApproval | WriteApproval | PlantedFileApproval | GitEntryApproval | SecretReadApproval
)
"""Every kind of question: what an `Approver` is asked and a front-end matches on."""
