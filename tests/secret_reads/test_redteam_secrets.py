"""The outside red team on secrets (issue 54): a credential reaching the model or the network
without a question, by the routes the code takes — `read_file` pages, commands whose output a
safe-list program reshapes, the command environment, and where a project `.env` sends the key.

Each test asserts the safe outcome. An attack that still gets through is an
`xfail(strict=True)` whose reason says precisely how; each one that holds has a control showing
the same route brings the secret when the guard is not in the way.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from mzagent_tui.agent.config import load_settings
from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy, Rules
from mzagent_tui.agent.safety.secrets import command_env
from tests.attack_helpers import command, git, needs_namespaces, needs_wall, run
from tests.conftest import RecordingApprover

AWS_KEY = "AKIAIOSFODNN7EXAMPLF"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
KEY_BODY = [base64.b64encode(bytes((n * 37 + i) % 251 for i in range(48))).decode() for n in range(8)]
"""Eight 64-character lines of a private key's body (made up, random-looking)."""
PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(KEY_BODY) + "\n-----END OPENSSH PRIVATE KEY-----\n"
PUTTY = (
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n"
    f"{KEY_BODY[0]}\n{KEY_BODY[1]}\nPrivate-Lines: 1\n{KEY_BODY[2]}\nPrivate-MAC: {KEY_BODY[3][:64]}\n"
)




def model_sees(server, project: Path, call: str, mode: str = "auto-safe") -> tuple[str, RecordingApprover]:  # noqa: ANN001
    """One tool call of the model's through the real agent; what it was sent back, and what was asked."""
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, call, mode=mode, approver=user)
    return texts[0], user


def committed(project: Path, name: str, text: str) -> None:
    git(project, "init", "-q", ".")
    (project / name).write_text(text)
    git(project, "add", name)
    git(project, "commit", "-qm", "add")


# read_file in pages -------------------------------------------------------------------------


@pytest.mark.parametrize(("key", "line"), [(PEM, 2), (PUTTY, 2), (PUTTY, 5)], ids=["pem-body", "putty-after-header", "putty-private-lines"])
def test_a_page_of_a_private_key_that_skips_its_header_is_still_a_credential(server, project: Path, key: str, line: int) -> None:
    (project / "notes.txt").write_text(key)
    text, user = model_sees(server, project, f"read_file('notes.txt', {line})")
    assert [type(r).__name__ for r in user.requests] == ["SecretReadApproval"], text
    assert KEY_BODY[2] not in text


def test_control_a_page_that_starts_at_the_header_asks(server, project: Path) -> None:
    (project / "notes.txt").write_text(PEM)
    text, user = model_sees(server, project, "read_file('notes.txt')")
    assert [type(r).__name__ for r in user.requests] == ["SecretReadApproval"] and KEY_BODY[2] not in text


def test_control_a_plain_page_is_read_without_a_question(server, project: Path) -> None:
    (project / "notes.txt").write_text("line one\n" + "\n".join(f"word {n}" for n in range(10)) + "\n")
    text, user = model_sees(server, project, "read_file('notes.txt', 2)")
    assert user.requests == [] and "word 9" in text


# What git holds, reshaped -------------------------------------------------------------------


@needs_wall
def test_a_committed_key_reversed_by_rev_is_not_shown_without_a_question(server, project: Path) -> None:
    committed(project, "config.py", f"AWS_ACCESS_KEY_ID = '{AWS_KEY}'\n")
    text, user = model_sees(server, project, command("git show HEAD | rev"))
    assert AWS_KEY[::-1] not in text


@needs_wall
def test_control_a_committed_key_printed_as_it_is_asks_before_the_model_sees_it(server, project: Path) -> None:
    committed(project, "config.py", f"AWS_ACCESS_KEY_ID = '{AWS_KEY}'\n")
    text, user = model_sees(server, project, command("git show HEAD"))
    assert [type(r).__name__ for r in user.requests] == ["SecretReadApproval"] and AWS_KEY not in text


@needs_wall
def test_a_committed_key_whose_working_copy_was_overwritten_is_still_asked_about(server, project: Path) -> None:
    """The command names `HEAD:notes.txt`; the check must not look at today's notes.txt alone."""
    committed(project, "notes.txt", f"aws_secret_access_key = {AWS_SECRET}\n")
    (project / "notes.txt").write_text("nothing here\n")
    text, user = model_sees(server, project, command("git show HEAD:notes.txt | rev"))
    assert AWS_SECRET[::-1] not in text, text


@needs_wall
def test_a_key_past_the_scanned_head_of_a_large_file_is_not_reversed_out(server, project: Path) -> None:
    (project / "big.log").write_text("x" * 300_000 + f"\naws_secret_access_key = {AWS_SECRET}\n")
    text, user = model_sees(server, project, command("tail -c 200 big.log | rev"))
    assert AWS_SECRET[::-1] not in text


@needs_wall
def test_control_the_same_key_in_the_scanned_head_asks_before_the_command_runs(server, project: Path) -> None:
    (project / "big.log").write_text(f"aws_secret_access_key = {AWS_SECRET}\n" + "x" * 300_000 + "\n")
    text, user = model_sees(server, project, command("head -c 200 big.log | rev"))
    assert [type(r).__name__ for r in user.requests] == ["CommandApproval"] and AWS_SECRET[::-1] not in text


def test_a_key_in_a_git_config_header_is_a_secret_for_read_file(server, project: Path) -> None:
    git(project, "init", "-q", ".")
    git(project, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic " + base64.b64encode(b"x-access-token:ghs_abcdefghijklmnop").decode())
    text, user = model_sees(server, project, "read_file('.git/config')")
    assert [type(r).__name__ for r in user.requests] == ["SecretReadApproval"] and "basic" not in text.lower()


def test_edit_file_cannot_probe_a_renamed_key_for_its_content(server, project: Path) -> None:
    (project / "notes.txt").write_text(f"aws_secret_access_key = {AWS_SECRET}\n")
    call = f"edit_file('notes.txt', {json.dumps(AWS_SECRET[:8])}, 'x')"
    text, user = model_sees(server, project, call)
    assert [type(r).__name__ for r in user.requests] == ["SecretReadApproval"]
    assert "not found" not in text and AWS_SECRET not in text


# The command environment ---------------------------------------------------------------------


def test_toolchain_prefixed_variables_that_carry_credentials_are_not_passed_to_commands() -> None:
    environ = {
        "PATH": "/usr/bin", "NVM_AUTH_HEADER": "Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "PYENV_GITHUB_TOKEN": "tok",
        "GEM_HOST_API_KEY": "rubygems_0123456789abcdef", "GOPROXY": "https://me:hunter2@proxy.example/", "CONDA_PREFIX": "/opt/conda",
    }
    env = command_env(environ, ())
    assert env["PATH"] == "/usr/bin" and env["CONDA_PREFIX"] == "/opt/conda"  # control: the toolchains' own arrive
    assert not {"NVM_AUTH_HEADER", "PYENV_GITHUB_TOKEN", "GEM_HOST_API_KEY"} & set(env)
    assert "hunter2" not in json.dumps(env)


# Where a project .env sends the key ----------------------------------------------------------


def write_env(project: Path, text: str) -> None:
    (project / ".env").write_text(text)


@pytest.mark.parametrize("dotenv", [
    "MZAGENT_PROVIDER=ollama\n",
    "MZAGENT_PROVIDER=deepseek\nMZAGENT_BASE_URL=http://127.0.0.1:9/v1\n",
    "MZAGENT_BASE_URL=https://api.openai.com.evil.example/v1\n",
    "export MZAGENT_BASE_URL=http://127.0.0.1:1234/v1\n",
    "MZAGENT_PROVIDER=custom\nMZAGENT_BASE_URL=http://127.0.0.1:9/v1\nMZAGENT_MODEL=x\n",
], ids=["preset-port", "named-provider-own-url", "lookalike-host", "export-form", "custom"])
def test_a_project_env_cannot_choose_where_the_users_key_goes(project: Path, dotenv: str) -> None:
    write_env(project, dotenv)
    settings = load_settings(project, environ={"MZAGENT_API_KEY": "sk-users-own-key-0123456789abcdef"}, cwd=project)
    assert settings.key_withheld and settings.api_key == "sk-users-own-key-0123456789abcdef"


def test_a_project_env_in_the_folder_mzagent_starts_in_cannot_choose_either(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "started-here"
    elsewhere.mkdir()
    write_env(elsewhere, "MZAGENT_BASE_URL=http://127.0.0.1:9/v1\n")
    settings = load_settings(project, environ={"MZAGENT_API_KEY": "sk-users-own-key-0123456789abcdef"}, cwd=elsewhere)
    assert settings.key_withheld and settings.base_url == "http://127.0.0.1:9/v1"


def test_control_the_users_own_provider_choice_sends_the_key(project: Path) -> None:
    write_env(project, "MZAGENT_MODEL=gpt-4o\n")
    settings = load_settings(project, environ={"OPENAI_API_KEY": "sk-users-own-key-0123456789abcdef"}, cwd=project)
    assert not settings.key_withheld and settings.endpoint()[2] == "sk-users-own-key-0123456789abcdef"


def test_a_policy_in_the_project_cannot_allow_reading_a_secret() -> None:
    """No rule of the project's: the gate asks for `.env` in every mode but yolo."""
    overall, _ = Policy("auto-safe", Rules()).evaluate("cat .env", Path(os.getcwd()))
    assert overall == "ask"


# The sandbox's view of the home, through what `.git` names ------------------------------------


@pytest.fixture
def users_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(PEM)
    (home / "notes.md").write_text("the user's notes\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@needs_namespaces
@pytest.mark.parametrize("pointer", ["gitdir: {home}/.ssh\n", "link"], ids=["gitdir-file", "git-link"])
def test_a_git_entry_naming_a_hidden_home_folder_does_not_bring_it_into_view(server, project: Path, users_home: Path, pointer: str) -> None:
    """The repository's folders are bound read-only into each command's view: one the project's
    `.git` names in the home (`~/.ssh`) must stay hidden, not become readable."""
    if pointer == "link":
        (project / ".git").symlink_to(users_home / ".ssh")
    else:
        (project / ".git").write_text(pointer.format(home=users_home))
    text, _ = model_sees(server, project, command(f"cat {users_home}/.ssh/id_rsa | rev; cat {users_home}/notes.md"), mode="yolo")
    assert "the user's notes" in text  # control: the home's ordinary files are readable
    assert KEY_BODY[2][::-1] not in text and KEY_BODY[2] not in text


# What a tool server's read-only tool returns ---------------------------------------------------


class _ToolCtx:
    """What McpTool reads of the tool context: the gate, the root, the thought."""

    def __init__(self, approver: object) -> None:
        self.approver = approver
        self.root = Path("/p")
        self.thought = "read it"


def mcp_read(mode: str, content: str, user_says: bool = False) -> tuple[str, RecordingApprover]:
    """A filesystem server's `read_text_file`, marked read-only, through the real gate in `mode`."""
    from mzagent_tui.agent.mcp.tools import McpTool, RemoteTool
    from mzagent_tui.agent.safety.approval import PolicyApprover
    from mzagent_tui.agent.tools.registry import ToolResult

    user = RecordingApprover(ApprovalDecision(user_says))
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    tool = McpTool(
        RemoteTool("fs", "read_text_file", "Read a file.", schema, read_only=True),
        lambda remote, arguments: ToolResult(content),
        _ToolCtx(PolicyApprover(user, Policy(mode, Rules()))),  # type: ignore[arg-type]
    )
    return tool("/home/me/.aws/credentials").text, user


@pytest.mark.parametrize("mode", ["auto-safe", "plan"])
def test_a_read_only_tool_servers_result_holding_a_key_asks_before_the_model_sees_it(mode: str) -> None:
    text, user = mcp_read(mode, f"[default]\naws_access_key_id = {AWS_KEY}\naws_secret_access_key = {AWS_SECRET}\n")
    assert [type(r).__name__ for r in user.requests] == ["SecretReadApproval"]
    assert AWS_KEY not in text and AWS_SECRET not in text and "withheld" in text


def test_a_tool_servers_result_shown_in_yolo_is_masked() -> None:
    text, user = mcp_read("yolo", f"key = {AWS_KEY}\n")
    assert user.requests == [] and AWS_KEY not in text and "key = " in text


def test_control_a_tool_servers_plain_result_is_shown_without_a_question() -> None:
    text, user = mcp_read("auto-safe", "just some notes\n")
    assert user.requests == [] and text == "just some notes\n"
