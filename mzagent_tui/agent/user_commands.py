"""`!command`: a shell command the user types instead of a task; `!&command` starts it in the
background.

It runs without a dialog (the user typed it) but through the same path as the model's commands:
the sandbox, the process runner with its timeout and group kill, the snapshots for undo. What it
printed joins the conversation as the user's own message, so the model sees it with the next task.
A background one runs on (no timeout) until it ends, is stopped, or the session ends.
"""

from __future__ import annotations

from mzagent_tui.agent.events import EventSink, UserCommand, UserCommandOutput
from mzagent_tui.agent.tools.shell import ShellTool

PREFIX = "!"
BACKGROUND = "&"
USAGE = (
    "`!` needs a command: `!ls -la` or `!pytest -x` runs it in the project, sandboxed like the "
    "agent's commands and without a dialog, and the model sees its output with your next task; "
    "`!&command` starts it in the background"
)


def typed_command(task: str) -> str | None:
    """The command of a task that starts with `!` ("" for `!` alone); None for a task for the model."""
    stripped = task.strip()
    if not stripped.startswith(PREFIX):
        return None
    return stripped[len(PREFIX):].strip()


def run_user_command(shell: ShellTool, command: str, emit: EventSink) -> UserCommandOutput:
    """Run it, reporting the command, the files it changed and how it ended; `&command` is
    started in the background and reported once it printed its first output."""
    emit(UserCommand(command))
    if command.startswith(BACKGROUND):
        process = shell.start_for_user(command.removeprefix(BACKGROUND).strip())
        text = shell.background_output(process.id).text
        outcome = UserCommandOutput(command, text, process.result.exit_code if process.result else 0, str(process.output_path))
    else:
        result, text, output_path = shell.run_for_user(command)
        outcome = UserCommandOutput(command, text, result.exit_code, output_path)
    emit(outcome)
    return outcome


def message_for_model(outcome: UserCommandOutput) -> str:
    """The user message that tells the model what the user ran and saw."""
    if outcome.command.startswith(BACKGROUND):
        command = outcome.command.removeprefix(BACKGROUND).strip()
        return f"I started `{command}` myself in the background, in the project:\n{outcome.text}"
    code = "none (it was stopped)" if outcome.exit_code is None else str(outcome.exit_code)
    return f"I ran `{outcome.command}` myself in the project; exit code {code}; output:\n{outcome.text}"
