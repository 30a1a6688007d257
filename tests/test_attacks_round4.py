"""Round four of outside attacks on the sandbox, the command environment, the agent's own git
and `read_file`. Each test asserts the attack does NOT succeed: a failing test is an attack that
got through. Effects are proved by listeners that must see nothing, secret values that must not
appear in what the model is sent, and marker files outside the project.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mzagent_tui.agent import filelist
from mzagent_tui.agent.safety import own_programs
from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.safety.committed_secrets import committed_secret_concern
from mzagent_tui.agent.safety.git_config import repository_config_concerns
from tests.attack_helpers import Listener, command, git, needs_namespaces, needs_wall, run
from tests.conftest import RecordingApprover


@pytest.fixture
def home(short: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = short / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_rsa").write_text("PRIVATE KEY OF THE USER\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


def connect_code(path: str) -> str:
    code = f"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{path}'); s.send(b'attack'); print('CONNECTED')"
    return f'python3 -c "{code}"'


# 1-3. Unix sockets of the user's outside /tmp, /run and the hidden home entries ------------------


@pytest.fixture
def var_tmp() -> Iterator[Path]:
    try:
        folder = Path(tempfile.mkdtemp(prefix="r4-", dir="/var/tmp")).resolve()
    except OSError:
        pytest.skip("/var/tmp is not writable here")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@needs_namespaces
def test_a_unix_socket_in_var_tmp_is_out_of_reach(server, project: Path, home: Path, var_tmp: Path) -> None:
    """/var/tmp is sticky and world-writable like /tmp (and survives reboots): emacs, tmux
    (`TMUX_TMPDIR`), dev servers put sockets there. The view covers /tmp and /run only."""
    path = var_tmp / "tmux-0" / "default"
    path.parent.mkdir()
    listener = Listener(socket.AF_UNIX, str(path))
    texts, _ = run(server, project, command(connect_code(str(path))))
    assert listener.close() == [] and "CONNECTED" not in texts[0]


@needs_namespaces
@pytest.mark.xfail(
    strict=True,
    reason="open: Landlock before LANDLOCK_ACCESS_FS_RESOLVE_UNIX does not govern connect() to a pathname socket, "
    "and the home's readable folders are the real ones in the view (see issue 39's note)",
)
@pytest.mark.parametrize("where", [".cache/pip", ".local/share/pnpm", "snap/app/common"])
def test_a_unix_socket_under_a_readable_home_folder_is_out_of_reach(server, project: Path, home: Path, where: str) -> None:
    """A socket under an allowed dot-folder, or under a plain home folder (`~/snap/...`)."""
    (home / where).mkdir(parents=True)
    path = home / where / "s.sock"
    listener = Listener(socket.AF_UNIX, str(path))
    texts, _ = run(server, project, command(connect_code(str(path))))
    assert listener.close() == [] and "CONNECTED" not in texts[0]


# 4. /tmp's sockets through the agent's root in /proc ---------------------------------------------


@needs_namespaces
@pytest.mark.parametrize("via", ["root", "cwd"])
def test_tmp_sockets_are_out_of_reach_through_the_agents_proc_root(server, project: Path, home: Path, short: Path, via: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mount view hides /tmp, but /proc/<agent>/root is the agent's (unhidden) root."""
    (short / "tmux-0").mkdir()
    path = short / "tmux-0" / "default"
    listener = Listener(socket.AF_UNIX, str(path))
    if via == "cwd":
        monkeypatch.chdir(short)
        target = f"/proc/{os.getpid()}/cwd/tmux-0/default"
    else:
        target = f"/proc/{os.getpid()}/root{path}"
    texts, _ = run(server, project, command(connect_code(target)))
    assert listener.close() == [] and "CONNECTED" not in texts[0]


# 5. UDP and DNS out -------------------------------------------------------------------------------


@needs_namespaces
def test_udp_and_dns_do_not_leave_the_sandbox(server, project: Path, home: Path) -> None:
    listener = Listener(socket.AF_INET, ("127.0.0.1", 0), socket.SOCK_DGRAM)
    port = listener.socket.getsockname()[1]
    code = (
        f"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        f"[s.sendto(b'udp-out', (h, {port})) for h in ('127.0.0.1', '::ffff:127.0.0.1') if not h.startswith(':')]; "
        "print(socket.getaddrinfo('example.com', 53)); print('RESOLVED')"
    )
    texts, _ = run(server, project, command(f'python3 -c "{code}"'))
    assert listener.close() == [] and "RESOLVED" not in texts[0]


# 6. Credentials in readable home entries ----------------------------------------------------------


HOME_CREDENTIALS = {
    # Not on the allow-list: hidden by the view and ungranted by Landlock.
    ".npmrc": "//registry.npmjs.org/:_authToken=npmrc-token-77aa\n",
    ".m2/settings.xml": "<settings><servers><server><password>m2-password-77aa</password></server></servers></settings>\n",
    ".gradle/gradle.properties": "mavenPassword=gradle-password-77aa\n",
    ".config/gh/hosts.yml": "github.com:\n    oauth_token: gh-hosts-token-77aa\n",
    ".docker/config.json": '{"auths": {"r.io": {"auth": "docker-auth-77aa"}}}\n',
    ".cargo/credentials.toml": '[registry]\ntoken = "cargo-token-77aa"\n',
    ".cargo/credentials": '[registry]\ntoken = "cargo-old-token-77aa"\n',
    ".config/pip/pip.conf": "[global]\nindex-url = https://u:pip-conf-password-77aa@pypi.example.com/simple\n",
    ".local/share/uv/credentials/credentials.toml": 'password = "uv-password-77aa"\n',
    ".cache/huggingface/stored_tokens": "[t]\nhf_token = stored-hf-token-77aa\n",
}
GITCONFIG_CREDENTIALS = {
    # ~/.gitconfig is allowed; commands read a copy "without credentials" (clean_git_configs).
    "same-line-extraheader": '[http] extraHeader = "Authorization: Bearer hdr-token-77aa"\n',
    "sendemail-smtppass": "[user]\n\tname = u\n[sendemail]\n\tsmtpServer = smtp.example.com\n\tsmtpPass = smtp-password-77aa\n",
    "github-token": "[github]\n\tuser = u\n\ttoken = hub-token-77aa\n",
    "inline-credential-helper": "[credential]\n\thelper = \"!f() { echo username=u; echo password=helper-password-77aa; }; f\"\n",
}


@needs_wall
@pytest.mark.parametrize("entry", sorted(HOME_CREDENTIALS))
def test_credentials_in_home_entries_are_not_readable_by_commands(server, project: Path, home: Path, entry: str) -> None:
    (home / entry).parent.mkdir(parents=True, exist_ok=True)
    (home / entry).write_text(HOME_CREDENTIALS[entry])
    texts, _ = run(server, project, command(f"rev {home}/{entry}; cat {home}/{entry} | base64"))
    assert "aa77-" not in texts[0] and "77aa" not in texts[0]


@needs_wall
@pytest.mark.parametrize("case", sorted(GITCONFIG_CREDENTIALS))
def test_credentials_in_the_gitconfig_are_not_readable_by_commands(server, project: Path, home: Path, case: str) -> None:
    (home / ".gitconfig").write_text(GITCONFIG_CREDENTIALS[case])
    texts, _ = run(server, project, command(f"rev {home}/.gitconfig; git config --global --list | rev"))
    assert "aa77-" not in texts[0]


# 7-9. read_file: the project at the home, a symbolic home, links into hidden entries --------------


def test_read_file_of_a_gitconfig_at_the_home_shows_no_token(server, home: Path) -> None:
    """Commands see the cleaned copy of ~/.gitconfig; read_file, run in the agent, reads the original."""
    (home / ".gitconfig").write_text('[url "https://x-access-token:readfile-token-77aa@git.example.com/"]\n\tinsteadOf = https://git.example.com/\n')
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, home, 'read_file(".gitconfig")', approver=user)
    assert "readfile-token-77aa" not in texts[0]


def test_read_file_asks_for_a_hidden_home_entry_when_home_is_a_symbolic_link(server, short: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME names a link to the real home (`/home -> /var/home` on Silverblue, `/home` on a
    mounted volume): the project is the real home, the path read_file checks is resolved."""
    real = short / "realhome"
    (real / ".config" / "gh").mkdir(parents=True)
    (real / ".config" / "gh" / "hosts.yml").write_text("github.com:\n    oauth_token: symhome-token-77aa\n")
    (short / "home").symlink_to(real)
    monkeypatch.setenv("HOME", str(short / "home"))
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, real, 'read_file(".config/gh/hosts.yml")', approver=user)
    assert "symhome-token-77aa" not in texts[0], [r.summary for r in user.requests]


@pytest.mark.parametrize("layout", ["project-in-tmp", "project-at-home"])
def test_read_file_through_a_link_into_a_hidden_home_entry_asks(server, home: Path, layout: str) -> None:
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text("github.com:\n    oauth_token: linked-token-77aa\n")
    project = home / "work" if layout == "project-in-tmp" else home
    project.mkdir(exist_ok=True)
    (project / "hosts-link.yml").symlink_to(home / ".config" / "gh" / "hosts.yml")
    (project / "folder-link").symlink_to(home / ".config" / "gh")
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, 'read_file("hosts-link.yml")', 'read_file("folder-link/hosts.yml")', approver=user)
    assert not any("linked-token-77aa" in t for t in texts), (texts, [r.summary for r in user.requests])


# 10. GIT_* and friends in the agent's environment, and our own git in a planted project -----------


@pytest.fixture
def unwalled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the git hardening stands: our programs' Landlock and namespace wall taken away."""
    monkeypatch.setattr(own_programs, "_confine", lambda readable, writable, seen=(): None)


def test_more_git_variables_in_the_agents_environment_do_not_reach_our_git(project: Path, outside: Path, short: Path, unwalled: None, monkeypatch: pytest.MonkeyPatch) -> None:
    git(project, "init", "-q", ".")
    (project / "a.txt").write_text("a\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", "a")
    evil_global = short / "global.cfg"
    evil_global.write_text(f"[core]\n\tfsmonitor = touch {outside}/global; false\n")
    other = short / "other"
    other.mkdir()
    git(other, "init", "-q", ".")
    git(other, "config", "core.fsmonitor", f"touch {outside}/gitdir; false")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(evil_global))
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(evil_global))
    monkeypatch.setenv("GIT_CONFIG", str(evil_global))
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_TRACE", str(outside / "trace"))
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(outside / "trace2"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", f"touch {outside}/extdiff")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(short))  # short/git/config
    (short / "git").mkdir()
    (short / "git" / "config").write_text(f"[core]\n\tfsmonitor = touch {outside}/xdg; false\n")
    assert "a.txt" in filelist.project_files(project)
    committed_secret_concern(["git", "log", "-p"], project)
    repository_config_concerns(project)
    assert list(outside.iterdir()) == []


@needs_namespaces
def test_a_planted_project_config_runs_nothing_of_ours_in_a_headless_run(server, project: Path, home: Path, outside: Path, unwalled: None) -> None:
    """Keys the earlier attacks did not plant: pagers, editors, ssh/x509 signature programs with
    signatures shown, alternate refs, an include; the run only proposes read-only git commands
    and the user refuses every one."""
    git(project, "init", "-q", ".")
    (project / ".gitattributes").write_text("* filter=x diff=x\n")
    (project / "a.txt").write_text("a\n")
    git(project, "add", "a.txt", ".gitattributes")
    git(project, "commit", "-qm", "one")
    included = project.parent / "inc.cfg"
    included.write_text(
        f"[core]\n\tpager = touch {outside}/pager\n\teditor = touch {outside}/editor\n\talternateRefsCommand = touch {outside}/altrefs\n"
        f"[pager]\n\tlog = touch {outside}/pager-log\n\tls-files = touch {outside}/pager-ls\n\tstatus = touch {outside}/pager-status\n"
        f"[log]\n\tshowSignature = true\n[gpg \"ssh\"]\n\tprogram = touch {outside}/ssh-program\n[gpg \"x509\"]\n\tprogram = touch {outside}/x509-program\n"
        f"[filter \"x\"]\n\tclean = touch {outside}/clean; cat\n\tprocess = touch {outside}/process\n[diff \"x\"]\n\ttextconv = touch {outside}/textconv; cat\n"
        f"[status]\n\tsubmoduleSummary = true\n[core]\n\tfsmonitor = touch {outside}/fsmonitor; false\n"
    )
    git(project, "config", "include.path", str(included))
    os.utime(project / "a.txt", (1_000_000_000, 1_000_000_000))
    (project / "a.txt").write_text("b\n")
    user = RecordingApprover(ApprovalDecision(False))
    run(server, project, command("git log -p -1"), command("git status"), 'read_file("a.txt")', mode="auto-safe", approver=user)
    assert sorted(p.name for p in outside.iterdir()) == []
