"""Which paths hold secrets: reading them asks.

One list for `read_file` and the command analyser, so a file the agent must ask to read cannot
be read by `cat` without asking. Which files make tools run code (writing them asks) is
safety/planting.py.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping
from pathlib import Path

from mzagent_tui.agent.ground.textfiles import read_regular
from mzagent_tui.agent.safety.secrets import URL_PASSWORD

GIT_CONFIG_READ = 1 << 16
"""Bytes of a repository config looked at for a password in a remote URL."""
SECRET_NAMES = {
    ".env", ".envrc", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", ".netrc", "_netrc", ".pgpass",
    "credentials", ".npmrc", ".pypirc", ".git-credentials", ".htpasswd", ".my.cnf", "secrets.toml",
    "secrets.yaml", "secrets.yml", "secrets.json", ".dockercfg", "token.json", ".yarnrc", ".yarnrc.yml", "rclone.conf",
    ".condarc",
}
SECRET_SUFFIXES = (
    ".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".kdbx", ".tfvars", ".tfvars.json", ".tfstate",
    ".tfstate.backup", ".p8", ".keytab",
)
# Names by pattern (lower case): env files under other spellings (`prod.env`, `.env-prod`, an
# editor's `.env~`), private keys with a suffix (`id_rsa.bak`, but not `id_rsa.pub`), and the
# files cloud consoles hand out.
SECRET_PATTERNS = re.compile("|".join(fnmatch.translate(p) for p in (
    ".env-*", ".env_*", ".env~", "*.env", "*.env.bak*", "*.env.old", "*.env.orig", "*.env.save", "*.env.backup", "*.env.local",
    "id_rsa*", "id_ed25519*", "id_ecdsa*", "id_dsa*", "credentials.*", "client_secret*.json",
    "service-account*.json", "service_account*.json", ".boto", ".s3cfg", ".vault-token", "kubeconfig*", "*.kubeconfig", "auth.json",
    ".terraformrc", "terraform.rc", ".git-credentials*", "*credentials.json", "*-firebase-adminsdk-*.json", "*_token.json",
    ".vault_pass*", ".vault-pass*", "vault_pass*", "*.vault_pass", "deploy_key*", "*_deploy_key",
)))
# The names are a cheap first line: a read's content is scanned for credentials whatever the
# file is called (credentials.py), which a hard link or a renamed copy cannot get around.
HOME_ALLOWED = (
    # language installs and their tools
    ".local/lib", ".local/share/virtualenvs", ".local/share/pipx", ".local/pipx", ".pyenv",
    ".rye/shims", ".rye/py", ".rye/self", ".rye/tools",  # not .rye/credentials
    ".nvm", ".volta", ".bun", ".deno", ".rustup", ".cargo/bin", ".cargo/env", ".cargo/registry", ".cargo/git",
    ".sdkman", ".jdks", ".ghcup", ".elan", ".opam", ".conda/pkgs", ".conda/envs", ".conda/environments.txt",  # not .conda/.condarc
    ".dotnet/dotnet", ".dotnet/sdk", ".dotnet/sdk-manifests", ".dotnet/shared", ".dotnet/host", ".dotnet/packs",
    ".dotnet/templates", ".dotnet/tools",  # not .dotnet/corefx (certificates' private keys)
    ".local/share/mise", ".asdf",
    # package caches
    ".npm/_cacache", ".cache/pip", ".cache/uv", ".cache/pypoetry", ".cache/go-build", ".cache/yarn", ".yarn/berry/cache",
    ".local/share/pnpm", ".cache/node-gyp", ".node-gyp", ".m2/repository", ".gradle/caches", ".gradle/wrapper",
    ".nuget/packages", ".cache/pre-commit", ".cache/ms-playwright", ".cache/huggingface/hub", ".cache/torch",
    # git's settings (not its credentials store)
    ".gitconfig", ".config/git/config", ".config/git/ignore", ".config/git/attributes",
)
"""The home's dot-entries that confined commands may read and that reading does not ask for:
what toolchains need, as files and subfolders where a folder mixes tools and credentials
(`.conda` holds a `.condarc` with channel tokens; `~/.local/bin`, the user's own scripts too,
is allowed program by program: `toolchain_programs`). The rest of the home's dot-files (shell histories, database clients,
cloud and registry credentials, editor state) is secret unless the user adds it to the
sandbox (`home_allow`). Settings files that often hold tokens (`.npmrc`, `.pypirc`,
`.m2/settings.xml`, `.gradle/gradle.properties`) are left out."""
SECRET_HOME_ENTRIES = (
    ".ssh", ".aws", ".gnupg", ".netrc", ".docker", ".kube", ".azure", ".password-store", ".config/gcloud", ".config/gh",
    ".git-credentials", ".pgpass", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
    ".vault-token", ".cache/huggingface/token", ".huggingface/token", ".local/share/keyrings", ".codex/auth.json",
    ".claude/.credentials.json", ".condarc", ".conda/.condarc", ".config/conda", ".config/rclone", ".yarnrc.yml",
)
"""Never readable by commands, even when a user's `home_allow` names a folder holding them."""
HOME_GIT_SETTINGS = (".gitconfig", ".config/git/config")
"""Readable by commands as an allow-listed copy (git_user_settings); the originals may hold
tokens, so reading them by name (`read_file`, `cat`) asks."""
_PROC_SECRET = re.compile(r"^/proc/[^/]+/(task/[^/]+/)?(environ|cmdline|mem|auxv|maps|smaps|pagemap|fd(/.*)?)$")

LOCAL_BIN = ".local/bin"
_LAUNCHER = re.compile(rb"#![^\n]*python[\d.]*[^\n]*\n(?:#[^\n]*\n)*import re\nimport sys\nfrom [\w.]+ import [\w.]+\n")
"""The launcher pip, pipx and uv write for a package's console script (distlib's template)."""
_PROGRAM_SNIFF = 2048
XDG_STAND_INS = (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"), ("XDG_STATE_HOME", ".local/state"), ("XDG_CACHE_HOME", ".cache"))
"""The XDG folders and the home folder each stands for when the user moves it (a cache holds
tokens too: `huggingface/token`, and whatever a tool caches there)."""


def is_toolchain_program(path: Path) -> bool:
    """An entry of `~/.local/bin` a toolchain put there: a link (pipx, uv tool), a compiled
    program, or a console-script launcher. The user's own scripts, which may carry a token,
    are not."""
    try:
        if path.is_symlink():
            return True
        with path.open("rb") as handle:
            head = handle.read(_PROGRAM_SNIFF)
    except OSError:
        return False
    return head.startswith(b"\x7fELF") or _LAUNCHER.match(head) is not None


def toolchain_programs(home: Path) -> tuple[str, ...]:
    """`~/.local/bin`'s toolchain programs, as home entries (`.local/bin/uv`)."""
    folder = home / LOCAL_BIN
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return ()
    return tuple(f"{LOCAL_BIN}/{name}" for name in names if is_toolchain_program(folder / name))


def xdg_outside_home(home: Path, environ: Mapping[str, str] | None = None) -> list[tuple[Path, str]]:
    """The XDG folders set outside the home (`XDG_CONFIG_HOME=/data/me/config`), resolved, each
    with the home folder it stands for: they hold what `~/.config` would (`gh/hosts.yml`), so
    they get the home's exclusions."""
    environ = os.environ if environ is None else environ
    real_home = os.path.realpath(home)
    found = []
    for variable, stand_in in XDG_STAND_INS:
        value = environ.get(variable, "")
        if os.path.isabs(value):
            folder = os.path.realpath(value)
            if folder != real_home and not folder.startswith(real_home.rstrip("/") + "/") and folder != "/":
                found.append((Path(folder), stand_in))
    return found


def is_secret(path: Path, home: Path | None = None) -> bool:
    """Files that usually hold secrets (by name), the home's dot-entries outside `HOME_ALLOWED`,
    a process's environment or memory under /proc, and a repository config whose remote URL
    carries a password or token."""
    name = path.name.lower()
    if name in SECRET_NAMES or name.startswith(".env.") or name.endswith(SECRET_SUFFIXES):
        return True
    if SECRET_PATTERNS.match(name) and not name.endswith(".pub"):
        return True
    if name == "config" and path.parent.name.lower() == ".git" and _holds_url_password(path):
        return True
    text = path.as_posix()
    if _PROC_SECRET.match(text):
        return True
    return is_private_home_entry(path, home)


def is_private_home_entry(path: Path, home: Path | None = None) -> bool:
    """A home dot-entry that confined commands do not see as it is: reading it by a tool asks
    even in yolo mode, which lets commands run but never lifts the sandbox."""
    home = home or Path.home()
    if any(_unlisted_home_entry(path, folder) for folder in {home, Path(os.path.realpath(home))}):
        return True
    real = Path(os.path.realpath(path))
    for folder, stand_in in xdg_outside_home(home):
        if real.is_relative_to(folder):
            return _unlisted_home_entry(home / stand_in / real.relative_to(folder), home, xdg=True)
    return False


def _unlisted_home_entry(path: Path, home: Path, xdg: bool = False) -> bool:
    """Checked against the home as named and as resolved: a path the tools resolved is under the
    real home when HOME names a link to it (`/home -> /var/home`). `xdg`: the path stands for
    what an XDG folder outside the home holds (it may not exist under the home)."""
    if not path.is_relative_to(home) or path == home:
        return False
    inside = path.relative_to(home)
    if not inside.parts[0].startswith("."):
        return False
    if any(inside.is_relative_to(entry) for entry in (*SECRET_HOME_ENTRIES, *HOME_GIT_SETTINGS)):
        return True
    if len(inside.parts) == 3 and inside.parent.as_posix() == LOCAL_BIN and not xdg:
        return not is_toolchain_program(path)
    return not any(inside.is_relative_to(entry) for entry in HOME_ALLOWED)


_EXTRA_HEADER = re.compile(r"^\s*extraheader\s*=.*\bauthorization\b", re.IGNORECASE | re.MULTILINE)


def _holds_url_password(config: Path) -> bool:
    """A repository config whose remote URL carries a password or token
    (`url = https://user:TOKEN@host/repo.git`), or that sends one in a header (the
    `http.extraheader = AUTHORIZATION: basic …` a CI checkout leaves)."""
    text = read_regular(config, GIT_CONFIG_READ)
    return text is not None and (URL_PASSWORD.search(text) is not None or _EXTRA_HEADER.search(text) is not None)
