"""`run_terminal_command`: ask the user, run in the project folder, report in plain words
(and which files the command changed, recorded so undo can take them back)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from mzagent_tui.agent.cancel import Cancelled
from mzagent_tui.agent.events import ApprovalAnswered, FileChanged, Notice
from mzagent_tui.agent.ground.diffs import MAX_SIDE_BYTES, file_diff, is_binary, read_side
from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.safety.approval_requests import CommandApproval, SecretReadApproval
from mzagent_tui.agent.safety.commands import analyse
from mzagent_tui.agent.safety.interactive import TOOLS_INSTEAD, interactive_reason
from mzagent_tui.agent.safety.sandbox import Confinement
from mzagent_tui.agent.safety.shared_network import SharedNetwork
from mzagent_tui.agent.safety.textsafe import strip_control
from mzagent_tui.agent.safety.users_git import is_own_git
from mzagent_tui.agent.sessions.snapshots import Change, Snapshot, SnapshotError, Snapshots
from mzagent_tui.agent.tools.background import BackgroundProcess, BackgroundProcesses, runner_for
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.domain_network import DomainNetwork
from mzagent_tui.agent.tools.exit_codes import exit_code_answer
from mzagent_tui.agent.tools.files import python_first
from mzagent_tui.agent.tools.git_entries import ask_about_changes, before_command
from mzagent_tui.agent.tools.planted import ask_to_keep, seen_by_the_snapshots
from mzagent_tui.agent.tools.planted_scan import Background, Kept, PlantedChange, PlantedScan, ScanIncomplete, changes_between
from mzagent_tui.agent.tools.process import ProcessResult, Stream, run_command
from mzagent_tui.agent.tools.registry import CommandOutcome, ToolError, ToolResult
from mzagent_tui.agent.tools.unrunnable import execute_permission_note, interpreter_line_note, without_execute_permission, without_interpreter_line

if TYPE_CHECKING:
    from mzagent_tui.agent.safety.commands import Analysis
    from mzagent_tui.agent.safety.credentials import Credential

R = TypeVar("R")
MAX_COMMAND_CHARS = 100_000
LISTED_CHANGES = 20
"""Changed files named in an observation; the rest are counted."""
VERBS = {"A": "created", "M": "modified", "D": "deleted"}
SHOW, MASK_IT, WITHHOLD = "show", "mask", "withhold"
"""What becomes of a command's output that holds a credential: the user answered for the
command (mask), answered its own question (show or withhold), or the policy did (mask)."""


@dataclass(frozen=True)
class Approved:
    """A command the user (or the policy) let run: as it is to run (edited, perhaps), where, why."""

    command: str
    confinement: Confinement
    decision: ApprovalDecision
    analysis: Analysis
    """The command as the model gave it, read once."""
    advice: str
    """For the observation: a program that waits for input gets none here."""


class ShellTool:
    def __init__(self, ctx: ToolContext, allowed_domains: Sequence[str] = ()) -> None:
        self._ctx = ctx
        self._by_domain = bool(allowed_domains)
        """The user config lists allowed domains: a command given the network reaches only them."""
        self._snapshots: Snapshots | None = Snapshots(ctx.root, ctx.session.folder)
        """None once snapshots failed in this session (said once, in a notice)."""
        self._said_unreadable: set[str] = set()
        self._last_after: Snapshot | None = None
        """The snapshot taken after the last command: the next one starts from its modes."""
        self._blocked: set[str] = set()
        """Commands the sandbox may have blocked: next time they ask, whatever the policy says."""
        self._planted = PlantedScan(ctx.root, python_first(ctx), (ctx.env.get("PATH", ""),))
        self._planted_last: dict[str, Kept] | None = None
        """The last scan of the files that make tools run code; None before the first or after
        one that failed: then the next command asks first, in every mode but yolo."""
        self._said_unchecked = ""
        self.shared_network = SharedNetwork(listen=self._by_domain)
        """The session's network namespace, its loopback up: commands without network share it."""
        self._domains = DomainNetwork(ctx, allowed_domains, self.shared_network)
        self._said_no_shared_network = False
        self.background = BackgroundProcesses(ctx.emit)

    def run_terminal_command(self, command: str) -> ToolResult:
        """Run a shell command in the project folder and return its exit code and output. Commands cannot read input (stdin is empty) and the user must approve each one."""
        ctx = self._ctx
        approved = self._approve(command)
        if isinstance(approved, ToolResult):
            return approved
        to_run, confinement, decision, analysis, advice = approved.command, approved.confinement, approved.decision, approved.analysis, approved.advice
        ran = analysis if to_run == command else analyse(to_run, ctx.root, ctx.env.get("PATH", ""))
        output_path = ctx.session.output_path()
        result, changes = self._run_recorded(
            to_run, confinement, output_path, ask=True,
            run=lambda env, confine: run_command(to_run, ctx.root, env, ctx.command_timeout, ctx.cancel, output_path, confine),
        )
        output = _whole(result.output)
        unrunnable = without_execute_permission(output, ctx.root) if result.exit_code == 126 else []
        blocked = ""
        if not unrunnable and confinement.mode.startswith("workspace") and result.exit_code not in (0, None) and _looks_blocked(output, ctx.root):
            blocked = "\n" + (PLAN_READ_ONLY_NOTE if confinement.project_read_only else self._blocked_by_sandbox({command, to_run}, confinement))
        permission = "\n" + execute_permission_note(unrunnable) if unrunnable else ""
        unmarked = without_interpreter_line(output, ctx.root) if result.exit_code not in (0, None) else []
        permission += "\n" + interpreter_line_note(unmarked) if unmarked else ""
        answer = exit_code_answer(ran, result.exit_code)
        outcome = CommandOutcome(
            ran, result, output, _whole(result.stdout), edited=to_run != command, tail=blocked + changes + advice + permission, answer=answer,
        )
        ok = result.exit_code == 0 or bool(answer)
        report = _report(outcome, ctx.command_timeout, str(output_path))
        found, secrets = _credentials_in(result)
        if found:
            what = _describe_credentials(found)
            answer = self._credential_answer(to_run, what) if decision.by_policy else MASK_IT
            if answer == WITHHOLD:
                return ToolResult(_withheld(result.exit_code, what, outcome.tail), ok=ok, exit_code=result.exit_code, output_path=str(output_path))
            if answer == MASK_IT:
                report = _masked(report, secrets)
                outcome = dataclasses.replace(outcome, output=_masked(outcome.output, secrets), stdout=_masked(outcome.stdout, secrets))
        return ToolResult(
            ctx.redact.command_output(report), ok=ok, exit_code=result.exit_code, output_path=str(output_path), command=outcome,
        )

    def start_background_command(self, command: str) -> ToolResult:
        """Start a shell command that keeps running in the background (a dev server, a watcher) and return at once with its id (bg1, bg2, …) and its first output. The user must approve it, and it runs in the same sandbox as run_terminal_command; commands of this session reach it on localhost (`curl -s localhost:8000`). It runs until it ends, until stop_background(id), or until the session ends. Read its newer output with background_output(id)."""
        approved = self._approve(command, BACKGROUND_WARNING, background=True)
        if isinstance(approved, ToolResult):
            return approved
        process, changes = self._start_in_background(approved.command, approved.confinement, ask=True)
        edited = f"The user edited the command before running it: {approved.command}\n" if approved.command != command else ""
        return ToolResult(self._ctx.redact.command_output(edited + _background_report(process) + changes), ok=process.running or _exit_code(process) == 0)

    def background_output(self, id: str) -> ToolResult:  # noqa: A002 - the name the model reads
        """The output a background command printed since you last looked (its last few kilobytes), and whether it still runs. `id` is what start_background_command returned (bg1, bg2, …)."""
        process = self._background_process(id)
        return ToolResult(self._ctx.redact.command_output(_background_report(process)), ok=process.running or _exit_code(process) == 0)

    def stop_background(self, id: str) -> ToolResult:  # noqa: A002 - the name the model reads
        """Stop a background command and everything it started. `id` is what start_background_command returned (bg1, bg2, …)."""
        process = self._background_process(id)
        was_running = process.running
        self.background.stop(process.id)
        said = "It was stopped." if was_running else "It had already ended."
        return ToolResult(self._ctx.redact.command_output(f"{said} {_background_report(process)}"))

    def start_for_user(self, command: str) -> BackgroundProcess:
        """The user's `!&command`: no approval (they typed it), the same sandbox as theirs."""
        process, _ = self._start_in_background(command, self._ctx.sandbox.confinement(), ask=False)
        return process

    def close(self) -> None:
        """The session's end: every background command is stopped, then the shared network ends."""
        self.background.stop_all()
        self._domains.close()
        self.shared_network.close()

    def _background_process(self, process_id: str) -> BackgroundProcess:
        if not isinstance(process_id, str) or (process := self.background.get(process_id)) is None:
            known = ", ".join(p.id for p in self.background.all()) or "none was started in this session"
            raise ToolError("background.unknown", process_id=process_id, known=known)
        return process

    def _start_in_background(self, command: str, confinement: Confinement, ask: bool) -> tuple[BackgroundProcess, str]:
        """Started between two snapshots, the second taken once it printed its first output: what
        it changes later is not recorded (see BACKGROUND_WARNING)."""
        ctx = self._ctx
        output_path = ctx.session.output_path()
        return self._run_recorded(
            command, confinement, output_path, ask=ask,
            run=lambda env, confine: self.background.start(command, output_path, runner_for(command, ctx.root, env, output_path, confine), by_user=not ask),
        )

    def _approve(self, command: str, extra_warning: str = "", background: bool = False) -> Approved | ToolResult:
        """The gate every command of the model passes: checked, analysed, asked (a background one
        in every mode but yolo). Returns what was approved, or the observation of a rejection."""
        ctx = self._ctx
        if not isinstance(command, str) or not command.strip():
            raise ToolError("command.empty")
        if "\x00" in command:
            raise ToolError("command.nul")
        if len(command) > MAX_COMMAND_CHARS:
            raise ToolError("command.too_long", limit=MAX_COMMAND_CHARS)
        analysis = analyse(command, ctx.root, ctx.env.get("PATH", ""))
        waits_for_input = interactive_reason(analysis)
        planning = ctx.plan_mode() or bool(ctx.read_only_task)
        unchecked = self._planted_unchecked()
        warnings = [f"{waits_for_input}: it will get no input here and would wait until the timeout." if waits_for_input and not background else ""]
        warnings.append(f"Files it may plant that make tools run code cannot be checked after it ({unchecked})." if unchecked else "")
        warnings.append(extra_warning)
        request = CommandApproval(
            command=command, cwd=str(ctx.root), reason=ctx.thought,
            sandbox=ctx.sandbox.confinement(project_read_only=planning).describe(),
            ask_even_if_allowed=command in self._blocked,
            ask_unless_yolo=bool(unchecked) or background,
            warning=" ".join(warning for warning in warnings if warning),
            analysis=analysis,
        )
        decision = ctx.approver.approve(request)
        if decision.cancelled:
            raise Cancelled()
        to_run = decision.command or command
        confinement = ctx.sandbox.confinement(network=decision.network, outside=decision.outside_sandbox, project_read_only=planning, by_domain=self._by_domain)
        ctx.emit(ApprovalAnswered(decision.approved, to_run, decision.note, confinement.mode))
        advice = f"\nNote: {waits_for_input}. {TOOLS_INSTEAD}" if waits_for_input and not background else ""
        if not decision.approved:
            reason = f" Their reason: {decision.note.rstrip('.')}." if decision.note else ""
            return ToolResult(
                f"The user rejected this command, so it was not run.{reason} "
                f"Do not run it again unchanged; take another way or give a final answer explaining what is needed.{advice}",
                ok=False,
            )
        return Approved(to_run, confinement, decision, analysis, advice)

    def _shared_network(self, confinement: Confinement) -> tuple[int, int] | None:
        """The session's network namespace for a command without network (None: it gets one of
        its own, its loopback down, as where the holder cannot start; said once)."""
        if confinement.mode not in ("workspace", "workspace+domains") or not self._ctx.sandbox.namespaces:
            return None
        namespaces = self.shared_network.namespaces()
        if namespaces is None and not self._said_no_shared_network:
            self._said_no_shared_network = True
            self._ctx.emit(Notice(
                f"Commands cannot share a network namespace in this session ({self.shared_network.failed}): each gets one of its own, "
                "so a server one starts is not reachable from the next."
            ))
        return namespaces

    def _credential_answer(self, command: str, what: str) -> str:
        """Whether the output of a command that ran without a question, holding a credential, is
        shown, masked or withheld: the user is asked, as for reading a file that holds one; where
        the policy answers instead (yolo), it is masked, since no person saw it."""
        decision = self._ctx.approver.approve(SecretReadApproval(
            what=f"show the output of: {command}", cwd=str(self._ctx.root),
            reason=f"this output looks like it holds a credential ({what}): show it to the model?",
        ))
        if not decision.approved:
            return WITHHOLD
        return MASK_IT if decision.by_policy else SHOW

    def run_for_user(self, command: str) -> tuple[ProcessResult, str, str]:
        """A command the user typed (`!command`): no approval, since they typed it, but the same
        sandbox, runner and undo record as the model's. Returns the result, the text an
        observation would hold (cut the same way, secrets redacted, credentials masked: the user
        saw the output, so nothing asks) and the saved output's path."""
        ctx = self._ctx
        output_path = ctx.session.output_path()
        result, changes = self._run_recorded(
            command, ctx.sandbox.confinement(), output_path, ask=False, own_git=is_own_git(analyse(command, ctx.root, ctx.env.get("PATH", ""))),
            run=lambda env, confine: run_command(command, ctx.root, env, ctx.command_timeout, ctx.cancel, output_path, confine),
        )
        text = _describe(result, ctx.command_timeout, str(output_path), "") + changes
        text = _masked(text, _credentials_in(result)[1])
        return result, ctx.redact.command_output(text), str(output_path)

    def _run_recorded(
        self, command: str, confinement: Confinement, output_path: Path, ask: bool, run: Callable[[Mapping[str, str], Callable[[], None] | None], R], own_git: bool = False,
    ) -> tuple[R, str]:
        """Run between two snapshots (`run`, given the environment and the confinement: to the
        end, or a background command's start): what it returned, and the line about the files it
        changed (each a `FileChanged` with its old content saved for undo). `ask`: a file the command wrote that
        makes tools run code is kept only if the user says so (not for the user's own `!command`).
        `own_git`: a git command the user typed (`!git commit`), which writes the repository;
        every other command sees it read-only, and a `.git` it replaced, re-pointed or made is
        asked about afterwards, whatever the mode."""
        ctx = self._ctx
        planted = Background(self._planted.take) if ask else None
        earlier = self._planted_last
        before = self._snapshot(self._last_after)
        planted_before = self._planted_scan(planted) if planted is not None else None
        if planted_before is None and ask:
            planted_before = earlier  # the scan made when the command was judged: still a "before"
        env = ctx.sandbox.environment(dict(ctx.env)) if confinement.mode.startswith("workspace") else ctx.env
        if confinement.mode == "workspace+domains":
            env = {**env, **self._domains.environment()}
        entries = None if own_git else before_command(ctx.root)
        repository = () if entries is None else entries.read_only
        result = run(env, ctx.sandbox.preexec(confinement, repository, self._shared_network(confinement)))
        changes = self._record_changes(before, planted_before, ask)
        if entries is not None:
            changes += ask_about_changes(ctx, entries)
        if confinement.mode == "workspace+domains":
            changes += self._domains.taken()
        return result, changes

    def _blocked_by_sandbox(self, commands: set[str], confinement: Confinement) -> str:
        """Tell the model it cannot lift the sandbox, and the user that they can (the command as
        asked and as run, if the user edited it, ask next time)."""
        self._blocked |= commands
        self._ctx.emit(Notice(
            f"The sandbox ({confinement.describe().removeprefix('sandbox: ')}) may have blocked this command. "
            "If the model runs it again you will be asked, and can run it outside the sandbox (o) or with network (w)."
        ))
        return (
            f"Note: commands run in a sandbox ({confinement.describe().removeprefix('sandbox: ')}); it may have blocked this one "
            "(permission denied, a refused connection, or a file outside the project it cannot see). You cannot turn the sandbox off. Do the work inside the project "
            "without network, or run the same command again to let the user decide, or explain in your final answer what is needed."
        )

    def _planted_unchecked(self) -> str:
        """Why what the next command plants cannot be checked ("" when it can): a scan is made
        here when the last one failed or none was made yet (the first one lists every folder)."""
        if self._planted_last is None:
            self._planted_scan(Background(self._planted.take))
        return self._said_unchecked if self._planted_last is None else ""

    def _planted_scan(self, scan: Background) -> dict[str, Kept] | None:
        try:
            self._planted_last = scan.result()
        except ScanIncomplete as exc:
            self._planted_last = None
            if str(exc) != self._said_unchecked:
                self._ctx.emit(Notice(
                    f"Files that make tools run code (.envrc, .vscode, a .pth) cannot be checked after commands: {exc}. "
                    "Until they can, every command asks first (but in yolo mode)."
                ))
            self._said_unchecked = str(exc)
        return self._planted_last

    def _swept(self, changes: list[Change], before: dict[str, Kept]) -> list[PlantedChange]:
        """What the command planted, when the scan after it failed (it made too many entries,
        a folder it cannot read, a config git includes it broke): the unbounded sweep's finds,
        and what the snapshots saw besides. A folder the sweep could not look into is named."""
        swept, skipped = self._planted.sweep()
        found = changes_between(before, swept)
        kept = {change.path for change in found}
        found += [change for change in seen_by_the_snapshots(self._ctx.root, changes, before, self._planted.python_first) if change.path not in kept]
        if self._planted.reopened:
            shown = ", ".join(self._planted.reopened[:LISTED_CHANGES]) + (f" and {len(self._planted.reopened) - LISTED_CHANGES} more" if len(self._planted.reopened) > LISTED_CHANGES else "")
            self._ctx.emit(Notice(f"This command took your own read, write or search permission away from {shown}; mzagent gave it back to check what it holds."))
        if skipped:
            shown = ", ".join(skipped[:LISTED_CHANGES]) + (f" and {len(skipped) - LISTED_CHANGES} more" if len(skipped) > LISTED_CHANGES else "")
            self._ctx.emit(Notice(f"After this command mzagent cannot look into {shown}: what it holds was not checked for files that make tools run code."))
        return found

    def _snapshot(self, modes_from: Snapshot | None = None) -> Snapshot | None:
        if self._snapshots is None:
            return None
        try:
            snapshot = self._snapshots.take(modes_from)
        except (SnapshotError, OSError) as exc:
            self._snapshot_failed(exc)
            return None
        unreadable = sorted(self._snapshots.skipped - self._said_unreadable)
        if unreadable:
            self._said_unreadable.update(unreadable)
            shown = ", ".join(unreadable[:LISTED_CHANGES]) + (f" and {len(unreadable) - LISTED_CHANGES} more" if len(unreadable) > LISTED_CHANGES else "")
            self._ctx.emit(Notice(f"Not recorded for undo, because they cannot be read: {shown}. Every other file still is."))
        return snapshot

    def _snapshot_failed(self, exc: Exception) -> None:
        self._snapshots = None
        self._ctx.emit(Notice(f"Files changed by commands are not recorded in this session, so undo cannot take them back: {exc}."))

    def _record_changes(self, before: Snapshot | None, planted_before: dict[str, Kept] | None, ask: bool) -> str:
        """A `FileChanged` for every file the command created, modified or deleted, with the old
        content saved for undo; the line the observation gets about them ("" for none). Python's
        bytecode caches are recorded but not told: next to a check's output, "Files changed:
        __pycache__/..." reads as if the check had changed something. With `ask` (not the user's
        own command), each file that makes tools run code the command created or changed is
        asked about first, whether the snapshots see it or not (only those they see when a scan
        before or after it failed: `planted_before` is None then, or the one after raises)."""
        snapshots = self._snapshots
        planted = Background(self._planted.take) if ask else None
        after = self._snapshot() if before is not None else None
        self._last_after = after
        changes: list[Change] = []
        backups: dict[str, Path] = {}
        if snapshots is not None and before is not None and after is not None:
            try:
                changes = snapshots.changes(before, after)
                saved = [change for change in changes if change.status != "A" and not change.mode_only]
                backups = {change.path: self._ctx.session.backup_path(self._ctx.root / change.path) for change in saved}
                snapshots.save_old_contents([(change, backups[change.path]) for change in saved])
            except (SnapshotError, OSError) as exc:
                self._snapshot_failed(exc)
                changes, backups = [], {}
        put_back: set[str] = set()
        notes = ""
        if planted is not None:
            planted_after = self._planted_scan(planted)
            if planted_before is None:  # every command asks first now; what the snapshots saw is still asked about
                put_back, notes = ask_to_keep(self._ctx, seen_by_the_snapshots(self._ctx.root, changes, {}, self._planted.python_first), backups)
                notes += "\nNote: files that make tools run code could not all be checked after this command; the user was told."
            elif planted_after is None:
                put_back, notes = ask_to_keep(self._ctx, self._swept(changes, planted_before), backups)
            else:
                put_back, notes = ask_to_keep(self._ctx, changes_between(planted_before, planted_after), backups)
        changes = [change for change in changes if change.path not in put_back]
        for change in changes:
            self._record(change, backups.get(change.path))
        told = [change for change in changes if "__pycache__" not in change.path.split("/")]
        if not told:
            return notes
        named = ", ".join(f"{change.path} ({'permissions changed' if change.mode_only else VERBS[change.status]})" for change in told[:LISTED_CHANGES])
        more = f" and {len(told) - LISTED_CHANGES} more" if len(told) > LISTED_CHANGES else ""
        return f"\nFiles changed by the command: {named}{more}.{notes}"

    def _record(self, change: Change, backup: Path | None) -> None:
        """One `FileChanged` with the diff from the saved old content; a file gone or unreadable
        by now gets no digest, so undo refuses it."""
        path = self._ctx.root / change.path
        digest = None
        data = None
        if change.status != "D":
            try:
                with path.open("rb") as file:
                    data = file.read(MAX_SIDE_BYTES + 1)
                digest = hashlib.sha256(data).hexdigest() if len(data) <= MAX_SIDE_BYTES else _file_digest(path)
            except OSError:
                pass
        diff = binary_size = None
        if not change.mode_only:
            old = read_side(backup) if change.status != "A" else None
            if change.status == "A" or old is not None:
                diff = file_diff(change.path, old, data if change.status != "D" else None)
            binary_size = _binary_size(path, backup, old, data, change.status == "D")
        self._ctx.emit(
            FileChanged(
                str(path), created=change.status == "A", backup=str(backup) if backup else None, sha256=digest,
                deleted=change.status == "D", old_mode=change.old_mode, mode_only=change.mode_only,
                diff=self._ctx.redact.exact(diff.text) if diff else "", added=diff.added if diff else 0, removed=diff.removed if diff else 0,
                binary_size=binary_size,
            )
        )


BACKGROUND_WARNING = (
    "It runs in the background until it ends, is stopped, or the session ends; what it changes after its first output "
    "is not recorded for undo nor checked for files that make tools run code."
)


def _exit_code(process: BackgroundProcess) -> int | None:
    return process.result.exit_code if process.result is not None and not process.stopped else None


def _background_report(process: BackgroundProcess) -> str:
    """What the model reads of a background command: its id and state, its output since it last
    looked, where the whole output is, and how to go on."""
    if process.running:
        state = f"Background command {process.id} is running: {process.command}"
    elif process.failed:
        state = f"Background command {process.id} could not start ({process.failed}): {process.command}"
    elif process.stopped:
        state = f"Background command {process.id} was stopped: {process.command}"
    else:
        state = f"Background command {process.id} has ended (exit code {_exit_code(process)}): {process.command}"
    output, cut = process.unread()
    skipped = f"[... {cut} earlier bytes not shown ...]\n" if cut else ""
    shown = f"New output:\n{skipped}{output.rstrip()}" if output.strip() else "No new output."
    after = (
        f"Read newer output with background_output({process.id!r}); stop it with stop_background({process.id!r})."
        if process.running else ""
    )
    return f"{state}\n{shown}\nThe whole output ({process.total_bytes} bytes) is saved in {process.output_path}.\n{after}".rstrip()


def _binary_size(path: Path, backup: Path | None, old: bytes | None, new: bytes | None, deleted: bool) -> int | None:
    """The size a binary change is told with (the file's after it, the backup's when deleted), or
    None when its sides are text: it is shown as "binary file changed, N bytes", never as a diff."""
    if not any(side is not None and is_binary(side) for side in (old, new)):
        return None
    try:
        return (backup if deleted and backup is not None else path).stat().st_size
    except OSError:
        return len((old if deleted else new) or b"")


def _credentials(output: str) -> list[Credential]:
    """What in a command's output looks like a credential (the scanner is imported with the first command that prints)."""
    if not output:
        return []
    from mzagent_tui.agent.safety.credentials import find_credentials

    return find_credentials(output)


def _credentials_in(result: ProcessResult) -> tuple[list[Credential], list[str]]:
    """The credentials in every text of a command's output the model may be shown, and each
    secret's text: stdout and stderr together, and each apart. Each keeps its own first and last
    few kilobytes, and a failed command is shown its error output and its standard output apart:
    errors before and after a printed key fill the joint head and tail, and the key, early in the
    standard output, would be shown though the joint text never held it."""
    found: list[Credential] = []
    secrets: list[str] = []
    for stream in (result.output, result.stdout, result.stderr):
        more, spans = _credentials_as_shown(_whole(stream))
        found = found or more
        secrets += spans
    return found, secrets


def _credentials_as_shown(output: str) -> tuple[list[Credential], list[str]]:
    """The credentials in a command's output and each secret's text, found in the output as it
    came and as the model is shown it, without colour codes and control characters: `grep
    --color=always` splits a key with codes, a UTF-16 file interleaves it with NULs, and both
    are taken out before the model reads it."""
    found = _credentials(output)
    secrets = [output[item.start:item.end] for item in found]
    shown = strip_control(output)
    if shown != output:
        found_shown = _credentials(shown)
        found = found or found_shown
        secrets += [shown[item.start:item.end] for item in found_shown]
    return found, secrets


def _describe_credentials(found: list[Credential]) -> str:
    from mzagent_tui.agent.safety.credentials import describe

    return describe(found, of=" of the output")


def _masked(text: str, secrets: list[str]) -> str:
    """`text` with each secret replaced by the mask (longest first, so one inside another goes whole)."""
    from mzagent_tui.agent.safety.credentials import MASK

    for secret in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def _withheld(exit_code: int | None, what: str, tail: str) -> str:
    """The observation of a command whose output the user kept from the model: that it ran, why
    nothing is shown, and what the tool found after it (files changed); never the output."""
    status = "was stopped" if exit_code is None else f"ran (exit code {exit_code})"
    return (
        f"The command {status}, but its output was withheld: it looks like it holds a credential ({what}), and the user "
        "did not allow showing it to the model. Do not print it another way; go on without it, or say in your final answer what you need."
        + tail
    )


def _file_digest(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


PLAN_READ_ONLY_NOTE = (
    "Note: plan mode is on, so commands run with the project read-only (only the temp folder is writable); "
    "this one may have tried to write there. Put the change in your plan instead"
)

_BLOCKED = re.compile(r"Permission denied|Operation not permitted|EACCES|EPERM|Connection refused|Network is unreachable|Read-only file system", re.IGNORECASE)


_MISSING = re.compile(r"(/[^\s:'\"]+)'?: No such file or directory", re.MULTILINE)


def _looks_blocked(output: str, root: Path) -> bool:
    """A refusal, or a path outside the project the command was told is missing though it is
    there: the sandbox's view covers the home's unlisted dot-entries and other programs' /tmp."""
    if _BLOCKED.search(output):
        return True
    return any(os.path.lexists(path) and not Path(path).is_relative_to(root) for path in _MISSING.findall(output))


_UNITTEST_FAILURE = re.compile(r"^(?:FAIL|ERROR): (\w+) \(", re.MULTILINE)
_PYTEST_FAILURE = re.compile(r"^(?:FAILED|ERROR) (\S+::\S+)", re.MULTILINE)
MAX_NAMED_TESTS = 10


def failing_tests(output: str) -> list[str]:
    """The tests a unittest or pytest run reports as failed, in order: "FAIL: test_x (mod.Case.test_x)",
    "FAILED test_mod.py::Case::test_x - AssertionError". A small model guessed from the test file
    instead of reading a long report, so the names are said next to the status."""
    names = _UNITTEST_FAILURE.findall(output) + _PYTEST_FAILURE.findall(output)
    return list(dict.fromkeys(names))


def _report(ran: CommandOutcome, timeout: float, output_path: str) -> str:
    """The observation of a command that ran, before redaction: that the user edited it, its status
    and output (see _describe), then what the tool found after it (`ran.tail`)."""
    text = _describe(ran.result, timeout, output_path, ran.answer) + ran.tail
    return f"The user edited the command before running it: {ran.analysis.command}\n{text}" if ran.edited else text


def _describe(result: ProcessResult, timeout: float, output_path: str, answer: str) -> str:
    """Status first (`answer`: what a non-zero exit code means when it is not a failure); for a failure the error output (stderr) comes before the rest, because that
    is where the reason is; a cut output ends with a marker that says it is the end and how long
    the whole was, so a model cannot take a line of the head for the last line."""
    if result.cancelled:
        status = "The command was cancelled by the user and stopped."
    elif result.timed_out:
        status = (
            f"The command timed out after {timeout:.0f} s and was stopped. If it was waiting for input, "
            "run it non-interactively (commands cannot read input)."
        )
    elif result.exit_code == 0:
        status = "Command succeeded (exit code 0)."
    elif answer:
        status = f"Command ran (exit code {result.exit_code}: {answer}; for this program that is an answer, not an error)."
    else:
        status = f"Command FAILED with exit code {result.exit_code}."
    if result.stopped_background:
        status += " Background processes it left running were stopped."
    output = _shown(result.output, output_path)
    failed = result.exit_code not in (0, None) and not answer
    failing = failing_tests(output) if failed else []
    if failing:
        more = f" and {len(failing) - MAX_NAMED_TESTS} more" if len(failing) > MAX_NAMED_TESTS else ""
        status += f" Failing tests: {', '.join(failing[:MAX_NAMED_TESTS])}{more}."
    if not output.strip():
        return f"{status}\n(no output)"
    if failed and result.stderr.total_bytes and result.stdout.total_bytes:
        return (
            f"{status}\nError output (stderr):\n{_shown(result.stderr, output_path).rstrip()}\n"
            f"Standard output:\n{_shown(result.stdout, output_path).rstrip()}"
        )
    text = f"{status}\nOutput:\n{output.rstrip()}"
    if result.output.cut_bytes > 0:
        text += f"\n[end of output: {result.lines} lines in total; the line above is the last line]"
    return text


def _whole(stream: Stream) -> str:
    """What was kept of a stream (head and tail), as text."""
    return (stream.head + stream.tail).decode("utf-8", errors="replace")


def _shown(stream: Stream, output_path: str) -> str:
    head = strip_control(stream.head.decode("utf-8", errors="replace"))
    tail = strip_control(stream.tail.decode("utf-8", errors="replace"))
    if stream.cut_bytes <= 0:
        return head + tail
    if "\n" in tail[:-1]:
        tail = tail[tail.index("\n") + 1 :]  # start at a whole line
    return f"{head}\n[... {stream.cut_bytes} bytes cut; the full output ({stream.total_bytes} bytes) is saved in {output_path} ...]\n{tail}"
