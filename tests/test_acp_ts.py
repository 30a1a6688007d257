"""`mzagent acp` driven by a second client: the official TypeScript SDK (tests/acp_ts/client.mjs).

Each scenario runs the client under node; the client starts the agent, drives it, checks every
message against the protocol's schema and asserts the order on the wire. Here: the scripted
model's replies for each scenario, and what the run left behind (files, what the model was sent).
Skipped when node or npm is missing; the client's packages come from its lockfile (`npm ci`).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.scripted_server import Reply, ScriptedServer, answer_reply

CLIENT_DIR = Path(__file__).with_name("acp_ts")
NODE, NPM = shutil.which("node"), shutil.which("npm")
NODE_MAJOR = 20
INSTALL_TIMEOUT = 600
SCENARIO_TIMEOUT = 180


def _node_major() -> int:
    done = subprocess.run([NODE or "node", "--version"], capture_output=True, text=True, timeout=30)
    return int(done.stdout.strip().lstrip("v").split(".")[0])


pytestmark = [
    pytest.mark.skipif(NODE is None or NPM is None, reason="node and npm are not on PATH: the client built on the official TypeScript ACP SDK needs them"),
    pytest.mark.skipif(NODE is not None and _node_major() < NODE_MAJOR, reason=f"node is older than {NODE_MAJOR}: the TypeScript ACP SDK client needs Node {NODE_MAJOR}+"),
    pytest.mark.timeout(INSTALL_TIMEOUT + SCENARIO_TIMEOUT),
]


@pytest.fixture(scope="session")
def client() -> Path:
    """The client script, its packages installed from the lockfile when missing or older than it
    (one install at a time: a lock beside the system's temporary files)."""
    lock_path = Path(tempfile.gettempdir()) / f"mzagent-acp-ts-{hashlib.sha256(str(CLIENT_DIR).encode()).hexdigest()[:16]}.lock"
    installed = CLIENT_DIR / "node_modules" / ".package-lock.json"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed.exists() or installed.stat().st_mtime < (CLIENT_DIR / "package-lock.json").stat().st_mtime:
            done = subprocess.run(
                [NPM or "npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"], cwd=CLIENT_DIR, capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
            )
            if done.returncode != 0:
                pytest.fail(f"npm ci in {CLIENT_DIR} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return CLIENT_DIR / "client.mjs"


def run_client(client: Path, scenario: str, project: Path) -> dict[str, Any]:
    """Run one scenario; its JSON result (a failure shows the client's reason and the agent's stderr)."""
    env = {**os.environ, "ACP_PYTHON": sys.executable}
    done = subprocess.run([NODE or "node", str(client), scenario, str(project)], capture_output=True, text=True, timeout=SCENARIO_TIMEOUT, env=env)
    assert done.returncode == 0, f"scenario {scenario} failed:\n{done.stderr[-6000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_initialize_and_a_new_session(client: Path, endpoint: ScriptedServer, project: Path) -> None:
    result = run_client(client, "initialize", project)
    assert result["sessionId"]
    assert endpoint.requests == []


def test_a_prompt_asks_runs_when_allowed_and_keeps_the_diff(client: Path, endpoint: ScriptedServer, project: Path) -> None:
    endpoint.script(Reply('<action>run_terminal_command("echo hi > out.txt")</action>'), answer_reply("wrote out.txt"))
    assert run_client(client, "prompt-allow", project) == {"stopReason": "end_turn"}
    assert (project / "out.txt").read_text() == "hi\n"


def test_a_rejected_command_never_runs(client: Path, endpoint: ScriptedServer, project: Path) -> None:
    endpoint.script(Reply('<action>run_terminal_command("touch made.txt")</action>'), answer_reply("I did not"))
    assert run_client(client, "prompt-reject", project) == {"stopReason": "end_turn"}
    assert not (project / "made.txt").exists()
    assert "rejected" in endpoint.requests[1]["messages"][-1]["content"]


def test_a_writes_diff_stays_when_it_completes(client: Path, endpoint: ScriptedServer, project: Path) -> None:
    (project / "a.py").write_text("x = 1\n")
    endpoint.script(Reply('<action>read_file("a.py")</action>'), Reply('<action>write_to_file("a.py", "x = 2\\n")</action>'), answer_reply())
    assert run_client(client, "write-diff", project) == {"stopReason": "end_turn"}
    assert (project / "a.py").read_text() == "x = 2\n"


def test_cancel_mid_command_and_while_asking(client: Path, endpoint: ScriptedServer, project: Path) -> None:
    endpoint.script(Reply('<action>run_terminal_command("sleep 120")</action>'), Reply('<action>run_terminal_command("touch never.txt")</action>'))
    assert run_client(client, "cancel", project) == {"stopReasons": ["cancelled", "cancelled"]}
    assert not (project / "never.txt").exists()


def test_load_replays_then_answers_then_continues(client: Path, endpoint: ScriptedServer, project: Path) -> None:
    (project / "notes.txt").write_text("hello\n")
    endpoint.script(Reply('<action>read_file("notes.txt")</action>'), answer_reply("the notes say hello"), answer_reply("still hello"))
    result = run_client(client, "load", project)
    replayed = ["user_message_chunk", "tool_call", "tool_call_update", "tool_call_update", "agent_thought_chunk", "agent_message_chunk"]
    assert result == {"replayed": replayed, "stopReason": "end_turn"}
    assert any("what do the notes say?" in m["content"] for m in endpoint.requests[-1]["messages"]), "the loaded conversation reached the model"


def test_the_mode_menu_sets_the_approval_mode(client: Path, endpoint: ScriptedServer, project: Path) -> None:
    endpoint.script(Reply('<action>run_terminal_command("ls")</action>'), Reply('<action>run_terminal_command("touch made.txt")</action>'), answer_reply())
    assert run_client(client, "set-mode", project) == {"stopReason": "end_turn"}
    assert (project / "made.txt").exists()


def test_bad_input_gets_clear_errors_and_the_agent_goes_on(client: Path, endpoint: ScriptedServer, project: Path) -> None:
    endpoint.script(answer_reply("still fine"))
    result = run_client(client, "bad-input", project)
    assert result["codes"] == {
        "relativeCwd": -32602, "unknownSession": -32602, "loadUnknown": -32602, "authenticate": -32602,
        "unknownMethod": -32601, "missingPrompt": -32602, "image": -32602, "emptyPrompt": -32602,
    }
    assert result["stopReason"] == "end_turn"
    assert len(endpoint.requests) == 1, "only the good prompt reached the model"


def test_the_task_list_is_a_plan_update_the_schema_accepts(client: Path, endpoint: ScriptedServer, project: Path) -> None:
    steps = [{"step": "Read cli.py", "status": "done"}, {"step": "Add the flag", "status": "in_progress"}, {"step": "Run the tests", "status": "pending"}]
    endpoint.script(Reply(f"<action>update_plan({json.dumps(steps)})</action>"), Reply("<action>update_plan([])</action>"), answer_reply())
    result = run_client(client, "plan", project)
    assert result == {
        "plans": [
            [
                {"content": "Read cli.py", "priority": "medium", "status": "completed"},
                {"content": "Add the flag", "priority": "medium", "status": "in_progress"},
                {"content": "Run the tests", "priority": "medium", "status": "pending"},
            ],
            [],
        ],
        "stopReason": "end_turn",
    }
