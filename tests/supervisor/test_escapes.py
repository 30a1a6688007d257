"""A process that leaves the command's process group (setsid, a double fork, a subreaper of its
own, forking while it is ended), or that kills its supervisor, does not outlive the command, in
the sandbox and outside it. Each test looks only at processes carrying its own marker. (Round
five of the outside attacks.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import marked
from tests.attack_helpers import command, needs_namespaces, needs_wall, run

# A process left running past the command (setsid leaves its group) -----------------------------


def _mark() -> str:
    return marked.marker(297)


_alive = marked.alive


ESCAPES = {
    "setsid": "setsid sh -c 'sleep {m}' </dev/null >/dev/null 2>&1 &",
    "setsid, then a double fork": "setsid sh -c '(sleep {m} &) ; sleep 0' </dev/null >/dev/null 2>&1 &",
    "nohup and disown": "nohup setsid sleep {m} >/dev/null 2>&1 & disown",
    "a subreaper of its own": "python3 -c 'import ctypes, os, subprocess; ctypes.CDLL(None).prctl(36, 1); os.setsid(); "
                              "subprocess.Popen([\"sh\", \"-c\", \"(sleep {m} &)\"]); os.wait(); import time; time.sleep(float(\"{m}\"))' "
                              "</dev/null >/dev/null 2>&1 &",
    "forking while it is ended": "setsid sh -c 'while :; do sleep {m} & done' </dev/null >/dev/null 2>&1 &",
}


@needs_wall
@pytest.mark.parametrize("escape", list(ESCAPES))
def test_a_process_that_leaves_the_commands_group_does_not_outlive_the_command(server, project: Path, home: Path, escape: str) -> None:
    """`setsid` starts a new session: ending the command's process group missed it, and it
    lived on after the command (and the agent), free to race later checks. The command's
    supervisor is a child subreaper, so whatever leaves the group is re-parented to it and ended."""
    mark = _mark()
    texts, _ = run(server, project, command(ESCAPES[escape].format(m=mark) + "\nsleep 0.5; echo started"))
    assert "started" in texts[0], texts
    assert not _alive(mark), [p.info for p in _alive(mark)]
    assert "Background processes it left running were stopped" in texts[0], texts


@pytest.mark.parametrize("escape", list(ESCAPES))
def test_outside_the_sandbox_too_an_escaped_process_is_ended(tmp_path: Path, escape: str) -> None:
    from mzagent_tui.agent.cancel import CancelToken
    from mzagent_tui.agent.tools.process import run_command

    mark = _mark()
    result = run_command(ESCAPES[escape].format(m=mark) + "\nsleep 0.5", tmp_path, {"PATH": os.environ["PATH"]}, 30, CancelToken(), tmp_path / "out")
    assert result.exit_code == 0 and result.stopped_background
    assert not _alive(mark), [p.info for p in _alive(mark)]


KILLING_THE_SUPERVISOR = {
    "kill -9 $PPID": "setsid sh -c 'sleep {m}' </dev/null >/dev/null 2>&1 & kill -9 $PPID; sleep 1",
    "in a user namespace of its own": "unshare -U setsid sh -c 'sleep {m}' </dev/null >/dev/null 2>&1 & sleep 0.3; kill -9 $PPID; sleep 1",
    "by SIGHUP": "setsid sh -c 'sleep {m}' </dev/null >/dev/null 2>&1 & kill -HUP $PPID; sleep 1",
}


@needs_namespaces
@pytest.mark.parametrize("attack", list(KILLING_THE_SUPERVISOR))
def test_a_command_that_kills_its_supervisor_still_leaves_nothing_running(server, project: Path, home: Path, attack: str) -> None:
    """The supervisor shares the sandbox with the command, which can kill it: what the command
    detached was re-parented to init and lived on. The command's user namespace still names
    every process that was the command's, and the agent ends them."""
    mark = _mark()
    texts, _ = run(server, project, command(KILLING_THE_SUPERVISOR[attack].format(m=mark)))
    assert texts, texts
    assert not _alive(mark), [p.info for p in _alive(mark)]


def test_an_escaped_process_is_ended_when_the_command_times_out(tmp_path: Path) -> None:
    from mzagent_tui.agent.cancel import CancelToken
    from mzagent_tui.agent.tools.process import run_command

    mark = _mark()
    result = run_command(f"setsid sh -c 'sleep {mark}' </dev/null >/dev/null 2>&1 & sleep {mark}", tmp_path, {"PATH": os.environ["PATH"]}, 1.0, CancelToken(), tmp_path / "out")
    assert result.timed_out
    assert not _alive(mark), [p.info for p in _alive(mark)]
