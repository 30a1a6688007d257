"""`run_terminal_command`: ask the user, run in the project folder, report in plain words."""

from __future__ import annotations

from mzagent_tui.agent.approval import ApprovalRequest
from mzagent_tui.agent.events import ApprovalAnswered
from mzagent_tui.agent.textsafe import strip_control
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.process import ProcessResult, run_command
from mzagent_tui.agent.tools.registry import ToolError, ToolResult

MAX_COMMAND_CHARS = 100_000


class ShellTool:
    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx

    def run_terminal_command(self, command: str) -> ToolResult:
        """Run a shell command in the project folder and return its exit code and output. Commands cannot read input (stdin is empty) and the user must approve each one."""
        ctx = self._ctx
        if not isinstance(command, str) or not command.strip():
            raise ToolError("the command is empty")
        if "\x00" in command:
            raise ToolError("the command contains a NUL byte")
        if len(command) > MAX_COMMAND_CHARS:
            raise ToolError(f"the command is longer than {MAX_COMMAND_CHARS} characters; write a script file and run that")
        decision = ctx.approver.approve(ApprovalRequest("command", command, str(ctx.root), ctx.thought))
        to_run = decision.command or command
        ctx.emit(ApprovalAnswered(decision.approved, to_run, decision.note))
        if not decision.approved:
            reason = f" Their reason: {decision.note.rstrip('.')}." if decision.note else ""
            return ToolResult(
                f"The user rejected this command, so it was not run.{reason} "
                "Do not run it again unchanged; take another way or give a final answer explaining what is needed.",
                ok=False,
            )
        output_path = ctx.session.output_path()
        result = run_command(to_run, ctx.root, ctx.env, ctx.command_timeout, ctx.cancel, output_path)
        text = _describe(result, ctx.command_timeout, str(output_path))
        if to_run != command:
            text = f"The user edited the command before running it: {to_run}\n{text}"
        return ToolResult(ctx.redact(text), ok=result.exit_code == 0, exit_code=result.exit_code, output_path=str(output_path))


def _describe(result: ProcessResult, timeout: float, output_path: str) -> str:
    if result.cancelled:
        status = "The command was cancelled by the user and stopped."
    elif result.timed_out:
        status = (
            f"The command timed out after {timeout:.0f} s and was stopped. If it was waiting for input, "
            "run it non-interactively (commands cannot read input)."
        )
    elif result.exit_code == 0:
        status = "Command succeeded (exit code 0)."
    else:
        status = f"Command FAILED with exit code {result.exit_code}."
    if result.stopped_background:
        status += " Background processes it left running were stopped."
    head = strip_control(result.head.decode("utf-8", errors="replace"))
    if result.cut_bytes > 0:
        tail = strip_control(result.tail.decode("utf-8", errors="replace"))
        output = (
            f"{head}\n[... {result.cut_bytes} bytes cut; the full output "
            f"({result.total_bytes} bytes) is saved in {output_path} ...]\n{tail}"
        )
    else:
        output = head + strip_control(result.tail.decode("utf-8", errors="replace"))
    if not output.strip():
        return f"{status}\n(no output)"
    return f"{status}\nOutput:\n{output.rstrip()}"
