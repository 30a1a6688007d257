"""`read_file`, `write_to_file` and `edit_file`, confined to the project root.

Reads are bounded (pages of lines, a size cap, binary and special files refused). Writes are
atomic (temp file in the same folder, fsync, `os.replace`), keep line endings and a BOM the
file already had, and save the previous content in the session folder so they can be undone.
"""

from __future__ import annotations

import collections
import difflib
import errno
import hashlib
import io
import json
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from mzagent_tui.agent.cancel import Cancelled
from mzagent_tui.agent.events import FileChanged
from mzagent_tui.agent.ground.beneath import makedirs_beneath, open_beneath, write_atomically_at
from mzagent_tui.agent.ground.diffs import MAX_SIDE_BYTES, FileDiff, file_diff
from mzagent_tui.agent.ground.textfiles import UMASK, lines_label
from mzagent_tui.agent.ground.words import say
from mzagent_tui.agent.safety import own_install, trusted_path
from mzagent_tui.agent.safety.approval_requests import PlantedFileApproval, SecretReadApproval, WriteApproval
from mzagent_tui.agent.safety.asked_always import ON_PATH_REASON, asked_in_every_mode
from mzagent_tui.agent.safety.git_entry import in_repository
from mzagent_tui.agent.safety.hooks_path import GitPathsUnknown, git_paths
from mzagent_tui.agent.safety.own_install import is_own_installation
from mzagent_tui.agent.safety.planting import START_REASON, imported_at_own_start, plants_code, python_first_folders, started_by_pth
from mzagent_tui.agent.safety.sensitive import is_private_home_entry, is_secret
from mzagent_tui.agent.skills import Skill
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.nearby import missing
from mzagent_tui.agent.tools.paths import relative, resolve_inside
from mzagent_tui.agent.tools.registry import ToolError, ToolResult, WriteOutcome
from mzagent_tui.agent.tools.syntax_check import syntax_problem

READ_MAX_CHARS = 60_000
READ_MAX_LINES = 2_000
WRITE_MAX_BYTES = 10 * 1024 * 1024
BINARY_SNIFF = 8192
BOM = "\ufeff"
REPOSITORY_FOLDER = "it is in the folder the project's .git leads to (a `gitdir:` file, a link, a commondir): its config and hooks run programs in git commands"


CONTEXT_ABOVE = 64 * 1024
"""Characters above a page read from a later line that are scanned for credentials with it."""


def _text_above(handle: io.TextIOWrapper, start_line: int) -> str:
    """The lines before `start_line`, their last CONTEXT_ABOVE characters or so (whole lines)."""
    handle.seek(0)
    kept: collections.deque[str] = collections.deque()
    size = 0
    for number, line in enumerate(handle, start=1):
        if number >= start_line:
            break
        kept.append(line)
        size += len(line)
        while size - len(kept[0]) >= CONTEXT_ABOVE:
            size -= len(kept.popleft())
    return "".join(kept)


class FileTools:
    """The file tools, bound to one project root and session."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx
        self.root = ctx.root

    def read_file(self, file_path: str, start_line: int = 1) -> str:
        """Read a text file inside the project (path relative to the project root, or absolute). Long files come in pages of 2000 lines: pass start_line to read further."""
        if not isinstance(start_line, int) or isinstance(start_line, bool) or start_line < 1:
            raise ToolError("read.start_line")
        in_skill = self._ctx.skills.user_file(file_path) if isinstance(file_path, str) else None
        if in_skill is not None:
            return self._read_skill_file(*in_skill, start_line)
        path = resolve_inside(self.root, file_path)
        rel = relative(self.root, path)
        if not path.exists():
            raise missing(self.root, rel, self._ctx.facts.targets)
        if path.is_dir():
            return _folder_listing(path, rel)
        if not stat.S_ISREG(path.stat().st_mode):
            raise ToolError("file.not_regular", rel=rel)
        asked = self._allow_secret(path, rel)
        # O_NONBLOCK: a FIFO swapped in after the check above must not hang the open.
        with os.fdopen(open_beneath(self.root, rel, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ToolError("file.not_regular", rel=rel)
            if b"\x00" in handle.read(BINARY_SNIFF):
                raise ToolError("read.binary", rel=rel, size=info.st_size)
            handle.seek(0)
            text_handle = io.TextIOWrapper(handle, encoding="utf-8", newline="")
            page = self._read_page(text_handle, rel, start_line)
            above = _text_above(text_handle, start_line) if not asked and start_line > 1 else ""
        if not asked:
            self._allow_credentials(page, rel, start_line, above)
        return self._ctx.redact.exact(page)

    def _read_skill_file(self, skill: Skill, inside: str, start_line: int) -> str:
        """A file of one of the user's skills (its SKILL.md, a file it names), the one place
        outside the project read_file reads: from the skill's folder without links, scanned for
        credentials as a project file is."""
        shown = f"{skill.folder}/{inside}"
        try:
            handle = os.fdopen(open_beneath(skill.folder, inside, os.O_RDONLY | os.O_NONBLOCK), "rb")
        except OSError as exc:
            raise ToolError("read.skill_file", shown=shown, error=exc.strerror or exc) from None
        with handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISDIR(info.st_mode):
                return _folder_listing(skill.folder / inside, shown)
            if not stat.S_ISREG(info.st_mode):
                raise ToolError("file.not_regular", rel=shown)
            if b"\x00" in handle.read(BINARY_SNIFF):
                raise ToolError("read.binary", rel=shown, size=info.st_size)
            handle.seek(0)
            page = self._read_page(io.TextIOWrapper(handle, encoding="utf-8", newline=""), shown, start_line)
        self._allow_credentials(page, shown, start_line)
        return self._ctx.redact.exact(page)

    def _allow_secret(self, path: Path, rel: str) -> bool:
        """A file that usually holds secrets is read only with the user's leave, by read_file or
        by edit_file (whose found/not found would otherwise tell the model what the file holds).
        Whether the user was asked (and allowed it)."""
        if not is_secret(path):
            return False
        request = SecretReadApproval(
            what=f"read {rel}", cwd=str(self.root), reason="this file usually holds secrets",
            ask_even_if_allowed=is_private_home_entry(path),
        )
        decision = self._ctx.approver.approve(request)
        if decision.cancelled:
            raise Cancelled()
        if not decision.approved:
            raise ToolError("read.secret_refused", rel=rel)
        return True

    def _allow_credentials(self, text: str, rel: str, first_line: int = 1, above: str = "") -> None:
        """A file that holds a credential, whatever its name (a hard link to `.env` called
        memo.txt, `token.json`, `prod.env.bak`), is shown only with the user's leave, asked as
        for a secret file by name. Never masked instead: the model may write the file back, and
        the mask would be written over the secret. `above`: the file's text above a page that
        starts below line 1 (up to CONTEXT_ABOVE), scanned with it: a value whose name is above
        the page (`password:` on line 3, the value on line 4; a netrc's `machine`) asks when
        its secret reaches into the page."""
        from mzagent_tui.agent.safety.credentials import describe, find_credentials  # only when a read happens

        found = find_credentials(text)
        if not found and above:
            found = [item for item in find_credentials(above + text) if item.end > len(above)]
            first_line -= above.count("\n")
        if not found:
            return
        what = describe(found, first_line)
        request = SecretReadApproval(
            what=f"read {rel}", cwd=str(self.root),
            reason=f"this file looks like it holds a credential ({what}): show it to the model?",
        )
        if not self._ctx.approver.approve(request).approved:
            raise ToolError("read.credential_refused", rel=rel, what=what)

    def _read_page(self, handle: io.TextIOWrapper, rel: str, start_line: int) -> str:
        lines: list[str] = []
        chars = 0
        number = 0
        more = False
        try:
            for number, line in enumerate(handle, start=1):
                if number < start_line:
                    continue
                if len(lines) >= READ_MAX_LINES or chars + len(line) > READ_MAX_CHARS:
                    more = True
                    break
                lines.append(line)
                chars += len(line)
        except UnicodeDecodeError as exc:
            raise ToolError("read.not_utf8", rel=rel, byte=exc.object[exc.start], offset=exc.start) from None
        text = "".join(lines)
        if start_line == 1 and text.startswith(BOM):
            text = text[1:]
        if start_line > 1 and not lines:
            return (
                f"[{rel} ends at line {number}, so there is nothing at line {start_line}: past its end. "
                "Reading further shows nothing more; go on with the task]"
            )
        if not more and start_line == 1:
            return text
        end = start_line + len(lines) - 1
        note = f"[showing lines {start_line}-{end} of {rel}"
        note += f"; call read_file({rel!r}, {end + 1}) for more]" if more else "; end of file]"
        return text + ("" if text.endswith("\n") else "\n") + note

    def write_to_file(self, file_path: str, content: str) -> ToolResult:
        """Write content to a file inside the project, replacing it if it exists; parent folders are created. Use \\n for new lines inside the string."""
        path = resolve_inside(self.root, file_path)
        rel = relative(self.root, path)
        self._refuse_in_read_only_task(rel)
        if not isinstance(content, str):
            raise ToolError("write.not_a_string", name="content", kind=type(content).__name__)
        if path == self.root or path.is_dir():
            raise ToolError("write.folder", rel=rel)
        if path.exists() and not stat.S_ISREG(path.stat().st_mode):
            raise ToolError("file.not_regular", rel=rel)
        return self._write(path, rel, content)

    def _refuse_in_read_only_task(self, rel: str) -> None:
        if self._ctx.read_only_task:
            raise ToolError("write.read_only_task", rel=rel, why=self._ctx.read_only_task)

    def edit_file(self, file_path: str, old_text: str, new_text: str) -> ToolResult:
        """Change part of an existing file: the one place where old_text occurs (exactly as in the file, spaces and line breaks included) becomes new_text. An empty old_text adds new_text at the end of the file."""
        path = resolve_inside(self.root, file_path)
        rel = relative(self.root, path)
        self._refuse_in_read_only_task(rel)
        for name, value in (("old_text", old_text), ("new_text", new_text)):
            if not isinstance(value, str):
                raise ToolError("write.not_a_string", name=name, kind=type(value).__name__)
        if not path.exists():
            raise ToolError("edit.missing", missing=str(missing(self.root, rel, self._ctx.facts.targets)))
        if path.is_dir():
            raise ToolError("edit.folder", rel=rel)
        if not stat.S_ISREG(path.stat().st_mode):
            raise ToolError("file.not_regular", rel=rel)
        if old_text == new_text:
            raise ToolError("edit.same", rel=rel)
        asked = self._allow_secret(path, rel)
        data = _bytes_of(self.root, rel)
        text = _text_of(data, rel)
        if not asked:
            self._allow_credentials(text, rel)
        if old_text and old_text not in text:
            raise _not_found(text, old_text, new_text, rel, self._ctx.redact.exact)
        content, where = _replace_once(text, old_text, new_text, rel)
        return self._write(path, rel, content, how=where, based_on=data)

    def _write(self, path: Path, rel: str, content: str, how: str = "", based_on: bytes | None = None) -> ToolResult:
        """Ask, back up, write atomically and report: the one path both write_to_file and
        edit_file take, so an edit is gated, diffed and undone exactly like a whole write.
        `how` says what an edit changed; a whole write says whether it created or overwrote.
        `based_on` is the content an edit was made from: if the file changed while the user
        looked at the diff, the edit would undo that change, so nothing is written."""
        content, edited, previewed = self._ask_to_write(rel, content)
        parent, _, name = rel.rpartition("/")
        try:
            folder = makedirs_beneath(self.root, parent)
        except OSError as exc:
            raise ToolError("write.no_folder", rel=rel, error=exc.strerror) from None
        try:
            existed, old, mode = _current(folder, name, rel)
            if based_on is not None and old != based_on:
                raise ToolError("write.changed_meanwhile", rel=rel)
            data = _encode_like(content, old)
            if len(data) > WRITE_MAX_BYTES:
                raise ToolError("write.too_big", size=len(data), limit=WRITE_MAX_BYTES)
            unchanged = existed and old == data  # nothing to write, back up or undo: the same content again changes nothing
            backup = None
            if not unchanged:
                if existed:
                    backup = self._ctx.session.backup_path(path)
                    backup.write_bytes(old)
                write_atomically_at(folder, path.parent, name, data, mode)
        finally:
            os.close(folder)
        broken = syntax_problem(rel, data, old if existed else None)
        if unchanged:
            written = say("write.same", rel=rel, lines=lines_label(content), size=len(data))
        else:
            matching = previewed if previewed is not None and previewed[0] == (old if existed else None) and previewed[1] == data else None
            change = (matching[2] if matching is not None else file_diff(rel, old if existed else None, data)) or FileDiff("", 0, 0)
            self._ctx.emit(FileChanged(
                str(path), created=not existed, backup=str(backup) if backup else None, sha256=hashlib.sha256(data).hexdigest(),
                old_mode=mode if existed else None, diff=self._ctx.redact.exact(change.text), added=change.added, removed=change.removed,
            ))
            written = f"File written: {rel} ({how or ('overwrote' if existed else 'created')}, {lines_label(content)}, {len(data)} bytes)."
        if edited:
            written = f"The user edited the content before it was written; read {rel} to see it.\n{written}"
        if broken is not None:
            written += f"\nWarning: {rel} does not parse now: {broken}. Fix it with another write."
        return ToolResult(written, write=WriteOutcome(path, rel, old if existed else None, data))

    def _ask_to_write(self, rel: str, content: str) -> tuple[str, bool, tuple[bytes | None, bytes, FileDiff | None] | None]:
        """Show the write's diff to the approver: (content to write, whether the user edited it,
        the (old, new, diff) shown, so the diff need not be computed twice).

        Writes that plant code (a git hook, a config that runs commands) always ask; others ask
        when writes are gated (`writes = "ask"`), which the policy decides.
        """
        old = peek(self.root, rel)
        data = _encode_like(content, old or b"")
        change = file_diff(rel, old, data)
        installation = is_own_installation(self.root, rel)
        at_start = not installation and imported_at_own_start(self.root, rel)
        own = installation or at_start
        planted = (
            (own_install.REASON if installation else None) or (START_REASON if at_start else None) or plants_code(rel, python_first(self._ctx)) or started_by_pth(self.root, rel) or (REPOSITORY_FOLDER if in_repository(self.root, rel) else None)
            or _git_runs(self.root, rel) or _on_path(self.root, rel, self._ctx.env.get("PATH", ""))
        )
        diff = self._ctx.redact.exact(change.text) if change else ""
        request = (
            PlantedFileApproval(
                cwd=str(self.root), reason=f"writing it makes tools run code: {planted}", path=rel, diff=diff, content=content,
                ask_even_if_allowed=own or asked_in_every_mode(planted or ""),  # yolo too: the next start, your shell or your git runs it
            )
            if planted else WriteApproval(cwd=str(self.root), reason=self._ctx.thought, path=rel, diff=diff, content=content)
        )
        decision = self._ctx.approver.approve(request)
        if decision.cancelled:
            raise Cancelled()
        if not decision.approved:
            note = say("write.refusal_note", reason=decision.note.rstrip(".")) if decision.note else ""
            if planted:
                raise ToolError("write.planted_refused", rel=rel, planted=planted, note=note)
            raise ToolError("write.refused", rel=rel, note=note)
        if decision.content is not None and decision.content != content:
            return decision.content, True, None
        return content, False, (old, data, change)


def python_first(ctx: ToolContext) -> tuple[str, ...]:
    """The project folders Python puts first on sys.path: the root, those on the PYTHONPATH of
    the user's shell (mzagent's own environment) or of the commands, and those on mzagent's own
    sys.path (a `.pth` or `python -m` from a project folder puts one there without PYTHONPATH):
    a module written in one is imported in place of the real one at mzagent's next start."""
    own = os.pathsep.join(entry for entry in sys.path if entry)
    return python_first_folders(ctx.root, os.environ.get("PYTHONPATH", ""), ctx.env.get("PYTHONPATH", ""), own)


def _git_runs(root: Path, rel: str) -> str | None:
    """Why the repository's git runs or reads this work-tree file (a hook in the folder
    core.hooksPath names, a config file it includes), or None; when git cannot tell, why it asks."""
    try:
        return git_paths(root).reason(rel)
    except GitPathsUnknown as exc:
        return f"git could not say where the repository's hooks are, and this may be one ({exc})"


def _on_path(root: Path, rel: str, path_value: str) -> str | None:
    """Why a file in a folder on the commands' PATH is a program, or None."""
    return None if trusted_path.on_path(root, rel, path_value) is None else ON_PATH_REASON


def _read_beneath(root: Path, rel: str, limit: int) -> bytes:
    """Up to `limit` bytes of a regular file, opened beneath the root (no link out of it)."""
    with os.fdopen(open_beneath(root, rel, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ToolError("file.not_regular", rel=rel)
        return handle.read(limit)


def peek(root: Path, rel: str) -> bytes | None:
    """The file's current content for the diff the user is shown (None: it does not exist yet)."""
    try:
        return _read_beneath(root, rel, MAX_SIDE_BYTES + 1)
    except (OSError, ToolError):
        return None


def _bytes_of(root: Path, rel: str) -> bytes:
    """The content of a file about to be edited."""
    data = _read_beneath(root, rel, WRITE_MAX_BYTES + 1)
    if len(data) > WRITE_MAX_BYTES:
        raise ToolError("edit.too_big", rel=rel, limit=WRITE_MAX_BYTES)
    return data


def _text_of(data: bytes, rel: str) -> str:
    """The file's text as the model saw it through read_file: no BOM, and LF line endings where
    the file has CRLF throughout (the write puts both back, as `_encode_like` does)."""
    if b"\x00" in data[:BINARY_SNIFF]:
        raise ToolError("edit.binary", rel=rel)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError("edit.not_utf8", rel=rel) from None
    text = text.removeprefix(BOM)
    return text.replace("\r\n", "\n") if _crlf_only(data) else text


def _replace_once(text: str, old: str, new: str, rel: str) -> tuple[str, str]:
    """(the edited text, what changed for the report). An old text found in more than one place
    changes nothing: the model is told where, so it can make it longer."""
    if not old:
        joined = text if not text or text.endswith("\n") else text + "\n"
        last = joined.count("\n")
        return joined + new, f"added at the end, after line {last}"
    lines = [text.count("\n", 0, match.start()) + 1 for match in re.finditer(re.escape(old), text)]
    if len(lines) > 1:
        shown = ", ".join(str(line) for line in lines[:10])
        raise ToolError("edit.many", count=len(lines), rel=rel, lines=shown)
    return text.replace(old, new, 1), f"edited at line {lines[0]}"


def _not_found(text: str, old: str, new: str, rel: str, redact: Callable[[str], str]) -> ToolError:
    """Why nothing was edited, and what to do: the arguments' order when the new text is the one
    in the file (a small model swapped them), else the line most like what the model meant (a
    line of the file, so its secrets are hidden by `redact`)."""
    not_found = say("edit.not_found", rel=rel)
    if new and new in text:
        return ToolError("edit.not_found.swapped", not_found=not_found, rel=rel)
    closest = _closest_line(text, old)
    if closest is None:
        return ToolError("edit.not_found.add_at_end", not_found=not_found)
    number, line = closest
    return ToolError("edit.not_found.closest", not_found=not_found, number=number, line=redact(json.dumps(line)))


def _closest_line(text: str, old: str, most_lines: int = 20_000) -> tuple[int, str] | None:
    """The file line most like old_text's first non-blank line, when any is close (and the file
    is small enough to compare line by line)."""
    wanted = next((line.strip() for line in old.splitlines() if line.strip()), "")
    lines = text.splitlines()
    if not wanted or len(lines) > most_lines:
        return None
    stripped = [line.strip() for line in lines]
    found = difflib.get_close_matches(wanted, stripped, n=1, cutoff=0.6)
    if not found:
        return None
    number = stripped.index(found[0]) + 1
    return number, lines[number - 1]


def _folder_listing(path: Path, rel: str, limit: int = 200) -> str:
    """Reading a folder lists it: small models often try, and an error confuses them."""
    entries = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())
    shown = "\n".join(entries[:limit]) or "(empty)"
    more = f"\n+{len(entries) - limit} more" if len(entries) > limit else ""
    return f"{rel} is a folder. Its entries, one per line:\n{shown}{more}"


def _encode_like(content: str, old: bytes) -> bytes:
    """Keep the existing file's BOM and CRLF line endings when the model wrote plain LF."""
    if old.startswith(b"\xef\xbb\xbf") and not content.startswith(BOM):
        content = BOM + content
    if _crlf_only(old) and "\r\n" not in content:
        content = content.replace("\n", "\r\n")
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError("write.invalid_character", position=exc.start) from None


def _crlf_only(data: bytes) -> bool:
    """The file ends every line with CRLF."""
    return b"\r\n" in data and data.count(b"\r\n") == data.count(b"\n")


def _current(folder: int, name: str, rel: str) -> tuple[bool, bytes, int]:
    """(exists, content, mode) of the file about to be replaced, read through the folder's descriptor."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except FileNotFoundError:
        return False, b"", 0o666 & ~UMASK
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ToolError("write.swapped", rel=rel) from None
        raise ToolError("write.cannot_open", rel=rel, error=exc.strerror) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ToolError("file.not_regular", rel=rel)
        return True, handle.read(), stat.S_IMODE(info.st_mode)
