"""Nothing left behind: however `mzagent run` ends (kill -9, SIGTERM, SIGHUP, Ctrl+C), no process
of its command survives, and the session reopens and continues.

Each test looks only at the processes it started: their command line carries a sleep duration
no other process on the machine uses.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import marked
from tests.scripted_server import Reply


def marker() -> str:
    return marked.marker(299)


ours = marked.alive


def wait_until(condition, timeout: float = 20.0) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def start(server, project: Path, command: str, *extra: str) -> subprocess.Popen[str]:  # noqa: ANN001
    server.script(Reply(f"<thought>wait</thought><action>run_terminal_command({json.dumps(command)})</action>"), Reply("<final_answer>after</final_answer>"))
    return subprocess.Popen(
        [sys.executable, "-m", "mzagent_tui", "run", "--base-url", server.base_url, "--api-key", "sk-supervision-key-1", "--model", "m",
         "--yes", "--approval", "yolo", "--project", str(project), *extra, "t"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ctrl+C as a terminal delivers it, even when the suite itself runs as a background job
    (bash starts those with SIGINT ignored, and Python then installs no KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def tree_command(mark: str) -> str:
    """A foreground sleep, a grandchild in `bash -c`, a background job, a double-forked one and
    one in a session of its own (`setsid`)."""
    return (f"(sleep {mark} &); sleep {mark} & setsid sleep {mark} </dev/null >/dev/null 2>&1 & "
            f"bash -c 'sleep {mark}; echo late > late.txt'; echo done > out.txt")


def session_events(state: Path) -> list[str]:
    logs = list(state.rglob("log.jsonl"))
    assert len(logs) == 1
    return [json.loads(line)["event"]["type"] for line in logs[0].read_text().splitlines() if '"type": "event"' in line]


def test_kill_9_mid_command_leaves_no_process_and_the_session_continues(server, project: Path, isolated_home: Path) -> None:
    mark = marker()
    proc = start(server, project, tree_command(mark))
    assert wait_until(lambda: len(ours(mark)) >= 4), proc.stderr
    proc.kill()
    proc.wait()
    assert wait_until(lambda: not ours(mark), timeout=5), [p.info for p in ours(mark)]
    time.sleep(0.3)
    assert not (project / "out.txt").exists() and not (project / "late.txt").exists()
    done = subprocess.run(
        [sys.executable, "-m", "mzagent_tui", "run", "--base-url", server.base_url, "--api-key", "k" * 12, "--model", "m", "--yes",
         "--project", str(project), "--continue", "go on"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0 and done.stdout.rstrip().endswith("Final answer:\nafter"), done.stderr
    contents = [m["content"] for m in server.requests[-1]["messages"]]
    assert "<question>t</question>" in contents and contents[-1].endswith("<question>go on</question>")


@pytest.mark.parametrize(("number", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_a_stop_signal_cancels_kills_the_group_logs_the_stop_and_exits(server, project: Path, isolated_home: Path, number: int, code: int) -> None:
    mark = marker()
    proc = start(server, project, tree_command(mark))
    assert wait_until(lambda: len(ours(mark)) >= 4)
    proc.send_signal(number)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == code, err
    assert "Cancelling" in err
    assert wait_until(lambda: not ours(mark), timeout=5)
    events = session_events(isolated_home / "state")
    assert events[-1] == "stopped" and "observation" in events


def test_a_command_keeps_the_signal_dispositions_it_would_have_had(tmp_path: Path) -> None:
    """The supervisor runs the command as a background job, which a shell starts with SIGINT
    ignored; the command must not notice."""
    from mzagent_tui.agent.cancel import CancelToken
    from mzagent_tui.agent.tools.process import run_command

    result = run_command("grep SigIgn /proc/self/status", tmp_path, {"PATH": os.environ["PATH"]}, 10, CancelToken(), tmp_path / "out")
    assert result.output.head.decode().split() == ["SigIgn:", "0000000000000000"]


def test_exit_codes_and_output_pass_through_the_supervisor(tmp_path: Path) -> None:
    from mzagent_tui.agent.cancel import CancelToken
    from mzagent_tui.agent.tools.process import run_command

    result = run_command("echo \"$0 $1\"; echo out; echo err >&2; exit 7", tmp_path, {"PATH": os.environ["PATH"]}, 10, CancelToken(), tmp_path / "out")
    assert result.exit_code == 7
    assert result.stdout.head.decode().splitlines()[1:] == ["out"]
    assert result.stderr.head == b"err\n"
    together = result.output.head.decode().splitlines()
    assert sorted(together) == sorted(result.stdout.head.decode().splitlines() + ["err"]), "both streams, in either order (two pipes)"
    assert result.lines == 3


CRASH_MID_WRITE = """
import os, sys
from pathlib import Path
from mzagent_tui.agent.safety.approval import StaticApprover
from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.files import FileTools
os.replace = lambda *args, **kwargs: os._exit(9)  # the kill lands after the temp file is written
root = Path(sys.argv[1])
session = Session(Path(sys.argv[2]), Redactor([]))
tools = FileTools(ToolContext(root, session, lambda e: None, StaticApprover(True), Redactor([]), env={}))
tools.read_file("big.txt")
tools.write_to_file("big.txt", "new " * 500_000)
"""


def test_a_crash_mid_write_leaves_the_old_file_and_the_next_session_clears_the_temp_file(project: Path, tmp_path: Path) -> None:
    """The next start of mzagent (here `mzagent run` with a `!command`, no model needed) sweeps."""
    from mzagent_tui.cli import main

    (project / "big.txt").write_text("old\n")
    done = subprocess.run([sys.executable, "-c", CRASH_MID_WRITE, str(project), str(tmp_path / "s")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 9, done.stderr
    temps = [p for p in project.iterdir() if p.name.endswith(".mzagent-tmp")]
    assert len(temps) == 1 and temps[0].stat().st_size == len("new " * 500_000)
    assert (project / "big.txt").read_text() == "old\n"
    assert main(["run", "!true", "--project", str(project), "--sandbox", "off"]) == 0
    assert sorted(p.name for p in project.iterdir()) == ["big.txt"]


def test_the_sweep_spares_live_processes_and_files_that_are_not_its_own(project: Path) -> None:
    from mzagent_tui.agent.ground import leftovers

    folder = leftovers.journals_folder()
    folder.mkdir(parents=True, exist_ok=True)
    mine = project / ".a.txt.1234.mzagent-tmp"
    mine.write_text("temp")
    leftovers.note(mine)
    planted = project / "README.md"
    planted.write_text("keep")
    (folder / "999999999-1.list").write_text(f"{planted}\n{project}/.x.mzagent-tmp\n")
    leftovers.sweep()
    assert mine.exists(), "a live process's temp file was removed"
    assert planted.read_text() == "keep"
    assert not (folder / "999999999-1.list").exists()


def test_a_snapshot_lock_left_by_a_kill_does_not_stop_recording_in_the_reopened_session(server, project: Path, isolated_home: Path) -> None:
    from mzagent_tui.agent.events import FileChanged, Notice
    from mzagent_tui.agent.sessions.history import find_session
    from tests.conftest import make_agent

    server.script(Reply('<action>run_terminal_command("echo one > a.txt")</action>'), Reply("<final_answer>1</final_answer>"))
    agent, _ = make_agent(server, project)
    agent.run("first")
    lock = agent.session.folder / "snapshot" / "index.lock"
    lock.write_text("")
    os.utime(lock, (time.time() - 600, time.time() - 600))
    server.script(Reply('<action>run_terminal_command("echo two > b.txt")</action>'), Reply("<final_answer>2</final_answer>"))
    reopened, recorder = make_agent(server, project, history=find_session(project, "last"))
    reopened.run("second")
    assert [Path(e.path).name for e in recorder.of(FileChanged)] == ["b.txt"]
    assert not any("not recorded" in n.text for n in recorder.of(Notice))
