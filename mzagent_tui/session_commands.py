"""`mzagent sessions`, `mzagent export` and `mzagent undo`: past sessions from a plain terminal.

They read and append to the session logs directly; no model, no Textual.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from mzagent_tui.agent.export import to_markdown
from mzagent_tui.agent.history import SessionHistory, find_session, list_sessions
from mzagent_tui.agent.secrets import Redactor, secret_values
from mzagent_tui.agent.session import Session
from mzagent_tui.agent.textsafe import for_display
from mzagent_tui.agent.undo import Scope, UndoRefused, describe, undo, write_label, writes_of

EXIT_OK, EXIT_REFUSED = 0, 1


def redactor(environ: Mapping[str, str], api_key: str) -> Redactor:
    return Redactor(secret_values(environ, [api_key]))


def session_line(history: SessionHistory) -> str:
    """`20261130-172100-ab12  2026-11-30 17:21  12 steps  final answer  Fix the tests`."""
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(history.started)) if history.started else "?"
    task = for_display(history.first_task.splitlines()[0] if history.first_task else "(no task)")[:60]
    return f"{history.id}  {started}  {history.steps:>3} steps  {history.final_state:<13}  {task}"


def show_sessions(project: Path, out: TextIO = sys.stdout) -> int:
    sessions = list_sessions(project)
    if not sessions:
        out.write(f"no sessions yet for {project.resolve()}\n")
    for history in sessions:
        out.write(session_line(history) + "\n")
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
    try:
        done = undo(session, history.events, scope)
    except UndoRefused as exc:
        out.write(f"not undone: {exc}\n")
        return EXIT_REFUSED
    finally:
        session.close()
    root = project.resolve()
    for event in done:
        out.write(describe(event, root) + "\n")
    return EXIT_OK
