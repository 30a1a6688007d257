"""`mzagent sessions`, `mzagent export` and `mzagent undo`: past sessions from a plain terminal.

They read and append to the session logs directly; no model, no Textual.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from mzagent_tui.agent.export import to_markdown
from mzagent_tui.agent.history import find_session, list_sessions
from mzagent_tui.agent.secrets import Redactor
from mzagent_tui.agent.session import Session
from mzagent_tui.agent.undo import Scope, UndoRefused, undo, write_label, writes_of

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
    text = to_markdown(find_session(project, which), redact)
    if output is None:
        out.write(text)
        return EXIT_OK
    with output.open("x", encoding="utf-8") as handle:
        handle.write(text)
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
    history = find_session(project, which)
    session = Session.reopen(history.folder, redact)
    root = project.resolve()
    try:
        done = undo(session, history.events, scope)
    except UndoRefused as exc:
        for event in exc.done:
            out.write(event.describe(root) + "\n")
        out.write(f"not undone: {exc}\n")
        return EXIT_REFUSED
    finally:
        session.close()
    for event in done:
        out.write(event.describe(root) + "\n")
    return EXIT_OK
