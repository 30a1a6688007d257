"""`mzagent` as a user runs it: a real subprocess against the scripted server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.scripted_server import Reply

TASK_STEPS = [
    Reply('<thought>write</thought><action>write_to_file("calc.py", "print(6 * 7)\\n")</action>'),
    Reply('<thought>run</thought><action>run_terminal_command("python3 calc.py")</action>'),
    Reply("<thought>done</thought><final_answer>calc.py prints 42.</final_answer>"),
]


def mzagent(*args: str, stdin: str | None = None, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mzagent_tui", *args],
        input=stdin if stdin is not None else "",
        capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})},
    )


def endpoint(server) -> list[str]:  # noqa: ANN001
    return ["--base-url", server.base_url, "--api-key", "sk-cli-secret-key-777", "--model", "m"]


def test_run_completes_a_multi_step_task_and_prints_the_answer_last(server, project: Path) -> None:
    server.script(*TASK_STEPS)
    done = mzagent("run", *endpoint(server), "--yes", "--project", str(project), "make calc.py")
    assert done.returncode == 0, done.stderr
    assert (project / "calc.py").read_text() == "print(6 * 7)\n"
    lines = done.stdout.strip().splitlines()
    assert lines[-2:] == ["Final answer:", "calc.py prints 42."]
    assert "Thought: write" in done.stdout and "$ python3 calc.py" in done.stdout and "42" in done.stdout
    assert "Changed: created calc.py (+1 −0)\n--- /dev/null\n+++ b/calc.py\n@@ -0,0 +1 @@\n+print(6 * 7)\n" in done.stdout
    assert "\x1b[" not in done.stdout


def test_json_events_are_parseable(server, project: Path) -> None:
    server.script(*TASK_STEPS)
    done = mzagent("run", *endpoint(server), "--yes", "--json", "--project", str(project), "make calc.py")
    assert done.returncode == 0
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "task_started" and kinds[-1] == "stopped"
    assert {"text_delta", "thought", "action", "observation", "usage", "final_answer"} <= set(kinds)
    assert events[-1]["reason"] == "final_answer"
    assert "sk-cli-secret-key-777" not in done.stdout
    [write] = [e for e in events if e["type"] == "file_changed"]
    assert write["diff"].startswith("--- /dev/null\n+++ b/calc.py\n@@ -0,0 +1 @@\n+print(6 * 7)") and write["added"] == 1


def test_task_from_stdin(server, project: Path) -> None:
    server.script(Reply("<final_answer>read it</final_answer>"))
    done = mzagent("run", *endpoint(server), "--project", str(project), "-", stdin="task from stdin\n")
    assert done.returncode == 0
    assert server.requests[0]["messages"][1]["content"] == "<question>task from stdin</question>"


def test_without_a_terminal_commands_are_rejected_with_how_to_allow(server, project: Path) -> None:
    server.script(Reply('<action>run_terminal_command("touch made")</action>'), Reply("<final_answer>could not</final_answer>"))
    done = mzagent("run", *endpoint(server), "--project", str(project), "t")
    assert done.returncode == 0 and not (project / "made").exists()
    assert "--yes" in server.requests[1]["messages"][-1]["content"]


def test_no_flag_rejects(server, project: Path) -> None:
    server.script(Reply('<action>run_terminal_command("touch made")</action>'), Reply("<final_answer>ok</final_answer>"))
    done = mzagent("run", *endpoint(server), "--no", "--project", str(project), "t")
    assert done.returncode == 0 and not (project / "made").exists()
    assert "Rejected:" in done.stdout


def test_stopped_run_exits_1(server, project: Path) -> None:
    server.script(*[Reply("no tags at all")] * 3)
    done = mzagent("run", *endpoint(server), "--project", str(project), "t")
    assert done.returncode == 1 and "Run stopped:" in done.stderr


def test_endpoint_error_exits_1_without_the_key(server, project: Path) -> None:
    from tests.scripted_server import Fault

    server.script(Fault("status", 401))
    done = mzagent("run", *endpoint(server), "--project", str(project), "t")
    assert done.returncode == 1 and "refused the API key" in done.stderr
    assert "sk-cli-secret-key-777" not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("args", "fragment"), [
    (["run", "--provider", "nope", "t"], "unknown provider 'nope'"),
    (["run", "--provider", "openai", "t"], "set OPENAI_API_KEY"),
    (["run", "--base-url", "http://x/v1", "--model", "m", "--project", "/does/not/exist", "t"], "does not exist"),
    (["run", "--base-url", "http://x/v1", "--model", "m", "--project", "/etc/hostname", "t"], "is not a folder"),
    (["run", "--base-url", "http://x/v1", "--model", "m", "--tool", "nomodule:fn", "t"], "cannot import module 'nomodule'"),
])
def test_usage_and_config_errors_exit_2_in_one_line(args: list[str], fragment: str) -> None:
    done = mzagent(*args)
    assert done.returncode == 2
    assert fragment in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_version_and_help() -> None:
    assert mzagent("--version").stdout.strip() == "mzagent 0.1.0"
    text = mzagent("--help").stdout
    assert "mzagent run TASK" in text and "mzagent config" in text
    assert "--yes" in mzagent("run", "--help").stdout


def test_config_shows_sources_and_redacts_the_key(project: Path) -> None:
    (project / ".env").write_text("DEEPSEEK_API_KEY=sk-abcdefghijklmn9876\n")
    done = mzagent("config", "--project", str(project))
    assert done.returncode == 0
    assert "sk-…9876" in done.stdout and "sk-abcdefghijklmn9876" not in done.stdout
    assert "preset deepseek" in done.stdout and "DEEPSEEK_API_KEY" in done.stdout


def test_with_nothing_configured_the_local_model_is_the_default(project: Path) -> None:
    from mzagent_tui.agent.ground.providers import local_available

    done = mzagent("config", "--project", str(project))
    assert "default (no key or base URL set)" in done.stdout
    if local_available():
        assert done.returncode == 0 and "offline model starts when a task runs" in done.stdout
    else:
        assert done.returncode == 2 and "offline model is not installed" in done.stderr and "[local]" in done.stderr


def test_a_missing_local_model_file_is_one_clear_line(project: Path) -> None:
    done = mzagent("run", "--project", str(project), "t", env={"MZAGENT_LOCAL_MODEL": "/nonexistent/model.gguf"})
    assert done.returncode == 2
    assert done.stderr.strip() == "mzagent: MZAGENT_LOCAL_MODEL points to /nonexistent/model.gguf, which is not a file"


def test_headless_run_never_imports_textual(server, project: Path) -> None:
    server.script(*TASK_STEPS)
    code = (
        "import sys; from mzagent_tui.cli import main\n"
        f"rc = main(['run', '--base-url', {server.base_url!r}, '--api-key', 'k', '--model', 'm', '--yes', '--project', {str(project)!r}, 'x'])\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print('TEXTUAL', bad, rc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "TEXTUAL [] 0", done.stderr


def test_a_run_leaves_nothing_in_the_temp_folder(server, project: Path, isolated_home: Path, tmp_path: Path) -> None:
    """The sandbox's private folders and those of our own programs (git's file list) go with the
    process: 285 of them once piled up under /tmp, one pair per run."""
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    server.script(*TASK_STEPS)
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "XDG_STATE_HOME": str(isolated_home / "state"), "TMPDIR": str(temp)}
    done = subprocess.run(
        [sys.executable, "-m", "mzagent_tui", "run", *endpoint(server), "--yes", "--project", str(project), "t"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "42" in done.stdout
    assert sorted(p.name for p in temp.iterdir()) == []


def _wait_for_command(fragment: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not any(fragment in " ".join(p) for p in _cmdlines()):
        time.sleep(0.1)


def _cmdlines() -> list[list[str]]:
    import psutil

    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            found.append(proc.info["cmdline"] or [])
        except psutil.NoSuchProcess:
            continue
    return found


SLEEP = f"298.{os.getpid():07d}"
"""A duration no other process on the machine uses: the test looks only at its own sleep."""


def test_kill_9_mid_run_leaves_a_readable_session_log(server, project: Path, isolated_home: Path, tmp_path: Path) -> None:
    server.script(Reply(f'<thought>wait</thought><action>run_terminal_command("sleep {SLEEP}")</action>'))
    # TMPDIR: the killed agent's private temp folder is left for a later session to sweep; here, no later session comes
    env = {**os.environ, "XDG_STATE_HOME": str(isolated_home / "state"), "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "mzagent_tui", "run", *endpoint(server), "--yes", "--project", str(project), "t"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    _wait_for_command(f"sleep {SLEEP}")
    proc.kill()
    proc.wait()
    logs = list((isolated_home / "state").rglob("log.jsonl"))
    assert len(logs) == 1
    records = [json.loads(line) for line in logs[0].read_text().splitlines()]
    kinds = [r["event"]["type"] for r in records if r["type"] == "event"]
    assert kinds[-1] == "approval_answered" and "action" in kinds
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(p == ["sleep", SLEEP] for p in _cmdlines()):
        time.sleep(0.1)
    assert not any(p == ["sleep", SLEEP] for p in _cmdlines()), "the command outlived the killed agent"


def test_sessions_continue_export_and_undo_from_the_command_line(server, project: Path, tmp_path: Path) -> None:
    server.script(*TASK_STEPS, Reply("<thought>ok</thought><final_answer>still 42</final_answer>"))
    first = mzagent("run", *endpoint(server), "--yes", "--project", str(project), "make calc.py")
    assert first.returncode == 0
    assert "tokens 300 in / 60 out" in first.stderr.splitlines()[-1]
    listed = mzagent("sessions", "--project", str(project))
    [line] = listed.stdout.splitlines()
    assert "3 steps" in line and "final answer" in line and line.endswith("make calc.py")
    session_id = line.split()[0]

    again = mzagent("run", *endpoint(server), "--continue", "--project", str(project), "check it")
    assert again.returncode == 0 and "still 42" in again.stdout
    sent = server.requests[-1]["messages"]
    assert sent[1]["content"] == "<question>make calc.py</question>" and sent[-1]["content"] == "<question>check it</question>"
    assert len(mzagent("sessions", "--project", str(project)).stdout.splitlines()) == 1

    exported = mzagent("export", session_id[:-1], "--project", str(project), "--api-key", "sk-cli-secret-key-777")
    assert exported.returncode == 0
    assert "## Task 1" in exported.stdout and "## Follow-up 2" in exported.stdout and "still 42" in exported.stdout
    assert "sk-cli-secret-key-777" not in exported.stdout
    target = tmp_path / "out.md"
    assert mzagent("export", "--project", str(project), "-o", str(target)).returncode == 0
    assert target.read_text() == exported.stdout
    refused = mzagent("export", "--project", str(project), "-o", str(target))
    assert refused.returncode == 2 and "exists" in refused.stderr
    unknown = mzagent("export", "nope", "--project", str(project))
    assert unknown.returncode == 2 and "matches no session" in unknown.stderr

    listed = mzagent("undo", "--list", "--project", str(project))
    assert listed.stdout == "#1  run 1  created calc.py\n"
    undone = mzagent("undo", "--to", "1", "--project", str(project))
    assert undone.returncode == 0 and "removed calc.py" in undone.stdout
    assert not (project / "calc.py").exists()
    nothing = mzagent("undo", "--all", "--project", str(project))
    assert nothing.returncode == 1 and "nothing left to undo" in nothing.stdout


def test_undo_from_the_command_line_refuses_after_an_edit(server, project: Path) -> None:
    server.script(*TASK_STEPS)
    assert mzagent("run", *endpoint(server), "--yes", "--project", str(project), "make calc.py").returncode == 0
    (project / "calc.py").write_text("print('mine')\n")
    refused = mzagent("undo", "--all", "--project", str(project))
    assert refused.returncode == 1 and "calc.py was changed after the agent wrote it" in refused.stdout
    assert (project / "calc.py").read_text() == "print('mine')\n"


def test_max_cost_flag(server, project: Path) -> None:
    server.default = lambda request: Reply(f'<thought>again</thought><action>read_file("missing{len(server.requests)}.txt")</action>', usage=(600_000, 0))
    missing_prices = mzagent("run", *endpoint(server), "--max-cost", "1", "--project", str(project), "t")
    assert missing_prices.returncode == 2 and "max_cost needs prices" in missing_prices.stderr
    stopped = mzagent("run", *endpoint(server), "--price-in", "1", "--price-out", "2", "--max-cost", "1", "--project", str(project), "t")
    assert stopped.returncode == 1
    assert "reaching the limit of $1.00" in stopped.stderr
    assert len(server.requests) == 2
    assert "$1.20" in stopped.stderr.splitlines()[-1]


def test_commands_cannot_read_the_agents_key_from_proc(server, project: Path) -> None:
    """`tr` defeats output redaction, so the key must not be there to read: the agent overwrote it
    in its own start-up environment and argv before running anything, and where the sandbox gives
    commands a user namespace of their own, the agent's environment is not readable at all."""
    server.script(
        Reply('<action>run_terminal_command("A=$(cut -d\' \' -f4 /proc/$PPID/stat); tr a-z A-Z < /proc/$A/environ; echo; tr a-z A-Z < /proc/$A/cmdline")</action>'),
        Reply("<final_answer>read</final_answer>"),
    )
    env = {"OPENAI_API_KEY": "sk-envkey-abcdefghijklmnop", "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123", "PGPASSWORD": "hunter2hunter2"}
    done = mzagent("run", *endpoint(server), "--yes", "--json", "--approval", "yolo", "--project", str(project), "t", env=env)
    assert done.returncode == 0, done.stderr
    observation = next(json.loads(line) for line in done.stdout.splitlines() if json.loads(line)["type"] == "observation")
    text = observation["text"]
    out_of_sight = "/PROC/0/ENVIRON: NO SUCH FILE" in text.upper()  # a PID namespace of its own: the agent is not there
    assert ("GITHUB_TOKEN=" in text.upper() and "PATH=" in text) or "/ENVIRON: PERMISSION DENIED" in text.upper() or out_of_sight, text[:500]
    for secret in ("sk-cli-secret-key-777", "sk-envkey-abcdefghijklmnop", "ghp_abcdefghijklmnopqrstuvwxyz0123", "hunter2hunter2"):
        assert secret.upper() not in text
    assert out_of_sight or "--API-KEY" in text, "the command line is readable, with the key overwritten"


def test_a_pasted_megabyte_task_is_echoed_as_its_head_and_a_count(server, project: Path) -> None:
    server.script(Reply("<final_answer>ok</final_answer>"))
    task = "x" * 1_000_000
    done = mzagent("run", *endpoint(server), "--yes", "--project", str(project), "-", stdin=task)
    assert done.returncode == 0
    assert len(done.stdout) < 2_000 and "999,500 more characters" in done.stdout
    assert server.requests[0]["messages"][-1]["content"].count("x") == 1_000_000


def test_run_in_plan_mode_writes_nothing_even_with_yes_and_prints_the_plan(server, project: Path) -> None:
    server.script(
        Reply('<thought>write</thought><action>write_to_file("calc.py", "print(6 * 7)\\n")</action>'),
        Reply("<thought>plan</thought><final_answer>1. Write calc.py printing 6 * 7.</final_answer>"),
    )
    done = mzagent("run", *endpoint(server), "--yes", "--approval", "plan", "--project", str(project), "make calc.py")
    assert done.returncode == 0, done.stderr
    assert not (project / "calc.py").exists()
    assert "plan mode is on" in server.requests[1]["messages"][-1]["content"]
    assert done.stdout.rstrip().endswith("--approval ask or auto-safe):\n1. Write calc.py printing 6 * 7.")
    server.script(Reply("<final_answer>1. Nothing else.</final_answer>"))
    as_json = mzagent("run", *endpoint(server), "--json", "--approval", "plan", "--project", str(project), "again")
    [answer] = [e for e in map(json.loads, as_json.stdout.splitlines()) if e["type"] == "final_answer"]
    assert answer == {"type": "final_answer", "text": "1. Nothing else.", "plan": True}


@pytest.mark.parametrize("stdin", ["", "piped text"])
def test_the_app_without_a_terminal_says_so_and_exits(project: Path, stdin: str) -> None:
    """It used to start and spin at full CPU with nowhere to draw; a pipe gets the way to run a task."""
    done = mzagent(str(project), "--base-url", "http://127.0.0.1:9/v1", "--model", "m", stdin=stdin, timeout=30)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("mzagent: the app needs a terminal") and "mzagent run" in done.stderr
    assert done.stdout == ""
