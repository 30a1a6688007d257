"""Attacks on the PID namespace of a confined command (agent/safety/pid_namespace.py): it must
not see other programs' command lines or environments in /proc, nor signal or trace them, and
everything it starts must end with it. Each test asserts the attack does NOT succeed, and each
family has a positive control: the same command without the PID namespace (the rest of the
sandbox kept) or outside the sandbox, where it does succeed. The processes outside are a
`sleep` the test starts, found by a unique marker; a secret is in its environment only.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.safety import sandbox as sandbox_module
from mzagent_tui.agent.safety.sandbox import Sandbox
from mzagent_tui.agent.tools import process
from mzagent_tui.agent.tools.process import run_command
from tests import marked
from tests.attack_helpers import command, needs_own_pids, run

pytestmark = needs_own_pids


@dataclass
class Outsider:
    """A process of the user's outside the command: an editor, a shell, mzagent itself."""

    proc: subprocess.Popen[bytes]
    mark: str
    secret: str

    @property
    def pid(self) -> int:
        return self.proc.pid


@pytest.fixture
def home(bare_home: Path) -> Path:
    """These attacks run with an empty home of the test's own (no key in it)."""
    return bare_home


@pytest.fixture
def outsider() -> Iterator[Outsider]:
    mark, secret = marked.marker(297), f"pidns-secret-{uuid.uuid4().hex}"
    proc = subprocess.Popen(["sleep", mark], env={"PATH": os.environ["PATH"], "OUTSIDER_API_KEY": secret}, start_new_session=True)
    try:
        yield Outsider(proc, mark, secret)
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def without_pid_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    """The positive control: the sandbox as it is where the kernel refuses a PID namespace."""
    monkeypatch.setattr(sandbox_module, "pid_namespace_works", lambda: False)


def _outside_the_sandbox(text: str, folder: Path) -> str:
    run_command(text, folder, {"PATH": os.environ["PATH"]}, 20.0, CancelToken(), folder / "out")
    return (folder / "out").read_text(errors="replace")


def _end(mark: str) -> None:
    for proc in marked.alive(mark):
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass


# 1. What /proc shows --------------------------------------------------------------------------


def test_ps_inside_lists_only_the_commands_own_processes(server, project: Path, home: Path, outsider: Outsider) -> None:
    texts, _ = run(server, project, command("ps -eo pid=,args=; echo in-proc: $(ls /proc | grep '^[0-9]')"))
    output = texts[0].split("Output:\n", 1)[1]
    listed = [line.split(None, 1) for line in output.splitlines() if line[:7].strip().isdigit()]
    in_proc = [int(pid) for pid in output.rsplit("in-proc:", 1)[1].split()]
    assert listed and listed[0][0] == "1" and "mzagent-supervisor" in listed[0][1], texts  # ps works; its first process is the supervisor
    assert all(int(pid) < 20 for pid, _ in listed) and in_proc and all(pid < 20 for pid in in_proc), texts
    assert outsider.mark not in texts[0] and outsider.pid not in in_proc, texts


def test_control_without_the_pid_namespace_ps_lists_the_process_outside(server, project: Path, home: Path, outsider: Outsider, without_pid_namespace: None) -> None:
    texts, _ = run(server, project, command("ps -eo pid=,args="))
    assert f"sleep {outsider.mark}" in texts[0], texts


READ_OUTSIDER = "cat /proc/{pid}/cmdline; echo; tr '\\0' '\\n' < /proc/{pid}/environ"


def test_the_command_line_and_environment_of_a_process_outside_are_not_read(server, project: Path, home: Path, outsider: Outsider) -> None:
    texts, _ = run(server, project, command(READ_OUTSIDER.format(pid=outsider.pid)))
    assert "No such file or directory" in texts[0], texts
    assert outsider.mark not in texts[0] and outsider.secret not in texts[0], texts


def test_no_process_visible_holds_the_secret_of_a_process_outside(server, project: Path, home: Path, outsider: Outsider) -> None:
    scan = "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < $f; done 2>/dev/null; echo scanned"
    texts, _ = run(server, project, command(scan))
    assert "scanned" in texts[0] and "PATH=" in texts[0], texts  # the command's own environments are read
    assert outsider.secret not in texts[0] and outsider.mark not in texts[0], texts


def test_control_without_the_pid_namespace_the_process_outside_is_there(server, project: Path, home: Path, outsider: Outsider, without_pid_namespace: None) -> None:
    """Without a PID namespace the process outside is in the command's /proc. Its command line
    was readable here until commands joined the session's network namespace (not looked into
    yet: the kernel now refuses it too); the environment never was: Landlock scopes ptrace's
    checks."""
    texts, _ = run(server, project, command(f"ls -d /proc/{outsider.pid}; " + READ_OUTSIDER.format(pid=outsider.pid)))
    assert f"/proc/{outsider.pid}" in texts[0], texts
    assert outsider.secret not in texts[0], texts


def test_control_outside_the_sandbox_the_environment_outside_is_read(tmp_path: Path, outsider: Outsider) -> None:
    output = _outside_the_sandbox(READ_OUTSIDER.format(pid=outsider.pid), tmp_path)
    assert outsider.mark in output and outsider.secret in output, output


def test_proc_1_is_the_commands_own_supervisor_with_nothing_of_the_agents_environment(server, project: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = f"pidns-agent-{uuid.uuid4().hex}"
    monkeypatch.setenv("PIDNS_AGENT_API_KEY", secret)
    texts, _ = run(server, project, command("tr '\\0' '\\n' < /proc/1/environ; tr '\\0' ' ' < /proc/1/cmdline"))
    assert "TMPDIR=" in texts[0] and "mzagent-supervisor" in texts[0], texts  # the command's environment: its own supervisor
    assert secret not in texts[0] and "PIDNS_AGENT_API_KEY" not in texts[0], texts


# 2. Signals and ptrace ------------------------------------------------------------------------


PTRACE = "python3 -c 'import ctypes, sys; print(\"attach\", ctypes.CDLL(None, use_errno=True).ptrace(16, {pid}, 0, 0), ctypes.get_errno())'"
SIGNALS = "kill -STOP {pid}; kill -9 {pid}; echo killed=$?; " + PTRACE


def test_a_process_outside_is_neither_signalled_nor_traced(server, project: Path, home: Path, outsider: Outsider) -> None:
    texts, _ = run(server, project, command(SIGNALS.format(pid=outsider.pid)))
    assert "killed=1" in texts[0] and "attach -1 3" in texts[0], texts  # ESRCH: no such process in its namespace
    time.sleep(0.2)
    assert outsider.proc.poll() is None and psutil.Process(outsider.pid).status() != psutil.STATUS_STOPPED


def test_control_outside_the_sandbox_the_process_outside_is_killed(tmp_path: Path, outsider: Outsider) -> None:
    output = _outside_the_sandbox(f"kill -9 {outsider.pid}; echo killed=$?", tmp_path)
    assert "killed=0" in output and outsider.proc.wait(5) == -signal.SIGKILL


def test_the_command_cannot_stop_or_kill_its_supervisor(server, project: Path, home: Path) -> None:
    """The supervisor is the namespace's init: a signal from inside it has no handler for is
    dropped by the kernel, SIGKILL and SIGSTOP included, so it always sweeps what is left."""
    mark = marked.marker(297)
    text = f"(setsid sleep {mark} </dev/null >/dev/null 2>&1 &); kill -STOP 1; kill -9 1; kill -9 $PPID; sleep 0.2; echo parent=$PPID; ps -o stat= -p 1"
    try:
        texts, _ = run(server, project, command(text))
        assert "parent=1" in texts[0] and "\nS" in texts[0], texts  # still running, not stopped (T)
        assert "timed out" not in texts[0] and not marked.alive(mark), texts
    finally:
        _end(mark)


# 3. Everything the command starts ends with it ------------------------------------------------


def test_a_double_forked_setsid_sleep_is_gone_after_the_command(server, project: Path, home: Path) -> None:
    mark = marked.marker(297)
    try:
        texts, _ = run(server, project, command(f"(setsid sleep {mark} </dev/null >/dev/null 2>&1 &); sleep 0.3; ps -eo comm= | grep -cx sleep"))
        assert texts[0].rstrip().endswith("1"), texts  # it was running inside
        assert not marked.alive(mark), [p.info for p in marked.alive(mark)]
    finally:
        _end(mark)


def _kill_supervisor_while_a_daemon_runs(project: Path, mark: str) -> None:
    """Run a command that leaves a detached sleep, SIGKILL its supervisor from outside (the agent
    does, after its grace), with the agent's own look through its user namespace turned off."""
    sandbox = Sandbox(project)
    result: list[object] = []
    text = f"(setsid sleep {mark} </dev/null >/dev/null 2>&1 &); sleep {mark}"
    runner = threading.Thread(target=lambda: result.append(run_command(text, project, {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"]}, 60.0,
                                                                        CancelToken(), project.parent / "out", sandbox.preexec(sandbox.confinement()))))
    runner.start()
    try:
        deadline = time.monotonic() + 30
        while len(marked.alive(mark)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(marked.alive(mark)) == 2
        supervisors = [p for p in psutil.process_iter(["cmdline"]) if "mzagent-supervisor" in (p.info["cmdline"] or []) and any(mark in a for a in p.info["cmdline"])]
        assert len(supervisors) == 1
        supervisors[0].kill()
    finally:
        runner.join(30)
        sandbox.close()


def test_when_the_supervisor_is_killed_the_kernel_ends_everything_in_the_namespace(project: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "end_namespace", lambda held, rounds=20: False)
    mark = marked.marker(297)
    try:
        _kill_supervisor_while_a_daemon_runs(project, mark)
        assert not marked.alive(mark), [p.info for p in marked.alive(mark)]
    finally:
        _end(mark)


def test_control_without_the_pid_namespace_a_killed_supervisors_daemon_lives_on(project: Path, home: Path, monkeypatch: pytest.MonkeyPatch, without_pid_namespace: None) -> None:
    monkeypatch.setattr(process, "end_namespace", lambda held, rounds=20: False)
    mark = marked.marker(297)
    try:
        _kill_supervisor_while_a_daemon_runs(project, mark)
        assert len(marked.alive(mark)) == 1  # the detached one: only the agent's look through the namespace ended it
    finally:
        _end(mark)


# 4. Ways out of the namespace, or around its /proc -------------------------------------------


TRICKS = {
    "a new pid namespace with its own /proc": "unshare -Upf --mount-proc cat /proc/{pid}/cmdline",
    "a proc mounted elsewhere": "mkdir -p p; unshare -Um sh -c 'mount -t proc proc p && cat p/{pid}/cmdline'",
    "/proc unmounted to show the one under it": "umount -l /proc; cat /proc/{pid}/cmdline",
    "/proc unmounted by root of a new user namespace": "unshare -Um sh -c 'umount -l /proc; cat /proc/{pid}/cmdline'",
    "nsenter into the namespaces of process 1": "nsenter -t 1 -p -m cat /proc/{pid}/cmdline",
    "nsenter into the namespaces of the process outside": "nsenter -t {pid} -p -m -U cat /proc/{pid}/cmdline",
    "setns through /proc/1/ns/pid": "python3 -c 'import ctypes, os; print(ctypes.CDLL(None).setns(os.open(\"/proc/1/ns/pid\", os.O_RDONLY), 0)); os.system(\"cat /proc/{pid}/cmdline\")'",
    "the root of process 1": "cat /proc/1/root/proc/{pid}/cmdline",
    "the cgroups' process lists": "grep -rlx {pid} /sys/fs/cgroup --include=cgroup.procs | head -3; cat /proc/{pid}/cmdline",
}


@pytest.mark.parametrize("trick", list(TRICKS.values()), ids=list(TRICKS))
def test_no_trick_shows_the_process_outside(server, project: Path, home: Path, outsider: Outsider, trick: str) -> None:
    texts, _ = run(server, project, command(trick.format(pid=outsider.pid) + "; echo tried"))
    assert "tried" in texts[0], texts
    assert outsider.mark not in texts[0], texts
