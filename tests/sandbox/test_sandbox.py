"""The sandbox under the gate, attacked in yolo so that only the kernel stands in the way.

Every command runs through the real agent against the scripted server; the checks look at the
effect (a file, a connection, a signal), not at the words of the observation.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mzagent_tui.agent.events import ApprovalAnswered, Notice, Observation
from mzagent_tui.agent.safety import sandbox as sandbox_module
from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy, Rules
from mzagent_tui.agent.safety.sandbox import Sandbox
from mzagent_tui.agent.safety.sensitive import is_secret
from tests.attack_helpers import run_in_sandbox as run
from tests.attack_helpers import run_reply
from tests.conftest import RecordingApprover, make_agent, requires_sandbox
from tests.scripted_server import answer_reply

pytestmark = requires_sandbox(6)




@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (folder / "notes.txt").write_text("my notes\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def test_a_write_outside_the_project_fails(server, project: Path, home: Path, outside: Path) -> None:
    texts, recorder = run(server, project, f"echo x > {outside}/planted; touch {home}/planted2")
    assert not (outside / "planted").exists() and not (home / "planted2").exists()
    assert "Permission denied" in texts[0]
    assert [e.confinement for e in recorder.of(ApprovalAnswered)] == ["workspace"]


def test_writes_in_the_project_and_its_temp_folder_succeed(server, project: Path, home: Path) -> None:
    texts, _ = run(server, project, 'echo inside > made.txt && echo t > "$TMPDIR/t.txt" && cat "$TMPDIR/t.txt" && echo "tmp=$TMPDIR"')
    assert (project / "made.txt").read_text() == "inside\n"
    assert "Command succeeded" in texts[0] and "\nt\n" in texts[0]
    temp = texts[0].split("tmp=")[1].split()[0]
    assert "mzagent-tmp-" in temp and not Path(temp).exists()  # removed with the session's sandbox


def test_secret_folders_of_the_home_are_not_readable_but_the_rest_is(server, project: Path, home: Path) -> None:
    texts, _ = run(server, project, f"cat {home}/notes.txt; cat {home}/.ssh/id_rsa; ls {home}")
    assert "my notes" in texts[0]
    assert "PRIVATE KEY" not in texts[0] and ("Permission denied" in texts[0] or "No such file" in texts[0])


@pytest.mark.parametrize("entry", [".bash_history", ".python_history", ".pypirc", ".cache/huggingface/token", ".mozilla/firefox/cookies.sqlite", ".codex/auth.json"])
def test_history_tokens_and_browser_profiles_are_not_readable(server, project: Path, home: Path, entry: str) -> None:
    (home / entry).parent.mkdir(parents=True, exist_ok=True)
    (home / entry).write_text("SECRET TOKEN\n")
    (home / ".cache" / "pip" / "pip.log").parent.mkdir(parents=True, exist_ok=True)
    (home / ".cache" / "pip" / "pip.log").write_text("cache ok\n")
    texts, _ = run(server, project, f"cat {home}/{entry}; cat {home}/.cache/pip/pip.log")
    assert "SECRET TOKEN" not in texts[0] and ("Permission denied" in texts[0] or "No such file" in texts[0])
    assert "cache ok" in texts[0]


def test_a_project_under_a_hidden_home_entry_is_seen_whole(server, home: Path) -> None:
    """A project kept at ~/.local/src/app: its dot-folder is split around it, the project itself
    is not (its files showed as empty blanks), and its neighbours stay hidden."""
    project = home / ".local" / "src" / "app"
    project.mkdir(parents=True)
    (project / "main.py").write_text("print('in the project')\n")
    (home / ".local" / "src" / "other").mkdir()
    (home / ".local" / "src" / "other" / "secret.txt").write_text("NEIGHBOUR SECRET\n")
    texts, _ = run(server, project, f"cat main.py; cat {home}/.local/src/other/secret.txt")
    assert "print('in the project')" in texts[0]
    assert "NEIGHBOUR SECRET" not in texts[0]


def test_the_apps_own_sessions_are_not_readable(server, project: Path, home: Path) -> None:
    texts, recorder = run(server, project, 'cat "$(ls -d ${XDG_STATE_HOME}/mzagent/sessions/*/* | head -1)/log.jsonl" | head -c 300', env={"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]})
    assert '"kind"' not in texts[0] and ("Permission denied" in texts[0] or "No such file" in texts[0])


def test_a_tcp_connection_to_a_listening_local_port_fails(server, project: Path, home: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        texts, _ = run(server, project, f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')\"")
        with pytest.raises(TimeoutError):
            listener.accept()
    # In the session's network namespace the machine's port is not there (refused); with Landlock alone, TCP is denied.
    refusal = "ConnectionRefusedError" if sandbox_module.namespaces_work() else "PermissionError"
    assert "CONNECTED" not in texts[0] and refusal in texts[0]


def test_a_port_bound_is_the_sessions_not_the_machines(server, project: Path, home: Path) -> None:
    """With namespaces, a command binds in the session's network namespace: the port the machine
    holds is free there. With Landlock alone, binding is denied."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        texts, _ = run(server, project, f"python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); print('BOUND')\"")
    if sandbox_module.namespaces_work():
        assert "BOUND" in texts[0]  # the same port the machine holds: another namespace
    else:
        assert "BOUND" not in texts[0] and "PermissionError" in texts[0]


def test_the_agent_cannot_be_signalled(server, project: Path, home: Path) -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda number, frame: received.append(number))
    try:
        texts, _ = run(server, project, f"kill -USR1 {os.getpid()}; echo rc=$?")
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert received == [] and "rc=1" in texts[0]


def test_grandchildren_and_background_jobs_are_confined(server, project: Path, home: Path, outside: Path) -> None:
    run(server, project, f"bash -c 'sh -c \"touch {outside}/grandchild\"'", f"(sleep 0.2; touch {outside}/background) & wait")
    assert list(outside.iterdir()) == []


def test_off_lets_the_outside_write_through(server, project: Path, home: Path, outside: Path) -> None:
    _, recorder = run(server, project, f"touch {outside}/allowed", sandbox="off")
    assert (outside / "allowed").exists()
    assert [e.confinement for e in recorder.of(ApprovalAnswered)] == ["off"]


def test_an_allow_rule_with_network_gets_the_network(server, project: Path, home: Path) -> None:
    rules = Rules()
    rules.add("allow", "python3 connect.py", network=True)
    (project / "connect.py").write_text("import socket, sys\nsocket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3)\nprint('CONNECTED')\n")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        texts, recorder = run(server, project, f"python3 connect.py {port}", mode="ask", rules=rules, approver=RecordingApprover(ApprovalDecision(False)))
    assert "CONNECTED" in texts[0]
    assert [e.confinement for e in recorder.of(ApprovalAnswered)] == ["workspace+network"]


def test_the_user_can_run_one_command_outside_the_sandbox(server, project: Path, home: Path, outside: Path) -> None:
    user = RecordingApprover(ApprovalDecision(True, outside_sandbox=True))
    _, recorder = run(server, project, f"touch {outside}/by-the-user", mode="ask", approver=user)
    assert (outside / "by-the-user").exists()
    assert user.requests[0].sandbox == "sandbox: writes in the project, no network"
    assert [e.confinement for e in recorder.of(ApprovalAnswered)] == ["off"]


def test_a_blocked_command_tells_the_model_and_asks_the_user_next_time(server, project: Path, home: Path, outside: Path) -> None:
    """In yolo the command runs without asking; once the sandbox may have blocked it, the same
    command asks, so only the user can choose to run it outside."""
    user = RecordingApprover(ApprovalDecision(False))
    command = f"cat {home}/notes.txt {home}/.ssh/id_rsa"
    texts, recorder = run(server, project, command, command, mode="yolo", approver=user)
    assert "may have blocked" in texts[0] and "cannot turn the sandbox off" in texts[0]
    assert any("may have blocked" in n.text for n in recorder.of(Notice))
    assert len(user.requests) == 1 and user.requests[0].summary == f"cat {home}/notes.txt {home}/.ssh/id_rsa"
    assert "rejected" in texts[1]


def test_yes_does_not_lift_the_sandbox(server, project: Path, home: Path, outside: Path) -> None:
    env = {**os.environ, "HOME": str(home)}
    args = ["run", "--base-url", server.base_url, "--api-key", "sk-cli-secret-key-777", "--model", "m", "--yes", "--json", "--approval", "yolo", "--project", str(project), "t"]
    server.script(run_reply(f"touch {outside}/via-yes"), answer_reply())
    done = subprocess.run([sys.executable, "-m", "mzagent_tui", *args], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert not (outside / "via-yes").exists()
    answered = [json.loads(line) for line in done.stdout.splitlines() if json.loads(line)["type"] == "approval_answered"]
    assert answered[0]["confinement"] == "workspace"
    server.script(run_reply(f"touch {outside}/via-off"), answer_reply())
    done = subprocess.run([sys.executable, "-m", "mzagent_tui", *args[:-1], "--sandbox", "off", "t"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0 and (outside / "via-off").exists()


def test_without_landlock_the_app_says_so_and_runs_with_the_analyser_alone(server, project: Path, home: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_module, "landlock_abi", lambda: 0)
    _, recorder = run(server, project, f"touch {outside}/unconfined")
    assert (outside / "unconfined").exists()
    assert any("No sandbox" in n.text and "Landlock" in n.text for n in recorder.of(Notice))
    assert [e.confinement for e in recorder.of(ApprovalAnswered)] == ["unavailable"]
    env = {**os.environ, "HOME": str(home)}
    shown = subprocess.run([sys.executable, "-c", "import mzagent_tui.agent.safety.sandbox as s; s.landlock_abi = lambda: 0; from mzagent_tui.cli import main; main(['config'])"], capture_output=True, text=True, env=env, timeout=60)
    assert "unavailable" in shown.stdout


def test_the_projects_tests_git_and_a_venv_keep_working(server, project: Path, home: Path) -> None:
    (project / "test_it.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    env = {
        "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b", "PYTHONPATH": os.pathsep.join(sys.path),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # the project's pytest, not this suite's dozen plugins: 8 s of imports on a loaded machine
    }
    commands = [
        f"{sys.executable} -m pytest -q -p no:cacheprovider test_it.py",
        "git init -q && git add -A && git commit -qm first && git status --short && git log --oneline | wc -l",
        f"{sys.executable} -m venv --without-pip .venv && .venv/bin/python -c 'print(\"venv ok\")'",
    ]
    texts, _ = run(server, project, *commands, env=env)
    assert "1 passed" in texts[0]
    assert "Command succeeded" in texts[1] and texts[1].rstrip().endswith("1")
    assert "venv ok" in texts[2]


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_test_keeps_working(server, project: Path, home: Path) -> None:
    (project / "package.json").write_text(json.dumps({"name": "p", "version": "1.0.0", "scripts": {"test": "node check.js"}}))
    (project / "check.js").write_text("console.log('node tests ok')\n")
    texts, _ = run(server, project, "npm test")
    assert "node tests ok" in texts[0] and "Command succeeded" in texts[0]


def test_what_a_command_may_reach_is_worked_out_once_per_session(project: Path, home: Path) -> None:
    """The walk of the home is the costly part; the ruleset itself is made once too where
    commands have no PID namespace (with one it is made in the child, to grant its /proc)."""
    sandbox = Sandbox(project)
    first = sandbox.preexec(sandbox.confinement())
    second = sandbox.preexec(sandbox.confinement())
    assert first is not None and second is not None and len(sandbox._grants) == 1
    sandbox.preexec(sandbox.confinement(network=True))
    assert len(sandbox._grants) == 2
    assert len(sandbox._rulesets) == (0 if sandbox.own_pids else 2)
    sandbox.close()
    assert sandbox._rulesets == {} and sandbox._grants == {}


def test_a_command_runs_confined_from_a_thread_as_the_app_runs_it(project: Path, home: Path, outside: Path) -> None:
    """As the command runner runs it: in the project (a folder the view does not show, such as
    a clone under /tmp, is refused with 126)."""
    sandbox = Sandbox(project)
    confine = sandbox.preexec(sandbox.confinement())
    results: list[int] = []
    thread = threading.Thread(target=lambda: results.append(subprocess.run(["touch", str(outside / "t")], cwd=project, preexec_fn=confine).returncode))
    thread.start()
    thread.join()
    sandbox.close()
    assert results == [1] and not (outside / "t").exists()


def test_a_link_to_the_home_or_into_a_secret_folder_does_not_open_it(server, project: Path, home: Path) -> None:
    (project / "to-home").symlink_to(home)
    (home / "keys").symlink_to(home / ".ssh")
    texts, _ = run(server, project, f"cat {project}/to-home/.ssh/id_rsa; cat {home}/keys/id_rsa; cat {project}/to-home/notes.txt")
    assert "PRIVATE KEY" not in texts[0] and "my notes" in texts[0]


def test_a_script_without_the_execute_permission_is_said_so_not_blamed_on_the_sandbox(server, project: Path, home: Path) -> None:
    """`./lines.sh` after write_to_file: exit 126, "Permission denied". Told the sandbox may have
    blocked it, a small model tried sudo eight times."""
    (project / "lines.sh").write_text("#!/bin/bash\necho ran\n")
    texts, recorder = run(server, project, "./lines.sh", "bash lines.sh", mode="yolo")
    assert texts[0].endswith(
        "Note: ./lines.sh is not executable: the file has no execute permission (files write_to_file creates have none), "
        "not a sandbox rule. Run it through its interpreter (bash lines.sh, python3 lines.sh), or make it executable first: "
        "chmod +x lines.sh"
    )
    assert "may have blocked" not in texts[0] and not recorder.of(Notice)
    assert texts[1].startswith("Command succeeded (exit code 0).\nOutput:\nran")



@pytest.mark.parametrize("how", ["./stat.py", "env ./stat.py"])
def test_a_script_without_its_interpreter_line_is_said_so_with_the_fix(server, project: Path, home: Path, how: str) -> None:
    """`./csvstat.py` after chmod: bash reads the Python file as shell ("import: command not
    found"; execve says "Exec format error"). A small model went on to `sed` the error text into the
    file. The note names the missing line and the command that adds it, which then works."""
    (project / "stat.py").write_text('"""Count."""\nimport sys\nprint("rows", 3)\n')
    (project / "stat.py").chmod(0o755)
    fix = "perl -pi -e 'print \"#!/usr/bin/env python3\\n\" if $. == 1' stat.py"
    texts, _ = run(server, project, how, fix, "./stat.py", mode="yolo")
    assert texts[0].startswith("Command FAILED") and "has no interpreter line" in texts[0], texts[0]
    assert texts[0].endswith(f"add it and keep the rest: {fix}")
    assert texts[2].startswith("Command succeeded (exit code 0).\nOutput:\nrows 3"), texts[2]
    assert (project / "stat.py").stat().st_mode & 0o111 and (project / "stat.py").read_text().startswith("#!/usr/bin/env python3\n\"\"\"Count")


def test_a_shell_script_that_fails_for_its_own_reasons_gets_no_such_note(server, project: Path, home: Path) -> None:
    (project / "go.sh").write_text("nosuchprogram-xyz\n")  # no #! line, and a real "command not found" of its own
    (project / "go.sh").chmod(0o755)
    (project / "run.py").write_text("#!/usr/bin/env python3\nimport nosuchmodule_xyz\n")
    (project / "run.py").chmod(0o755)
    texts, _ = run(server, project, "./go.sh", "./run.py", mode="yolo")
    assert "command not found" in texts[0] and "interpreter line" not in texts[0]
    assert "ModuleNotFoundError" in texts[1] and "interpreter line" not in texts[1]

# The home by allow-list ---------------------------------------------------------------------------

UNLISTED_HOME_FILES = [
    ".my.cnf", ".pgpass", ".s3cfg", ".boto", ".config/rclone/rclone.conf", ".docker/config.json", ".m2/settings.xml",
    ".gradle/gradle.properties", ".npmrc", ".config/pip/pip.conf", ".viminfo", ".lesshst", ".local/share/recently-used.xbel",
    ".config/Code/User/globalStorage/state.vscdb", ".cache/huggingface/token", ".cargo/credentials.toml", ".ssh/config",
    ".terraform.d/credentials.tfrc.json", ".config/git/credentials", ".kube/config", ".sqlite_history", ".wallet/seed.txt",
]


@pytest.mark.parametrize("entry", UNLISTED_HOME_FILES)
def test_dot_files_of_the_home_not_on_the_allow_list_are_not_readable(server, project: Path, home: Path, entry: str) -> None:
    (home / entry).parent.mkdir(parents=True, exist_ok=True)
    (home / entry).write_text("SECRET VALUE\n")
    texts, _ = run(server, project, f"cat {home}/{entry}; cat {home}/notes.txt; ls -a {home} | wc -l")
    assert "SECRET VALUE" not in texts[0] and "my notes" in texts[0]


@pytest.mark.parametrize("entry", [".config/git/ignore", ".cargo/bin/tool", ".rustup/settings.toml", ".cache/pip/wheels/w.txt", ".nvm/alias/default", ".local/lib/python3.11/site-packages/m.py", ".m2/repository/r.pom"])
def test_what_toolchains_need_from_the_home_stays_readable(server, project: Path, home: Path, entry: str) -> None:
    (home / entry).parent.mkdir(parents=True, exist_ok=True)
    (home / entry).write_text("TOOLCHAIN FILE\n")
    texts, _ = run(server, project, f"cat {home}/{entry}")
    assert "TOOLCHAIN FILE" in texts[0]


def test_commands_see_the_users_git_identity_and_habits_and_no_other_git_setting(server, project: Path, home: Path) -> None:
    (home / ".gitconfig").write_text(
        '[user]\n\tname = "Ada \\"L\\" Byron"\n\temail = ada@example.com\n[core]\n\tautocrlf = input\n'
        '[alias]\n\tco = checkout\n\tleak = "!echo alias-77aa"\n[url "https://tok-77aa@git.example.com/"]\n\tinsteadOf = https://git.example.com/\n'
        '[github]\n\ttoken = gh-77aa\n[include]\n\tpath = /nonexistent\n'
    )
    texts, _ = run(server, project, "git config --global --list; git config --global user.name")
    listed = texts[0]
    assert "user.email=ada@example.com" in listed and "core.autocrlf=input" in listed and "alias.co=checkout" in listed
    assert "url.https://git.example.com/.insteadof=https://git.example.com/" in listed and 'Ada "L" Byron' in listed
    assert "77aa" not in listed and "include" not in listed


def test_the_user_can_add_to_the_home_allow_list_but_never_a_secret_folder(project: Path, home: Path, outside: Path) -> None:
    (home / ".npmrc").write_text("//registry/:_authToken=abc\n")
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text("token: gho_x\n")
    sandbox = Sandbox(project, home=home, home_allow=(".npmrc", ".config"))
    confine = sandbox.preexec(sandbox.confinement())
    npmrc = subprocess.run(["cat", str(home / ".npmrc")], capture_output=True, text=True, cwd=project, preexec_fn=confine)
    gh = subprocess.run(["cat", str(home / ".config" / "gh" / "hosts.yml")], capture_output=True, text=True, cwd=project, preexec_fn=confine)
    sandbox.close()
    assert "_authToken" in npmrc.stdout and "gho_x" not in gh.stdout and "Permission denied" in gh.stderr


# No network at all, and no side doors -------------------------------------------------------------

needs_namespaces = requires_sandbox(6, namespaces=True)


def test_whether_namespaces_work_does_not_depend_on_the_folder_mzagent_runs_in(tmp_path: Path) -> None:
    """CI's clone lives under /tmp, which the probe's view covers: the probe must not start there."""
    probe = [sys.executable, "-c", "from mzagent_tui.agent.safety.sandbox import namespaces_work; print(namespaces_work())"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    answers = [subprocess.run(probe, cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout.strip() for cwd in (tmp_path, "/")]
    assert answers[0] == answers[1] == str(sandbox_module.namespaces_work())


@needs_namespaces
def test_a_command_in_a_project_under_tmp_cannot_climb_into_the_real_tmp(server, project: Path, home: Path, tmp_path: Path) -> None:
    """The command starts in the view's copy of its folder: `..` from the old one would be all of /tmp."""
    (tmp_path / "beside-the-project.txt").write_text("SIBLING-7f3\n")
    texts, _ = run(server, project, "cat ../beside-the-project.txt; echo listed: $(ls -a .. | grep -c beside-the)")
    assert "SIBLING-7f3" not in texts[0] and "listed: 0" in texts[0]


@needs_namespaces
def test_udp_leaves_neither_through_bash_nor_a_socket(server, project: Path, home: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        script = (
            f"echo via-bash > /dev/udp/127.0.0.1/{port}; "
            f"python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'via-python', ('127.0.0.1', {port})); print('SENT')\"; "
            "getent hosts example.com || echo no-dns"
        )
        texts, _ = run(server, project, script)
        with pytest.raises(TimeoutError):
            listener.recvfrom(100)
    # Sent to 127.0.0.1 of the session's own namespace (its loopback is up), where nothing listens: never the machine's.
    assert "SENT" in texts[0] and "no-dns" in texts[0]


@needs_namespaces
@pytest.mark.parametrize("family_protocol", ["socket.AF_INET, socket.SOCK_STREAM, 262", "socket.AF_INET6, socket.SOCK_STREAM, 0", "socket.AF_INET, socket.SOCK_DGRAM, 0"])
def test_mptcp_ipv6_and_other_sockets_reach_nothing(server, project: Path, home: Path, family_protocol: str) -> None:
    """MPTCP (protocol 262) is a TCP-compatible stream Landlock's TCP rule does not cover."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        address = "('::1', port)" if "INET6" in family_protocol else "('127.0.0.1', port)"
        code = f"import socket; port={port}; s=socket.socket({family_protocol}); s.settimeout(2); s.connect({address}); s.send(b'x'); print('CONNECTED')"
        texts, _ = run(server, project, f'python3 -c "{code}"')
        with pytest.raises(TimeoutError):
            listener.accept()
    if "SOCK_DGRAM" not in family_protocol:  # a datagram socket's connect is local (the session's loopback): its send is tested above
        assert "CONNECTED" not in texts[0]


@needs_namespaces
def test_shm_is_private_to_the_session_and_other_terminals_are_out_of_reach(server, project: Path, home: Path) -> None:
    marker = f"mzagent-test-{os.getpid()}-{id(project)}"
    Path("/dev/shm", marker + "-outside").write_text("outside\n")
    try:
        texts, _ = run(server, project, f"echo inside > /dev/shm/{marker}-inside && cat /dev/shm/{marker}-inside; ls /dev/shm; for t in /dev/pts/[0-9]*; do echo hi > $t && echo wrote-$t; done; ls /run | wc -l")
        assert "inside" in texts[0] and f"{marker}-outside" not in texts[0] and "wrote-" not in texts[0]
        assert not Path("/dev/shm", marker + "-inside").exists()
    finally:
        Path("/dev/shm", marker + "-outside").unlink()


@needs_namespaces
def test_daemon_sockets_under_run_are_hidden(server, project: Path, home: Path, tmp_path: Path) -> None:
    if not os.access("/run", os.W_OK):
        pytest.skip("needs a writable /run to place a socket there")
    path = Path("/run", f"mzagent-test-{os.getpid()}.sock")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
        listener.listen()
        listener.settimeout(0.5)
        try:
            texts, _ = run(server, project, f"python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{path}'); print('CONNECTED')\"")
            with pytest.raises(TimeoutError):
                listener.accept()
        finally:
            path.unlink()
    assert "CONNECTED" not in texts[0]


def test_with_network_granted_udp_and_dns_files_work(server, project: Path, home: Path) -> None:
    rules = Rules()
    rules.add("allow", "python3 udp.py", network=True)
    (project / "udp.py").write_text("import socket, sys\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b'hello', ('127.0.0.1', int(sys.argv[1])))\nprint('SENT')\n")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.settimeout(5)
        port = listener.getsockname()[1]
        texts, _ = run(server, project, f"python3 udp.py {port}", mode="ask", rules=rules, approver=RecordingApprover(ApprovalDecision(False)))
        assert listener.recvfrom(100)[0] == b"hello"
    assert "SENT" in texts[0]


@pytest.mark.parametrize("entry", UNLISTED_HOME_FILES)
def test_the_analyser_calls_secret_what_the_sandbox_hides(home: Path, entry: str) -> None:
    assert is_secret(home / entry, home)


@pytest.mark.parametrize("entry", [".config/git/ignore", ".cargo/bin/tool", ".cache/pip/wheels/w.txt", "notes.txt", "src/app.py"])
def test_the_analyser_reads_freely_what_the_sandbox_lets_through(home: Path, entry: str) -> None:
    assert not is_secret(home / entry, home)


@pytest.mark.parametrize("entry", [".gitconfig", ".config/git/config"])
def test_the_users_git_settings_are_secret_to_read_by_name_as_commands_see_only_a_copy(home: Path, entry: str) -> None:
    assert is_secret(home / entry, home)


def test_reading_a_home_dot_file_in_a_project_at_the_home_asks(server, home: Path) -> None:
    (home / ".config" / "rclone").mkdir(parents=True)
    (home / ".config" / "rclone" / "rclone.conf").write_text("[s3]\nsecret_access_key = hunter2\n")
    (home / "notes.txt").write_text("my notes\n")
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, home, "cat .config/rclone/rclone.conf", "cat notes.txt", mode="auto-safe", approver=user)
    assert "hunter2" not in texts[0] and [r.summary for r in user.requests] == ["cat .config/rclone/rclone.conf"]
    assert "my notes" in texts[1]


def test_home_allow_reaches_the_sessions_sandbox_from_the_environment_not_from_a_project_env(server, project: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mzagent_tui.agent.config import load_settings

    (home / ".npmrc").write_text("//registry/:_authToken=npm-token-value\n")
    (project / ".env").write_text("MZAGENT_HOME_ALLOW=.npmrc\n")
    assert load_settings(project, environ={"HOME": str(home)}).home_allow == []
    assert load_settings(project, environ={"HOME": str(home), "MZAGENT_HOME_ALLOW": ".npmrc"}).home_allow == [".npmrc"]
    server.script(run_reply(f"cat {home}/.npmrc"), answer_reply())
    agent, recorder = make_agent(server, project, env={"PATH": os.environ["PATH"], "HOME": str(home)}, home_allow=[".npmrc"])
    agent.policy = Policy("yolo", None)
    agent.approver.policy = agent.policy
    agent.run("work")
    agent.close()
    assert "npm-token-value" in "".join(o.text for o in recorder.of(Observation))


@pytest.mark.parametrize(("user", "pids", "label", "state"), [
    (True, True, "sandbox", "namespaces: user, mount, IPC, network, PID"),
    (True, False, "sandbox (processes visible: no PID namespace)", "no PID namespace here: commands see your other processes"),
    (False, False, "sandbox (TCP only blocked: no user namespaces)", "no namespaces (no user namespaces here)"),
])
def test_the_header_and_mzagent_config_say_which_namespaces_commands_get(monkeypatch: pytest.MonkeyPatch, user: bool, pids: bool, label: str, state: str) -> None:
    monkeypatch.setattr(sandbox_module, "landlock_abi", lambda: 7)
    monkeypatch.setattr(sandbox_module, "namespaces_work", lambda: user)
    monkeypatch.setattr(sandbox_module, "pid_namespace_works", lambda: pids)
    assert sandbox_module.sandbox_label("workspace") == label
    assert state in sandbox_module.namespaces_state()
