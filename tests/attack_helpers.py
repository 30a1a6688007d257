"""What the attack files share: a plain git for setting up repositories (and the user's own git
after a session), the skip marks for the wall, a listener that records whatever reaches it, and
tool calls run through the real agent (the observations; with the session folder; with the user
asked about keeping a planted file). The folders they use (`short`, `outside`, a `home` of the
test's own) and `unwalled` are fixtures in conftest."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
from pathlib import Path

from mzagent_tui.agent.events import Observation
from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy, Rules
from mzagent_tui.agent.safety.approval_requests import ApprovalRequest, CommandApproval
from tests.conftest import Recorder, make_agent, requires_sandbox
from tests.scripted_server import Reply, answer_reply

IDENTITY = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"}
needs_wall = requires_sandbox(6)
needs_namespaces = requires_sandbox(6, namespaces=True)
needs_own_pids = requires_sandbox(6, namespaces=True, pids=True)


def git(cwd: Path, *args: str) -> str:
    """The test's own git (not mzagent's), with no config of the machine's."""
    env = {**os.environ, **IDENTITY, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


def users_git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The user's own git after the session, outside mzagent (no config of the machine's)."""
    env = {**os.environ, **IDENTITY, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=False)


def repository(project: Path) -> None:
    """The project as a repository with one commit (`a.txt`)."""
    git(project, "init", "-q", ".")
    (project / "a.txt").write_text("a\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", "one")


class Listener:
    """A stream or datagram listener (TCP, UDP, unix socket) recording what reaches it."""

    def __init__(self, family: int, address: object, kind: int = socket.SOCK_STREAM) -> None:
        self.socket = socket.socket(family, kind)
        self.socket.bind(address)
        self.kind = kind
        if kind == socket.SOCK_STREAM:
            self.socket.listen()
        self.socket.settimeout(0.2)
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                if self.kind == socket.SOCK_DGRAM:
                    self.received.append(self.socket.recv(200))
                    continue
                connection, _ = self.socket.accept()
            except (TimeoutError, OSError):
                continue
            with connection:
                connection.settimeout(1)
                try:
                    self.received.append(connection.recv(200) or b"(connected)")
                except OSError:
                    self.received.append(b"(connected)")

    def close(self) -> list[bytes]:
        self._stop.set()
        self._thread.join(2)
        self.socket.close()
        return self.received


def action(call: str) -> Reply:
    return Reply(f"<thought>go</thought><action>{call}</action>")


def command(text: str) -> str:
    return f"run_terminal_command({json.dumps(text)})"


def run_reply(command: str) -> Reply:
    return Reply(f"<thought>run</thought><action>run_terminal_command({json.dumps(command)})</action>")


def command_reply(command: str) -> Reply:
    return Reply(f"<thought>run it</thought><action>run_terminal_command({json.dumps(command)})</action>")


def run(
    server, project: Path, *calls: str, mode: str = "yolo", approver=None, rules: Rules | None = None, **settings: object,  # noqa: ANN001
) -> tuple[list[str], Recorder]:
    """Tool calls (`run_terminal_command(...)`, `read_file(...)`) through the real agent; the
    observations the model was sent. `settings` override the tests' settings (a shorter
    command timeout where an attack makes the agent wait for it)."""
    server.script(*[action(c) for c in calls], answer_reply())
    environ = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"]}
    agent, recorder = make_agent(server, project, approver=approver, env=environ, **settings)
    agent.policy = Policy(mode, rules or Rules())
    agent.approver.policy = agent.policy
    try:
        agent.run("work")
    finally:
        agent.close()
    return [o.text for o in recorder.of(Observation)], recorder



def run_with_session(server, project: Path, *commands: str, mode: str = "yolo", approver=None) -> tuple[list[str], Recorder, Path]:  # noqa: ANN001
    """Commands through the real agent (yolo: only the kernel wall stands); the observations,
    the events and the session folder."""
    server.script(*[run_reply(c) for c in commands], answer_reply())
    environ = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"]}
    agent, recorder = make_agent(server, project, approver=approver, env=environ)
    agent.policy = Policy(mode, Rules())
    agent.approver.policy = agent.policy
    folder = agent.session.folder
    try:
        agent.run("work")
    finally:
        agent.close()
    return [o.text for o in recorder.of(Observation)], recorder, folder


def run_in_sandbox(
    server, project: Path, *commands: str, sandbox: str = "workspace", approver=None, mode: str = "yolo", rules: Rules | None = None, env=None,  # noqa: ANN001
) -> tuple[list[str], Recorder]:
    """Commands through the real agent in the sandbox named (`workspace`, `none`), with `env`
    added to the command's environment (and passed on to it); the observations and the events."""
    server.script(*[run_reply(c) for c in commands], answer_reply())
    environ = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], **(env or {})}
    agent, recorder = make_agent(server, project, approver=approver, env=environ, sandbox=sandbox, pass_env=list(env or {}))
    agent.policy = Policy(mode, rules)
    agent.approver.policy = agent.policy
    agent.run("work")
    agent.close()
    return [o.text for o in recorder.of(Observation)], recorder


class KeepAnswers:
    """Runs every command; answers the question about keeping a file with `keep`."""

    def __init__(self, keep: ApprovalDecision) -> None:
        self.keep = keep
        self.asked: list[ApprovalRequest] = []

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        if isinstance(request, CommandApproval):
            return ApprovalDecision(True)
        self.asked.append(request)
        return self.keep


def run_keeping(server, project: Path, command: str, keep: ApprovalDecision, **settings: object):  # noqa: ANN001, ANN201
    """One command through the real agent, the user answering the question about keeping a file
    it planted with `keep`; the agent (not closed), the events, the user and the observation."""
    server.script(command_reply(command), answer_reply())
    user = KeepAnswers(keep)
    agent, rec = make_agent(server, project, approver=user, **settings)
    agent.run("set things up")
    observation = next(e for e in rec.events if isinstance(e, Observation))
    return agent, rec, user, observation.text
