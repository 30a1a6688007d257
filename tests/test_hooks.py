"""Hooks from the user config, run for real around the agent's tool calls against the scripted server."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from mzagent_tui.agent.config import ConfigError, user_config_path
from mzagent_tui.agent.event_text import describe
from mzagent_tui.agent.events import HookOutcome, Observation, Stopped
from mzagent_tui.agent.hooks.config import HookSpec, load_hooks
from mzagent_tui.agent.sessions.export import to_markdown
from mzagent_tui.agent.sessions.history import load_session
from tests.conftest import make_agent, requires_sandbox
from tests.scripted_server import Reply, answer_reply, last_user, write_reply

PY = shlex.quote(sys.executable)
UPPERCASE = f"{PY} -c 'import os, pathlib; p = pathlib.Path(os.environ[\"MZAGENT_FILE\"]); p.write_text(p.read_text().upper())'"


def user_config(text: str) -> Path:
    """Write the user config (the isolated home's) and return its path."""
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def hook(event: str, command: str, **more: object) -> str:
    lines = ["[[hooks]]", f"event = {json.dumps(event)}", f"command = {json.dumps(command)}"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in more.items()]
    return "\n".join(lines) + "\n"


def write_run(server, project: Path, path: str = "a.txt", content: str = "hello\n", **overrides: object):  # noqa: ANN001, ANN201
    server.script(write_reply(path, content), answer_reply())
    agent, rec = make_agent(server, project, **overrides)
    agent.run("write it")
    agent.close()
    return agent, rec


def test_an_after_tool_hook_rewrites_the_written_file(server, project: Path, tmp_path: Path) -> None:
    event_file = tmp_path / "event.json"
    user_config(hook("after_tool", UPPERCASE, tool="write_to_file") + hook("after_tool", f"cat > {event_file}; pwd >> {event_file}.cwd", sandbox=False))
    agent, rec = write_run(server, project)
    assert (project / "a.txt").read_text() == "HELLO\n"
    event = json.loads(event_file.read_text())
    assert event["event"] == "after_tool" and event["tool"] == "write_to_file"
    assert event["arguments"] == {"file_path": "a.txt", "content": "hello\n"}
    assert event["ok"] is True and "a.txt" in event["observation"]
    assert event["project"] == str(project) and event["session_id"] == agent.session.id
    assert Path(f"{event_file}.cwd").read_text().strip() == str(project)
    outcomes = rec.of(HookOutcome)
    assert [o.status for o in outcomes] == ["ok", "ok"] and all(describe(o, project) is None for o in outcomes)


def test_a_before_tool_hook_that_exits_2_blocks_the_write(server, project: Path) -> None:
    user_config(hook("before_tool", "echo 'writes to a.txt are not allowed [/x]' >&2; exit 2", tool="write_to_file"))
    agent, rec = write_run(server, project)
    assert not (project / "a.txt").exists()
    assert "writes to a.txt are not allowed [/x]" in last_user(server.requests[1])
    (outcome,) = rec.of(HookOutcome)
    assert outcome.status == "blocked" and outcome.exit_code == 2
    assert describe(outcome, project).label == "Hook blocked"
    assert rec.of(Observation)[0].ok is False
    agent.session.close()
    history = load_session(agent.session.folder)
    assert [e.status for e in history.events if isinstance(e, HookOutcome)] == ["blocked"]
    assert "*Hook blocked:* before_tool write_to_file" in to_markdown(history, lambda text: text)


def test_a_failing_hook_is_a_warning_and_the_run_goes_on(server, project: Path) -> None:
    user_config(hook("before_tool", "echo broken >&2; exit 1") + hook("after_tool", "exit 2", tool="*"))
    _, rec = write_run(server, project)
    assert (project / "a.txt").read_text() == "hello\n"
    assert [(o.hook_event, o.status) for o in rec.of(HookOutcome)] == [("before_tool", "failed"), ("after_tool", "failed")]
    shown = describe(rec.of(HookOutcome)[0], project)
    assert shown.label == "Hook failed" and "broken" in shown.text and "exit code 1" in shown.text


def test_a_hook_for_another_tool_does_not_run(server, project: Path, tmp_path: Path) -> None:
    user_config(hook("before_tool", f"touch {tmp_path}/ran", tool="run_terminal_command"))
    _, rec = write_run(server, project)
    assert not (tmp_path / "ran").exists() and rec.of(HookOutcome) == []


def test_a_hook_past_its_timeout_is_killed_with_its_children(server, project: Path) -> None:
    marker = f"hook-marker-{uuid.uuid4().hex}"
    sleeper = f"{PY} -c 'import time; time.sleep(60)' {marker}"
    user_config(hook("before_tool", f"{sleeper} & {sleeper}; wait", timeout=1))
    started = time.monotonic()
    _, rec = write_run(server, project)
    assert time.monotonic() - started < 20
    (outcome,) = rec.of(HookOutcome)
    assert outcome.status == "timed_out" and outcome.exit_code is None
    assert (project / "a.txt").exists()  # a timeout is not a block
    alive = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if marker in (proc.info["cmdline"] or []) and proc.info["status"] != psutil.STATUS_ZOMBIE:
                alive.append(proc.pid)
        except psutil.NoSuchProcess:
            pass
    assert alive == []


def test_a_run_end_hook_hears_how_the_run_ended(server, project: Path, tmp_path: Path) -> None:
    user_config(hook("run_end", f"cat > {tmp_path}/end.json", sandbox=False))
    _, rec = write_run(server, project)
    event = json.loads((tmp_path / "end.json").read_text())
    assert event["event"] == "run_end" and event["reason"] == "final_answer" and event["final_answer"] == "done"
    assert isinstance(rec.events[-1], Stopped) and isinstance(rec.events[-2], HookOutcome)


def test_hooks_get_the_allow_list_and_their_pass_env_but_no_api_key(server, project: Path, tmp_path: Path) -> None:
    user_config(hook("after_tool", f"env > {tmp_path}/env.txt", pass_env=["MY_SETTING", "DEEPSEEK_API_KEY", "HOLDS_KEY"], sandbox=False))
    env = {
        "PATH": os.environ["PATH"], "LANG": "C.UTF-8", "MY_SETTING": "kept", "NOT_NAMED": "left out",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "DEEPSEEK_API_KEY": "sk-deepseek-secret-0000",
        "MZAGENT_API_KEY": "sk-mz-secret-00000000", "HOLDS_KEY": "Bearer sk-test-secret-key-1234",
    }
    write_run(server, project, env=env)
    seen = dict(line.split("=", 1) for line in (tmp_path / "env.txt").read_text().splitlines() if "=" in line)
    assert seen["MY_SETTING"] == "kept" and seen["LANG"] == "C.UTF-8" and seen["MZAGENT_TOOL"] == "write_to_file"
    assert seen["MZAGENT_FILE"] == str(project / "a.txt")
    assert not {"NOT_NAMED", "AWS_SECRET_ACCESS_KEY", "DEEPSEEK_API_KEY", "MZAGENT_API_KEY", "HOLDS_KEY"} & set(seen)


@requires_sandbox(6)
def test_a_sandboxed_hook_cannot_write_outside_the_project(server, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    user_config(
        hook("after_tool", f"touch {outside}/confined", sandbox=True) + hook("after_tool", f"touch {outside}/default")
        + hook("after_tool", f"touch {outside}/free", sandbox=False)
    )
    _, rec = write_run(server, project, sandbox="workspace")
    assert sorted(p.name for p in outside.iterdir()) == ["free"]  # only the hook marked sandbox = false runs as the user
    assert [o.status for o in rec.of(HookOutcome)] == ["failed", "failed", "ok"]


def test_a_project_cannot_add_hooks(server, project: Path, tmp_path: Path) -> None:
    planted = tmp_path / "planted"
    (project / ".mzagent").mkdir()
    (project / ".mzagent" / "config.toml").write_text(hook("before_tool", f"touch {planted}"))
    (project / "config.toml").write_text(hook("before_tool", f"touch {planted}"))
    (project / ".env").write_text(f"MZAGENT_HOOKS=touch {planted}\n")
    _, rec = write_run(server, project)
    assert not planted.exists() and rec.of(HookOutcome) == []
    assert load_hooks() == []


@pytest.mark.parametrize("text, says", [
    (hook("on_save", "true"), "hook 1 ([[hooks]] number 1"),
    (hook("after_tool", "true") + "[[hooks]]\nevent = \"before_tool\"\n", "hook 2 ([[hooks]] number 2"),
    (hook("before_tool", "true", timeout="soon"), "timeout must be a number"),
    (hook("before_tool", "true", sandbox="yes"), "sandbox must be true or false"),
    (hook("before_tool", "true", tool=3), "tool must be"),
    (hook("run_end", "true", tool="write_to_file"), "not to run_end"),
    (hook("before_tool", "true", matcher="x"), "unknown keys: matcher"),
    ("hooks = \"ruff\"\n", "must be a list of tables"),
])
def test_bad_config_names_the_entry(text: str, says: str) -> None:
    user_config(text)
    with pytest.raises(ConfigError, match=None) as caught:
        load_hooks()
    assert says in str(caught.value)


def test_good_config_is_read() -> None:
    user_config(hook("after_tool", "ruff format $MZAGENT_FILE", tool="write_to_file", timeout=30) + hook("run_end", "notify-send done", sandbox=False))
    assert load_hooks() == [HookSpec("after_tool", "ruff format $MZAGENT_FILE", "write_to_file", 30.0, True), HookSpec("run_end", "notify-send done", "", 60.0, False)]


def test_the_cli_refuses_to_start_with_a_bad_hook(project: Path) -> None:
    user_config(hook("after_tool", "") + "\n")
    checkout = str(Path(__file__).resolve().parent.parent)
    done = subprocess.run(
        [sys.executable, "-m", "mzagent_tui", "run", "--project", str(project), "!echo never"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": checkout}, cwd=project,
    )
    assert done.returncode == 2 and "hook 1" in done.stderr and "command is missing" in done.stderr
    assert "Traceback" not in done.stderr and "never" not in done.stdout


def test_an_after_tool_hook_sees_the_model_s_call_and_the_result_it_reads(server, project: Path, tmp_path: Path) -> None:
    """The hook sees the call as the model made it and the result as the model reads it: a grep
    that matched nothing is an answer there too, not a failure."""
    events = tmp_path / "events.jsonl"
    user_config(hook("after_tool", f"cat >> {events}; echo >> {events}", sandbox=False))
    (project / "memo.txt").write_text("tea\n")
    slip = 'def half(n):\n    """Half of n.\n    ""\n    return n // 2\n'
    server.script(write_reply("half.py", slip), Reply('<action>run_terminal_command("grep coffee memo.txt")</action>'), answer_reply())
    agent, _ = make_agent(server, project)
    agent.run("t")
    agent.close()
    written, grepped = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    assert written["arguments"]["content"] == slip and written["observation"].startswith("File written: half.py (created, 4 lines, 56 bytes).")
    assert "Warning: half.py does not parse now" in written["observation"]
    assert grepped["ok"] is True and grepped["observation"].startswith("Command ran (exit code 1: no line matched;")
