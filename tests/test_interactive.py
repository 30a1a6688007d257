"""Interactive programs are flagged before they run: the user is warned in the dialog, and the
model is pointed at the tools, whether the user runs the command or rejects it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy, PolicyApprover
from mzagent_tui.agent.safety.commands import analyse
from mzagent_tui.agent.safety.interactive import interactive_reason
from tests.conftest import RecordingApprover
from tests.test_tools_shell import Shell

INTERACTIVE = [
    "vim calc.py", "nano notes.txt", "emacs x", "cd src && vi a.py", "env TERM=xterm vim a", "bash -c 'nano a'",
    "python3", "python", "node", "timeout 5 python3", "less", "top", "htop", "watch ls", "ssh build-host",
    "git commit", "git commit -q", "git -C . commit", "git rebase -i HEAD~2", "git add -p", "npm init", "crontab -e", "telnet host 25",
]
NOT_INTERACTIVE = [
    "python3 script.py", "python3 -c 'print(1)'", "python3 -m pytest", "echo 1 | python3", "less README.md", "cat a | less",
    "top -b -n 1", "ssh host uptime", "git commit -m fix", "git commit -am fix", "git commit --message=fix", "git commit --amend --no-edit",
    "npm init -y", "emacs --batch -l build.el", "vim --version", "git status", "ls -la", "node app.js",
]


@pytest.mark.parametrize("command", INTERACTIVE)
def test_interactive_commands_are_recognised(command: str, tmp_path: Path) -> None:
    assert interactive_reason(analyse(command, tmp_path))


@pytest.mark.parametrize("command", NOT_INTERACTIVE)
def test_batch_commands_are_not_flagged(command: str, tmp_path: Path) -> None:
    assert interactive_reason(analyse(command, tmp_path)) == ""


def test_the_dialog_is_warned_and_a_rejection_points_the_model_at_the_tools(project: Path, tmp_path: Path) -> None:
    user = RecordingApprover(ApprovalDecision(False))
    shell = Shell(project, tmp_path, approver=PolicyApprover(user, Policy("ask")))
    result = shell.run("vim calc.py")
    assert user.requests[0].warning == "vim is an interactive editor: it will get no input here and would wait until the timeout."
    assert "The user rejected this command" in result.text
    assert "Note: vim is an interactive editor." in result.text and "write_to_file" in result.text


def test_a_run_interactive_command_ends_and_the_model_is_told_why_it_did_nothing(project: Path, tmp_path: Path) -> None:
    result = Shell(project, tmp_path, timeout=10).run("python3")
    assert result.text.startswith("Command succeeded (exit code 0).")
    assert "python3 without a script starts an interactive prompt" in result.text and "read_file" in result.text


def test_an_allowed_interactive_command_still_carries_the_note(project: Path, tmp_path: Path) -> None:
    shell = Shell(project, tmp_path, approver=PolicyApprover(RecordingApprover(ApprovalDecision(False)), Policy("yolo")))
    assert "Note: less without a file" in shell.run("less").text
