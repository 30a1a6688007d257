"""Credentials kept in the home (package managers' tokens, a token in the gitconfig) are not
readable by commands, and `read_file` asks before it reads a hidden home entry, when the home is
a link or through a link into it. (Round four of the outside attacks.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.safety.approval import ApprovalDecision
from tests.attack_helpers import command, needs_wall, run
from tests.conftest import RecordingApprover

# Credentials in readable home entries ----------------------------------------------------------


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


# read_file: the project at the home, a symbolic home, links into hidden entries --------------


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
