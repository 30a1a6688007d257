"""Secrets by what they are (issue #54, item 5): every file of the finding, with realistic
content under a neutral name (a renamed copy, a hard link), read through read_file, `cat` in
auto-safe, an `@` mention and plan mode. Each must ask before the model sees it, and a refusal
keeps the secret out of everything sent to the model; a clean file goes through unasked.

The secrets below are made up for these tests (random-looking, valid in shape, not real)."""

from __future__ import annotations

import base64
import os
import shutil
from pathlib import Path

import pytest

from mzagent_tui.agent.events import Observation
from mzagent_tui.agent.safety.approval import ApprovalDecision, StaticApprover
from mzagent_tui.agent.safety.approval_requests import CommandApproval, SecretReadApproval
from mzagent_tui.agent.safety.credentials import find_credentials
from tests.attack_helpers import command, needs_wall, run
from tests.conftest import RecordingApprover, make_agent
from tests.scripted_server import answer_reply

PEM_BODY = (
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7q3Vn9xR2mK4t\n"
    "Zp8Lw2sQe5uY1oN6cB3vF7hJ0kD9aG4rT2yX8nM1bW5eS6iU3oP7lK2jH9gF4dE\n"
)
PRIVATE_KEY = f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}-----END PRIVATE KEY-----\n"
OPENSSH_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBq7Xv9pL2mK4tZp8Lw2sQe5uY1oN6cB3vF7hJ0kD9aGwAAAJgq3Vn9xR2m\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjdxV3IifQ.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50Iiwic3ViIjoiZGVwbG95In0.Qm9yN2tXcDlMeDJzUmU1dVkxb042Y0IzdkY3aEowa0Q5YUc0clQy"
BASIC = base64.b64encode(b"x-access-token:ghs_4Fq8Lw2sQe5uY1oN6cB3vF7hJ0kD9aG4rT2y").decode()

# (neutral name, where the finding found it, content, the secret part that must not reach the model)
FINDING = [
    ("kubeconfig.yaml", f"apiVersion: v1\nusers:\n- name: deploy\n  user:\n    client-key-data: {base64.b64encode(PRIVATE_KEY.encode()).decode()}\n    token: {JWT}\n", "LS0tLS1CRUdJTiBQUklWQVRF"),
    ("config/kubeconfig.yml", f"apiVersion: v1\nkind: Config\nusers:\n- name: ci\n  user:\n    token: {JWT}\n", JWT[40:80]),
    ("prod.tfvars.json", '{\n  "region": "eu-west-1",\n  "db_password": "Vq8rZt3mK9pL2xWn",\n  "instance_count": 3\n}\n', "Vq8rZt3mK9pL2xWn"),
    ("prod.env.bak", "DEBUG=false\nSTRIPE_SECRET_KEY=sk_live_51HqLw2sQe5uY1oN6cB3vF7hJ0kD9aG4r\n", "51HqLw2sQe5uY1oN6cB3vF7hJ0kD9aG4r"),
    (".vault_pass", "Xk9mP2vL8qR4nT6wJ3sY\n", "Xk9mP2vL8qR4nT6wJ3sY"),
    ("deploy_key", OPENSSH_KEY, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUA"),
    ("application_default_credentials.json", '{\n  "client_id": "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com",\n  "client_secret": "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",\n  "refresh_token": "1//0gLw2sQe5uY1oN6cB3vF7hJ0kD9aG4rT2yX8nM1bW5eS6iU3oP7lK2jH9",\n  "type": "authorized_user"\n}\n', "1//0gLw2sQe5uY1oN6cB3vF7hJ0kD9aG4rT2y"),
    ("acme-firebase-adminsdk-x1y2z-3f4e5d6c7b.json", '{\n  "type": "service_account",\n  "project_id": "acme-prod",\n  "private_key_id": "3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0a1f2e",\n  "private_key": "' + PRIVATE_KEY.replace("\n", "\\n") + '",\n  "client_email": "firebase-adminsdk-x1y2z@acme-prod.iam.gserviceaccount.com"\n}\n', "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7q3Vn9xR2mK4t"),
    ("token.json", '{"token": "ya29.a0AfB_byC4Fq8Lw2sQe5uY1oN6cB3vF7hJ0kD9aG4rT2yX8nM1bW5", "refresh_token": "1//0eQw2sQe5uY1oN6cB3vF7hJ0kD9aG4rT2yX8nM1bW", "scopes": ["https://www.googleapis.com/auth/drive"]}\n', "a0AfB_byC4Fq8Lw2sQe5uY1oN6cB3vF7hJ0kD9aG4r"),
    (".yarnrc.yml", 'nodeLinker: node-modules\nnpmRegistries:\n  "https://npm.pkg.github.com":\n    npmAlwaysAuth: true\n    npmAuthToken: "9f8e7d6c-5b4a-4321-8fed-cba987654321"\n', "9f8e7d6c-5b4a-4321-8fed-cba987654321"),
    ("rclone.conf", '[gdrive]\ntype = drive\nscope = drive\ntoken = {"access_token":"ya29.a0AfB_byD9aG4rT2yX8nM1bW5eS6iU3oP7lK2jH9gF4dE","token_type":"Bearer","expiry":"2026-12-07T10:00:00Z"}\n\n[s3]\ntype = s3\naccess_key_id = AKIAQW2SQE5UY1ON6CB3\nsecret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYq8Lw2sQe5u\n', "wJalrXUtnFEMI/K7MDENG/bPxRfiCYq8Lw2sQe5u"),
    (".git/config", f'[core]\n\trepositoryformatversion = 0\n[remote "origin"]\n\turl = https://github.com/acme/site\n[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {BASIC}\n', BASIC),
    (".condarc", "channels:\n  - https://conda.anaconda.org/t/ac-7f3e9d2b1c4a5e6f8d9c0b1a2e3f4d5c/acme-private\n  - defaults\n", "ac-7f3e9d2b1c4a5e6f8d9c0b1a2e3f4d5c"),
    ("gh/hosts.yml", "github.com:\n    user: deploy-bot\n    oauth_token: gho_4Fq8Lw2sQe5uY1oN6cB3vF7hJ0kD9aG4rT2y\n    git_protocol: https\n", "gho_4Fq8Lw2sQe5uY1oN6cB3vF7hJ0kD9aG4rT2y"),
]
NAMES = [name for name, _, _ in FINDING]
CLEAN = (
    "import hashlib\nimport uuid\n\nLOCK_SHA = \"sha512-3Lw2sQe5uY1oN6cB3vF7hJ0kD9aG4rT2yX8nM1bW5eS6iU3oP7lK2jH9gF4dE==\"\n"
    "SESSION = uuid.UUID(\"6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b\")\nFIXTURE = base64_data = \"aGVsbG8gd29ybGQsIHRoaXMgaXMgZGF0YQ==\"\n"
    "def key_for(name: str) -> str:\n    token = hashlib.sha256(name.encode()).hexdigest()\n    return token\n"
    "password = settings.database_password\nAPI_KEY = os.environ[\"API_KEY\"]\n"
)


def _place(project: Path, index: int) -> tuple[str, str]:
    """The finding's file under a neutral name (a renamed copy) and a hard link to it."""
    _, content, _ = FINDING[index]
    (project / "notes.txt").write_text(content)
    os.link(project / "notes.txt", project / "linked.md")
    return "notes.txt", "linked.md"


def _sent(server) -> str:  # noqa: ANN001
    return str([request["messages"] for request in server.requests])


def _credential_questions(user: RecordingApprover) -> list[str]:
    return [r.reason for r in user.requests if isinstance(r, SecretReadApproval) and "credential" in r.reason]


@pytest.mark.parametrize("index", range(len(FINDING)), ids=NAMES)
def test_the_scan_finds_every_file_of_the_finding(index: int) -> None:
    name, content, secret = FINDING[index]
    found = find_credentials(content)
    assert found, name
    assert any(secret in content[c.start:c.end] or content[c.start:c.end] in secret for c in found), (name, found)


def test_a_clean_file_of_ordinary_code_has_no_find() -> None:
    """Positive control: a lockfile hash, a UUID, base64 test data and secret-named code are not credentials."""
    assert find_credentials(CLEAN) == []


def _command_questions(user: RecordingApprover) -> list[str]:
    return [p.reason for r in user.requests if isinstance(r, CommandApproval) for p in r.parts if "looks like it holds a credential" in p.reason]


@pytest.mark.parametrize("mode", ["auto-safe", "plan"])
@pytest.mark.parametrize("index", range(len(FINDING)), ids=NAMES)
def test_read_file_and_cat_of_a_renamed_copy_or_a_hard_link_ask_and_a_refusal_withholds(server, project: Path, index: int, mode: str) -> None:
    """read_file asks in both modes; a safe command naming the file asks before it runs in
    auto-safe and, as for a secret file by name, is refused in plan mode (read_file is the way)."""
    copy, link = _place(project, index)
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, f'read_file("{copy}")', f'read_file("{link}")', command(f"cat {copy}"), command(f"head -n 50 {link}"), mode=mode, approver=user)
    assert len(_credential_questions(user)) == 2, [r.reason for r in user.requests]
    assert all("withheld" in text for text in texts[:2]), texts
    if mode == "auto-safe":
        assert len(_command_questions(user)) == 2 and all("rejected" in text for text in texts[2:]), texts
    else:
        assert all("plan mode is on" in text for text in texts[2:]), texts
    assert FINDING[index][2] not in _sent(server)


@pytest.mark.parametrize("transform", ["rev notes.txt", "od -c notes.txt", "xxd notes.txt", "hexdump -C notes.txt", "fold -w 4 notes.txt", "grep -o . notes.txt", "tr a-z A-Z < notes.txt", "cut -c 20-40 notes.txt", "cat notes.txt | rev", "rev no*.txt", "tac linked.md"])
def test_a_safe_command_that_reshapes_the_output_asks_before_it_runs(server, project: Path, transform: str) -> None:
    """The output scan cannot see a credential printed backwards or in hex: a file a command
    names is looked at before it runs, whatever the command does with it."""
    _place(project, 3)
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, command(transform), mode="auto-safe", approver=user)
    assert _command_questions(user), user.requests
    assert "rejected" in texts[0] and "Lw2sQe5u" not in _sent(server) and "u5eQs2wL" not in _sent(server)


@pytest.mark.parametrize("reader", ["grep -rh . docs", "git show HEAD:docs/notes.txt", "git log -p", "cat docs/*"])
def test_output_that_arrives_by_other_ways_is_asked_about_before_the_model_sees_it(server, project: Path, reader: str) -> None:
    """A folder read, a committed copy, a glob: the output is scanned, and its question asked."""
    from tests.attack_helpers import git

    (project / "docs").mkdir()
    (project / "docs" / "notes.txt").write_text(FINDING[3][1])
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "notes")
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, command(reader), mode="auto-safe", approver=user)
    assert _credential_questions(user) or _command_questions(user), user.requests
    assert "51HqLw2sQe5uY1oN6cB3vF7hJ0kD9aG4r" not in _sent(server), texts


@pytest.mark.parametrize("index", range(len(FINDING)), ids=NAMES)
def test_a_mentioned_file_asks_and_a_refusal_withholds(server, project: Path, index: int) -> None:
    copy, _ = _place(project, index)
    server.script(answer_reply("ok"))
    user = RecordingApprover(ApprovalDecision(False))
    agent, recorder = make_agent(server, project, approver=user)
    agent.run(f"summarise @{copy}")
    assert len(_credential_questions(user)) == 1
    [observation] = recorder.of(Observation)
    assert not observation.ok and "withheld" in observation.text
    assert FINDING[index][2] not in _sent(server)


def test_headless_without_yes_withholds_the_output_of_a_safe_command(server, project: Path) -> None:
    """No terminal, no --yes: the question is refused, the model learns the output was withheld and why (kind and line)."""
    (project / "docs").mkdir()
    (project / "docs" / "notes.txt").write_text(FINDING[3][1])
    texts, _ = run(server, project, command("grep -rh . docs"), mode="auto-safe", approver=StaticApprover(False, note="no terminal"))
    assert "withheld" in texts[0] and "Stripe key on line 2 of the output" in texts[0], texts[0]
    assert "51HqLw2sQe5uY1oN6cB3vF7hJ0kD9aG4r" not in _sent(server)


def test_the_user_can_let_the_model_see_it(server, project: Path) -> None:
    """Positive control of the question: a yes shows the file and the output whole."""
    _place(project, 2)
    user = RecordingApprover(ApprovalDecision(True))
    (project / "docs").mkdir()
    shutil.copyfile(project / "notes.txt", project / "docs" / "notes.txt")
    texts, _ = run(server, project, 'read_file("notes.txt")', command("grep -rh . docs"), mode="auto-safe", approver=user)
    assert len(_credential_questions(user)) == 2
    assert all("Vq8rZt3mK9pL2xWn" in text for text in texts), texts


def test_a_clean_file_goes_through_every_route_unasked(server, project: Path) -> None:
    """Positive control: ordinary code reaches the model by read_file, `cat` and an `@` mention, no question asked."""
    (project / "app.py").write_text(CLEAN)
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, 'read_file("app.py")', command("cat app.py"), mode="auto-safe", approver=user)
    server.script(answer_reply("ok"))
    agent, recorder = make_agent(server, project, approver=user)
    agent.run("explain @app.py")
    assert user.requests == []
    assert all("sha512-3Lw2sQe5uY1oN6cB3vF7hJ0kD9aG4rT2y" in text for text in [*texts, recorder.of(Observation)[0].text])


def test_yolo_shows_a_commands_credential_masked_without_a_question(server, project: Path) -> None:
    """yolo asks nothing: the output comes with only the secret's span masked."""
    _place(project, 10)
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, command("cat notes.txt"), mode="yolo", approver=user)
    assert user.requests == []
    assert "wJalrXUtnFEMI" not in texts[0] and "secret_access_key = [redacted]" in texts[0] and "type = s3" in texts[0], texts[0]


def test_a_command_the_user_approved_shows_the_credential_masked(server, project: Path) -> None:
    """In ask mode the user said yes to `cat notes.txt`, not to a credential they have not seen: masked, no second question."""
    _place(project, 2)
    user = RecordingApprover(ApprovalDecision(True))
    texts, _ = run(server, project, command("cat notes.txt"), mode="ask", approver=user)
    assert [type(r) for r in user.requests] == [CommandApproval]
    assert "Vq8rZt3mK9pL2xWn" not in texts[0] and '"db_password": "[redacted]"' in texts[0] and '"instance_count": 3' in texts[0], texts[0]


def test_edit_file_cannot_probe_a_credential_it_was_not_shown(server, project: Path) -> None:
    """edit_file's found / not found would tell the model what the file holds: it asks as read_file does."""
    _place(project, 4)
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, 'edit_file("notes.txt", "Xk9mP2vL", "guess")', mode="auto-safe", approver=user)
    assert len(_credential_questions(user)) == 1 and "withheld" in texts[0]
    assert (project / "notes.txt").read_text() == FINDING[4][1]


def test_a_users_own_command_shows_the_model_the_credential_masked(server, project: Path) -> None:
    """`!cat notes.txt`: the user typed it and saw the output; the model reads it masked."""
    _place(project, 12)
    server.script(answer_reply("ok"))
    agent, _ = make_agent(server, project)
    agent.run("!cat notes.txt")
    agent.run("go on")
    assert "ac-7f3e9d2b1c4a5e6f8d9c0b1a2e3f4d5c" not in _sent(server) and "acme-private" in _sent(server)


def test_the_git_config_extraheader_is_asked_for_by_name_too(server, project: Path) -> None:
    """The `http.extraheader` a CI checkout leaves makes `.git/config` a secret file by name as well."""
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text(FINDING[11][1])
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, 'read_file(".git/config")', mode="auto-safe", approver=user)
    assert "did not allow" in texts[0]
    assert [r.reason for r in user.requests] == ["this file usually holds secrets"]
    assert BASIC not in _sent(server)


# The home: folders that mix tools and credentials, and XDG folders outside it ---------------------

LAUNCHER = "#!/home/me/.local/share/pipx/venvs/black/bin/python\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom black import patched_main\nif __name__ == '__main__':\n    sys.exit(patched_main())\n"


def _home_with_tools(home: Path) -> None:
    (home / ".conda" / "pkgs").mkdir(parents=True)
    (home / ".conda" / "pkgs" / "info.txt").write_text("conda package cache r8\n")
    (home / ".conda" / ".condarc").write_text("channels: [https://conda.anaconda.org/t/condarc-marker-r8/x]\n")
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "deploy.sh").write_text("#!/bin/sh\ncurl -H 'x: deploy-script-marker-r8' host\n")
    (home / ".local" / "bin" / "black").write_text(LAUNCHER)
    shutil.copy("/bin/true", home / ".local" / "bin" / "tool")
    (home / ".local" / "bin" / "linked").symlink_to(home / ".local" / "bin" / "black")


def test_the_home_allows_conda_and_local_bin_by_file_not_whole(tmp_path: Path) -> None:
    from mzagent_tui.agent.safety.sensitive import is_private_home_entry

    home = tmp_path / "home"
    _home_with_tools(home)
    private = {name: is_private_home_entry(home / name, home) for name in (
        ".conda/.condarc", ".conda/pkgs/info.txt", ".local/bin/deploy.sh", ".local/bin/black", ".local/bin/tool", ".local/bin/linked",
    )}
    assert private == {
        ".conda/.condarc": True, ".conda/pkgs/info.txt": False, ".local/bin/deploy.sh": True,
        ".local/bin/black": False, ".local/bin/tool": False, ".local/bin/linked": False,
    }


@pytest.mark.parametrize(("variable", "inside", "secret"), [
    ("XDG_CONFIG_HOME", "gh/hosts.yml", True),
    ("XDG_CONFIG_HOME", "gcloud/credentials.db", True),
    ("XDG_CONFIG_HOME", "git/config", True),
    ("XDG_CONFIG_HOME", "rclone/rclone.conf", True),
    ("XDG_CONFIG_HOME", "git/ignore", False),
    ("XDG_DATA_HOME", "keyrings/login.keyring", True),
    ("XDG_DATA_HOME", "pipx/venvs/black/pyvenv.cfg", False),
    ("XDG_STATE_HOME", "lesshst", True),
])
def test_an_xdg_folder_outside_the_home_gets_the_homes_exclusions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, inside: str, secret: bool) -> None:
    from mzagent_tui.agent.safety.sensitive import is_private_home_entry, is_secret

    home, outside = tmp_path / "home", tmp_path / "data" / "xdg"
    home.mkdir()
    (outside / inside).parent.mkdir(parents=True)
    (outside / inside).write_text("x\n")
    monkeypatch.setenv(variable, str(outside))
    assert is_secret(outside / inside, home) is secret
    assert is_private_home_entry(outside / inside, home) is secret
    monkeypatch.delenv(variable)
    assert is_private_home_entry(outside / inside, home) is False, "only the variable makes it the home's"


@needs_wall
def test_a_confined_command_reads_the_toolchains_of_conda_and_local_bin_not_their_secrets(server, project: Path, short: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = short / "home"
    _home_with_tools(home)
    monkeypatch.setenv("HOME", str(home))
    script = "cat ~/.conda/pkgs/info.txt ~/.local/bin/black; ~/.local/bin/tool && echo tool-ran; cat ~/.conda/.condarc ~/.local/bin/deploy.sh; echo done"
    texts, _ = run(server, project, command(script))
    assert "conda package cache r8" in texts[0] and "patched_main" in texts[0] and "tool-ran" in texts[0], texts[0]
    assert "condarc-marker-r8" not in texts[0] and "deploy-script-marker-r8" not in texts[0], texts[0]


@needs_wall
def test_a_confined_command_cannot_read_gh_hosts_in_an_xdg_config_home_outside_the_home(server, project: Path, short: Path, outside_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = short / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    config, data = outside_home / "config", outside_home / "data"
    (config / "gh").mkdir(parents=True)
    (config / "gh" / "hosts.yml").write_text("github.com:\n    user: hosts-marker-r8\n")
    (config / "git").mkdir()
    (config / "git" / "ignore").write_text("ignored-marker-r8\n")
    (data / "pipx").mkdir(parents=True)
    (data / "pipx" / "readme").write_text("pipx-marker-r8\n")
    (data / "keyrings").mkdir()
    (data / "keyrings" / "login.keyring").write_text("keyring-marker-r8\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    script = f"cat {config}/git/ignore {data}/pipx/readme; cat {config}/gh/hosts.yml {data}/keyrings/login.keyring; ls {config}; echo done"
    texts, _ = run(server, project, command(script))
    assert "ignored-marker-r8" in texts[0] and "pipx-marker-r8" in texts[0] and "done" in texts[0], texts[0]
    assert "hosts-marker-r8" not in texts[0] and "keyring-marker-r8" not in texts[0], texts[0]


def test_a_folder_read_reshaped_by_a_pipe_is_still_asked_about(server, project: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "notes.txt").write_text(FINDING[3][1])
    user = RecordingApprover(ApprovalDecision(False))
    run(server, project, command("grep -rh . docs | rev"), mode="auto-safe", approver=user)
    assert "r4Ga9Dk0Jh7Fv3Bc6No1Yu5eQs2wLqH15" not in _sent(server)


@pytest.mark.parametrize("name", [
    "kubeconfig.yaml", "config/kubeconfig.yml", "prod.tfvars.json", "prod.env.bak", ".vault_pass", "deploy_key",
    "application_default_credentials.json", "acme-firebase-adminsdk-x1y2z-3f4e5d6c7b.json", "token.json", ".yarnrc.yml", "rclone.conf", ".condarc",
])
def test_the_findings_names_are_on_the_name_list_too(project: Path, name: str) -> None:
    """The cheap first line: asked by name before any content is read (a look-alike is not: test_gate_attacks)."""
    from mzagent_tui.agent.safety.sensitive import is_secret

    (project / name).parent.mkdir(parents=True, exist_ok=True)
    (project / name).write_text("x\n")
    assert is_secret(project / name)
    assert not is_secret(project / "deploy_key.pub")
