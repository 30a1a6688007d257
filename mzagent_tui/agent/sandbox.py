"""A kernel wall under the approval gate: commands confined by Landlock (Linux 5.13+) and, where
user namespaces work, by namespaces of their own.

`workspace` mode, for every command the agent runs (allowed by a rule, by the safe list or by
the user alike):

- writes only under the project, a private temp folder of the session (`TMPDIR`), a private
  `/dev/shm` of the session, and the few devices a program needs (`/dev/null`, `/dev/tty`, …);
  not the user's other terminals (`/dev/pts/N`);
- reads of the system, the project and the home folder, except the home's dot-files and
  dot-folders that are not on an allow-list of what toolchains need (`HOME_ALLOWED`, extendable
  with `home_allow` in the user config), the secret ones even inside allowed folders
  (`SECRET_HOME_ENTRIES`), and the app's own config, sessions and snapshots. Landlock only
  grants, never excepts, so the home folder is granted entry by entry;
- no network: a network namespace of its own (only a loopback that is down), so no TCP, UDP,
  MPTCP or raw socket leaves it; where user namespaces are not available, Landlock's TCP rule
  alone (ABI 4+) and the header says so;
- `/run` hidden behind an empty folder (daemons' sockets: docker, D-Bus, the user's session
  bus, ssh and gpg agents) when the network is off;
- no signals to, and no abstract sockets of, processes outside the command's own tree (ABI 6+).

The ruleset is built once per session in the agent (adding rules does not restrict the agent);
between fork and exec the child enters its namespaces, sets `no_new_privs` and calls
`landlock_restrict_self`, so the whole command tree is confined. A small module over a handful
of system calls with `ctypes`: the PyPI `landlock` package is a pre-release.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mzagent_tui.agent import leftovers
from mzagent_tui.agent.sensitive import HOME_ALLOWED, SECRET_HOME_ENTRIES

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWNET = 0x00020000, 0x08000000, 0x10000000, 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 8, 4096, 16384, 1 << 18

# File system rights by ABI version (include/uapi/linux/landlock.h).
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_ABI1_FS = (1 << 13) - 1
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1

READ = _EXECUTE | _READ_FILE | _READ_DIR
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
"""The only rights a rule on a file (not a folder) may carry."""

DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")


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


def namespaces_work() -> bool:
    """Whether commands get namespaces of their own here (probed once, by a program of ours)."""
    from mzagent_tui.agent import own_programs  # it builds on this module

    return own_programs.namespaces_work()


def sandbox_label(mode: str) -> str:
    """One short phrase for the header: the sandbox, or why there is none."""
    if mode == "off":
        return "no sandbox"
    if landlock_abi() <= 0:
        return "no sandbox (no Landlock)"
    return "sandbox" if namespaces_work() else "sandbox (TCP only blocked: no user namespaces)"


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


def home_grants(home: Path, allowed: Iterable[str], excluded: Iterable[Path]) -> list[tuple[Path, int]]:
    """What of the home a confined program reads: every entry not starting with a dot, and the
    allowed dot-entries (a folder split down to the allowed paths inside it), minus `excluded`
    (secret entries, the app's own folders) wherever they are."""
    allowed_paths = {Path(os.path.normpath(home / entry)) for entry in allowed}
    excluded = {Path(os.path.realpath(p)) for p in excluded}
    grants: list[tuple[Path, int]] = [(home, _READ_DIR)]
    try:
        names = sorted(os.listdir(home))
    except OSError:
        return []
    for name in names:
        path = home / name
        if name.startswith("."):
            _grant_allowed(path, allowed_paths, excluded, grants)
        else:
            _split(path, excluded, grants)
    return grants


def _grant_allowed(path: Path, allowed: set[Path], excluded: set[Path], grants: list[tuple[Path, int]]) -> None:
    if path in allowed:
        _split(path, excluded, grants)
        return
    if not any(a.is_relative_to(path) for a in allowed) or path.is_symlink() or not path.is_dir():
        return
    grants.append((path, _READ_DIR))
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return
    for name in names:
        _grant_allowed(path / name, allowed, excluded, grants)


def _split(path: Path, excluded: set[Path], grants: list[tuple[Path, int]]) -> None:
    """`path` readable, minus the excluded paths under it. Their ancestors are split into their
    entries; an ancestor itself gets READ_DIR only, so it can still be listed."""
    real = Path(os.path.realpath(path))
    if any(real.is_relative_to(e) for e in excluded):
        return  # excluded, or a link into an excluded folder
    if not any(e.is_relative_to(real) for e in excluded):
        grants.append((path, READ))
        return
    if path.is_symlink():
        return  # a link to an ancestor (`pytest-current`): its real path is split instead
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return
    grants.append((path, _READ_DIR))
    for name in names:
        _split(path / name, excluded, grants)


def readable_grants(home: Path, allowed: Iterable[str], private: Iterable[Path]) -> list[tuple[Path, int]]:
    """Everything from `/` down, with the home read by allow-list and the private folders left out."""
    home_real = Path(os.path.realpath(home))
    secret = [home_real / entry for entry in SECRET_HOME_ENTRIES]
    excluded = {Path(os.path.realpath(p)) for p in (*private, *secret)} | {home_real}
    grants: list[tuple[Path, int]] = []
    _split(Path("/"), excluded, grants)
    return grants + home_grants(home_real, allowed, {*secret, *private})


def build_ruleset(abi: int, readable: list[tuple[Path, int]], writable: Iterable[Path], network: bool) -> int:
    """A Landlock ruleset fd: `readable` as given, `writable` with every right, the devices, and
    TCP denied unless `network`."""
    fs = _ABI1_FS | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0) | (_IOCTL_DEV if abi >= 5 else 0)
    net = (_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 and not network else 0
    scoped = (_SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET) if abi >= 6 else 0
    attr = _RulesetAttr(fs, net, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    libc = _libc()
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    os.set_inheritable(ruleset, False)
    for path, access in readable:
        _grant(libc, ruleset, path, access & fs)
    for path in writable:
        _grant(libc, ruleset, path, fs)
    for device in DEVICES:
        _grant(libc, ruleset, Path(device), _FILE_RIGHTS & fs)
    return int(ruleset)


def _grant(libc: ctypes.CDLL, ruleset: int, path: Path, access: int) -> None:
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


def enter_namespaces(network: bool, shm: Path) -> Callable[[], None]:
    """What a child runs to enter its own user and mount namespaces (and network namespace,
    unless `network`): the same uid and gid inside, a private `/dev/shm` bound from `shm`, and
    `/run` under an empty tmpfs when the network is off. Exits 126 on any failure: a command is
    never run less confined than the session says."""
    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    flags = _CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWIPC | (0 if network else _CLONE_NEWNET)
    maps = ((b"/proc/self/setgroups", b"deny"), (b"/proc/self/uid_map", f"{uid} {uid} 1".encode()), (b"/proc/self/gid_map", f"{gid} {gid} 1".encode()))
    shm_source, shm_target = bytes(shm), os.path.realpath("/dev/shm").encode()

    def enter() -> None:  # pragma: no cover - runs in the child
        try:
            if libc.unshare(flags) != 0:
                os._exit(126)
            for name, text in maps:
                fd = os.open(name, os.O_WRONLY)
                os.write(fd, text)
                os.close(fd)
            if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
                os._exit(126)
            if not network and os.path.isdir(b"/run") and libc.mount(b"tmpfs", b"/run", b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, b"size=64k,mode=755") != 0:
                os._exit(126)
            if libc.mount(shm_source, shm_target, None, _MS_BIND | _MS_REC, None) != 0:
                os._exit(126)
        except OSError:
            os._exit(126)

    return enter


@dataclass
class Sandbox:
    """The session's sandbox: its rulesets, its private temp folders, and why it may be missing."""

    root: Path
    mode: str = "workspace"
    home: Path = field(default_factory=Path.home)
    private_folders: tuple[Path, ...] = ()
    """The app's own config, sessions and snapshots: never readable by commands."""
    home_allow: tuple[str, ...] = ()
    """Dot-entries of the home the user adds to `HOME_ALLOWED`."""
    abi: int = -1
    """The kernel's Landlock ABI, read when the sandbox is made (-1 until then)."""
    temp_dir: Path | None = None
    shm_dir: Path | None = None
    _rulesets: dict[bool, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.abi < 0:
            self.abi = landlock_abi()

    @property
    def available(self) -> bool:
        return self.abi > 0

    @property
    def namespaces(self) -> bool:
        """Whether commands get their own network and mount namespaces (else Landlock alone)."""
        return self.available and namespaces_work()

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
        temp = str(self._private("temp_dir", "mzagent-tmp-"))
        return {**env, "TMPDIR": temp, "TMP": temp, "TEMP": temp}

    def _private(self, name: str, prefix: str) -> Path:
        """A private folder of the session, made on first use (noted, so a crash leaves no trace)."""
        folder = getattr(self, name)
        if folder is None:
            folder = Path(tempfile.mkdtemp(prefix=prefix))
            leftovers.note(folder)
            setattr(self, name, folder)
        return folder

    def preexec(self, confinement: Confinement):  # noqa: ANN201 - a callable for Popen, or None
        """What the child runs between fork and exec to confine itself (None: not confined)."""
        if confinement.mode not in ("workspace", "workspace+network"):
            return None
        network = confinement.mode == "workspace+network"
        ruleset = self._ruleset(network)
        enter = enter_namespaces(network, self._private("shm_dir", "mzagent-shm-")) if self.namespaces else None
        return restrict(ruleset, enter)

    def close(self) -> None:
        for fd in self._rulesets.values():
            os.close(fd)
        self._rulesets.clear()
        for name in ("temp_dir", "shm_dir"):
            folder = getattr(self, name)
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
                setattr(self, name, None)

    def _ruleset(self, network: bool) -> int:
        if network not in self._rulesets:
            readable = readable_grants(self.home, (*HOME_ALLOWED, *self.home_allow), self.private_folders)
            writable = [self.root, self._private("temp_dir", "mzagent-tmp-")]
            if self.namespaces:
                writable.append(self._private("shm_dir", "mzagent-shm-"))  # seen as /dev/shm inside
            else:
                writable.append(Path("/dev/shm"))
            self._rulesets[network] = build_ruleset(self.abi, readable, writable, network)
        return self._rulesets[network]


def restrict(ruleset: int, enter: Callable[[], None] | None) -> Callable[[], None]:
    """The child's confinement: its namespaces if given, then `no_new_privs` and the ruleset."""
    libc = _libc()

    def confine() -> None:  # pragma: no cover - runs in the child
        if enter is not None:
            enter()
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            os._exit(126)  # never run a command unconfined because confining it failed

    return confine
