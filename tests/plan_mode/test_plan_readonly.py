"""Plan mode changes nothing (issue #54, item 7): a command an allow rule runs while planning
(`pytest`, whose tests may write) sees the project read-only, and the model is told so. The
temp folder stays writable (tests need one), and the user's own `!` commands, which run in every
mode, still write. Each "nothing changed" has its control in ask mode."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mzagent_tui.agent.events import Notice, Observation, UserCommandOutput
from mzagent_tui.agent.planning import PLAN_MODE_NOTE
from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy, Rules
from mzagent_tui.agent.safety.sandbox import Sandbox
from mzagent_tui.agent.tools.shell import PLAN_READ_ONLY_NOTE
from tests.attack_helpers import action, command, git, needs_namespaces, needs_wall
from tests.conftest import Recorder, RecordingApprover, make_agent
from tests.scripted_server import answer_reply

WRITER = (
    "import os, pathlib, tempfile\n"
    "def test_writes():\n"
    "    scratch = pathlib.Path(tempfile.gettempdir()) / 'scratch'\n"
    "    scratch.write_text('ok')\n"
    "    assert scratch.read_text() == 'ok'\n"
    "    pathlib.Path('written.txt').write_text('x')\n"
)
"""A test that writes a scratch file in the temp folder, then one in the project."""
PYTEST = "pytest -q -p no:cacheprovider test_w.py"


def allowed(*prefixes: str) -> Rules:
    rules = Rules()
    for prefix in prefixes:
        rules.add("allow", prefix)
    return rules


def with_tests(project: Path) -> dict[Path, int]:
    """The writing test in the project; every path in it with its modification time."""
    (project / "test_w.py").write_text(WRITER)
    return {path: path.stat().st_mtime_ns for path in project.rglob("*")}


def planned(server, project: Path, line: str, mode: str, rules: Rules) -> tuple[str, RecordingApprover, Recorder]:  # noqa: ANN001
    """One command of the model's in `mode`, with the test runner of this Python on PATH."""
    server.script(action(command(line)), answer_reply())
    user = RecordingApprover(ApprovalDecision(True))
    environ = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "HOME": os.environ["HOME"]}
    agent, recorder = make_agent(server, project, approver=user, env=environ, command_timeout=90.0)
    agent.policy = Policy(mode, rules)
    agent.approver.policy = agent.policy
    try:
        agent.run("work")
    finally:
        agent.close()
    return recorder.of(Observation)[0].text, user, recorder


@needs_namespaces
def test_an_allowed_pytest_in_plan_mode_leaves_the_project_as_it_was(server, project: Path) -> None:
    before = with_tests(project)
    text, user, recorder = planned(server, project, PYTEST, "plan", allowed("pytest"))
    assert user.requests == [], text  # the allow rule ran it without a question
    assert "Read-only file system: 'written.txt'" in text and "1 failed" in text, text  # the scratch file was written: the failure is the project's
    assert PLAN_READ_ONLY_NOTE in text and "outside the sandbox" not in text, text
    assert not any("may have blocked" in n.text for n in recorder.of(Notice))  # nothing the user could lift
    assert not (project / "written.txt").exists()
    assert {path: path.stat().st_mtime_ns for path in project.rglob("*")} == before  # no __pycache__ either


@needs_wall
def test_control_the_same_pytest_in_ask_mode_writes_the_project(server, project: Path) -> None:
    with_tests(project)
    text, _, _ = planned(server, project, PYTEST, "ask", allowed("pytest"))
    assert "1 passed" in text and (project / "written.txt").read_text() == "x", text


CHANGER = (
    "import os, pathlib, sys\n"
    "for name, do in [\n"
    "    ('mode', lambda: os.chmod('keep.txt', 0o777)), ('folder', lambda: os.mkdir('made')),\n"
    "    ('file', lambda: pathlib.Path('new.txt').touch()), ('link', lambda: os.symlink('keep.txt', 'link')),\n"
    "    ('git', lambda: pathlib.Path('.git/config').write_text('[core]\\n\\tfsmonitor = x\\n')),\n"
    "    ('rename', lambda: os.rename('keep.txt', 'gone.txt')), ('delete', lambda: os.remove('gone.txt')),\n"
    "]:\n"
    "    try:\n"
    "        do()\n"
    "        print(name, 'done')\n"
    "    except OSError:\n"
    "        print(name, 'refused')\n"
)
"""A script an allow rule runs, trying every kind of change to the project."""
CHANGES = ("mode", "folder", "file", "link", "git", "rename", "delete")


def changer(project: Path) -> None:
    (project / "keep.txt").write_text("k\n")
    os.chmod(project / "keep.txt", 0o644)
    (project / "change.py").write_text(CHANGER)
    git(project, "init", "-q")  # a real repository: a .git folder git cannot read makes every command ask (hooks_path)
    (project / ".git" / "config").write_text("[core]\n")


@needs_namespaces
def test_a_command_in_plan_mode_cannot_delete_rename_make_or_chmod_anything(server, project: Path) -> None:
    changer(project)
    text, _, _ = planned(server, project, "python3 change.py", "plan", allowed("python3 change.py"))
    assert all(f"{name} refused" in text for name in CHANGES), text
    assert sorted(p.name for p in project.iterdir()) == [".git", "change.py", "keep.txt"]
    assert (project / "keep.txt").stat().st_mode & 0o777 == 0o644 and (project / ".git" / "config").read_text() == "[core]\n"


@needs_namespaces
def test_control_the_same_script_in_ask_mode_changes_all_but_the_repository(server, project: Path) -> None:
    changer(project)
    text, _, _ = planned(server, project, "python3 change.py", "ask", allowed("python3 change.py"))
    assert [f"{name} done" in text for name in CHANGES] == [True, True, True, True, False, True, True], text
    assert (project / "made").is_dir() and (project / "new.txt").exists() and (project / "link").is_symlink()
    assert not (project / "keep.txt").exists() and (project / ".git" / "config").read_text() == "[core]\n"


def test_the_model_is_told_the_project_is_read_only_while_planning(server, project: Path) -> None:
    server.script(answer_reply("1. change a.py"))
    agent, _ = make_agent(server, project)
    agent.policy.mode = "plan"
    agent.run("plan it")
    first_task = json.dumps(server.requests[0]["messages"][-1])
    assert PLAN_MODE_NOTE in first_task and "read-only" in PLAN_MODE_NOTE


@needs_wall
def test_the_users_own_command_still_writes_in_plan_mode(server, project: Path) -> None:
    agent, rec = make_agent(server, project)
    agent.policy.mode = "plan"
    agent.run("!echo mine > mine.txt")
    (outcome,) = rec.of(UserCommandOutput)
    assert outcome.exit_code == 0 and (project / "mine.txt").read_text() == "mine\n", outcome.text


def test_the_dialog_and_the_transcript_say_the_project_is_read_only(project: Path) -> None:
    sandbox = Sandbox(project, abi=6)
    assert sandbox.confinement(project_read_only=True).describe() == "sandbox: project read-only, no network"
    assert sandbox.confinement(network=True, project_read_only=True).describe() == "sandbox: project read-only, network allowed"
    assert sandbox.confinement().describe() == "sandbox: writes in the project, no network"  # control
    assert Sandbox(project, mode="off", abi=6).confinement(project_read_only=True).describe() == "no sandbox (turned off)"
