"""Attacks on the rule "nothing a command starts outlives the command" (the supervising shell
of agent/tools/process.py) and on its private report pipe. Each test asserts the attack does
NOT succeed: a failing test is an attack that got through. Processes are found only by a
marker in their command line (a sleep duration, or an argument, no other process uses), and
every test ends its own marked processes however it ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.tools.process import run_command
from tests import marked
from tests.attack_helpers import command, needs_namespaces, needs_own_pids, run


@pytest.fixture
def home(bare_home: Path) -> Path:
    """These attacks run with an empty home of the test's own (no key in it)."""
    return bare_home


def _mark() -> str:
    return marked.marker(296)


_alive = marked.alive


def _named(mark: str) -> list[psutil.Process]:
    """Marked processes, and those whose command line holds the mark in a longer argument (a
    supervisor: its command is one argument)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(mark in part for part in proc.info["cmdline"] or []) and proc.pid != os.getpid():
                found.append(proc)
        except psutil.NoSuchProcess:
            continue
    return found


def _end(mark: str) -> None:
    """Ends this test's marked processes (stopped ones too, and the group of one that keeps
    changing its pid), until none is left."""
    for _ in range(200):
        procs = [p for p in _named(mark) if p.status() != psutil.STATUS_ZOMBIE] if _named(mark) else []
        if not procs:
            return
        for proc in procs:
            try:
                group = os.getpgid(proc.pid)
                if group != os.getpgrp():
                    os.killpg(group, signal.SIGKILL)
                proc.kill()
            except (psutil.NoSuchProcess, ProcessLookupError, PermissionError):
                pass
        time.sleep(0.02)


def _wait_for(condition, seconds: float = 10.0) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


# 1. The report pipe, reopened through /proc/$PPID/fd: "job N" naming a process group of the user --


FORGE = (
    "fd=$(tr '\\0' '\\n' </proc/$PPID/cmdline | tail -n 1); "
    "printf 'job %d\\n' {victim} >/proc/$PPID/fd/$fd && echo forged; "
    "{then}"
)


@needs_namespaces
@pytest.mark.parametrize("then", ["kill -9 $PPID; sleep 1", "kill -HUP $PPID; sleep 1"])
def test_a_forged_job_report_does_not_make_the_agent_kill_another_process_group_of_the_user(server, project: Path, home: Path, then: str) -> None:
    """The command cannot signal the user's other processes (Landlock scopes signals), but it can
    reopen its supervisor's report pipe (/proc/$PPID/fd/N, N is the supervisor's last argument),
    write `job <pgid of a process of the user>` and kill the supervisor: the agent, unconfined,
    then SIGTERMs and SIGKILLs the group the report names."""
    mark = _mark()
    victim = subprocess.Popen(["sleep", mark], start_new_session=True)
    try:
        texts, _ = run(server, project, command(FORGE.format(victim=victim.pid, then=then)))
        time.sleep(0.2)
        assert victim.poll() is None, (victim.returncode, texts)
    finally:
        victim.kill()
        victim.wait()
        _end(mark)


def test_outside_the_sandbox_a_forged_job_report_is_not_acted_on_either(tmp_path: Path) -> None:
    """Without the sandbox the command could kill the group itself; still, the agent acting on a
    report line the command wrote is the confused deputy the test above looks for."""
    mark = _mark()
    victim = subprocess.Popen(["sleep", mark], start_new_session=True)
    try:
        # The command does not kill the victim itself: only the agent could.
        run_command(FORGE.format(victim=victim.pid, then="kill -9 $PPID; sleep 1"), tmp_path, {"PATH": os.environ["PATH"]}, 30, CancelToken(), tmp_path / "out")
        time.sleep(0.2)
        assert victim.poll() is None, victim.returncode
    finally:
        victim.kill()
        victim.wait()
        _end(mark)


# 2. A chain that re-forks faster than the supervisor's sweep (by pid, one level at a time) -------

# The head sits; its successor waits for the head to die and then becomes the head, forking a new
# successor. The sweep kills the supervisor's children (the head) every 20 ms, each time the
# successor is re-parented to it having already forked the next one: never an empty list, and
# after 200 rounds the sweep gives up.
CHAIN = (
    "python3 -c '\n"
    "import os, time\n"
    "os.setsid()\n"
    "def head():\n"
    "    while os.fork() == 0:\n"
    "        parent = os.getppid()\n"
    "        while os.getppid() == parent:\n"
    "            time.sleep(0.002)\n"
    "    while True:\n"
    "        time.sleep(1)\n"
    "head()\n"
    "' {m} </dev/null >/dev/null 2>&1 &\n"
    "sleep 0.5; echo started"
)


@needs_namespaces
def test_a_chain_that_reforks_faster_than_the_sweep_does_not_outlive_the_command(server, project: Path, home: Path) -> None:
    mark = _mark()
    try:
        texts, _ = run(server, project, command(CHAIN.format(m=mark)))
        assert "started" in texts[0], texts
        assert not _alive(mark), [p.info for p in _alive(mark)]
    finally:
        _end(mark)


def test_outside_the_sandbox_a_chain_that_reforks_faster_than_the_sweep_is_ended(tmp_path: Path) -> None:
    mark = _mark()
    try:
        result = run_command(CHAIN.format(m=mark), tmp_path, {"PATH": os.environ["PATH"]}, 60, CancelToken(), tmp_path / "out")
        assert result.exit_code == 0
        assert not _alive(mark), [p.info for p in _alive(mark)]
    finally:
        _end(mark)


# 3. A process that changes its pid all the time (fork, parent exits), in a session of its own ----

COMET = ("touch alive; setsid perl -e 'open(my $f, \">\", \"group\"); print $f getpgrp(); close($f); "
         "while (1) {{ exit if fork; utime(undef, undef, \"alive\") }}' {m} </dev/null >/dev/null 2>&1 &\nsleep 0.5; echo started")
"""Each generation forks the next and exits, touching `alive`: it lives a few microseconds, so a
look for it by its command line almost never finds it (a test that only looked passed while one
ran on); whether `alive` still changes says it for sure."""


def _comet_ran_on(folder: Path) -> bool:
    before = (folder / "alive").stat().st_mtime_ns
    time.sleep(0.3)
    return (folder / "alive").stat().st_mtime_ns != before


def _end_comet(folder: Path) -> None:
    """Its whole process group, which each generation inherits, until `alive` stands still."""
    with contextlib.suppress(OSError, ValueError):
        group = int((folder / "group").read_text())
        for _ in range(50):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
            if not _comet_ran_on(folder):
                return


@needs_namespaces
def test_a_process_that_keeps_changing_its_pid_does_not_outlive_the_command(server, project: Path, home: Path) -> None:
    mark = _mark()
    try:
        texts, _ = run(server, project, command(COMET.format(m=mark)))
        assert "started" in texts[0], texts
        assert not _comet_ran_on(project)
    finally:
        _end_comet(project)
        _end(mark)


def test_outside_the_sandbox_a_process_that_keeps_changing_its_pid_is_ended(tmp_path: Path) -> None:
    mark = _mark()
    try:
        result = run_command(COMET.format(m=mark), tmp_path, {"PATH": os.environ["PATH"]}, 60, CancelToken(), tmp_path / "out")
        assert result.exit_code == 0
        assert not _comet_ran_on(tmp_path)
    finally:
        _end_comet(tmp_path)
        _end(mark)


# 4. Daemons the command starts itself, and namespaces made inside its own ------------------------

OWN_DAEMONS = {
    "a pid and user namespace of its own": "unshare -Upf setsid sleep {m} </dev/null >/dev/null 2>&1 &",
    "a pid namespace whose init forks and leaves": "unshare -Upf sh -c 'setsid sleep {m} & sleep {m}' </dev/null >/dev/null 2>&1 &",
    "a tmux server": "tmux -S \"$PWD/.tmux-sock\" new-session -d 'sleep {m}'",
    "a process that ignores SIGTERM, blocks it and reparents itself": "setsid sh -c 'trap \"\" TERM HUP INT; (trap \"\" TERM; exec sleep {m}) & exec sleep {m}' </dev/null >/dev/null 2>&1 &",
}


@needs_namespaces
@pytest.mark.parametrize("daemon", list(OWN_DAEMONS))
def test_a_daemon_the_command_starts_itself_does_not_outlive_it(server, project: Path, home: Path, daemon: str) -> None:
    mark = _mark()
    try:
        texts, _ = run(server, project, command(OWN_DAEMONS[daemon].format(m=mark) + "\nsleep 0.5; echo started"))
        assert "started" in texts[0], texts
        assert not _alive(mark), [p.info for p in _alive(mark)]
    finally:
        _end(mark)


# 5. Stopping the supervisor: the command ends, nobody reaps it -----------------------------------


@needs_namespaces
def test_a_command_that_stops_its_supervisor_leaves_nothing_running(server, project: Path, home: Path) -> None:
    """SIGSTOP cannot be caught: the stopped supervisor never sees the command end, nor sweeps;
    the agent waits for it until the timeout, then kills it, then ends the namespace."""
    mark = _mark()
    try:
        texts, _ = run(server, project, command(f"setsid sh -c 'sleep {mark}' </dev/null >/dev/null 2>&1 & kill -STOP $PPID; echo stopped-it"), command_timeout=4.0)
        assert texts, texts
        assert not _alive(mark), [p.info for p in _alive(mark)]
    finally:
        _end(mark)


# 6. The first report line, checked --------------------------------------------------------------


class _Supervisor:
    def __init__(self, pid: int) -> None:
        self.pid = pid

    def poll(self) -> None:
        return None


def test_a_first_report_line_naming_a_group_that_is_not_the_supervisors_child_is_not_believed() -> None:
    """Should the command win the race to the pipe (reopened through /proc/$PPID/fd) before the
    supervisor's own line, it names a group of the user that is no child of the supervisor."""
    from mzagent_tui.agent.tools.process import _read_job

    mark = _mark()
    victim = subprocess.Popen(["sleep", mark], start_new_session=True)
    try:
        for parent, expected in ((os.getpid() + 1 if os.getpid() + 1 != victim.pid else os.getpid() + 2, 0), (os.getpid(), victim.pid)):
            read, write = os.pipe()
            os.write(write, f"job {victim.pid}\nstopped\n".encode())
            job, rest = _read_job(read, _Supervisor(parent), 2.0)  # type: ignore[arg-type]
            os.close(read)
            os.close(write)
            assert (job, rest) == (expected, b"stopped\n")
    finally:
        victim.kill()
        victim.wait()


# 7. Stopping the supervisor, then the agent dies: nobody was left to end anything ----------------


def _supervisor_of(mark: str) -> psutil.Process | None:
    for proc in _named(mark):
        try:
            if "mzagent-supervisor" in proc.cmdline():
                return proc
        except psutil.NoSuchProcess:
            continue
    return None


STOPS = {
    "SIGSTOP": "kill -STOP $PPID;",
    "a ptrace stop": "S=$PPID setsid python3 -c 'import ctypes, os, time; print(\"traced\", ctypes.CDLL(None).ptrace(16, int(os.environ[\"S\"]), 0, 0), flush=True); time.sleep(300)' {m} </dev/null >traced 2>&1 &",
}


@needs_own_pids
@pytest.mark.parametrize("stop", list(STOPS.values()), ids=list(STOPS))
def test_a_command_that_stops_its_supervisor_leaves_nothing_when_the_agent_is_killed(server, project: Path, isolated_home: Path, stop: str) -> None:
    """Was open without a PID namespace: a stopped supervisor never acts on the parent-death
    signal, and a dead agent cannot end the namespace. The supervisor is now the namespace's
    init, which a SIGSTOP from inside does not reach, and the relay outside it kills it when
    the agent is gone (stopped or traced: SIGKILL ends it all the same), and the kernel then
    everything in the namespace."""
    from tests.test_supervision import start

    mark = _mark()
    proc = start(server, project, f"setsid sh -c 'sleep {mark}' </dev/null >/dev/null 2>&1 & {stop.format(m=mark)} sleep 0.5; touch tried; sleep {mark}")
    try:
        assert _wait_for(lambda: (project / "tried").exists() and len(_alive(mark)) >= 2, 30), proc.stderr
        supervisor = _supervisor_of(mark)
        assert supervisor is not None
        if stop == STOPS["SIGSTOP"]:
            assert supervisor.status() != psutil.STATUS_STOPPED  # the kernel dropped it
        elif "traced 0" not in (project / "traced").read_text():
            pytest.skip(f"ptrace of the supervisor refused here: {(project / 'traced').read_text()}")
        proc.kill()
        proc.wait()
        assert _wait_for(lambda: not _alive(mark), 5), [p.info for p in _alive(mark)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _end(mark)


def test_outside_the_sandbox_a_command_that_stops_its_supervisor_leaves_nothing_running(tmp_path: Path) -> None:
    """Without a user namespace nothing names the command's processes once the supervisor is
    killed: the stopped supervisor has to be woken to sweep them itself."""
    mark = _mark()
    try:
        result = run_command(f"setsid sh -c 'sleep {mark}' </dev/null >/dev/null 2>&1 & kill -STOP $PPID", tmp_path, {"PATH": os.environ["PATH"]}, 2.0, CancelToken(), tmp_path / "out")
        assert result.timed_out
        assert not _alive(mark), [p.info for p in _alive(mark)]
    finally:
        _end(mark)


def _tracer(mark: str, out: str) -> str:
    """A detached process of the command that attaches to the supervisor and never waits: the
    supervisor stops at its next signal (the command's end), and once killed is a zombie only
    the tracer could reap."""
    return ("S=$PPID setsid python3 -c 'import ctypes, os, sys, time; r = ctypes.CDLL(None).ptrace(16, int(os.environ[\"S\"]), 0, 0); "
              "print(\"traced\", r, flush=True); time.sleep(300)' " + mark + " </dev/null >traced.txt 2>&1 & "
              "setsid sh -c 'sleep " + mark + "' </dev/null >/dev/null 2>&1 & sleep 1; cat traced.txt").replace("traced.txt", out)


@needs_namespaces
def test_a_command_that_holds_its_supervisor_in_a_ptrace_stop_leaves_nothing_running(server, project: Path, home: Path) -> None:
    """A ptrace stop is not ended by SIGCONT, and the agent waited forever for a supervisor the
    tracer never reaped; the tracer is the command's, in its namespace, and is ended with it."""
    mark = _mark()
    try:
        started = time.monotonic()
        texts, _ = run(server, project, command(_tracer(mark, "traced.txt")), command_timeout=4.0)
        if "traced 0" not in texts[0]:
            pytest.skip(f"ptrace of the supervisor refused here: {texts[0][-300:]}")
        assert time.monotonic() - started < 60
        assert not _alive(mark), [p.info for p in _alive(mark)]
    finally:
        _end(mark)


@pytest.mark.xfail(strict=True, reason="open: outside the sandbox a command can hold its supervisor in a ptrace stop (SIGCONT does "
                   "not end it), so it never sweeps, and without a user namespace nothing names what the command detached "
                   "(like kill -9 $PPID outside the sandbox)")
def test_outside_the_sandbox_a_command_that_holds_its_supervisor_in_a_ptrace_stop_leaves_nothing_running(tmp_path: Path) -> None:
    mark = _mark()
    try:
        started = time.monotonic()
        result = run_command(_tracer(mark, str(tmp_path / "traced.txt")), tmp_path, {"PATH": os.environ["PATH"]}, 2.0, CancelToken(), tmp_path / "out")
        if b"traced 0" not in result.output.head:
            pytest.skip(f"ptrace of the supervisor refused here: {result.output.head[-300:]!r}")
        assert result.timed_out and time.monotonic() - started < 30, "the agent waited for the tracer"
        assert not _alive(mark), [p.info for p in _alive(mark)]
    finally:
        _end(mark)


# 8. The report pipe filled: the supervisor's last line blocks ------------------------------------


@needs_namespaces
def test_a_command_that_fills_the_report_pipe_does_not_hold_its_supervisor_until_the_timeout(server, project: Path, home: Path) -> None:
    """The agent read the report only once the supervisor had exited: a command that filled the
    pipe (64 KiB, through /proc/$PPID/fd) left the supervisor blocked in `echo stopped` after its
    sweep, and the command came back as timed out at the timeout, whatever it did."""
    mark = _mark()
    fill = ("fd=$(tr '\\0' '\\n' </proc/$PPID/cmdline | tail -n 1); "
            "(head -c 70000 /dev/zero >/proc/$PPID/fd/$fd &); "
            f"setsid sh -c 'sleep {mark}' </dev/null >/dev/null 2>&1 & sleep 0.5; echo done-filling")
    try:
        started = time.monotonic()
        texts, _ = run(server, project, command(fill))
        assert "done-filling" in texts[0], texts
        assert "timed out" not in texts[0] and time.monotonic() - started < 9, texts
        assert not _alive(mark), [p.info for p in _alive(mark)]
    finally:
        _end(mark)


# 9. The namespace's number, reused --------------------------------------------------------------


@needs_namespaces
def test_the_agent_does_not_end_a_namespace_that_took_the_number_of_the_commands(server, project: Path, home: Path) -> None:
    """A namespace's number (its inode) is freed with it and taken by the next namespace made on
    the machine; ended by number after the command, another program's namespace (here one the
    user made with `unshare -U` just as the command ended: a browser's sandbox, a container)
    was ended with it. The command's namespace is held open until then."""
    from mzagent_tui.agent.tools import process

    mark = _mark()
    victims: list[subprocess.Popen[bytes]] = []
    real = process.end_namespace

    def another_program_first(*args, **kwargs) -> bool:  # noqa: ANN002, ANN003
        victim = subprocess.Popen(["unshare", "-U", "sleep", mark], start_new_session=True)
        victims.append(victim)
        _wait_for(lambda: os.path.exists(f"/proc/{victim.pid}/ns/user") and os.stat(f"/proc/{victim.pid}/ns/user").st_ino != os.stat("/proc/self/ns/user").st_ino)
        return real(*args, **kwargs)

    try:
        process.end_namespace = another_program_first  # type: ignore[assignment]
        run(server, project, command(f"(sleep {mark} &); echo ran"))  # something left: the namespace is looked through
        assert victims and victims[0].poll() is None, victims[0].returncode
    finally:
        process.end_namespace = real  # type: ignore[assignment]
        for victim in victims:
            victim.kill()
            victim.wait()
        _end(mark)
