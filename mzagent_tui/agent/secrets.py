"""Secrets: which values to redact and which environment variables commands must not see."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

SECRET_VAR = re.compile(r"(API_KEY|_TOKEN|_SECRET|_PASSWORD|_PASSWD)$", re.IGNORECASE)
REDACTED = "[redacted]"
_MIN_SECRET_LEN = 8


def secret_values(environ: Mapping[str, str], extra: Iterable[str] = ()) -> list[str]:
    """The API key and every secret-looking environment value long enough to redact safely."""
    values = {v for k, v in environ.items() if SECRET_VAR.search(k) and len(v) >= _MIN_SECRET_LEN}
    values.update(v for v in extra if v and len(v) >= _MIN_SECRET_LEN)
    return sorted(values, key=len, reverse=True)


def command_env(environ: Mapping[str, str], pass_env: Iterable[str] = ()) -> dict[str, str]:
    """Environment for commands: secrets removed (unless listed in pass_env), pagers and editors off."""
    allowed = set(pass_env)
    env = {k: v for k, v in environ.items() if k in allowed or not SECRET_VAR.search(k)}
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
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        return text


def redactor_for(environ: Mapping[str, str], api_key: str) -> Redactor:
    """What the session log, exports and errors hide: the key and every secret-looking variable."""
    return Redactor(secret_values(environ, [api_key]))
