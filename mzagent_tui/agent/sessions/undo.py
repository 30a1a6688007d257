"""Taking back the agent's writes: the last step's, all of the last run, or back to write N.

Every `FileChanged` in the log is a write with a number, the step (action) and run it belongs
to, the digest of what was left in the file and (for an overwrite or a deletion) the saved
previous content. A `write_to_file` is one write; a command is one write per file it added,
changed or deleted. Undo first checks every file it would touch; if the user changed one since
the agent did, nothing is undone and the reason is given. Writes to the same file are taken
back newest first, so each step's check sees the content the step before it left.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mzagent_tui.agent.events import Action, Event, FileChanged, TaskStarted, Undone, UserCommand, shown_path
from mzagent_tui.agent.ground.beneath import makedirs_beneath, open_beneath, write_atomically_at
from mzagent_tui.agent.ground.errors import ToolError
from mzagent_tui.agent.ground.textfiles import UMASK, atomic_write
from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.sessions.history import SessionHistory, load_session
from mzagent_tui.agent.sessions.session import Session, project_slug


@dataclass(frozen=True)
class After:
    """Every write of the runs after run `run` (0: all of them): what a rewind takes back."""

    run: int


Scope = Literal["last", "run"] | int | After
"""The last step's writes, the last run's writes, a write number (that write and every later
one), or the writes after a run."""


class UndoRefused(Exception):
    """Undo would lose work or cannot be done; the message says which file and why.

    `done` holds what was undone before a file-system error stopped it (empty when the checks
    refused before anything was touched).
    """

    def __init__(self, message: str, done: list[Undone] | None = None) -> None:
        super().__init__(message)
        self.done = done or []


@dataclass(frozen=True)
class Write:
    number: int
    """1 for the session's first write, in log order."""
    run: int
    step: int
    """Counts the session's actions: the files one command changed share it."""
    path: Path
    created: bool
    deleted: bool
    backup: Path | None
    sha256: str | None
    undone: bool
    old_mode: int | None = None
    """The permission bits to restore (None: not recorded, as in logs before they were)."""
    mode_only: bool = False


def writes_of(events: Iterable[Event]) -> list[Write]:
    """The session's writes in order, each marked if a later `Undone` took it back."""
    writes: list[Write] = []
    undone: set[int] = set()
    run = step = 0
    for event in events:
        if isinstance(event, TaskStarted):
            run += 1
        elif isinstance(event, Action):
            step += 1
        elif isinstance(event, UserCommand):  # the user's `!command` is a run of one step
            run, step = run + 1, step + 1
        elif isinstance(event, FileChanged):
            backup = Path(event.backup) if event.backup else None
            writes.append(Write(len(writes) + 1, run, step, Path(event.path), event.created, event.deleted, backup, event.sha256, False, event.old_mode, event.mode_only))
        elif isinstance(event, Undone):
            undone.add(event.write)
    return [dataclasses.replace(w, undone=w.number in undone) for w in writes]


def plan(writes: list[Write], scope: Scope, overwrite: bool = False) -> list[Write]:
    """The writes to take back, newest first; raise UndoRefused if any would lose work (unless
    `overwrite`: the user was asked and agreed that their changes to those files go)."""
    chosen = _chosen(writes, scope)
    if not overwrite and (changed := user_changes(writes, chosen)):
        reason, consequence = changed[0]
        raise UndoRefused(reason + consequence)
    for path in dict.fromkeys(w.path for w in chosen):
        _check_saved(path, chosen)
    return chosen


def _chosen(writes: list[Write], scope: Scope) -> list[Write]:
    pending = [w for w in writes if not w.undone]
    if not writes:
        raise UndoRefused("there is nothing to undo: the agent has not written any file in this session")
    if not pending:
        raise UndoRefused("there is nothing left to undo: every write of the agent in this session is already undone")
    if scope == "last":
        chosen = [w for w in pending if w.step == pending[-1].step]
    elif scope == "run":
        chosen = [w for w in pending if w.run == pending[-1].run]
    elif isinstance(scope, After):
        chosen = [w for w in pending if w.run > scope.run]
    else:
        if scope not in {w.number for w in pending}:
            raise UndoRefused(f"write {scope} is not one that can be undone (writes not undone yet: {', '.join(str(w.number) for w in pending)})")
        chosen = [w for w in pending if w.number >= scope]
    chosen.reverse()
    return chosen


def user_changes(writes: list[Write], chosen: list[Write]) -> list[tuple[str, str]]:
    """Each file among `chosen` that no longer holds what the agent's newest write to it left:
    (what happened, what undo would do to it, with its leading punctuation). Empty: taking them back loses nothing of the user's."""
    newest: dict[Path, Write] = {}
    for write in writes:
        if not write.undone:
            newest[write.path] = write
    found = (_user_change(newest[path]) for path in dict.fromkeys(w.path for w in chosen))
    return [change for change in found if change is not None]


def _user_change(write: Write) -> tuple[str, str] | None:
    """The file must still hold exactly what the newest write to it left (or still be gone)."""
    name = str(write.path)
    if write.deleted:
        if write.path.exists() or write.path.is_symlink():
            return f"{name} was created again after a command of the agent deleted it", "; undo would replace it, so nothing was undone"
    elif write.sha256 is None:
        return f"the log has no record of what was written to {write.path}", ", so undo cannot tell whether you changed it"
    elif not write.path.is_file():
        return f"{write.path} was deleted or moved after the agent wrote it", "; undo would not know what to restore"
    elif hashlib.sha256(write.path.read_bytes()).hexdigest() != write.sha256:
        return f"{name} was changed after the agent wrote it", "; undo would discard those changes, so nothing was undone"
    return None


def _check_saved(path: Path, chosen: list[Write]) -> None:
    """Every content to restore must still be in the session folder."""
    for earlier in chosen:
        if earlier.path == path and not earlier.created and not earlier.mode_only and (earlier.backup is None or not earlier.backup.is_file()):
            raise UndoRefused(f"the previous content of {path} was not found in the session folder ({earlier.backup})")


def undo(session: Session, events: Iterable[Event], scope: Scope, root: Path | None = None, overwrite: bool = False) -> list[Undone]:
    """Take back writes and log one `Undone` per file change (`overwrite`: also files the user
    changed since, once they agreed).

    The checks run before anything is touched; a file-system error part-way stops the undo and
    reports what was done (UndoRefused.done), so the log and the screen stay true. Given the
    project `root`, a write the log places outside it is refused: undo writes without a
    sandbox, so a log forged by anything that could write it must not choose where.
    """
    done: list[Undone] = []
    chosen = plan(writes_of(events), scope, overwrite)
    if root is not None:
        for write in chosen:
            if not os.path.realpath(write.path).startswith(os.path.realpath(root) + os.sep):
                raise UndoRefused(f"the session log names {write.path}, outside the project {root}; nothing was undone")
    for write in chosen:
        try:
            if root is not None:
                take_back_beneath(write, root)
            else:
                _take_back(write)
            event = Undone(str(write.path), write.number, removed=write.created)
            session.record_event(event)
        except ToolError as exc:
            raise UndoRefused(f"could not restore {write.path}: {exc}; {len(done)} write(s) before it were undone", done) from None
        except OSError as exc:
            raise UndoRefused(f"could not restore {write.path}: {exc.strerror or exc}; {len(done)} write(s) before it were undone", done) from None
        done.append(event)
    return done


def _take_back(write: Write) -> None:
    if write.created:
        write.path.unlink()
    elif not write.mode_only:
        assert write.backup is not None
        write.path.parent.mkdir(parents=True, exist_ok=True)  # a deleted file's folder may be gone too
        atomic_write(write.path, write.backup.read_bytes())
    if not write.created and write.old_mode is not None:
        write.path.chmod(write.old_mode)


def take_back_beneath(write: Write, root: Path) -> None:
    """As `_take_back`, but every step from a descriptor of the project's folder with no link
    followed (`ground.beneath`): the checks above ran before the first file was touched, and a
    process left running could swap a folder for a link to one outside in between."""
    real_root = Path(os.path.realpath(root))
    parent = os.path.relpath(os.path.realpath(write.path.parent), real_root)
    parent = "" if parent == "." else parent
    if parent == ".." or parent.startswith("../"):
        raise ToolError("undo.outside", folder=write.path.parent)
    name = write.path.name
    if write.created:
        folder = open_beneath(real_root, parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            with contextlib.suppress(FileNotFoundError):  # gone already (the user deleted it, and agreed to the rewind)
                os.unlink(name, dir_fd=folder)
        finally:
            os.close(folder)
        return
    folder = makedirs_beneath(real_root, parent)  # a deleted file's folder may be gone too
    try:
        if not write.mode_only:
            assert write.backup is not None
            try:
                mode = stat.S_IMODE(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
            except FileNotFoundError:
                mode = 0o666 & ~UMASK
            write_atomically_at(folder, real_root / parent, name, write.backup.read_bytes(), mode)
        if write.old_mode is not None:
            _chmod_at(folder, name, write.old_mode)
    finally:
        os.close(folder)


def _chmod_at(folder: int, name: str, mode: int) -> None:
    """chmod of `name` in `folder`, never through a link (a file without read permission too:
    Linux changes it through its O_PATH descriptor)."""
    if hasattr(os, "O_PATH") and os.path.isdir("/proc/self/fd"):
        handle = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
        try:
            if stat.S_ISLNK(os.fstat(handle).st_mode):
                raise ToolError("undo.link", name=name)
            os.chmod(f"/proc/self/fd/{handle}", mode)
        finally:
            os.close(handle)
        return
    handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    try:
        os.fchmod(handle, mode)
    finally:
        os.close(handle)


def write_label(write: Write, root: Path) -> str:
    """`#3  run 2  overwrote src/app.py`: one write in a list to choose from."""
    verb = "created" if write.created else "deleted" if write.deleted else "changed the permissions of" if write.mode_only else "overwrote"
    state = "  (undone)" if write.undone else ""
    return f"#{write.number}  run {write.run}  {verb} {shown_path(write.path, root)}{state}"




@dataclass(frozen=True)
class UndoOutcome:
    done: list[Undone]
    refused: str | None
    """Why the undo stopped or was refused (None: all of it was done)."""


def undo_session(folder: Path, scope: Scope, redact: Redactor, session: Session | None = None, overwrite: bool = False) -> UndoOutcome:
    """Undo in a logged session: the one way both front-ends do it. `session` is the open session of
    a live conversation (its log gets the records); otherwise the log is reopened and closed again."""
    own = session is None
    session = Session.reopen(folder, redact) if session is None else session
    try:
        history = load_session(folder)
        return UndoOutcome(undo(session, history.events, scope, project_of(history), overwrite), None)
    except UndoRefused as exc:
        return UndoOutcome(exc.done, str(exc))
    finally:
        if own:
            session.close()


def project_of(history: SessionHistory) -> Path:
    """The project a session's log names, refused when the log is kept with another project's
    sessions (a log moved or forged to make undo write elsewhere)."""
    root = Path(history.project)
    if history.folder.parent.name != project_slug(root):
        raise UndoRefused(f"the session log says its project is {root}, but it is kept with another project's sessions; nothing was undone")
    return root
