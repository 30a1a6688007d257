"""`mzagent sessions`, `export`, `undo` and `rewind`: past sessions from a plain terminal.

They read and append to the session logs directly; no model, no Textual.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.sessions.export import export_to_file, to_markdown
from mzagent_tui.agent.sessions.history import find_session, list_sessions
from mzagent_tui.agent.sessions.rewind import RewindMode, RewindOutcome, fork_session, rewind_session, task_label
from mzagent_tui.agent.sessions.undo import Scope, undo_session, write_label, writes_of

EXIT_OK, EXIT_REFUSED = 0, 1


def show_sessions(project: Path, out: TextIO = sys.stdout) -> int:
    sessions = list_sessions(project)
    if not sessions:
        out.write(f"no sessions yet for {project.resolve()}\n")
    for history in sessions:
        out.write(history.summary_line() + "\n")
    return EXIT_OK


def export_session(project: Path, which: str, redact: Redactor, output: Path | None, out: TextIO = sys.stdout) -> int:
    """Write the session as Markdown to `output`, or to `out`; an existing file is not overwritten."""
    history = find_session(project, which)
    if output is None:
        out.write(to_markdown(history, redact))
        return EXIT_OK
    export_to_file(history, redact, output)
    print(f"wrote {output}", file=sys.stderr)
    return EXIT_OK


def list_writes(project: Path, which: str, out: TextIO = sys.stdout) -> int:
    history = find_session(project, which)
    writes = writes_of(history.events)
    if not writes:
        out.write(f"the agent wrote no files in session {history.id}\n")
    for write in writes:
        out.write(write_label(write, project.resolve()) + "\n")
    return EXIT_OK


def undo_writes(project: Path, which: str, scope: Scope, redact: Redactor, out: TextIO = sys.stdout) -> int:
    outcome = undo_session(find_session(project, which).folder, scope, redact)
    for event in outcome.done:
        out.write(event.describe(project.resolve()) + "\n")
    if outcome.refused is not None:
        out.write(f"not undone: {outcome.refused}\n")
        return EXIT_REFUSED
    return EXIT_OK


def list_tasks(project: Path, which: str, out: TextIO = sys.stdout) -> int:
    history = find_session(project, which)
    if not history.tasks:
        out.write(f"session {history.id} has no task yet\n")
    for task in history.tasks:
        out.write(task_label(task) + "\n")
    return EXIT_OK


def rewind(
    project: Path, which: str, to: int | None, mode: RewindMode, fork: bool, redact: Redactor,
    ask: Callable[[list[str]], bool], out: TextIO = sys.stdout,
) -> int:
    """Rewind (or fork) the session to the end of task `to` (default: all but the last task);
    files the user changed since are overwritten only if `ask` says yes."""
    history = find_session(project, which)
    point = len(history.tasks) - 1 if to is None else to
    act = fork_session if fork else rewind_session
    outcome = act(history.folder, point, mode, redact)
    if outcome.conflicts:
        if not ask(outcome.conflicts):
            out.write("not rewound: nothing was changed\n")
            return EXIT_REFUSED
        outcome = act(history.folder, point, mode, redact, overwrite=True)
    return _report(project, outcome, fork, out)


def _report(project: Path, outcome: RewindOutcome, fork: bool, out: TextIO) -> int:
    for event in outcome.done:
        out.write(event.describe(project.resolve()) + "\n")
    if outcome.refused is not None:
        out.write(f"not rewound: {outcome.refused}\n")
        return EXIT_REFUSED
    if outcome.rewound is not None:
        out.write(outcome.rewound.describe() + "\n")
    elif not outcome.done:
        out.write("no file to take back: the agent wrote nothing after that task\n")
    if fork:
        out.write(f"forked into session {outcome.folder.name}; `mzagent run --continue` goes on from there, the original is unchanged\n")
    return EXIT_OK
