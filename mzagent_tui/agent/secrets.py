"""Secrets: which values to redact and which environment variables commands must not see.

A variable is a secret by its name (`*_API_KEY`, `*_TOKEN`, `PGPASSWORD`, `DATABASE_URL`, …) or by
the shape of its value (`sk-…`, `ghp_…`, `xoxb-…`, `AKIA…`, a private key block). Redaction hides
the values of those variables, the API key, and any text with a well-known key shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

SECRET_VAR = re.compile(
    r"(API_?KEY|ACCESS_?KEY|SECRET|TOKEN|PASSWORD|PASSWD|_PWD$|^PGPASS|_PAT$|_DSN$|_KEY$|^PRIVATE_KEY|CREDENTIAL|"
    r"DATABASE_URL|_DB_URL$|WEBHOOK|^SSH_AUTH_SOCK$|^GPG_AGENT_INFO$|AUTH_?KEY|SESSION_?KEY|COOKIE|_AUTH$|^AUTH_)",
    re.IGNORECASE,
)
"""Names whose values commands must not see (unless listed in pass_env)."""
KEY_SHAPES = re.compile(
    r"(sk-(?:proj-|ant-|or-v1-)?[A-Za-z0-9_\-]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_\-]{16,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}|hf_[A-Za-z0-9]{20,}|AIza[0-9A-Za-z_\-]{30,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}|npm_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_\-]{30,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$))"
)
"""Well-known key formats: a value of this shape is a secret whatever its variable is called."""
URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+@")
"""The password part of `scheme://user:password@host`."""
REDACTED = "[redacted]"
_MIN_SECRET_LEN = 8


def is_secret_variable(name: str, value: str) -> bool:
    return bool(SECRET_VAR.search(name)) or bool(KEY_SHAPES.search(value))


def secret_values(environ: Mapping[str, str], extra: Iterable[str] = ()) -> list[str]:
    """The API key and every secret environment value long enough to redact safely."""
    values = {v for k, v in environ.items() if is_secret_variable(k, v) and len(v) >= _MIN_SECRET_LEN}
    values.update(v for v in extra if v and len(v) >= _MIN_SECRET_LEN)
    return sorted(values, key=len, reverse=True)


def command_env(environ: Mapping[str, str], pass_env: Iterable[str] = ()) -> dict[str, str]:
    """Environment for commands: secrets removed (unless listed in pass_env), pagers and editors off."""
    allowed = set(pass_env)
    env = {k: v for k, v in environ.items() if k in allowed or not is_secret_variable(k, v)}
    env.update(
        PAGER="cat",
        GIT_PAGER="cat",
        GIT_EDITOR="false",
        EDITOR="false",
        VISUAL="false",
        GIT_TERMINAL_PROMPT="0",
        TERM="dumb",
        NO_COLOR="1",
    )
    return env


class Redactor:
    def __init__(self, values: Iterable[str]) -> None:
        self._values = [v for v in values if v]

    def __call__(self, text: str) -> str:
        """For logs and exports: known values and anything shaped like a key."""
        return KEY_SHAPES.sub(REDACTED, self.exact(text))

    def command_output(self, text: str) -> str:
        """For command output, also the password of a URL (`git remote -v` prints
        `https://user:TOKEN@host/...`). Not for files or logs: a file's development database
        URL (`postgres://dev:dev@localhost`) stays, so writing the file back loses nothing."""
        return URL_PASSWORD.sub(rf"\1{REDACTED}@", self(text))

    def exact(self, text: str) -> str:
        """Known values only: a file the model reads keeps its test fixtures that merely look
        like keys, so writing it back loses nothing."""
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        return text


def redactor_for(environ: Mapping[str, str], api_key: str) -> Redactor:
    """What the session log, exports and errors hide: the key, every secret variable, key shapes."""
    return Redactor(secret_values(environ, [api_key]))
