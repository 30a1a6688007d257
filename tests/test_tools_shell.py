"""run_terminal_command with real processes: timeouts, cancel, bounded output, no survivors."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import psutil
import pytest

from mzagent_tui.agent.aids.after_command import AfterCommand
from mzagent_tui.agent.aids.seam import CATALOGUE, Aids
from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.events import ApprovalAnswered, Observation
from mzagent_tui.agent.safety.approval import ApprovalDecision, PolicyApprover, StaticApprover
from mzagent_tui.agent.safety.approval_requests import ApprovalRequest
from mzagent_tui.agent.safety.secrets import Redactor, command_env
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.registry import ToolResult
from mzagent_tui.agent.tools.shell import ShellTool
from tests import marked
from tests.conftest import CancelWhen, Recorder, make_agent
from tests.scripted_server import Reply, answer_reply

MARK = "MZAGENT_TEST_MARK"


def survivors(tag: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["environ", "status"]):
        try:
            if (proc.info["environ"] or {}).get(MARK) == tag and proc.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


class Shell:
    def __init__(self, project: Path, tmp_path: Path, approver=None, timeout: float = 10.0, environ=None) -> None:  # noqa: ANN001
        self.tag = f"{tmp_path.name}-{time.monotonic_ns()}"
        self.recorder = Recorder()
        self.session = Session(tmp_path / "session", Redactor(["sk-redact-me-please"]))
        env = command_env({"PATH": os.environ["PATH"], MARK: self.tag, **(environ or {})}, pass_env=[MARK])
        self.ctx = ToolContext(project, self.session, self.recorder, approver or StaticApprover(True), self.session.redact, env=env, command_timeout=timeout)
        self.tool = ShellTool(self.ctx)
        self.after = AfterCommand()
        self.aids = Aids()

    def run(self, command: str) -> ToolResult:
        """The tool's result with the observation the model gets, as the loop makes it: the
        after-command aids' notes added."""
        result = self.tool.run_terminal_command(command)
        notes = self.after.notes(self.ctx, self.aids, result.command) if result.command is not None else ""
        return dataclasses.replace(result, text=result.text + notes)


@pytest.fixture
def shell(project: Path, tmp_path: Path):  # noqa: ANN201
    created: list[Shell] = []

    def make(**kwargs) -> Shell:  # noqa: ANN003
        created.append(Shell(project, tmp_path, **kwargs))
        return created[-1]

    yield make
    for item in created:
        assert survivors(item.tag) == [], "a process of the test survived"


def test_exit_code_output_and_cwd(shell, project: Path) -> None:
    result = shell().run("pwd; echo out; echo err >&2; exit 3")
    assert result.exit_code == 3 and not result.ok
    assert "exit code 3" in result.text
    assert str(project) in result.text and "out" in result.text and "err" in result.text


def test_a_token_in_a_remote_url_is_redacted_from_what_the_model_sees(shell, project: Path) -> None:
    """`git remote -v` prints the remote's URL with whatever credentials it carries."""
    result = shell().run("git init -q . && git remote add origin https://x-access-token:tok-12345@example.com/o/r.git && git remote -v")
    assert result.ok and "tok-12345" not in result.text
    assert "https://x-access-token:[redacted]@example.com/o/r.git (fetch)" in result.text


def test_no_output_is_said_plainly(shell) -> None:
    result = shell().run("true")
    assert result.ok and "exit code 0" in result.text and "(no output)" in result.text


def test_stdin_is_empty_so_readers_return_at_once(shell) -> None:
    result = shell(timeout=60).run("python3 -c 'import sys; print(repr(sys.stdin.read()))'; cat; read x; echo after")
    assert "''" in result.text and "after" in result.text and "timed out" not in result.text


def test_timeout_kills_the_whole_group(shell) -> None:
    sh = shell(timeout=1.0)
    started = time.monotonic()
    result = sh.run("sleep 300 & sleep 300; echo never")
    assert time.monotonic() - started < 60
    assert "timed out after 1 s" in result.text and "never" not in result.text
    assert result.exit_code is None


def test_processes_that_ignore_sigterm_are_killed(shell) -> None:
    sh = shell(timeout=1.0)
    result = sh.run("trap '' TERM; sleep 300")
    assert "timed out" in result.text


def test_background_children_left_behind_are_stopped(shell) -> None:
    sh = shell()
    started = time.monotonic()
    result = sh.run("(sleep 300 &) ; nohup sleep 300 >/dev/null 2>&1 & echo started")
    assert time.monotonic() - started < 60
    assert "started" in result.text and "Background processes" in result.text


def test_huge_output_is_bounded_and_saved(shell) -> None:
    sh = shell(timeout=60)
    rss_before = psutil.Process().memory_info().rss
    result = sh.run("yes 0123456789 | head -c 100000000; echo; echo END")
    rss_after = psutil.Process().memory_info().rss
    assert rss_after - rss_before < 50 * 1024 * 1024
    assert "bytes cut" in result.text and "END" in result.text
    assert len(result.text) < 12_000
    saved = Path(result.output_path)
    assert saved.stat().st_size == 64 * 1024 * 1024


def test_a_long_output_ends_with_a_marker_naming_the_last_line_and_the_true_count(shell) -> None:
    result = shell().run("seq 1 100000")
    *_, last, marker = result.text.splitlines()
    assert last == "100000"
    assert marker == "[end of output: 100000 lines in total; the line above is the last line]"
    tail_start = result.text.split("bytes cut", 1)[1].splitlines()[1]
    assert tail_start.isdigit() and int(tail_start) > 90000  # the tail starts at a whole line


def test_a_short_output_has_no_end_marker(shell) -> None:
    assert "end of output" not in shell().run("seq 1 5").text


def test_a_failed_command_shows_its_error_output_first(shell) -> None:
    result = shell().run("seq 1 3000; echo 'fatal: the real reason' >&2; exit 2")
    lines = result.text.splitlines()
    assert lines[:3] == ["Command FAILED with exit code 2.", "Error output (stderr):", "fatal: the real reason"]
    assert lines[3] == "Standard output:" and "3000" in result.text


def test_a_failure_with_only_error_output_shows_it_once(shell) -> None:
    result = shell().run("echo oops >&2; exit 1")
    assert result.text == "Command FAILED with exit code 1.\nOutput:\noops"


def test_a_failed_test_run_names_its_failing_tests_next_to_the_status(shell, project: Path) -> None:
    """unittest and pytest reports are long; the failing tests' names come first."""
    (project / "test_units.py").write_text(
        "import unittest\n\n\nclass Units(unittest.TestCase):\n"
        "    def test_ok(self):\n        self.assertEqual(1, 1)\n\n"
        "    def test_metres(self):\n        self.assertEqual(100, 10)\n\n"
        "    def test_grams(self):\n        raise KeyError('g')\n"
    )
    unit = shell().run("python3 -m unittest test_units")
    assert unit.text.splitlines()[0] == "Command FAILED with exit code 1. Failing tests: test_grams, test_metres."
    pytest_run = shell().run("python3 -m pytest -q -p no:cacheprovider test_units.py")
    assert pytest_run.text.splitlines()[0] == (
        "Command FAILED with exit code 1. Failing tests: test_units.py::Units::test_grams, test_units.py::Units::test_metres."
    )
    passing = shell().run("python3 -m unittest test_units.Units.test_ok")
    assert "Failing tests" not in passing.text


@pytest.mark.parametrize(
    ("command", "meaning"),
    [
        ("grep -r flavour memo.txt", "no line matched"),
        ("cat memo.txt | grep -c flavour", "no line matched"),
        ("bash -c 'grep flavour memo.txt'", "no line matched"),
        ("LC_ALL=C /bin/grep -w flavour memo.txt", "no line matched"),
        ("diff memo.txt other.txt", "the files differ"),
        ("test -f missing.txt", "the condition is false"),
    ],
)
def test_an_exit_code_that_is_an_answer_is_not_reported_as_a_failure(shell, project: Path, command: str, meaning: str) -> None:
    """grep's 1 means "no match", diff's "they differ": told "FAILED", a small model rewrote a
    file whose check had found nothing left to replace."""
    (project / "memo.txt").write_text("the flavor of the tea\n")
    (project / "other.txt").write_text("the sea\n")
    result = shell().run(command)
    assert result.exit_code == 1 and result.ok
    assert result.text.splitlines()[0] == f"Command ran (exit code 1: {meaning}; for this program that is an answer, not an error)."


@pytest.mark.parametrize(
    "command",
    [
        "grep flavour memo.txt && echo found",  # the status may be echo's or grep's
        "echo start; grep flavour memo.txt",
        "grep flavour memo.txt | wc -l; exit 1",
        "grep flavour missing.txt",  # exit code 2: an error
        "python3 -c 'import sys; sys.exit(1)'",
    ],
)
def test_an_exit_code_from_elsewhere_is_still_a_failure(shell, project: Path, command: str) -> None:
    (project / "memo.txt").write_text("the flavor of the tea\n")
    result = shell().run(command)
    assert not result.ok
    assert result.text.startswith("Command FAILED with exit code")


def test_escape_sequences_are_stripped(shell) -> None:
    result = shell().run(r"printf '\033[2J\033]0;title\007\033]52;c;ZXZpbA==\007plain\033[31m red\033[0m\n'")
    assert "\x1b" not in result.text and "\x07" not in result.text
    assert "plain red" in result.text and "ZXZpbA" not in result.text


def test_only_allowed_variables_are_inherited(shell) -> None:
    sh = shell(environ={"OPENAI_API_KEY": "sk-redact-me-please", "GITHUB_TOKEN": "ghp_x", "MAIL_PASS": "pw", "LANG": "C.UTF-8"})
    result = sh.run("env")
    assert "LANG=C.UTF-8" in result.text
    assert "OPENAI_API_KEY" not in result.text and "GITHUB_TOKEN" not in result.text and "MAIL_PASS" not in result.text


def test_secret_values_are_redacted_from_output(shell) -> None:
    result = shell().run("echo sk-redact-me-please")
    assert "sk-redact-me-please" not in result.text and "[redacted]" in result.text


def test_interactive_programs_fail_fast(shell, project: Path) -> None:
    sh = shell(timeout=60)
    started = time.monotonic()
    result = sh.run("git init -q . && git -c user.name=a -c user.email=a@b commit --allow-empty")
    assert time.monotonic() - started < 30
    assert "exit code" in result.text and result.exit_code != 0


def test_rejection_is_an_observation_with_the_reason(shell) -> None:
    sh = shell(approver=StaticApprover(False, note="not on my machine"))
    result = sh.run("rm -rf ~/important")
    assert not result.ok and "rejected" in result.text and "not on my machine" in result.text
    assert sh.recorder.of(ApprovalAnswered)[0].approved is False


def test_edited_command_runs_instead(shell) -> None:
    class Editor:
        def approve(self, request: ApprovalRequest) -> ApprovalDecision:
            return ApprovalDecision(True, command="echo edited")

    result = shell(approver=Editor()).run("echo original")
    assert "edited" in result.text and "original" not in result.text.split("\n", 1)[1]


def test_always_allow_is_a_prefix_rule_that_fails_closed(shell) -> None:
    asked: list[str] = []

    class Once:
        def approve(self, request: ApprovalRequest) -> ApprovalDecision:
            asked.append(request.summary)
            return ApprovalDecision(True, always_prefix="echo") if len(asked) == 1 else ApprovalDecision(False)

    sh = shell(approver=PolicyApprover(Once()))
    sh.run("echo one")
    assert "two" in sh.run("echo two").text
    assert "rejected" in sh.run("echo three; rm -rf x").text
    assert "rejected" in sh.run("echo $(whoami)").text
    assert asked == ["echo one", "echo three; rm -rf x", "echo $(whoami)"]


@pytest.mark.parametrize("command", ["", "   ", "a\x00b", "x" * 100_001])
def test_bad_commands_are_refused_before_asking(shell, command: str) -> None:
    from mzagent_tui.agent.tools.registry import ToolError

    with pytest.raises(ToolError):
        shell().run(command)


def test_cancel_stops_a_running_command(shell) -> None:
    sh = shell(timeout=60)
    token = CancelToken()
    sh.ctx.cancel = token
    mark = marked.marker(300)
    watcher = CancelWhen(token, lambda: bool(marked.alive(mark)))
    started = time.monotonic()
    result = sh.run(f"sleep {mark}")
    assert watcher.join()  # cancelled while the command ran
    assert time.monotonic() - started < 60
    assert "cancelled" in result.text
    assert not marked.alive(mark)


def test_output_file_is_in_the_session_folder(shell) -> None:
    sh = shell()
    result = sh.run("echo saved")
    assert Path(result.output_path).is_relative_to(sh.session.folder)
    assert Path(result.output_path).read_text() == "saved\n"


def test_output_of_only_blank_lines_is_no_output(shell) -> None:
    assert shell().run("printf '\\n\\n'").text == "Command succeeded (exit code 0).\n(no output)"


def test_the_tool_itself_reports_an_exit_code_that_is_an_answer(shell, project: Path) -> None:
    """grep's 1 is a fact of the command, said by the tool: with every aid switched off it is
    still an answer, not a failure."""
    (project / "memo.txt").write_text("the flavor of the tea\n")
    sh = shell()
    sh.aids = Aids([aid.name for aid in CATALOGUE])
    result = sh.run("grep flavour memo.txt")
    assert result.ok and result.command.answer == "no line matched" and result.exit_code == 1
    assert result.text == "Command ran (exit code 1: no line matched; for this program that is an answer, not an error).\n(no output)"


def test_an_answer_keeps_the_user_s_edit_and_what_followed_the_output(shell, project: Path) -> None:
    """The report is made again with the answer: the user's edit and the files changed stay where they were."""

    class Editor:
        def approve(self, request: ApprovalRequest) -> ApprovalDecision:
            return ApprovalDecision(True, command="tee made.txt < memo.txt | grep coffee")

    (project / "memo.txt").write_text("tea\n")
    result = shell(approver=Editor()).run("grep coffee memo.txt")
    assert result.ok and result.text == (
        "The user edited the command before running it: tee made.txt < memo.txt | grep coffee\n"
        "Command ran (exit code 1: no line matched; for this program that is an answer, not an error).\n(no output)\n"
        "Files changed by the command: made.txt (created)."
    )


def test_a_command_starts_when_the_agent_holds_more_than_1024_descriptors(server, project: Path) -> None:  # noqa: ANN001
    """select() refuses a descriptor numbered 1,024 or more: a long-lived agent (or a test worker)
    got "filedescriptor out of range" for every command once it held that many."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the descriptor limit here is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200) if hard == resource.RLIM_INFINITY else min(max(soft, 1200), hard), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        assert max(held) >= 1024
        server.script(Reply('<action>run_terminal_command("echo high-fd-ok")</action>'), answer_reply())
        agent, recorder = make_agent(server, project)
        agent.run("t")
        assert "high-fd-ok" in recorder.of(Observation)[0].text
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
