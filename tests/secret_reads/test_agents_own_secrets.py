"""The agent's own secrets: its key on its command line (an abbreviated flag) is scrubbed, and
`read_file` through a link to the agent's environment asks. (Round five of the outside attacks.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mzagent_tui.agent.safety.approval import ApprovalDecision
from tests.attack_helpers import run
from tests.conftest import RecordingApprover

# The agent's key on its own command line, abbreviated ----------------------------------------


@pytest.mark.skipif(not os.path.exists("/proc/self/cmdline"), reason="Linux /proc")
@pytest.mark.parametrize("argv", [["--api-k=plain-key-77aa"], ["--api", "plain-key-77aa"], ["--api-ke", "plain-key-77aa"], ["--api-key", "plain-key-77aa"]])
def test_an_abbreviated_api_key_flag_is_scrubbed_from_the_command_line(argv: list[str]) -> None:
    """argparse takes `--api-k=KEY` for `--api-key=KEY`; /proc/<agent>/cmdline is readable by every
    process of the user, a confined command included (it is not ptrace-guarded)."""
    import subprocess
    import sys

    code = "from mzagent_tui.agent.safety.own_secrets import hide_own_secrets; hide_own_secrets(); print(open('/proc/self/cmdline', 'rb').read())"
    out = subprocess.run([sys.executable, "-c", code, "run", *argv, "task"], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}, check=True).stdout
    assert "77aa" not in out and "task" in out, out


# The agent's own file tools: a link at the end of the path, /proc through a link ---------------


def test_read_file_through_a_link_to_the_agents_environment_asks(server, project: Path) -> None:
    (project / "env.txt").symlink_to("/proc/self/environ")
    (project / "procdir").symlink_to("/proc/self")
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, 'read_file("env.txt")', 'read_file("procdir/environ")', 'read_file("/proc/thread-self/environ")', approver=user, mode="auto-safe")
    assert not any("PATH=" in t or "sk-test-secret-key-1234" in t for t in texts), texts
