"""A kernel wall under the approval gate: commands confined by Landlock (Linux 5.13+).

`workspace` mode, for every command the agent runs (allowed by a rule, by the safe list or by
the user alike):

- writes only under the project, a private temp folder of the session (`TMPDIR`), and the usual
  devices (`/dev/null`, `/dev/tty`, `/dev/shm`, …);
- reads of the system, the project and the home folder, except the user's secret folders
  (`~/.ssh`, `~/.aws`, `~/.gnupg`, `~/.netrc`, …) and the app's own config, sessions and
  snapshots. Landlock only grants, never excepts, so the home folder is granted entry by entry,
  leaving those out (their names can still be listed, not read);
- no TCP connect or bind (ABI 4+);
- no signals to, and no abstract sockets of, processes outside the command's own tree (ABI 6+).

The ruleset is built once per session in the agent (adding rules does not restrict the agent);
between fork and exec the child sets `no_new_privs` and calls `landlock_restrict_self`, two
system calls, so the whole command tree is confined, and starting a command costs almost nothing
more. A small module over the three system calls with `ctypes`: the PyPI `landlock` package is a
pre-release, and this needs under 200 lines.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from mzagent_tui.agent import leftovers

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# File system rights by ABI version (include/uapi/linux/landlock.h).
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REMOVE_DIR, _REMOVE_FILE, _MAKE_CHAR, _MAKE_DIR, _MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
_MAKE_SOCK, _MAKE_FIFO, _MAKE_BLOCK, _MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_ABI1_FS = (1 << 13) - 1
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1

_READ = _EXECUTE | _READ_FILE | _READ_DIR
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
"""The only rights a rule on a file (not a folder) may carry."""

SECRET_HOME_ENTRIES = (
    ".ssh", ".aws", ".gnupg", ".netrc", ".docker", ".kube", ".azure", ".password-store", ".config/gcloud", ".config/gh",
    ".git-credentials", ".pgpass",
    # tokens only publishing or a vault needs
    ".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".vault-token",
    ".terraform.d/credentials.tfrc.json", ".cache/huggingface/token", ".huggingface/token", ".local/share/keyrings",
    # what you typed, and your browsers' cookies and passwords
    ".bash_history", ".zsh_history", ".python_history", ".node_repl_history", ".psql_history", ".mysql_history",
    ".sqlite_history", ".local/share/fish/fish_history", ".mozilla", ".config/google-chrome", ".config/chromium",
    # other agents' keys
    ".codex/auth.json", ".claude/.credentials.json",
)
"""Left unreadable inside the sandbox. `~/.npmrc` stays readable: installs from a private
registry need its token."""
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx")
DEVICE_FOLDERS = ("/dev/shm", "/dev/pts")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when it has none (or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def sandbox_label(mode: str) -> str:
    """One short phrase for the header: the sandbox, or why there is none."""
    if mode == "off":
        return "no sandbox"
    return "sandbox" if landlock_abi() > 0 else "no sandbox (no Landlock)"


@dataclass(frozen=True)
class Confinement:
    """How one command is run, as the dialog, the transcript and `--json` say it."""

    mode: str
    """"workspace", "workspace+network", "off" (by the user) or "unavailable" (no Landlock)."""

    def describe(self) -> str:
        return {
            "workspace": "sandbox: writes in the project, no network",
            "workspace+network": "sandbox: writes in the project, network allowed",
            "off": "no sandbox (turned off)",
            "unavailable": "no sandbox (Landlock is not available here)",
        }[self.mode]


@dataclass
class Sandbox:
    """The session's sandbox: its rulesets, its private temp folder, and why it may be missing."""

    root: Path
    mode: str = "workspace"
    home: Path = field(default_factory=Path.home)
    private_folders: tuple[Path, ...] = ()
    """The app's own config, sessions and snapshots: never readable by commands."""
    abi: int = -1
    """The kernel's Landlock ABI, read when the sandbox is made (-1 until then)."""
    temp_dir: Path | None = None
    _rulesets: dict[bool, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.abi < 0:
            self.abi = landlock_abi()

    @property
    def available(self) -> bool:
        return self.abi > 0

    @property
    def unavailable_reason(self) -> str:
        if self.available:
            return ""
        if not sys.platform.startswith("linux"):
            return f"Landlock is a Linux feature; on {sys.platform} commands run with the analyser alone"
        return "this kernel has no Landlock (Linux 5.13+ with Landlock enabled); commands run with the analyser alone"

    def confinement(self, network: bool = False, outside: bool = False) -> Confinement:
        if self.mode == "off" or outside:
            return Confinement("off")
        if not self.available:
            return Confinement("unavailable")
        return Confinement("workspace+network" if network else "workspace")

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """Commands get the session's private temp folder as TMPDIR."""
        if self.mode == "off" or not self.available:
            return env
        temp = str(self._temp())
        return {**env, "TMPDIR": temp, "TMP": temp, "TEMP": temp}

    def _temp(self) -> Path:
        """The session's private temp folder, made on first use (noted, so a crash leaves no trace)."""
        if self.temp_dir is None:
            self.temp_dir = Path(tempfile.mkdtemp(prefix="mzagent-tmp-"))
            leftovers.note(self.temp_dir)
        return self.temp_dir

    def preexec(self, confinement: Confinement):  # noqa: ANN201 - a callable for Popen, or None
        """What the child runs between fork and exec to confine itself (None: not confined)."""
        if confinement.mode not in ("workspace", "workspace+network"):
            return None
        ruleset = self._ruleset(network=confinement.mode == "workspace+network")
        libc = _libc()

        def confine() -> None:  # pragma: no cover - runs in the child
            if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
                os._exit(126)  # never run a command unconfined because confining it failed

        return confine

    def close(self) -> None:
        for fd in self._rulesets.values():
            os.close(fd)
        self._rulesets.clear()
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None

    # Building the ruleset ------------------------------------------------------------------

    def _ruleset(self, network: bool) -> int:
        if network not in self._rulesets:
            self._rulesets[network] = self._build(network)
        return self._rulesets[network]

    def _build(self, network: bool) -> int:
        fs = _ABI1_FS | (_REFER if self.abi >= 2 else 0) | (_TRUNCATE if self.abi >= 3 else 0) | (_IOCTL_DEV if self.abi >= 5 else 0)
        net = (_NET_BIND_TCP | _NET_CONNECT_TCP) if self.abi >= 4 and not network else 0
        scoped = (_SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET) if self.abi >= 6 else 0
        attr = _RulesetAttr(fs, net, scoped)
        size = 24 if self.abi >= 6 else 16 if self.abi >= 4 else 8
        libc = _libc()
        ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        if ruleset < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
        os.set_inheritable(ruleset, False)
        everything = fs
        for path, access in self._readable():
            self._grant(libc, ruleset, path, access & fs)
        for path in (self.root, self._temp(), *(Path(p) for p in DEVICE_FOLDERS)):
            self._grant(libc, ruleset, path, everything)
        for device in DEVICES:
            self._grant(libc, ruleset, Path(device), _FILE_RIGHTS & fs)
        return int(ruleset)

    def _grant(self, libc: ctypes.CDLL, ruleset: int, path: Path, access: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # missing on this machine (no /dev/tty in a container): nothing to grant
        try:
            if not os.path.isdir(path):
                access &= _FILE_RIGHTS
            rule = _PathBeneathAttr(access, fd)
            if libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
        finally:
            os.close(fd)

    def _readable(self) -> list[tuple[Path, int]]:
        """Everything from `/` down, minus the excluded folders. Their ancestors are split into
        their entries; an ancestor itself gets READ_DIR only, so it can still be listed."""
        excluded = {Path(os.path.realpath(self.home / entry)) for entry in SECRET_HOME_ENTRIES}
        excluded |= {Path(os.path.realpath(p)) for p in self.private_folders}
        grants: list[tuple[Path, int]] = []
        self._split(Path("/"), excluded, grants)
        return grants

    def _split(self, folder: Path, excluded: set[Path], grants: list[tuple[Path, int]]) -> None:
        try:
            entries = sorted(os.listdir(folder))
        except OSError:
            return
        grants.append((folder, _READ_DIR))
        for name in entries:
            path = folder / name
            real = Path(os.path.realpath(path))
            if any(real.is_relative_to(e) for e in excluded):
                continue  # excluded, or a link into an excluded folder
            if any(e.is_relative_to(real) for e in excluded):
                if not path.is_symlink():
                    self._split(path, excluded, grants)
                continue  # a link to an ancestor (`pytest-current`): its real path is split instead
            grants.append((path, _READ))
