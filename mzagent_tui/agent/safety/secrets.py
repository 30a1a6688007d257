"""Secrets: which values to redact, and which environment commands get.

A variable is a secret by its name (`*_API_KEY`, `*_TOKEN`, `PGPASSWORD`, `DATABASE_URL`, …) or by
the shape of its value (`sk-…`, `ghp_…`, `xoxb-…`, `AKIA…`, a private key block). Redaction hides
the values of those variables, the API key, and any text with a well-known key shape.

Commands get an allow-list, not the agent's environment minus known secrets: a name list can
never know `MAIL_PASS`, `MONGO_URI=mongodb://u:pw@h` or `CI_JOB_JWT`, and whatever a command sees
the model can print (Codex calls this `inherit = "core"`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

SECRET_VAR = re.compile(
    r"(API_?KEY|ACCESS_?KEY|SECRET|TOKEN|PASSWORD|PASSWD|_PWD$|^PGPASS|_PAT$|_DSN$|_KEY$|^PRIVATE_KEY|CREDENTIAL|"
    r"DATABASE_URL|_DB_URL$|WEBHOOK|^SSH_AUTH_SOCK$|^GPG_AGENT_INFO$|AUTH_?KEY|SESSION_?KEY|COOKIE|_AUTH$|^AUTH_)",
    re.IGNORECASE,
)
"""Names whose values are secrets: hidden from logs, exports and command output."""
KEY_SHAPES = re.compile(
    r"(sk-(?:proj-|ant-|or-v1-)?[A-Za-z0-9_\-]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_\-]{16,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}|hf_[A-Za-z0-9]{20,}|AIza[0-9A-Za-z_\-]{30,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}|npm_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_\-]{30,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$))"
)
"""Well-known key formats: a value of this shape is a secret whatever its variable is called."""
URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@")
"""The password part of `scheme://user:password@host`, the user possibly empty (`redis://:pw@host`)."""
URL_CREDENTIALS = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)([^/?#\s:@]*):[^/\s]*@")
"""`user:password@` of a URL in a variable's value (user in group 2). Unlike URL_PASSWORD the
password runs to the last `@` before the path, so an unescaped `@` in it (`postgres://u:p@ss@db`,
which SQLAlchemy accepts) goes whole. Reaching too far (an `@` in a query before any `/`) costs
part of one value here; in command output it could swallow the text between two URLs on a line."""
REDACTED = "[redacted]"
_MIN_SECRET_LEN = 8


def is_secret_variable(name: str, value: str) -> bool:
    return bool(SECRET_VAR.search(name)) or bool(KEY_SHAPES.search(value))


def secret_values(environ: Mapping[str, str], extra: Iterable[str] = ()) -> list[str]:
    """The API key and every secret environment value long enough to redact safely."""
    values = {v for k, v in environ.items() if is_secret_variable(k, v) and len(v) >= _MIN_SECRET_LEN}
    values.update(v for v in extra if v and len(v) >= _MIN_SECRET_LEN)
    return sorted(values, key=len, reverse=True)


LC_NAMES = (
    "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME",
    "LC_ADDRESS", "LC_IDENTIFICATION", "LC_MEASUREMENT", "LC_NAME", "LC_PAPER", "LC_TELEPHONE",
)
"""The real POSIX and glibc locale variables: not an `LC_` prefix, which `LC_SECRET` also has."""
INHERITED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("who runs, where programs are, the shell and folders", ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "TMPDIR")),
    ("language, locale and time zone of the output", ("LANG", "LANGUAGE", *LC_NAMES, "TZ")),
    ("the terminal type (set to dumb below anyway)", ("TERM",)),
    ("where tools keep config and caches (git's user identity, say)", ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")),
    ("python: the active virtualenv, conda env and pyenv version", ("VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYENV_ROOT", "PYENV_VERSION")),
    ("node: nvm's folders and the module search path", ("NVM_DIR", "NVM_BIN", "NVM_INC", "NODE_PATH")),
    ("rust: cargo's and rustup's folders and the toolchain", ("CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN")),
    ("go: the root, workspace, install and cache folders", ("GOROOT", "GOPATH", "GOBIN", "GOCACHE", "GOMODCACHE")),
    ("java: the JDK", ("JAVA_HOME",)),
    ("ruby: the gem folders and rbenv version", ("GEM_HOME", "GEM_PATH", "RBENV_ROOT", "RBENV_VERSION")),
)
"""What every command inherits, by exact name (case counts: `path` is not PATH), with why.

Left out on purpose, each only through pass_env: what runs code or loads a library at start
(`NODE_OPTIONS` can `--require` a file into every node process, `PYTHONPATH` a `sitecustomize.py`;
`BASH_ENV`, `ENV`, `PROMPT_COMMAND`, `LD_PRELOAD`, `LD_LIBRARY_PATH`, `PYTHONSTARTUP`, `PERL5OPT`,
`JAVA_TOOL_OPTIONS`, `GOFLAGS`), `GIT_*` (`GIT_SSH_COMMAND`, `GIT_CONFIG_*`, `GIT_ASKPASS`
redirect git), agents' sockets (`SSH_AUTH_SOCK`, `GPG_AGENT_INFO`, `XDG_RUNTIME_DIR`, `DISPLAY`,
`DBUS_SESSION_BUS_ADDRESS`), and proxies (`HTTPS_PROXY=http://token@proxy` carries a credential
in the user part, which removing URL passwords does not touch)."""
INHERITED_NAMES = frozenset(name for _, names in INHERITED for name in names)
FIXED_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": "false",
    "EDITOR": "false",
    "VISUAL": "false",
    "GIT_TERMINAL_PROMPT": "0",
    "TERM": "dumb",
    "NO_COLOR": "1",
}
"""Set for every command: nothing waits for a pager, an editor or a password prompt, no colours."""


def without_url_passwords(value: str) -> str:
    """`scheme://user:pw@host` as `scheme://user@host`, and `scheme://:pw@host` as `scheme://host`."""
    return URL_CREDENTIALS.sub(lambda found: found[1] + (f"{found[2]}@" if found[2] else ""), value)


def command_env(environ: Mapping[str, str], pass_env: Iterable[str] = ()) -> dict[str, str]:
    """Environment for commands: the variables of INHERITED and those named in pass_env, then FIXED_ENV.

    An inherited variable whose value has a key shape stays out, as before the allow-list. A
    pass_env variable passes whatever its name or value looks like: the user asked for it by name.
    The password of a URL leaves every value, pass_env ones too: a command can print its
    environment, and what it prints reaches the model."""
    chosen = set(pass_env)
    env = {
        name: without_url_passwords(value)
        for name, value in environ.items()
        if name in chosen or (name in INHERITED_NAMES and not KEY_SHAPES.search(value))
    }
    env.update(FIXED_ENV)
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
