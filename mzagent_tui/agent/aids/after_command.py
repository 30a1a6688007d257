"""The aids at one point, after a command ran, from its plain outcome. The shell tool runs the
command and reports the truth (status, output, files changed, a possible sandbox refusal);
everything done here is advice for a small model, each piece switchable by its name in the seam's
catalogue: `exit_answered` reads an exit code that is an answer (before the user's after_tool
hooks see the result), `AfterCommand.notes` adds the notes."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from mzagent_tui.agent.aids.examples import checked_calls, matched_note, mismatch_note, printed_examples
from mzagent_tui.agent.aids.in_place import NOTHING_CHANGED, edits_in_place
from mzagent_tui.agent.aids.exit_answer import exit_answer
from mzagent_tui.agent.aids.seam import Aids
from mzagent_tui.agent.aids.seen import named_files
from mzagent_tui.agent.aids.tracebacks import python_failure
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.registry import CommandOutcome, ToolResult
from mzagent_tui.agent.tools.shell import report
from mzagent_tui.agent.tools.syntax_check import ONE_LINE_BLOCK, one_line_block


def exit_answered(ctx: ToolContext, aids: Aids, result: ToolResult) -> ToolResult:
    """A command's result, reported as an answer rather than a failure when its exit code is one
    (aid `exit_answer`: `grep` 1, no line matched; `diff` 1, the files differ)."""
    ran = result.command
    if ran is None or not aids.on("exit_answer"):
        return result
    meaning = exit_answer(ran.analysis, ran.result.exit_code)
    if not meaning:
        return result
    aids.fired("exit_answer")
    ran = dataclasses.replace(ran, answer=meaning)
    text = ctx.redact.command_output(report(ran, ctx.command_timeout, result.output_path or ""))
    return dataclasses.replace(result, text=text, ok=True, command=ran)


class AfterCommand:
    """The notes for each command of a session; it remembers which docstring examples a file's
    current content has printed right, to say once when all of them have."""

    def __init__(self) -> None:
        self._matched: dict[Path, tuple[str, set[str]]] = {}

    def notes(self, ctx: ToolContext, aids: Aids, ran: CommandOutcome) -> str:
        """The notes for one command, each on a line of its own ("" when none applies); what they
        quote of the output is redacted like the output itself."""
        result, command = ran.result, ran.analysis.command
        ctx.seen.update(named_files(command, ran.analysis.script, ctx.root))
        output = ran.output
        notes = ""
        if ran.not_executable:
            notes += aids.note("not_executable", "\n" + not_executable_note(ran.not_executable))
        if ran.recorded and not ran.changed and result.exit_code == 0 and edits_in_place(ran.analysis.script):
            notes += aids.note("in_place_nothing_changed", "\n" + NOTHING_CHANGED)
        if result.exit_code == 0 and aids.on("examples"):
            notes += aids.note("examples", self._against_examples(ctx, ran))
        if result.exit_code not in (0, None) and not ran.answer:
            failure = python_failure(output, ctx.root)
            if failure is not None and failure.path in ctx.changed:
                ctx.crashed[failure.path] = f"it failed when a command ran it: {failure.describe()}"
            if "SyntaxError" in output and "python" in command and one_line_block(command):
                notes += aids.note("one_line_block", f"\nNote: {ONE_LINE_BLOCK}. In a command, write the code to a .py file with write_to_file and run that file.")
        return ctx.redact.command_output(notes)

    def _against_examples(self, ctx: ToolContext, ran: CommandOutcome) -> str:
        """A note when the command printed calls that docstring examples of a Python file the model
        wrote give other results for (the file is then not "a step done" if written again), or when
        every checked example of the file has now printed what it should since the file last changed."""
        written = sorted(path for path in ctx.changed if path.suffix == ".py")
        printed = printed_examples(ran.analysis.script, ran.stdout, written) if written else []
        notes = []
        for path in dict.fromkeys(found.path for found in printed):
            rel = str(path.relative_to(ctx.root))
            in_file = [found for found in printed if found.path == path]
            wrong = [found for found in in_file if not found.matches]
            if wrong:
                ctx.failed[path] = "a command printed " + "; and ".join(
                    f"{found.printed} for {found.call}, where its docstring says {found.expected}" for found in wrong
                )
                notes.append("\n" + mismatch_note(rel, wrong))
                continue
            try:
                with path.open("rb") as file:
                    digest = hashlib.file_digest(file, "sha256").hexdigest()
            except OSError:
                continue
            needed = set(checked_calls(path))
            earlier, matched = self._matched.get(path, (None, set()))
            if earlier != digest:
                matched = set()
            told = earlier == digest and needed <= matched
            matched |= {found.call for found in in_file}
            self._matched[path] = (digest, matched)
            if needed and not told and needed <= matched:
                notes.append("\n" + matched_note(rel))
        return "".join(notes)


def not_executable_note(names: list[str]) -> str:
    shown = ", ".join(names)
    first = names[0].removeprefix("./")
    return (
        f"Note: {shown} {'is' if len(names) == 1 else 'are'} not executable: the file has no execute permission (files "
        f"write_to_file creates have none), not a sandbox rule. Run it through its interpreter (bash {first}, python3 "
        f"{first}), or make it executable first: chmod +x {first}"
    )
