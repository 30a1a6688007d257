"""Plan mode in the core: reads and what auto-safe runs go through, nothing else runs or asks,
and the final answer is marked as a plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mzagent_tui.agent.assembly import assemble
from mzagent_tui.agent.events import ApprovalAnswered, FinalAnswer, Observation
from mzagent_tui.agent.planning import PLAN_MODE_NOTE
from mzagent_tui.agent.safety.approval import (
    PLAN_COMMAND_NOTE,
    PLAN_TOOL_NOTE,
    PLAN_WRITE_NOTE,
    ApprovalDecision,
    Policy,
    PolicyApprover,
    Rules,
)
from mzagent_tui.agent.safety.approval_requests import (
    CommandApproval,
    GitEntryApproval,
    PlantedFileApproval,
    SecretReadApproval,
    ToolCallApproval,
    WriteApproval,
)
from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.sessions.export import to_markdown
from mzagent_tui.agent.sessions.history import load_session
from tests.conftest import Recorder, RecordingApprover, config_for
from tests.scripted_server import Reply, answer_reply, last_user, read_reply, write_reply
from tests.test_policy import ROOT, TABLE, standard_rules


def plan_approver(rules: Rules | None = None) -> tuple[PolicyApprover, RecordingApprover]:
    user = RecordingApprover(ApprovalDecision(True))
    return PolicyApprover(user, Policy("plan", rules or standard_rules())), user


@pytest.mark.parametrize(("command", "auto_safe"), [(row[0], row[2]) for row in TABLE])
def test_plan_mode_runs_what_auto_safe_runs_and_refuses_the_rest_without_asking(command: str, auto_safe: str) -> None:
    approver, user = plan_approver()
    decision = approver.approve(CommandApproval(command=command, cwd=str(ROOT)))
    assert decision.approved == (auto_safe == "allow")
    if auto_safe == "ask":
        assert decision.note == PLAN_COMMAND_NOTE
    assert user.requests == []


def test_plan_mode_refuses_writes_and_unmarked_tools_but_a_secret_read_still_asks() -> None:
    approver, user = plan_approver()
    for kind in (WriteApproval, PlantedFileApproval, GitEntryApproval):
        decision = approver.approve(kind(cwd=str(ROOT), path="a.py", content="x"))
        assert not decision.approved and decision.note == PLAN_WRITE_NOTE
    assert approver.approve(ToolCallApproval(cwd=str(ROOT), tool="mcp__fs__read", arguments={}, read_only=True)).approved
    refused = approver.approve(ToolCallApproval(cwd=str(ROOT), tool="mcp__fs__write", arguments={}))
    assert not refused.approved and refused.note == PLAN_TOOL_NOTE
    assert user.requests == []
    assert approver.approve(SecretReadApproval(what="read .env", cwd=str(ROOT))).approved
    assert [type(r) for r in user.requests] == [SecretReadApproval]


def test_a_command_the_sandbox_may_have_blocked_is_refused_in_plan_mode_not_asked() -> None:
    approver, user = plan_approver()
    decision = approver.approve(CommandApproval(command="ls", cwd=str(ROOT), ask_even_if_allowed=True))
    assert not decision.approved and user.requests == []


def test_a_planning_run_reads_runs_only_safe_commands_and_answers_with_a_plan(server, project: Path) -> None:
    (project / "app.py").write_text("print('hi')\n")
    plan = "1. Add a greet function to app.py\\n2. Run the tests"
    server.script(
        read_reply("app.py"),
        Reply('<thought>look</thought><action>run_terminal_command("ls")</action>'),
        Reply('<thought>try</thought><action>run_terminal_command("touch made.txt")</action>'),
        write_reply("app.py", "def greet():\n    pass\n"),
        answer_reply(plan),
    )
    user = RecordingApprover(ApprovalDecision(True))
    recorder = Recorder()
    environ = {"PATH": "/usr/bin:/bin"}
    agent = assemble(config_for(server, project, Policy("plan"), environ), user, recorder)
    result = agent.run("add a greet function")

    assert result.final_answer is not None and result.final_answer.startswith("1. Add a greet")
    assert recorder.of(FinalAnswer) == [FinalAnswer(result.final_answer, plan=True)]
    assert user.requests == []
    assert (project / "app.py").read_text() == "print('hi')\n" and not (project / "made.txt").exists()
    first_task = server.requests[0]["messages"][1]["content"]
    assert PLAN_MODE_NOTE in first_task
    observations = recorder.of(Observation)
    assert observations[0].ok and "print('hi')" in observations[0].text
    assert observations[1].ok and "app.py" in observations[1].text
    assert not observations[2].ok and "plan mode is on" in observations[2].text
    assert not observations[3].ok and "nothing is written while planning" in observations[3].text
    assert "nothing is written while planning" in last_user(server.requests[4])
    assert [a.approved for a in recorder.of(ApprovalAnswered)] == [True, False]


def test_after_plan_mode_the_next_task_runs_normally_and_its_answer_is_no_plan(server, project: Path) -> None:
    server.script(answer_reply("1. write it"), write_reply("new.txt", "x\n"), answer_reply("written"))
    policy = Policy("plan")
    recorder = Recorder()
    agent = assemble(config_for(server, project, policy), RecordingApprover(ApprovalDecision(True)), recorder)
    agent.run("plan a file")
    policy.mode = "auto-safe"
    agent.run("Carry out this plan:\n1. write it")
    assert (project / "new.txt").read_text() == "x\n"
    assert [a.plan for a in recorder.of(FinalAnswer)] == [True, False]
    assert PLAN_MODE_NOTE not in json.dumps(server.requests[1]["messages"][-1])
    exported = to_markdown(load_session(agent.session.folder), Redactor([]))
    assert "**Plan:**\n\n1. write it" in exported and "**Final answer:**\n\nwritten" in exported
