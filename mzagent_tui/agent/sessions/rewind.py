"""Rewind and fork: the project's files and the conversation back to the end of an earlier task.

The files go back through undo (sessions/undo.py): every write of the agent after that task —
its `write_to_file`s and what its commands changed, both recorded with the content from before —
newest first, with undo's checks. A file the user changed since is never overwritten unasked:
the rewind stops before touching anything and names those files (`conflicts`); the front-end
asks and tries again with `overwrite`. The conversation is cut by a `Rewound` event appended to
the log: reading the log back (history.load_session) drops the messages and events of the tasks
taken back, so the next task and `--continue` go on from there, and the log keeps everything.
A fork copies the log into a new session and rewinds the copy: the original stays whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mzagent_tui.agent.events import Rewound, Undone
from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.safety.textsafe import for_display
from mzagent_tui.agent.sessions.history import SessionHistory, TaskStart, load_session
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.sessions.undo import After, UndoRefused, project_of, undo, user_changes, writes_of

RewindMode = Literal["all", "conversation", "files"]
MODES: dict[RewindMode, str] = {
    "all": "files and conversation",
    "conversation": "conversation only (the files stay as they are)",
    "files": "files only (the conversation goes on, and the model is told)",
}
"""What a rewind takes back, as the choice is offered (the first is the default)."""


@dataclass(frozen=True)
class RewindOutcome:
    folder: Path
    """The session rewound: the original, or the new one a fork made."""
    done: list[Undone] = field(default_factory=list)
    """The file changes taken back."""
    conflicts: list[str] = field(default_factory=list)
    """Files the user changed since: nothing was done; ask, then rewind again with `overwrite`."""
    refused: str | None = None
    """Why the rewind stopped or was refused (`done` says what happened before)."""
    rewound: Rewound | None = None
    """The conversation's cut, when it was cut."""


def task_label(task: TaskStart) -> str:
    """`task 2: make app.py` — one point in a list to rewind to (the task is untrusted text)."""
    first = task.text.strip().splitlines()[0] if task.text.strip() else "(empty task)"
    return f"task {task.number}: {for_display(first)[:80]}"


def check_point(history: SessionHistory, to: int) -> None:
    """`to` must keep fewer tasks than the conversation has (0: before the first)."""
    count = len(history.tasks)
    if not count:
        raise UndoRefused(f"session {history.id} has no task to rewind")
    if not 0 <= to < count:
        raise UndoRefused(f"session {history.id} has {count} task{'s' if count != 1 else ''}: rewind to 0 (before the first) up to {count - 1}, not {to}")


def conflicts(history: SessionHistory, to: int, mode: RewindMode) -> list[str]:
    """The files a rewind of the files would take back although the user changed them since."""
    if mode == "conversation":
        return []
    writes = writes_of(history.events)
    chosen = [w for w in writes if w.run > to and not w.undone]
    return [reason for reason, _ in user_changes(writes, chosen)]


def rewind_session(
    folder: Path, to: int, mode: RewindMode, redact: Redactor, session: Session | None = None, overwrite: bool = False
) -> RewindOutcome:
    """Rewind a logged session to the end of task `to`. `session` is the open session of a live
    conversation (its log gets the records); otherwise the log is reopened and closed again."""
    own = session is None
    session = Session.reopen(folder, redact) if session is None else session
    try:
        return _rewind(session, load_session(folder), to, mode, overwrite)
    finally:
        if own:
            session.close()


def fork_session(folder: Path, to: int, mode: RewindMode, redact: Redactor, overwrite: bool = False) -> RewindOutcome:
    """A new session whose conversation is this one's up to the end of task `to` (and the files,
    unless `mode` is conversation only); the original's log is not touched. The checks come
    first, so a refused or asking fork leaves no session behind."""
    if mode == "files":
        return RewindOutcome(folder, refused="a fork is a new conversation: choose files and conversation, or conversation only")
    history = load_session(folder)
    try:
        check_point(history, to)
        project_of(history)
    except UndoRefused as exc:
        return RewindOutcome(folder, refused=str(exc))
    if not overwrite and (changed := conflicts(history, to, mode)):
        return RewindOutcome(folder, conflicts=changed)
    session = Session.fork(folder, redact)
    try:
        return _rewind(session, load_session(session.folder), to, mode, overwrite)
    finally:
        session.close()


def _rewind(session: Session, history: SessionHistory, to: int, mode: RewindMode, overwrite: bool) -> RewindOutcome:
    folder = session.folder
    try:
        check_point(history, to)
        root = project_of(history)
    except UndoRefused as exc:
        return RewindOutcome(folder, refused=str(exc))
    done: list[Undone] = []
    if mode != "conversation" and any(w.run > to and not w.undone for w in writes_of(history.events)):
        if not overwrite and (changed := conflicts(history, to, mode)):
            return RewindOutcome(folder, conflicts=changed)
        try:
            done = undo(session, history.events, After(to), root, overwrite)
        except UndoRefused as exc:
            return RewindOutcome(folder, exc.done, refused=f"{exc}; the conversation was not rewound")
    if mode == "files":
        return RewindOutcome(folder, done)
    rewound = Rewound(to, len(history.tasks) - to, files=mode == "all")
    session.record_event(rewound)
    return RewindOutcome(folder, done, rewound=rewound)
