"""Reading session logs back: the list of a project's sessions and one session to resume.

The log is append-only JSON lines. A crash can cut the last line short, so every line is
parsed on its own and bad lines are counted and skipped. A run that has a `task_started` but
no `stopped` was interrupted; resuming never re-runs its tools, it only tells the model.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mzagent_tui.agent.events import Event, FileChanged, Rewound, StepStarted, Stopped, TaskStarted, Undone, UserCommand, event_from_dict
from mzagent_tui.agent.safety.textsafe import for_display
from mzagent_tui.agent.sessions.session import project_slug, sessions_root

INTERRUPTED_AFTER_REPLY = (
    "<observation>[The session was interrupted here, before this step finished. If your last reply "
    "asked for an action, it may or may not have run: check the current state before repeating it.]</observation>"
)
INTERRUPTED_BEFORE_REPLY = "[no reply: the session was interrupted]"


class SessionNotFound(LookupError):
    """No session matches what the user asked for (message says what exists)."""


@dataclass(frozen=True)
class TaskStart:
    """Where a task (or a `!command` of the user's) began: what a rewind goes back to."""

    number: int
    """1 for the conversation's first task."""
    text: str
    """The task as typed, or `!command`."""
    messages: tuple[dict[str, Any], ...]
    """The conversation as the previous task left it (before this task's messages)."""
    events: int
    """How many events came before this task's first."""


@dataclass
class SessionHistory:
    """Everything a front-end needs to show a past session and the agent needs to continue it."""

    folder: Path
    started: float = 0.0
    last_active: float = 0.0
    """Time of the latest record: `--continue` picks the session used most recently."""
    project: str = ""
    events: list[Event] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    tasks: list[TaskStart] = field(default_factory=list)
    """The conversation's tasks as it stands (a rewind drops those it took back)."""
    bad_lines: int = 0

    @property
    def id(self) -> str:
        return self.folder.name

    @property
    def first_task(self) -> str:
        """The first task, or the first `!command` of a session that began with one."""
        for event in self.events:
            if isinstance(event, TaskStarted):
                return event.task
            if isinstance(event, UserCommand):
                return f"!{event.command}"
        return ""

    @property
    def steps(self) -> int:
        return sum(isinstance(e, StepStarted) for e in self.events)

    @property
    def interrupted(self) -> bool:
        """A run started and never reported its end (the process died mid-run)."""
        for event in reversed(self.events):
            if isinstance(event, Stopped):
                return False
            if isinstance(event, TaskStarted):
                return True
        return False

    @property
    def final_state(self) -> str:
        if self.interrupted:
            return "interrupted"
        stop = next((e for e in reversed(self.events) if isinstance(e, Stopped)), None)
        return stop.reason.value.replace("_", " ") if stop else "no task"

    def summary_line(self) -> str:
        """`20261130-172100-ab12  2026-11-30 17:21   12 steps  final answer   Fix the tests`."""
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.started)) if self.started else "?"
        task = for_display(self.first_task.splitlines()[0] if self.first_task else "(no task)")[:60]
        return f"{self.id}  {started}  {self.steps:>3} steps  {self.final_state:<13}  {task}"

    def untold_undos(self) -> list[Undone]:
        """Undos done since the last task started: the model has not been told about them yet."""
        told = max((i for i, e in enumerate(self.events) if isinstance(e, TaskStarted)), default=-1)
        return [e for e in self.events[told + 1 :] if isinstance(e, Undone)]

    def repairs(self) -> list[dict[str, Any]]:
        """Messages that make an interrupted conversation valid again, without re-running anything.

        After the model's reply the step's result is unknown, so the model is told to check;
        after a question or an observation the missing reply is marked as such.
        """
        if not self.interrupted or not self.messages:
            return []
        last = self.messages[-1]
        if last["role"] == "assistant" and last.get("tool_calls"):
            return [{"role": "tool", "tool_call_id": last["tool_calls"][0]["id"], "content": INTERRUPTED_AFTER_REPLY}]
        if last["role"] == "assistant":
            return [{"role": "user", "content": INTERRUPTED_AFTER_REPLY}]
        return [{"role": "assistant", "content": INTERRUPTED_BEFORE_REPLY}]


def read_records(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Every whole JSON record of a log, and how many lines were unreadable (a cut last line)."""
    records: list[dict[str, Any]] = []
    bad = 0
    with path.open("rb") as handle:
        for raw in handle:
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):
                bad += 1
                continue
            if isinstance(record, dict):
                records.append(record)
            else:
                bad += 1
    return records, bad


def load_session(folder: Path) -> SessionHistory:
    """Read one session folder; raise SessionNotFound when it has no log."""
    log = folder / "log.jsonl"
    if not log.is_file():
        raise SessionNotFound(f"{folder} is not a session (it has no log.jsonl)")
    records, bad = read_records(log)
    history = SessionHistory(folder=folder, bad_lines=bad)
    settled: tuple[dict[str, Any], ...] = ()
    """The conversation as the last task (or a resume) left it: where the next task's messages start."""
    for record in records:
        kind = record.get("type")
        stamp = record.get("t")
        if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
            history.last_active = max(history.last_active, float(stamp))
        if kind == "session" and isinstance(stamp, (int, float)) and isinstance(record.get("project"), str):
            history.started = float(stamp)
            history.project = record["project"]
        elif kind == "message" and (message := _message(record)) is not None:
            if message["role"] == "system" and history.messages and history.messages[0]["role"] == "system":
                history.messages[0] = message  # a resumed session renews the prompt (files, tools)
            else:
                history.messages.append(message)
        elif kind == "compacted" and isinstance(record.get("messages"), list):
            history.messages = [m for m in map(_message, record["messages"]) if m is not None]
        elif kind == "forked" and isinstance(stamp, (int, float)):
            history.started = float(stamp)  # a fork is listed as the session it became
        elif kind == "resumed":
            settled = tuple(history.messages)
        elif kind == "event" and isinstance(record.get("event"), dict):
            event = event_from_dict(record["event"])
            if isinstance(event, Rewound):
                _cut(history, event)
                settled = tuple(history.messages)
            elif event is not None:
                if isinstance(event, (TaskStarted, UserCommand)):
                    text = event.task if isinstance(event, TaskStarted) else f"!{event.command}"
                    history.tasks.append(TaskStart(len(history.tasks) + 1, text, settled, len(history.events)))
                history.events.append(event)
                if isinstance(event, Stopped):
                    settled = tuple(history.messages)
    return history


def _cut(history: SessionHistory, rewound: Rewound) -> None:
    """Take the conversation back to the end of task `rewound.to`: its messages and events as
    they were when the next task began; the rewind itself stays in the events, for the transcript.

    An undo made later of a write that stays (numbered among the writes kept) stays too: the file
    is still undone, and the model, which no longer sees the task it was told in, is told again."""
    if 0 <= rewound.to < len(history.tasks):
        start = history.tasks[rewound.to]
        kept = history.events[: start.events]
        writes = sum(isinstance(event, FileChanged) for event in kept)
        undos = [e for e in history.events[start.events :] if isinstance(e, Undone) and e.write <= writes]
        history.events = [*kept, *undos]
        history.messages = list(start.messages)
        del history.tasks[rewound.to :]
    history.events.append(rewound)


def _message(record: object) -> dict[str, Any] | None:
    """A chat message from a log record (a `message` record, or one of a `compacted` record's
    list), or None if damaged. A native tool call and its result keep their ids."""
    if not isinstance(record, dict) or not isinstance(record.get("content"), str):
        return None
    role = record.get("role")
    if role in ("system", "user") or (role == "assistant" and "tool_calls" not in record):
        return {"role": role, "content": record["content"]}
    if role == "tool" and isinstance(record.get("tool_call_id"), str):
        return {"role": role, "tool_call_id": record["tool_call_id"], "content": record["content"]}
    calls = record.get("tool_calls")
    if role == "assistant" and isinstance(calls, list) and calls and all(_is_call(call) for call in calls):
        return {"role": role, "content": record["content"], "tool_calls": calls}
    return None


def _is_call(call: object) -> bool:
    if not isinstance(call, dict) or not isinstance(call.get("id"), str):
        return False
    function = call.get("function")
    return isinstance(function, dict) and isinstance(function.get("name"), str) and isinstance(function.get("arguments"), str)


def project_sessions_folder(project: Path) -> Path:
    return sessions_root() / project_slug(project.resolve())


def list_sessions(project: Path) -> list[SessionHistory]:
    """The project's sessions, the most recently used first."""
    folder = project_sessions_folder(project)
    if not folder.is_dir():
        return []
    found = [load_session(child) for child in folder.iterdir() if (child / "log.jsonl").is_file()]
    found.sort(key=lambda s: (s.last_active, s.id), reverse=True)
    return found


def find_session(project: Path, which: str) -> SessionHistory:
    """A session by "last", a folder path, an id or a unique prefix of an id."""
    candidate = Path(which).expanduser()
    if which not in ("", "last") and (candidate / "log.jsonl").is_file():
        return load_session(candidate)
    if candidate.name == "log.jsonl" and candidate.is_file():
        return load_session(candidate.parent)
    sessions = list_sessions(project)
    if not sessions:
        raise SessionNotFound(f"no sessions yet for {project.resolve()}")
    if which in ("", "last"):
        return sessions[0]
    matches = [s for s in sessions if s.id.startswith(which)]
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(s.id for s in sessions[:5])
    problem = "matches several sessions" if matches else "matches no session"
    raise SessionNotFound(f"'{which}' {problem} of {project.resolve()} (newest: {known})")
