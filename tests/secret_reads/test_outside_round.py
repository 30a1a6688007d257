"""The secrets wall, attacked from outside (issue 54, rule 5; and rule 4, where the key goes):
a credential reaching the model without a question by its content, whatever the file is
called, through `read_file`, commands in `auto-safe`, and what the output scan reads.

Each test asserts the safe outcome through the real agent and the scripted server (or the real
function where that is the unit). What still gets through is an `xfail(strict=True)` whose
reason starts with HOLE. Each attack that holds has a control showing the route brings the
secret when the guard is not in the way.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from mzagent_tui.agent.config import ConfigError, load_settings
from mzagent_tui.agent.safety.approval import ApprovalDecision
from tests.attack_helpers import command, git, needs_wall, run
from tests.conftest import RecordingApprover

STRIPE = "sk_live_51Hq8ZtK2mN4pR7vX9yB3cD6f"
"""A made-up Stripe key: a shape the output scan knows, and the redaction of outputs does not
(so what reaches the model is the scan's doing alone)."""
FILLER = "".join(f"# filler line {n:04d} of the settings module\n" for n in range(200))
"""About 8 KB of ordinary lines: more than the head or tail an output keeps in memory."""


def model_sees(server, project: Path, call: str, mode: str = "auto-safe") -> tuple[str, RecordingApprover]:  # noqa: ANN001
    """One tool call of the model's through the real agent; what it was sent back, and what was asked."""
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, call, mode=mode, approver=user)
    return texts[0], user


def asked(user: RecordingApprover) -> list[str]:
    return [type(request).__name__ for request in user.requests]


def commit_settings(project: Path, text: str) -> None:
    git(project, "init", "-q", ".")
    (project / "settings.py").write_text(text)
    git(project, "add", "settings.py")
    git(project, "commit", "-qm", "settings")


def noisy_folder(project: Path) -> None:
    """A folder of 150 folders with long names: `cat d/*` writes about 10 KB of errors."""
    for n in range(150):
        (project / "d" / f"folder-with-a-rather-long-name-{n:04d}").mkdir(parents=True)


# What the output scan reads is what the model is shown ------------------------------------------


@needs_wall
def test_a_credential_in_the_output_between_two_floods_of_errors_is_not_shown(server, project: Path) -> None:
    """The output scan read stdout and stderr together, as they arrived, and kept only the first
    and last 5 KB of that; a failed command shows the model its error output and its standard
    output apart, each with its own first and last 5 KB. Errors before and after a printed key
    fill the joint head and tail, and the key, at the start of the standard output, was shown
    unread."""
    commit_settings(project, f"STRIPE = '{STRIPE}'\n" + FILLER)
    noisy_folder(project)
    text, user = model_sees(server, project, command("cat d/*; git show HEAD; cat d/*"))
    assert STRIPE not in text, text[:3000]
    assert asked(user) == ["SecretReadApproval"]


@needs_wall
def test_control_the_same_key_printed_without_the_errors_asks(server, project: Path) -> None:
    commit_settings(project, f"STRIPE = '{STRIPE}'\n" + FILLER)
    text, user = model_sees(server, project, command("git show HEAD"))
    assert asked(user) == ["SecretReadApproval"] and STRIPE not in text


@needs_wall
def test_control_the_errors_and_the_commit_are_shown_when_no_key_is_in_it(server, project: Path) -> None:
    commit_settings(project, "DEBUG = True\n" + FILLER)
    noisy_folder(project)
    text, user = model_sees(server, project, command("cat d/*; git show HEAD; cat d/*"))
    assert user.requests == [] and "DEBUG = True" in text and "Is a directory" in text


# A key read in pieces or reshaped: the file is scanned before the command runs -----------------


@needs_wall
@pytest.mark.parametrize("call", ["fold -w 8 notes.txt", "cut -c 12-30 notes.txt", "grep -o . notes.txt", "od -An -c notes.txt",
                                  "tr a-z n-za-m < notes.txt", "head -c 24 notes.txt"])
def test_a_key_read_in_pieces_or_reshaped_by_a_safe_list_program_asks_first(server, project: Path, call: str) -> None:
    (project / "notes.txt").write_text(f"STRIPE = '{STRIPE}'\n")
    text, user = model_sees(server, project, command(call))
    assert asked(user) == ["CommandApproval"], text
    assert STRIPE[8:20] not in text.replace("\n", "").replace(" ", "")


@needs_wall
def test_control_the_same_programs_on_a_plain_file_run_without_a_question(server, project: Path) -> None:
    (project / "notes.txt").write_text("STRIPE = 'set it in the environment'\n")
    text, user = model_sees(server, project, command("fold -w 8 notes.txt"))
    assert user.requests == [] and "environm" in text


@needs_wall
def test_a_key_in_a_commit_message_reversed_is_not_shown(server, project: Path) -> None:
    git(project, "init", "-q", ".")
    (project / "a.txt").write_text("a\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", f"rotate the key; the old one was {STRIPE}")
    text, user = model_sees(server, project, command("git log -1 --format=%B | rev"))
    assert STRIPE[::-1] not in text and STRIPE not in text
    assert asked(user) == ["CommandApproval"]


@needs_wall
def test_a_dot_env_stored_in_a_zip_printed_by_strings_and_reversed_is_not_shown(server, project: Path) -> None:
    import zipfile

    with zipfile.ZipFile(project / "bundle.zip", "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(".env", f"STRIPE_KEY={STRIPE}\n")
    text, user = model_sees(server, project, command("strings bundle.zip | rev"))
    assert STRIPE[::-1] not in text and asked(user) == ["CommandApproval"]


# Credentials the content rules should know (detect-secrets' plugins, and common formats) ------

DOCKER_AUTH = base64.b64encode(b"deploy:Xk9#mQ2vL7pR4tZ1").decode()
KNOWN = {
    "sendgrid": "mail = 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\n",
    "password-in-url": "remote = https://deploy:Xk9mQ2vL7pR4tZ1@git.example.io/repo.git\n",
    "azure-connection-string": "conn = DefaultEndpointsProtocol=https;AccountName=acme;AccountKey="
                               + base64.b64encode(bytes(range(64))).decode() + ";EndpointSuffix=core.windows.net\n",
}
OTHER_KINDS = {
    "telegram-bot-token": "bot 1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw2 started\n",
    "discord-bot-token": "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs\n",
    "twilio-api-key": "using SK1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d now\n",
    "mailchimp-api-key": "mc = 3f2a1b4c5d6e7f8a9b0c1d2e3f4a5b6c-us14\n",
    "square-oauth-secret": "square = sq0csp-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefg\n",
    "docker-registry-auth": json.dumps({"auths": {"registry.example.io": {"auth": DOCKER_AUTH}}}) + "\n",
    "netrc-entry": "machine api.example.io login deploy password Xk9mQ2vL7pR4tZ1w\n",
}


@pytest.mark.parametrize("content", list(KNOWN.values()), ids=list(KNOWN))
def test_control_a_renamed_file_holding_a_known_credential_asks(server, project: Path, content: str) -> None:
    (project / "notes.txt").write_text(content)
    text, user = model_sees(server, project, "read_file('notes.txt')")
    assert asked(user) == ["SecretReadApproval"], text


@pytest.mark.parametrize("content", list(OTHER_KINDS.values()), ids=list(OTHER_KINDS))
def test_a_renamed_file_holding_a_credential_of_another_known_kind_asks(server, project: Path, content: str) -> None:
    """detect-secrets' Telegram, Discord, Twilio, Mailchimp and Square plugins, a docker config's
    `auth` (base64 of user:password) and a netrc line: each was read without a question."""
    (project / "notes.txt").write_text(content)
    text, user = model_sees(server, project, "read_file('notes.txt')")
    assert asked(user) == ["SecretReadApproval"], text


# Where the key goes (rule 4) --------------------------------------------------------------------


USERS_KEY = "sk-users-own-key-0123456789abcdef"


def sent_key(project: Path, dotenv: str, environ: dict[str, str], cwd: Path | None = None) -> str:
    """The key a request would carry with this project `.env` ("" when none: withheld, or the
    provider needs one it does not get)."""
    (project / ".env").write_text(dotenv)
    settings = load_settings(project, environ=environ, cwd=cwd or project)
    try:
        return settings.endpoint()[2]
    except ConfigError:
        return ""


@pytest.mark.parametrize("environ", [{"MZAGENT_API_KEY": USERS_KEY}, {"OPENAI_API_KEY": USERS_KEY}], ids=["generic-key", "openai-key"])
def test_a_project_env_naming_another_hosted_provider_does_not_get_the_users_key(project: Path, environ: dict[str, str]) -> None:
    """Not a port on this machine but another company's real endpoint: the user's key for one
    provider must not go to the one the project named."""
    assert USERS_KEY not in sent_key(project, "MZAGENT_PROVIDER=openrouter\n", environ)


def test_a_key_in_the_users_own_env_file_is_not_sent_where_the_projects_env_points(project: Path, tmp_path: Path) -> None:
    """mzagent started from the user's folder (whose `.env` holds their key) with `--project`: the
    project's `.env` picks the URL; the key comes from another file, so it is not sent."""
    home = tmp_path / "me"
    home.mkdir()
    (home / ".env").write_text(f"MZAGENT_API_KEY={USERS_KEY}\n")
    assert sent_key(project, "MZAGENT_BASE_URL=http://127.0.0.1:9/v1\nMZAGENT_MODEL=x\n", {}, cwd=home) != USERS_KEY


def test_control_the_users_own_env_file_choosing_both_sends_the_key(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "me"
    home.mkdir()
    (home / ".env").write_text(f"MZAGENT_API_KEY={USERS_KEY}\nMZAGENT_BASE_URL=http://127.0.0.1:9/v1\nMZAGENT_MODEL=x\n")
    assert sent_key(project, "MZAGENT_MODEL=x\n", {}, cwd=home) == USERS_KEY


def test_control_a_projects_env_naming_a_provider_the_user_has_the_key_for_sends_it(project: Path) -> None:
    assert sent_key(project, "MZAGENT_PROVIDER=openrouter\n", {"OPENROUTER_API_KEY": USERS_KEY}) == USERS_KEY
    assert os.environ.get("OPENROUTER_API_KEY") is None  # the test's own environment played no part
