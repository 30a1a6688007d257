"""Which variables commands never see, and what redaction hides."""

from __future__ import annotations

import pytest

from mzagent_tui.agent.safety.secrets import REDACTED, command_env, redactor_for

SECRET_NAMES = [
    "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "PGPASSWORD", "MYSQL_PWD", "DATABASE_URL", "DJANGO_SECRET_KEY",
    "AZURE_OPENAI_KEY", "GITHUB_PAT", "SLACK_WEBHOOK_URL", "SENTRY_DSN", "PRIVATE_KEY", "SSH_AUTH_SOCK", "GITHUB_TOKEN",
    "NPM_TOKEN", "HF_TOKEN", "STRIPE_SECRET", "REDIS_PASSWORD", "GOOGLE_APPLICATION_CREDENTIALS", "ANTHROPIC_API_KEY",
    "CLIENT_SECRET", "APIKEY", "SESSION_KEY", "JWT_SECRET", "MONGO_DB_URL",
]
HARMLESS = {"PATH": "/usr/bin:/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "PWD": "/w", "SHELL": "/bin/bash", "USER": "u", "VIRTUAL_ENV": "/w/.venv"}
SHAPED = [
    "sk-proj-abcdefghijklmnopqrstuv", "ghp_abcdefghijklmnopqrstuvwxyz012345", "github_pat_11AAAAAAAAAAAAAAAAAAAAAA",
    "xoxb-1234567890-abcdefghij", "AKIAIOSFODNN7EXAMPLE", "glpat-abcdefghijklmnopqrst", "hf_abcdefghijklmnopqrstuvwxyz",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names_are_removed_from_commands_and_redacted(name: str) -> None:
    value = "value-that-is-secret-123"
    env = command_env({**HARMLESS, name: value})
    assert name not in env
    assert REDACTED in redactor_for({name: value}, "")(f"got {value}")


def test_pass_env_lets_one_through() -> None:
    assert command_env({"GITHUB_TOKEN": "x" * 20}, pass_env=["GITHUB_TOKEN"])["GITHUB_TOKEN"] == "x" * 20


def test_allowed_variables_stay_and_others_go_however_harmless() -> None:
    env = command_env({**HARMLESS, "OLDPWD": "/", "MY_SETTING": "on"})
    assert {k: env[k] for k in HARMLESS} == HARMLESS
    assert "OLDPWD" not in env and "MY_SETTING" not in env


@pytest.mark.parametrize("value", SHAPED)
def test_key_shaped_values_are_secrets_under_any_name_and_redacted_anywhere(value: str) -> None:
    assert "MY_SETTING" not in command_env({"MY_SETTING": value})
    redact = redactor_for({}, "")
    assert value not in redact(f"the output says {value} here")
    assert redact.exact(f"a fixture {value}") == f"a fixture {value}"


@pytest.mark.parametrize(
    ("output", "shown"),
    [
        ("origin\thttps://x-access-token:abc123def@github.com/o/r.git (fetch)", "origin\thttps://x-access-token:[redacted]@github.com/o/r.git (fetch)"),
        ("postgres://app:s3cret!@db:5432/main", "postgres://app:[redacted]@db:5432/main"),
        ("REDIS_URL=redis://:s3cret@cache:6379 https://:tok@host/x", "REDIS_URL=redis://:[redacted]@cache:6379 https://:[redacted]@host/x"),
        ("see https://example.com/a:b and user@host and ssh://git@host:22/r", "see https://example.com/a:b and user@host and ssh://git@host:22/r"),
    ],
)
def test_the_password_of_a_url_is_redacted_from_command_output_only(output: str, shown: str) -> None:
    redact = redactor_for({}, "")
    assert redact.command_output(output) == shown
    assert redact(output) == output and redact.exact(output) == output  # logs and files keep it, so writing it back loses nothing
