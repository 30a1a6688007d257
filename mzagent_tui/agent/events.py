"""Typed events: everything the core reports to a front-end.

The loop calls an `EventSink` (any callable taking an `Event`) from its worker thread. Front-ends
render events; the session log stores them. Events are plain frozen dataclasses so they can be
compared in tests and written as JSON (`to_dict`).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar

from mzagent_tui.agent.ground.diffs import binary_text


class StopReason(str, Enum):
    """Why a run ended."""

    FINAL_ANSWER = "final_answer"
    MAX_STEPS = "max_steps"
    STUCK = "stuck"
    FORMAT_ERRORS = "format_errors"
    ERROR = "error"
    CANCELLED = "cancelled"
    MAX_COST = "max_cost"
    USER_COMMAND = "user_command"
    """A `!command` the user typed ran; no model was asked."""


@dataclass(frozen=True)
class Event:
    """Base class; `kind` names the event in JSON output and the session log."""

    kind: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        data = {"type": self.kind}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            data[item.name] = value.value if isinstance(value, Enum) else value
        return data


@dataclass(frozen=True)
class TaskStarted(Event):
    kind: ClassVar[str] = "task_started"
    task: str
    follow_up: bool = False


@dataclass(frozen=True)
class StepStarted(Event):
    kind: ClassVar[str] = "step_started"
    step: int
    max_steps: int


@dataclass(frozen=True)
class ThinkingDelta(Event):
    """Reasoning text from a separate `reasoning_content` field: shown, never parsed."""

    kind: ClassVar[str] = "thinking_delta"
    text: str


@dataclass(frozen=True)
class TextDelta(Event):
    kind: ClassVar[str] = "text_delta"
    text: str


@dataclass(frozen=True)
class ReplyFinished(Event):
    """The whole reply text of one step; `incomplete` marks a cut or stalled stream."""

    kind: ClassVar[str] = "reply_finished"
    text: str
    finish_reason: str | None
    incomplete: bool = False


@dataclass(frozen=True)
class Thought(Event):
    kind: ClassVar[str] = "thought"
    text: str


@dataclass(frozen=True)
class Action(Event):
    kind: ClassVar[str] = "action"
    tool: str
    args: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class ToolStarted(Event):
    """The loop hands the call of the last `Action` to its tool: from here it runs (a question
    it asks comes while it runs). Front-ends that show a call's status say `in_progress`."""

    kind: ClassVar[str] = "tool_started"
    tool: str


@dataclass(frozen=True)
class ApprovalAsked(Event):
    kind: ClassVar[str] = "approval_asked"
    command: str
    cwd: str
    reason: str


@dataclass(frozen=True)
class ApprovalAnswered(Event):
    kind: ClassVar[str] = "approval_answered"
    approved: bool
    command: str
    note: str = ""
    confinement: str = ""
    """How the command runs: workspace, workspace+network, off, unavailable (see agent.sandbox)."""

    def rejection(self) -> str:
        """What a rejection says: the user's reason, or plainly that nothing ran."""
        return self.note or "the command was not run"


@dataclass(frozen=True)
class Observation(Event):
    kind: ClassVar[str] = "observation"
    tool: str
    text: str
    ok: bool = True
    exit_code: int | None = None
    output_path: str | None = None


@dataclass(frozen=True)
class FileChanged(Event):
    """The agent changed a file, by `write_to_file` or by a command it ran; `backup` holds the
    previous content (None if created).

    `sha256` is the digest of the bytes left in the file: undo compares it with the file on
    disk so it never discards an edit the user made afterwards. `deleted`: a command removed
    the file (no digest then). `old_mode`: the permission bits before, which undo restores;
    `mode_only`: a command changed only the permissions (`chmod`), no content was saved.
    `diff`: the change as a unified diff ("" for a binary or huge file), with its line counts.
    `binary_size`: the file is binary (ground.diffs.is_binary), so it has no diff: its size in
    bytes after the change (before it, when deleted).
    """

    kind: ClassVar[str] = "file_changed"
    path: str
    created: bool
    backup: str | None = None
    sha256: str | None = None
    deleted: bool = False
    old_mode: int | None = None
    mode_only: bool = False
    diff: str = ""
    added: int = 0
    removed: int = 0
    binary_size: int | None = None

    @property
    def verb(self) -> str:
        return "deleted" if self.deleted else "created" if self.created else "changed"

    def summary(self, root: Path) -> str:
        """`changed src/a.py (+12 −3)`, `changed a.pyc (binary file changed, 1234 bytes)`: one
        line for the transcript title, the export and the terminal."""
        shown = shown_path(Path(self.path), root)
        if self.mode_only:
            return f"changed the permissions of {shown}"
        if self.binary_size is not None:
            return f"{self.verb} {shown} ({binary_text(self.verb, self.binary_size)})"
        counts = f" (+{self.added} −{self.removed})" if self.diff else ""
        return f"{self.verb} {shown}{counts}"


@dataclass(frozen=True)
class Compacted(Event):
    """The older steps of the conversation were replaced by the model's summary of them
    (`replaced` messages); the session log keeps the originals."""

    kind: ClassVar[str] = "compacted"
    summary: str
    replaced: int

    def title(self) -> str:
        return f"context compacted: {self.replaced} earlier messages replaced by a summary (the log keeps them)"


@dataclass(frozen=True)
class Undone(Event):
    """A write of the agent was taken back: `removed` for a created file, else restored."""

    kind: ClassVar[str] = "undone"
    path: str
    write: int
    removed: bool

    def describe(self, root: Path) -> str:
        """One line for the transcript, the export, the headless output and the model's note."""
        shown = shown_path(Path(self.path), root)
        if self.removed:
            return f"undid write {self.write}: removed {shown}, which the agent had created"
        return f"undid write {self.write}: restored {shown} to its content before the agent changed it"


@dataclass(frozen=True)
class Rewound(Event):
    """The conversation was taken back to the end of task `to` (0: before the first task); the
    log keeps everything, and reading it back cuts the conversation and the transcript here."""

    kind: ClassVar[str] = "rewound"
    to: int
    taken_back: int
    """How many tasks the conversation lost."""
    files: bool
    """The files went back too (the `Undone` events before this one)."""

    def describe(self) -> str:
        tasks = f"{self.taken_back} task{'s' if self.taken_back != 1 else ''}"
        point = "before the first task" if self.to == 0 else f"the end of task {self.to}"
        what = "files and conversation" if self.files else "conversation only"
        return f"rewound to {point} ({what}): the model sees none of the {tasks} taken back"


@dataclass(frozen=True)
class UserCommand(Event):
    """The user typed `!command`: it runs without a dialog (they typed it), sandboxed and
    recorded for undo like the model's commands."""

    kind: ClassVar[str] = "user_command"
    command: str


@dataclass(frozen=True)
class UserCommandOutput(Event):
    """How the user's command ended: `text` is what the model is told with the next task, cut
    the way observations are; `exit_code` is None after a timeout or a cancel."""

    kind: ClassVar[str] = "user_command_output"
    command: str
    text: str
    exit_code: int | None = None
    output_path: str | None = None


@dataclass(frozen=True)
class BackgroundStarted(Event):
    """A command started in the background (by the model, or the user's `!&command`): it runs
    on, gated and confined like any command, until it ends, is stopped, or the session ends."""

    kind: ClassVar[str] = "background_started"
    id: str
    command: str
    output_path: str
    by_user: bool = False


@dataclass(frozen=True)
class BackgroundOutput(Event):
    """New output of a background command, at most every half second and a few kilobytes at a
    time (the whole, up to its cap, is in its output file)."""

    kind: ClassVar[str] = "background_output"
    id: str
    text: str


@dataclass(frozen=True)
class BackgroundEnded(Event):
    """A background command ended: by itself (`exit_code`), or stopped (by the model, the user,
    or the session's end: `exit_code` is None then)."""

    kind: ClassVar[str] = "background_ended"
    id: str
    command: str
    exit_code: int | None = None
    stopped: bool = False
    failed: str = ""
    """Why it could not start ("": it started and ended or was stopped)."""

    def describe(self) -> str:
        how = f"could not start: {self.failed}" if self.failed else ("stopped" if self.stopped else f"ended (exit code {self.exit_code})")
        return f"{self.id} `{self.command}` {how}"


@dataclass(frozen=True)
class HookOutcome(Event):
    """A hook from the user config ran: `status` is ok, blocked (exit 2 before a tool), failed
    (another non-zero exit, or it could not start) or timed_out. Only the ones not ok are shown."""

    kind: ClassVar[str] = "hook"
    hook_event: str
    command: str
    status: str
    tool: str = ""
    exit_code: int | None = None
    stderr: str = ""


def call_text(tool: str, args: list[object]) -> str:
    """A tool call as one line, `tool('a', 3)`, each argument cut to 200 characters."""
    return f"{tool}({', '.join(repr(a)[:200] for a in args)})"


def shown_path(path: Path, root: Path) -> str:
    """A path as the user thinks of it: relative to the project when it is inside."""
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


TASK_STATUSES = ("pending", "in_progress", "done")
"""A task-list step's status, in the order a step goes through them."""


@dataclass(frozen=True)
class TaskListUpdated(Event):
    """The agent's task list as `update_plan` left it, replaced whole on each call: every step
    as `{"step": text, "status": one of TASK_STATUSES}`, at most one in progress. Empty: no list."""

    kind: ClassVar[str] = "task_list"
    steps: list[dict[str, str]] = field(default_factory=list)

    def counts(self) -> str:
        """`1 done, 1 in progress, 2 pending`: the statuses that occur, the finished first."""
        found = [(sum(step.get("status") == status for step in self.steps), status) for status in reversed(TASK_STATUSES)]
        return ", ".join(f"{number} {status.replace('_', ' ')}" for number, status in found if number)


@dataclass(frozen=True)
class FinalAnswer(Event):
    kind: ClassVar[str] = "final_answer"
    text: str
    plan: bool = False
    """The answer of a run in plan mode: a plan for the user to run, keep working on or drop."""


@dataclass(frozen=True)
class FormatError(Event):
    kind: ClassVar[str] = "format_error"
    message: str
    count: int
    limit: int = 3
    """Settings.max_format_errors: the count at which the run stops."""


@dataclass(frozen=True)
class RetryWait(Event):
    kind: ClassVar[str] = "retry_wait"
    seconds: float
    attempt: int
    max_attempts: int
    reason: str


@dataclass(frozen=True)
class Usage(Event):
    kind: ClassVar[str] = "usage"
    prompt_tokens: int
    completion_tokens: int
    estimated: bool = False


@dataclass(frozen=True)
class ModelInfo(Event):
    """What the endpoint told about the model (its context window), found at the first task."""

    kind: ClassVar[str] = "model_info"
    context_window: int


@dataclass(frozen=True)
class Notice(Event):
    """A system notice for the user (fallbacks, ignored text, context shrinking)."""

    kind: ClassVar[str] = "notice"
    text: str


@dataclass(frozen=True)
class AidFired(Event):
    """An aid acted (see aids/seam.py): a note added, an answer sent back, a reply asked again.
    Logged and in `--json`, so a benchmark can count what each aid did."""

    kind: ClassVar[str] = "aid"
    name: str
    point: str


@dataclass(frozen=True)
class Error(Event):
    kind: ClassVar[str] = "error"
    message: str


@dataclass(frozen=True)
class Stopped(Event):
    kind: ClassVar[str] = "stopped"
    reason: StopReason
    message: str
    steps: int = 0


EventSink = Callable[[Event], None]


_KINDS: dict[str, type[Event]] = {cls.kind: cls for cls in Event.__subclasses__()}


@functools.cache
def field_types(cls: type[Event]) -> dict[str, Any]:
    """An event's field types, resolved once per class on first use (not at start-up)."""
    return {name: hint for name, hint in typing.get_type_hints(cls).items() if name != "kind"}


def _accepts(hint: Any, value: Any) -> bool:
    """Whether a JSON value fits a field's type (str, int, float, bool, list[X], dict[K, V], X | None,
    StopReason), items included: a damaged log's task list must not reach the screen half read."""
    if hint is Any:
        return True
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_accepts(option, value) for option in typing.get_args(hint))
    if hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(_accepts(item, v) for v in value)
    if origin is dict:
        key, item = typing.get_args(hint) or (Any, Any)
        return isinstance(value, dict) and all(_accepts(key, k) and _accepts(item, v) for k, v in value.items())
    if origin is not None:
        return isinstance(value, origin)
    if hint in (int, float):
        return isinstance(value, (int, float) if hint is float else int) and not isinstance(value, bool)
    return isinstance(value, hint)


def event_from_dict(data: dict[str, Any]) -> Event | None:
    """Rebuild an event written by `to_dict` (the session log); None for an unknown or bad record.

    Unknown fields are ignored and missing ones take their defaults where they have one, so
    logs written by older or newer versions still load; a value of the wrong type (a damaged
    or hand-edited log) rejects the record instead of reaching the screen.
    """
    cls = _KINDS.get(data.get("type", ""))
    if cls is None:
        return None
    hints = field_types(cls)  # type: ignore[arg-type]  # a class is hashable; mypy checks the instances' __hash__ instead
    values = {k: v for k, v in data.items() if k in hints}
    if cls is Stopped and "reason" in values:
        try:
            values["reason"] = StopReason(values["reason"])
        except (ValueError, TypeError):
            values["reason"] = StopReason.ERROR
    if not all(_accepts(hints[name], value) for name, value in values.items()):
        return None
    try:
        return cls(**values)
    except TypeError:
        return None
