"""The aids at one point, after a command ran, from its plain outcome. The shell tool runs the
command and reports the truth (status, an exit code that is an answer, output, files changed, a
possible sandbox refusal, a script without the execute permission); what is added here is advice
for a small model, switchable by its name in the seam's catalogue. Each command also tells the
aids' state a Python file it crashed in."""

from __future__ import annotations

import hashlib
from pathlib import Path

from mzagent_tui.agent.aids.examples import checked_calls, matched_note, mismatch_note, printed_examples
from mzagent_tui.agent.aids.seam import Aids
from mzagent_tui.agent.aids.state import AidState
from mzagent_tui.agent.aids.tracebacks import python_failure
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.registry import CommandOutcome


class AfterCommand:
    """The notes for each command of a session; it remembers which docstring examples a file's
    current content has printed right, to say once when all of them have."""

    def __init__(self) -> None:
        self._matched: dict[Path, tuple[str, set[str]]] = {}

    def notes(self, ctx: ToolContext, aids: Aids, ran: CommandOutcome) -> str:
        """The notes for one command, each on a line of its own ("" when none applies); what they
        quote of the output is redacted like the output itself."""
        exit_code = ran.result.exit_code
        if exit_code not in (0, None) and not ran.answer:
            failure = python_failure(ran.output, ctx.root)
            if failure is not None and failure.path in aids.state.changed:
                aids.state.crashed[failure.path] = f"it failed when a command ran it: {failure.describe()}"
        if exit_code != 0 or not aids.on("examples"):
            return ""
        return ctx.redact.command_output(aids.note("examples", self._against_examples(ctx, aids.state, ran)))

    def _against_examples(self, ctx: ToolContext, state: AidState, ran: CommandOutcome) -> str:
        """A note when the command printed calls that docstring examples of a Python file the model
        wrote give other results for (the file is then not "a step done" if written again), or when
        every checked example of the file has now printed what it should since the file last changed."""
        written = sorted(path for path in state.changed if path.suffix == ".py")
        printed = printed_examples(ran.analysis.script, ran.stdout, written) if written else []
        notes = []
        for path in dict.fromkeys(found.path for found in printed):
            rel = str(path.relative_to(ctx.root))
            in_file = [found for found in printed if found.path == path]
            wrong = [found for found in in_file if not found.matches]
            if wrong:
                state.failed[path] = "a command printed " + "; and ".join(
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
