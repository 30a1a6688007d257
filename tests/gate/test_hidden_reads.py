"""Reads the gate must see through in auto-safe: jq reading the environment with a space after
`$`, and a pattern given by an attached option (`grep -e.`) that takes the file for the pattern.
Each asserts the secret does not reach the model unasked. (Round five of the outside attacks.)
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from mzagent_tui.agent.events import Observation
from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy, Rules
from tests.attack_helpers import action, command, git, run
from tests.conftest import RecordingApprover, make_agent
from tests.scripted_server import answer_reply

# jq reading the environment with a space after `$` ---------------------------------------------


@pytest.mark.parametrize("text", ["$ ENV.VIRTUAL_ENV", "$\tENV | .VIRTUAL_ENV", "$ # a comment\nENV.VIRTUAL_ENV"])
def test_jq_cannot_read_the_environment_through_a_spaced_dollar_in_auto_safe(server, project: Path, text: str) -> None:
    """jq 1.6 reads `$ ENV` as `$ENV`; the check looked for `$ENV` and `env` only."""
    marker = "env-marker-77aa"
    server.script(action(command(f"jq -n {shlex.quote(text)}")), answer_reply())
    user = RecordingApprover(ApprovalDecision(False))
    agent, recorder = make_agent(server, project, approver=user, env={"PATH": os.environ["PATH"], "VIRTUAL_ENV": marker})
    agent.policy = Policy("auto-safe", Rules())
    agent.approver.policy = agent.policy
    try:
        agent.run("work")
    finally:
        agent.close()
    assert user.requests, "ran without asking"
    assert not any(marker in o.text for o in recorder.of(Observation))


# A pattern given by an attached option: the file taken for the pattern ------------------------


@pytest.mark.parametrize("text", ["grep -e. .env", "grep -he. .env README", "grep -fpats .env", "rg -e. .env", "git grep -e. -- .env", "grep -e. {outside}/notes.txt"])
def test_a_pattern_attached_to_its_option_does_not_hide_the_file_read_in_auto_safe(server, project: Path, outside: Path, text: str) -> None:
    """`grep -e PAT FILE` is known to take the pattern from -e; `-e.` (attached, or last in a
    cluster) was not, so FILE was read as the pattern and never checked: the project's `.env`,
    or a file outside the project, printed without asking."""
    git(project, "init", "-q", ".")
    (project / ".env").write_text("API_KEY=sk-env-secret-77aa\n")
    (project / "README").write_text("readme\n")
    (project / "pats").write_text(".\n")
    (outside / "notes.txt").write_text("outside-secret-77aa\n")
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, command(text.format(outside=outside)), mode="auto-safe", approver=user)
    assert "77aa" not in texts[0], texts[0]


def test_an_allow_rule_for_grep_does_not_cover_an_attached_pattern_reading_a_secret(server, project: Path) -> None:
    """In ask mode with `allow = ["grep"]`, a read of a secret is a concern and asks still."""
    (project / ".env").write_text("API_KEY=sk-env-secret-77aa\n")
    rules = Rules()
    rules.add("allow", "grep")
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, command("grep -ie. .env"), mode="ask", approver=user, rules=rules)
    assert user.requests and "77aa" not in texts[0], texts[0]
