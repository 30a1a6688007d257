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
- no network: the session's network namespace (shared_network.py: nothing but a loopback that
  is up, shared by the session's commands), or, where it cannot be made, one of the command's
  own with its loopback down, so no TCP, UDP, MPTCP or raw socket leaves it; where user
  namespaces are not available, Landlock's TCP rule alone (ABI 4+) and the header says so;
- `/tmp`, `/var/tmp` and `/run` behind empty folders of their own (other programs' Unix
  sockets: docker, D-Bus, the user's session bus, tmux, ssh and gpg agents), with the folders
  the command needs bound back (the project, the session's temp folder, the interpreter and the
  folders on PATH, the DNS settings when the network is on);
- no signals to, and no abstract sockets of, processes outside the command's own tree (ABI 6+);
- where the kernel lets it, a PID namespace of its own (pid_namespace.py): its `/proc` shows
  only its own processes, and everything in it dies with its first process, the supervisor.

What commands may reach is worked out once per session in the agent, and the ruleset built from
it once too (adding rules does not restrict the agent), or, with a PID namespace, by each child
(it also grants that namespace's `/proc`); between fork and exec the child enters its
namespaces, sets `no_new_privs` and calls
`landlock_restrict_self`, so the whole command tree is confined. A small module over a handful
of system calls with `ctypes`: the PyPI `landlock` package is a pre-release.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from mzagent_tui.agent.ground import leftovers
from mzagent_tui.agent.safety.own_install import own_paths_in
from mzagent_tui.agent.safety.pid_namespace import become_first_process
from mzagent_tui.agent.safety.sensitive import HOME_ALLOWED, HOME_GIT_SETTINGS, SECRET_HOME_ENTRIES, toolchain_programs, xdg_outside_home

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine if hasattr(os, "uname") else "")
_KEYCTL_JOIN_SESSION_KEYRING = 1
_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = 0x00020000, 0x08000000, 0x10000000, 0x20000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18

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


@functools.cache
def namespaces_work() -> bool:
    """Whether a child can enter a user, network and mount namespace of its own here (unprivileged
    user namespaces may be off: a sysctl, an AppArmor rule, a container). Tried once per process
    in a forked child that runs nothing, since only a real child shows every step works."""
    return _probe(own_pids=False)


@functools.cache
def pid_namespace_works() -> bool:
    """Whether a command can also have a PID namespace of its own, with a `/proc` of it: the
    kernel refuses to mount one where the machine's `/proc` is partly covered (Docker covers
    some of its files), and may have no PID namespaces at all."""
    return namespaces_work() and _probe(own_pids=True)


def _probe(own_pids: bool) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    shm = Path(tempfile.mkdtemp(prefix="mzagent-probe-shm-"))
    try:
        enter = enter_namespaces(network=False, view=View(shm), own_pids=own_pids)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.chdir("/")  # in every view: the agent's own folder (a project under /tmp) may not be
            enter()
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status) == 0
    except OSError:
        return False
    finally:
        shutil.rmtree(shm, ignore_errors=True)


def sandbox_label(mode: str) -> str:
    """One short phrase for the header: the sandbox, or why there is none."""
    if mode == "off":
        return "no sandbox"
    if landlock_abi() <= 0:
        return "no sandbox (no Landlock)"
    if not namespaces_work():
        return "sandbox (TCP only blocked: no user namespaces)"
    return "sandbox" if pid_namespace_works() else "sandbox (processes visible: no PID namespace)"


def namespaces_state() -> str:
    """What `mzagent config` says of the namespaces commands get, or why they get none."""
    if not namespaces_work():
        return "no namespaces (no user namespaces here): TCP blocked by Landlock only, /run and other programs' processes visible"
    if not pid_namespace_works():
        return "namespaces: user, mount, IPC, network (no PID namespace here: commands see your other processes)"
    return "namespaces: user, mount, IPC, network, PID"


@dataclass(frozen=True)
class Confinement:
    """How one command is run, as the dialog, the transcript and `--json` say it."""

    mode: str
    """"workspace", "workspace+network", "workspace+domains" (the network only through the
    session's proxy, to the allowed domains: domain_proxy.py), "off" (by the user) or
    "unavailable" (no Landlock)."""
    project_read_only: bool = False
    """Plan mode: the command may write only its temp folder, not the project."""

    def describe(self) -> str:
        network = {"workspace": "no network", "workspace+network": "network allowed", "workspace+domains": "network to the allowed domains only"}
        if self.project_read_only and self.mode.startswith("workspace"):
            return "sandbox: project read-only, " + network[self.mode]
        return {
            "workspace": "sandbox: writes in the project, no network",
            "workspace+network": "sandbox: writes in the project, network allowed",
            "workspace+domains": "sandbox: writes in the project, network to the allowed domains only",
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
            split(path, excluded, grants)
    return grants


def _grant_allowed(path: Path, allowed: set[Path], excluded: set[Path], grants: list[tuple[Path, int]]) -> None:
    if path in allowed:
        split(path, excluded, grants)
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


def split(path: Path, excluded: set[Path], grants: list[tuple[Path, int]], access: int = READ) -> None:
    """`path` with `access`, minus the excluded paths under it. Their ancestors are split into
    their entries; an ancestor itself gets READ_DIR only, so it can still be listed."""
    folders = sorted(str(e) for e in excluded)
    outermost = [f for i, f in enumerate(folders) if not any(within(f, other) for other in folders[:i])]
    _split(path, os.path.realpath(path), path.is_symlink(), outermost, grants, access)  # a path inside another excluded one changes nothing


def _split(path: Path, real: str, link: bool, excluded: list[str], grants: list[tuple[Path, int]], access: int) -> None:
    """`real` is the path's real path: an entry that is not a link is its folder's real path
    and its name, so only links are resolved (a realpath of each of /tmp's thousand entries
    was most of a sandbox's start)."""
    if any(within(real, e) for e in excluded):
        return  # excluded, or a link into an excluded folder
    if not any(within(e, real) for e in excluded):
        grants.append((path, access))
        return
    if link:
        return  # a link to an ancestor (`pytest-current`): its real path is split instead
    try:
        with os.scandir(path) as listing:
            entries = sorted((entry.name, entry.is_symlink()) for entry in listing)
    except OSError:
        return
    grants.append((path, _READ_DIR))
    for name, is_link in entries:
        child = path / name
        _split(child, os.path.realpath(child) if is_link else os.path.join(real, name), is_link, excluded, grants, access)


def within(path: str, folder: str) -> bool:
    """`path` is `folder` or inside it, both absolute and normalised: `Path.is_relative_to` as a
    string test (pathlib's builds a relative path and catches its error; splitting `/` around
    a test's folders under a crowded /tmp called it 40,000 times per sandbox)."""
    return path == folder or path.startswith(folder if folder.endswith("/") else folder + "/")


def readable_grants(
    home: Path, allowed: Iterable[str], private: Iterable[Path], keep: Iterable[Path] = (), covered: Iterable[str] = (),
) -> list[tuple[Path, int]]:
    """Everything from `/` down, with the home read by allow-list and the private folders left
    out, and of `/dev` only its listing (the devices a program needs are granted by name,
    `DEVICES`): the user's other terminals (`/dev/pts/N`, a read takes the keystrokes typed
    there), disks of the `disk` group, the console's screen (`/dev/vcs*`) are devices too.
    `keep`: the folders the program needs (a hidden link leading to one is not left out).
    `covered`: the folders a view covers (`covered_and_kept`), which are not walked: nothing of
    what they held is seen but the paths bound back, and those are granted by name
    (`kept_grants`). Walked, /tmp alone gave a grant per entry, thousands on a busy machine."""
    return grants_around(home, allowed, private, hidden_link_targets(home, allowed, keep), covered)


def grants_around(
    home: Path, allowed: Iterable[str], private: Iterable[Path], link_targets: Iterable[Path], covered: Iterable[str] = (),
) -> list[tuple[Path, int]]:
    """`readable_grants` with the hidden links' targets to leave out already found: all that
    the folders a program needs change in it, so a cache keyed by them serves every project."""
    allowed = tuple(allowed)
    home_real = Path(os.path.realpath(home))
    secret = [home_real / entry for entry in SECRET_HOME_ENTRIES]
    grants: list[tuple[Path, int]] = []
    split(Path("/"), _not_read(home, private) | set(link_targets) | {Path(folder) for folder in covered}, grants)
    grants.append((Path("/dev"), _READ_DIR))
    return grants + home_grants(home_real, allowed, {*secret, *private}) + xdg_grants(home, allowed, {*secret, *private})


def xdg_grants(home: Path, allowed: Iterable[str], excluded: Iterable[Path]) -> list[tuple[Path, int]]:
    """An XDG folder outside the home is read as the home folder it stands for: only its allowed
    entries (`XDG_DATA_HOME/pipx` as `~/.local/share/pipx`), never its secrets (`gh/hosts.yml`).
    git's settings stay out: the home's are bound as a clean copy, these would be the original."""
    excluded = set(excluded)
    grants: list[tuple[Path, int]] = []
    for folder, stand_in in xdg_outside_home(home):
        for entry in allowed:
            if entry.startswith(stand_in + "/") and entry not in HOME_GIT_SETTINGS:
                path = folder / entry.removeprefix(stand_in + "/")
                if os.path.lexists(path):
                    split(path, excluded | {folder / secret.removeprefix(stand_in + "/") for secret in SECRET_HOME_ENTRIES}, grants)
    return grants


def kept_grants(kept: Iterable[str], home: Path, private: Iterable[Path]) -> list[tuple[Path, int]]:
    """READ for the paths bound back into a covered folder. Landlock, walking up from a file,
    passes over a mount point without looking at it, so the grant on /tmp does not reach what
    the view puts on the blank over /tmp: each kept path is granted by itself, split as `/` is
    (never the home whole, the private folders or the secrets)."""
    excluded = _not_read(home, private)
    grants: list[tuple[Path, int]] = []
    for path in kept:
        split(Path(path), excluded, grants)
    return grants


def hidden_link_targets(home: Path, allowed: Iterable[str], keep: Iterable[Path]) -> set[Path]:
    """Where the home's hidden dot-entries that are links lead (`~/.config -> /data/me/config`):
    the view leaves a link in place for Landlock to judge its target, which `/` would grant.
    A target holding a folder the program needs stays (a project under a linked `~/.local`)."""
    allowed = tuple(allowed)
    needed = [os.path.realpath(p) for p in keep]
    targets: set[Path] = set()
    for path in hidden_home_entries(home, allowed, keep):
        if path.is_symlink():
            real = os.path.realpath(path)
            if not any(within(n, real) for n in needed):
                targets.add(Path(real))
    return targets


def _not_read(home: Path, private: Iterable[Path]) -> set[Path]:
    """What `readable_grants` leaves out of `/`: the home (granted by allow-list), the XDG
    folders outside it (likewise), `/dev` (its devices granted by name), the private folders and
    the secret entries."""
    home_real = Path(os.path.realpath(home))
    secret = [home_real / entry for entry in SECRET_HOME_ENTRIES]
    xdg = {folder for folder, _ in xdg_outside_home(home)}
    return {Path(os.path.realpath(p)) for p in (*private, *secret)} | xdg | {home_real, Path("/dev")}


FULL = (1 << 16) - 1
"""Every file-system right (masked to the kernel's ABI when granted)."""


def build_ruleset(abi: int, grants: Iterable[tuple[Path, int]], network: bool) -> int:
    """A Landlock ruleset fd: each path with its rights, the devices, and TCP denied unless `network`."""
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
    for path, access in grants:
        _grant(libc, ruleset, path, access & fs)
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


@dataclass(frozen=True)
class View:
    """What a confined program sees of the file system, beyond what Landlock lets it open.

    Landlock (ABI < 9) does not govern connecting to a Unix socket by its path, and a socket is
    a door into another program (a tmux server runs anything it is sent, an ssh or gpg agent
    signs with your keys, docker is root). So the mount namespace covers where such sockets
    live (`COVERED`: all but the paths the program needs, bound back at their own paths) and
    every dot-entry of the home that is not on the allow-list. Binds put in front of a file
    what the program should read instead (a `.gitconfig` without credentials)."""

    shm: Path
    """Bound at /dev/shm."""
    keep: tuple[Path, ...] = ()
    """Paths the program needs: those under a covered folder are bound back (the project, its
    temp folders, the interpreter and PATH's folders, the home in tests)."""
    hide: tuple[Path, ...] = ()
    """Paths covered by a blank of their kind (symbolic links are left: Landlock judges their target)."""
    blanks: Path | None = None
    """A folder holding `file` and `folder`, empty and granted nothing: what covers a hidden
    entry, so opening it is refused, as before, rather than reading as empty."""
    binds: tuple[tuple[Path, Path], ...] = ()
    """(source, target): a file put in front of another."""
    read_only: tuple[Path, ...] = ()
    """Paths inside the writable project made read-only, if they exist when the command starts:
    Landlock only adds rights, so a folder it lets a command write is writable all the way down."""


def make_blanks(folder: Path) -> Path:
    """`folder` with an empty `file` and an empty `folder` in it, to cover hidden entries."""
    (folder / "file").touch(mode=0o400)
    (folder / "folder").mkdir(mode=0o500, exist_ok=True)
    return folder


def hidden_home_entries(home: Path, allowed: Iterable[str], keep: Iterable[Path]) -> list[Path]:
    """The home's dot-entries a confined program does not see: those not allowed, a folder
    holding allowed ones (`.config`, holding `.config/git/config`) split into its entries, and
    never one holding a folder the program needs (a project kept under `~/.local/src`)."""
    allowed_paths = [os.path.normpath(home / entry) for entry in allowed]
    needed = {os.path.realpath(p) for p in keep}
    hidden: list[Path] = []
    try:
        names = sorted(os.listdir(home))
    except OSError:
        return []
    pending = [home / name for name in names if name.startswith(".")]
    while pending:
        path = pending.pop()
        plain, real = str(path), os.path.realpath(path)
        if real in needed or any(within(plain, a) for a in allowed_paths):
            continue  # a needed folder is seen whole (it was split too, its entries hidden)
        inner = any(within(a, plain) for a in allowed_paths) or any(within(n, real) for n in needed)
        if inner and path.is_dir() and not path.is_symlink():
            try:
                pending.extend(path / name for name in os.listdir(path))
            except OSError:
                hidden.append(path)
            continue
        hidden.append(path)
    return sorted(hidden)


def enter_namespaces(network: bool, view: View, own_pids: bool = False, join: tuple[int, int] | None = None) -> Callable[[], None]:
    """What a child runs to enter its own user, mount and IPC namespaces (and network namespace,
    unless `network`): the same uid and gid inside, then the mounts of `view`. `own_pids`: a PID
    namespace too; `enter` then returns in a new child, the namespace's first process, with its
    own `/proc` (pid_namespace.py). `join`: the session's shared network namespace (its holder's
    user and network namespaces, open: shared_network.py) is entered first, in place of a network
    namespace of its own; the command's user namespace is then made inside the holder's, so it
    is still the command's own. Exits 126 on any failure: a command is never run less confined
    than the session says."""
    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    join = None if network else join
    own_network = not network and join is None
    flags = _CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWIPC | (_CLONE_NEWNET if own_network else 0) | (_CLONE_NEWPID if own_pids else 0)
    maps = ((b"/proc/self/setgroups", b"deny"), (b"/proc/self/uid_map", f"{uid} {uid} 1".encode()), (b"/proc/self/gid_map", f"{gid} {gid} 1".encode()))
    covered, kept = covered_and_kept(view.keep, network)
    covered_bytes = [p.encode() for p in covered]
    kept_bytes = [p.encode() for p in kept]
    binds = [(str(source).encode(), str(target).encode()) for source, target in view.binds]
    shm = (str(view.shm).encode(), os.path.realpath("/dev/shm").encode())
    hide = [str(p).encode() for p in view.hide] if view.blanks is not None else []
    blank_file, blank_folder = (bytes(view.blanks / "file"), bytes(view.blanks / "folder")) if view.blanks else (b"", b"")
    read_only = [bytes(p) for p in view.read_only]

    def mount(source: bytes | None, target: bytes, kind: bytes | None, mount_flags: int, data: bytes | None = None) -> None:
        if libc.mount(source, target, kind, mount_flags, data) != 0:
            os._exit(126)

    def from_fd(fd: int) -> bytes:
        return f"/proc/self/fd/{fd}".encode()

    def enter() -> None:  # pragma: no cover - runs in the child
        try:
            here = os.getcwd()  # the folder to work in, still of the old mounts
            if join is not None and (libc.setns(join[0], _CLONE_NEWUSER) != 0 or libc.setns(join[1], _CLONE_NEWNET) != 0):
                os._exit(126)
            if libc.unshare(flags) != 0:
                os._exit(126)
            for name, text in maps:
                map_fd = os.open(name, os.O_WRONLY)
                os.write(map_fd, text)
                os.close(map_fd)
            mount(None, b"/", None, _MS_REC | _MS_PRIVATE)
            keep_fds = [_open_kept(path) for path in kept_bytes]
            bind_fds = [os.open(source, os.O_PATH) for source, _ in binds]
            shm_fd = os.open(shm[0], os.O_PATH | os.O_DIRECTORY)
            blank_fds = (os.open(blank_file, os.O_PATH), os.open(blank_folder, os.O_PATH | os.O_DIRECTORY)) if hide else (None, None)
            for folder in covered_bytes:
                mount(b"tmpfs", folder, b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=1m,mode=1777")
            for path, fd in zip(kept_bytes, keep_fds):
                if fd is not None:
                    _make_target(path, fd)
                    mount(from_fd(fd), path, None, _MS_BIND | _MS_REC)
            mount(from_fd(shm_fd), shm[1], None, _MS_BIND | _MS_REC)
            for path in hide:
                try:
                    kind = os.lstat(path).st_mode
                except OSError:
                    continue  # gone since the view was made
                blank = blank_fds[1] if stat.S_ISDIR(kind) else blank_fds[0]  # never None: opened whenever `hide` holds a path
                if blank is not None and not stat.S_ISLNK(kind):  # a failure leaves the entry unreadable to Landlock still
                    libc.mount(from_fd(blank), path, None, _MS_BIND, None)
            for (_, target), fd in zip(binds, bind_fds):
                if os.path.lexists(target):
                    mount(from_fd(fd), target, None, _MS_BIND)
            for path in read_only:  # a command under Landlock can no longer change its mounts
                real = os.path.realpath(path)
                if os.path.exists(real):
                    mount(real, real, None, _MS_BIND | _MS_REC)
                    mount(None, real, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY)
            for fd in (*keep_fds, *bind_fds, shm_fd, *blank_fds):
                if fd is not None:
                    os.close(fd)
            os.chdir(here)  # into the view: `..` from a folder of the old /tmp would reach all of it
        except OSError:
            os._exit(126)
        if own_pids:
            become_first_process(libc)

    return enter


COVERED = ("/tmp", "/var/tmp", "/run")
"""Where other programs leave Unix sockets; each is an empty tmpfs in the program's view."""


def covered_and_kept(keep: Iterable[Path], network: bool) -> tuple[list[str], list[str]]:
    """The covered folders of this machine, and the paths under them to bind back: those of
    `keep` (a covered folder itself is never kept whole) and, with the network on, the file
    `/etc/resolv.conf` leads to (systemd keeps it in /run). A path inside another kept path is
    bound with it."""
    covered = sorted({os.path.realpath(folder) for folder in COVERED if os.path.isdir(folder)})
    wanted = {os.path.realpath(p) for p in keep}
    if network:
        wanted.add(os.path.realpath("/etc/resolv.conf"))
    under = [p for p in wanted if any(_under(p, folder) and p != folder for folder in covered)]
    kept = sorted(p for p in under if not any(p != q and _under(p, q) for q in under))
    return covered, kept


def program_folders(environ: Mapping[str, str] = os.environ) -> tuple[Path, ...]:
    """Where the programs a command runs live, kept in its view wherever they are: the Python
    mzagent runs in (a virtual environment made under /tmp), the active virtual environment,
    and PATH's absolute folders (fnm keeps node under /run/user)."""
    folders = [sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    folders += [p for p in (environ.get("VIRTUAL_ENV", ""), *environ.get("PATH", "").split(os.pathsep)) if os.path.isabs(p)]
    return tuple(Path(p) for p in dict.fromkeys(folders))


def _open_kept(path: bytes) -> int | None:
    """An O_PATH descriptor of a path to keep, None if it is gone since the view was made."""
    try:
        return os.open(path, os.O_PATH)
    except FileNotFoundError:
        return None


def _make_target(path: bytes, fd: int) -> None:  # pragma: no cover - runs in the child
    """The mount point of a kept path inside the blank covering it: a folder, or an empty file."""
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.makedirs(path, exist_ok=True)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


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
    git_settings: Callable[[Path], str] = lambda path: ""
    """The text commands see in place of a git config file of the user's: the session passes
    git_user_settings.kept_settings (an allow-list read by git); without it, an empty file."""
    abi: int = -1
    """The kernel's Landlock ABI, read when the sandbox is made (-1 until then)."""
    temp_dir: Path | None = None
    shm_dir: Path | None = None
    view_dir: Path | None = None
    _rulesets: dict[tuple[bool, bool, bool], int] = field(default_factory=dict)
    _grants: dict[tuple[bool, bool], list[tuple[Path, int]]] = field(default_factory=dict)
    _views: list[View] = field(default_factory=list)

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
    def own_pids(self) -> bool:
        """Whether commands also get a PID namespace of their own (pid_namespace.py)."""
        return self.namespaces and pid_namespace_works()

    @property
    def unavailable_reason(self) -> str:
        if self.available:
            return ""
        if not sys.platform.startswith("linux"):
            return f"Landlock is a Linux feature; on {sys.platform} commands run with the analyser alone"
        return "this kernel has no Landlock (Linux 5.13+ with Landlock enabled); commands run with the analyser alone"

    def confinement(self, network: bool = False, outside: bool = False, project_read_only: bool = False, by_domain: bool = False) -> Confinement:
        """`by_domain`: the user config lists allowed domains, so a command given the network
        reaches it only through the session's proxy, where namespaces can hold it to that."""
        if self.mode == "off" or outside:
            return Confinement("off")
        if not self.available:
            return Confinement("unavailable")
        if network and by_domain and self.namespaces:
            return Confinement("workspace+domains", project_read_only)
        return Confinement("workspace+network" if network else "workspace", project_read_only)

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

    def preexec(self, confinement: Confinement, repository: tuple[Path, ...] | None = None, shared_network: tuple[int, int] | None = None):  # noqa: ANN201 - a callable for Popen, or None
        """What the child runs between fork and exec to confine itself (None: not confined).
        `repository`: the paths of the project's git repository made read-only, found as the
        command starts (git_entry.read_only_paths; none for a git command the user typed,
        `!git commit`); by default the root's `.git`. `shared_network`: the session's network
        namespace (shared_network.py) a command without network joins, where namespaces work;
        Landlock's TCP rule is then left off, since it knows ports, not addresses, and would
        refuse the loopback too: the namespace, which has nothing but its loopback, is the wall."""
        if confinement.mode not in ("workspace", "workspace+network", "workspace+domains"):
            return None
        network = confinement.mode == "workspace+network"
        join = shared_network if self.namespaces and not network else None
        view = self._view() if repository is None else replace(self._view(), read_only=repository)
        if confinement.project_read_only:  # Landlock does not govern chmod, chown or times; a read-only mount does
            view = replace(view, read_only=(self.root, *view.read_only))
        view = replace(view, read_only=(*view.read_only, *own_paths_in(self.root)))  # mzagent's own installation: as the repository
        tcp = network or join is not None
        if self.own_pids:
            grants = self._granted(network, confinement.project_read_only)
            return restrict_with_own_proc(self.abi, grants, tcp, enter_namespaces(network, view, own_pids=True, join=join))
        enter = enter_namespaces(network, view, join=join) if self.namespaces else None
        return restrict(self._ruleset(network, confinement.project_read_only, tcp), enter)

    def save_confinement(self, confinement: Confinement, name: str) -> Path | None:
        """`preexec`'s confinement written to a file of the session's private folder, for a
        program started by a library that takes no preexec function (the MCP SDK starts its
        servers itself): the program's launcher applies it with `confine_from_file`, then execs
        the program. None: not confined."""
        if confinement.mode not in ("workspace", "workspace+network"):
            return None
        network = confinement.mode == "workspace+network"
        view = self._view()
        if confinement.project_read_only:
            view = replace(view, read_only=(self.root, *view.read_only))
        spec = {
            "abi": self.abi, "network": network,
            "grants": [[str(path), access] for path, access in self._granted(network, confinement.project_read_only)],
            "view": _view_fields(view) if self.namespaces else None,
        }
        path = self._private("view_dir", "mzagent-view-") / f"confine-{name}.json"
        path.write_text(json.dumps(spec))
        return path

    def close(self) -> None:
        for fd in self._rulesets.values():
            os.close(fd)
        self._rulesets.clear()
        self._grants.clear()
        for name in ("temp_dir", "shm_dir", "view_dir"):
            folder = getattr(self, name)
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
                setattr(self, name, None)
        self._views.clear()

    @functools.cached_property
    def _allowed(self) -> tuple[str, ...]:
        """Read once a session: `~/.local/bin`'s programs are listed and sniffed."""
        return (*HOME_ALLOWED, *toolchain_programs(self.home), *self.home_allow)

    def _view(self) -> View:
        """What commands see: /tmp but the project and the session's folders, the home without
        its unlisted dot-entries, git's settings without credentials."""
        if not self._views:
            keep = (self.root, self._private("temp_dir", "mzagent-tmp-"), self.home, *program_folders())
            blanks = make_blanks(self._private("view_dir", "mzagent-view-"))
            hide = hidden_home_entries(self.home, self._allowed, keep)
            binds = clean_git_configs(self.home, blanks, self.git_settings)
            repository = (self.root / ".git",)  # the default; the shell passes every entry and what it leads to (git_entry)
            self._views.append(View(self._private("shm_dir", "mzagent-shm-"), keep, tuple(hide), blanks, tuple(binds), repository))
        return self._views[0]

    def _toolchains_in_project(self) -> set[Path]:
        """For a project at the home, the allowed dot-entries inside it (`~/.cargo/bin`,
        `~/.nvm/nvm.sh`: programs on PATH or sourced by the shell): read, not written."""
        root = os.path.realpath(self.root)
        allowed = {os.path.realpath(self.home / entry) for entry in self._allowed}
        return {Path(a) for a in allowed if a != root and within(a, root) and os.path.lexists(a)}

    def _ruleset(self, network: bool, project_read_only: bool = False, tcp: bool = False) -> int:
        """The ruleset for a command with or without network (made once); `tcp`: Landlock leaves
        TCP alone (the network, or the session's network namespace, decides)."""
        key = (network, project_read_only, tcp)
        if key not in self._rulesets:
            self._rulesets[key] = build_ruleset(self.abi, self._granted(network, project_read_only), network or tcp)
        return self._rulesets[key]

    def _granted(self, network: bool, project_read_only: bool = False) -> list[tuple[Path, int]]:
        """What a command with or without network may reach; `project_read_only` (plan mode):
        the project read, only the temp folders written."""
        key = (network, project_read_only)
        if key not in self._grants:
            covered = covered_and_kept((), network)[0] if self.namespaces else []
            grants = readable_grants(self.home, self._allowed, self.private_folders, (self.root,), covered)
            home = Path(os.path.realpath(self.home))
            secret = {home / entry for entry in SECRET_HOME_ENTRIES}
            hidden = {Path(os.path.realpath(p)) for p in hidden_home_entries(self.home, self._allowed, (self.root,))}
            toolchains = self._toolchains_in_project()
            excluded = {*secret, *hidden, *toolchains, *(Path(os.path.realpath(p)) for p in self.private_folders)}
            split(self.root, excluded, grants, READ if project_read_only else FULL)  # a project at the home: its secrets stay out
            grants.extend((path, READ) for path in sorted(toolchains))
            grants.append((self._private("temp_dir", "mzagent-tmp-"), FULL))
            if self.namespaces:
                grants.extend(kept_grants(covered_and_kept(self._view().keep, network)[1], self.home, self.private_folders))
                grants.append((self._private("shm_dir", "mzagent-shm-"), FULL))  # seen as /dev/shm inside
                grants.extend((copy, READ) for copy, _ in self._view().binds)  # the blanks stay ungranted
            else:
                grants.append((Path("/dev/shm"), FULL))
            self._grants[key] = grants
        return self._grants[key]


def clean_git_configs(home: Path, folder: Path, kept: Callable[[Path], str]) -> list[tuple[Path, Path]]:
    """Copies of the user's git settings holding only what `kept` keeps, to put in front of the
    originals: git needs the name and e-mail, not the keys some setups keep there (private Go
    modules: `url."https://TOKEN@host/".insteadOf`, `github.token`, an inline credential helper)."""
    binds: list[tuple[Path, Path]] = []
    for index, original in enumerate((home / ".gitconfig", home / ".config" / "git" / "config")):
        if not original.exists():
            continue
        copy = folder / f"gitconfig-{index}"
        copy.write_text(kept(original) if original.is_file() else "")
        binds.append((copy, original))
    return binds


def _leave_session_keyring(libc: ctypes.CDLL) -> None:  # pragma: no cover - runs in the child
    """Join a new, empty session keyring. Landlock and the namespaces do not govern `keyctl`, so
    a command would read every key of the agent's session keyring (`keyctl add user … @s`, a
    login's keyring, Kerberos or cifs tools). No keys in the kernel (ENOSYS) or keyctl refused
    by a seccomp filter (EPERM, Docker's default): the command cannot reach them either."""
    if _SYS_KEYCTL is None:
        return
    if libc.syscall(_SYS_KEYCTL, _KEYCTL_JOIN_SESSION_KEYRING, None) < 0 and ctypes.get_errno() not in (errno.ENOSYS, errno.EPERM):
        os._exit(126)


def _view_fields(view: View) -> dict[str, object]:
    return {
        "shm": str(view.shm), "keep": [str(p) for p in view.keep], "hide": [str(p) for p in view.hide],
        "blanks": str(view.blanks) if view.blanks is not None else None,
        "binds": [[str(source), str(target)] for source, target in view.binds], "read_only": [str(p) for p in view.read_only],
    }


def _view_from(fields: dict[str, object]) -> View:
    def paths(key: str) -> tuple[Path, ...]:
        return tuple(Path(p) for p in fields[key])  # type: ignore[attr-defined]

    blanks = fields["blanks"]
    binds = tuple((Path(source), Path(target)) for source, target in fields["binds"])  # type: ignore[attr-defined]
    return View(Path(str(fields["shm"])), paths("keep"), paths("hide"), Path(str(blanks)) if blanks else None, binds, paths("read_only"))


def confine_from_file(path: str) -> None:  # pragma: no cover - runs in a launcher before it execs
    """Confine this process as `Sandbox.save_confinement` wrote it down; exit 126 when that
    cannot be done (never run the program less confined than the session says)."""
    try:
        spec = json.loads(Path(path).read_text())
        network = bool(spec["network"])
        ruleset = build_ruleset(int(spec["abi"]), [(Path(p), int(a)) for p, a in spec["grants"]], network)
        enter = enter_namespaces(network, _view_from(spec["view"])) if spec["view"] is not None else None
    except (OSError, ValueError, KeyError, TypeError):
        os._exit(126)
    restrict(ruleset, enter)()


def restrict_with_own_proc(abi: int, grants: list[tuple[Path, int]], network: bool, enter: Callable[[], None]) -> Callable[[], None]:
    """`restrict` for a command in a PID namespace of its own, with its ruleset made in the child:
    it must also grant the namespace's `/proc`, which exists only once `enter` mounted it (a rule
    is bound to the mount's own files, and the session's grant of /proc is one on the machine's),
    and a rule added to the session's ruleset would stay there for every later command. The paths
    are opened before `enter`, as the agent sees them."""
    libc = _libc()

    def confine() -> None:  # pragma: no cover - runs in the child
        _leave_session_keyring(libc)
        try:
            ruleset = build_ruleset(abi, grants, network)
        except OSError:
            os._exit(126)
        enter()
        try:
            _grant(libc, ruleset, Path("/proc"), READ)
        except OSError:
            os._exit(126)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            os._exit(126)

    return confine


def restrict(ruleset: int, enter: Callable[[], None] | None) -> Callable[[], None]:
    """The child's confinement: a session keyring of its own, its namespaces if given, then
    `no_new_privs` and the ruleset."""
    libc = _libc()

    def confine() -> None:  # pragma: no cover - runs in the child
        _leave_session_keyring(libc)
        if enter is not None:
            enter()
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            os._exit(126)  # never run a command unconfined because confining it failed

    return confine
