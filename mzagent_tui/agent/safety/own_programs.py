"""The one way mzagent runs programs for itself: git (file lists, snapshots, history scans),
`bash -n`, probes. Never the model's commands (tools/process.py runs those).

Why one way: a project arrives with its own `.git/config`, and git obeys it. `core.fsmonitor`
runs a program on `git ls-files`, a partial clone's `uploadpack` runs when a missing object is
looked up, hooks run when an index is written, and a nested repository's config runs at the next
snapshot. These ran outside the sandbox, with the agent's environment (API keys included),
before anybody was asked. So every program started here:

- gets an allow-listed environment (`BASE_ENV`: no keys, no `GIT_*` of the user's), and is
  found, with whatever it starts by name, on the trusted PATH (trusted_path.py: no folder of
  the project or the temp folders, where the model can put a `git` of its own);
- runs confined like a command in the sandbox (Landlock, and its own network and mount
  namespaces where they work), reading as a command may and writing only the folders the caller
  names (a snapshot's private repository), even when the user turned the sandbox off;
- and git runs with `GIT_HARDENING`, command-line settings that outrank every config file and
  that git hands on to the git it runs inside nested repositories: no fsmonitor, no hooks, no
  lazy fetch, no transport at all, no credential helper, no bare repository found by searching,
  no system or user config.

tests/test_own_programs.py fails if any other module of the package starts a process, with the
command runner and the local model server as the two named exceptions.
"""

from __future__ import annotations

import atexit
import functools
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from mzagent_tui.agent.ground.textfiles import read_git_pointer
from mzagent_tui.agent.safety import sandbox, trusted_path

GIT_HARDENING = (
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "protocol.allow=never",
    "-c", "credential.helper=",
    "-c", "core.sshCommand=false",
    "-c", "core.askPass=false",
    "-c", "core.gitProxy=false",
    "-c", "core.pager=cat",
    "-c", "core.untrackedCache=false",
    "-c", "safe.bareRepository=explicit",
    "-c", "submodule.recurse=false",
    "-c", "diff.ignoreSubmodules=all",
    "-c", "log.showSignature=false",
    "-c", "gpg.program=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
    "--no-pager",
    "--no-replace-objects",
)
"""Everything in git that runs a program or reaches a remote, off. Filter and textconv drivers
and external diffs are named by the repository, so they cannot be switched off here by name:
no command run here asks for content through them (no checkout, `--no-textconv`,
`--no-ext-diff`), and the snapshots' own repository, whose config is ours, is the only one
whose `git add` reads file contents."""
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_ALLOW_PROTOCOL": "",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",
}
"""No system or user config (a private, empty global one), no lazy fetch of a partial clone, no
transport, no prompt, no locks taken by commands that only read."""
USER_CONFIG_NAMES = ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_COUNT")
"""Where the user's git finds its system and user config (HOME is in every program's
environment), and the settings the environment itself adds (`GIT_CONFIG_KEY_n`)."""
BASE_ENV_NAMES = ("PATH", "HOME", "TZ")
"""The only variables a program of ours inherits; everything else is set here."""


def user_config_env() -> dict[str, str]:
    """GIT_ENV for a question about the user's own git: the system and user config are the
    ones the user's environment names (`GIT_CONFIG_KEY_n` included), not none."""
    env = {name: value for name, value in GIT_ENV.items() if name not in ("GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL")}
    env.update((name, os.environ[name]) for name in USER_CONFIG_NAMES if name in os.environ)
    count = os.environ.get("GIT_CONFIG_COUNT", "")
    for index in range(int(count) if count.isdigit() else 0):
        env.update((name, os.environ[name]) for name in (f"GIT_CONFIG_KEY_{index}", f"GIT_CONFIG_VALUE_{index}") if name in os.environ)
    return env


def user_config_files() -> list[Path]:
    """The system and user config files the user's git reads, as its environment names them.
    The system one is git's compiled-in `/etc/gitconfig` unless GIT_CONFIG_SYSTEM says
    otherwise (a git built with another prefix reads its own: it is not looked for)."""
    home = Path(os.environ.get("HOME", "/"))
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    user = [Path(os.environ["GIT_CONFIG_GLOBAL"])] if "GIT_CONFIG_GLOBAL" in os.environ else [xdg / "git" / "config", home / ".gitconfig"]
    no_system = os.environ.get("GIT_CONFIG_NOSYSTEM", "").lower() in ("1", "true", "yes", "on")
    system = [] if no_system else [Path(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")]
    return [path for path in (*system, *user) if str(path) != os.devnull]


def base_env() -> dict[str, str]:
    """PATH is the trusted one: an empty or relative entry (`:/usr/bin`, `.`) or an activated
    `.venv/bin` would find the project's own `git` first."""
    env = {name: os.environ[name] for name in BASE_ENV_NAMES if name in os.environ}
    env["PATH"] = trusted_path.trusted_path(env.get("PATH", os.defpath))
    env["LC_ALL"] = "C"  # git's messages are read (snapshots look for "Permission denied")
    return env


def _readable(home: Path, private: tuple[Path, ...], keep: tuple[Path, ...], covered: tuple[str, ...]) -> tuple[tuple[Path, int], ...]:
    """What of `/` our programs read. The folders they need change it only through the home's
    hidden links they keep open, so the walk of `/` is made once per set of those, not once per
    project; `covered`: the folders their view covers, not walked (`sandbox.readable_grants`)."""
    return _readable_around(home, private, frozenset(sandbox.hidden_link_targets(home, sandbox.HOME_ALLOWED, keep)), covered)


@functools.cache
def _readable_around(home: Path, private: tuple[Path, ...], link_targets: frozenset[Path], covered: tuple[str, ...]) -> tuple[tuple[Path, int], ...]:
    return tuple(sandbox.grants_around(home, sandbox.HOME_ALLOWED, private, link_targets, covered))


def _closed(path: Path) -> bool:
    """A folder a repository's answer names that our git never reads: the app's private folders
    (a planted `.git/commondir` makes `git rev-parse` name another project's snapshots) and the
    home's secret entries."""
    from mzagent_tui.agent.config import app_folders  # config imports much; only needed here

    home = os.path.realpath(Path.home())
    real = os.path.realpath(path)
    closed = (*(os.path.realpath(p) for p in app_folders()), *(os.path.join(home, e) for e in sandbox.SECRET_HOME_ENTRIES))
    return any(sandbox.within(real, folder) for folder in closed)


MAX_RULESETS = 64
"""Rulesets kept open at once: a session needs a handful, but an ACP server opens a session per
folder and a test worker thousands, and each is a descriptor until it is closed."""
_rulesets: OrderedDict[tuple[object, ...], int] = OrderedDict()
_rulesets_lock = threading.Lock()


def _ruleset(
    home: Path, private: tuple[Path, ...], readable: tuple[Path, ...], writable: tuple[Path, ...], kept: tuple[str, ...], covered: tuple[str, ...],
) -> int:
    """One ruleset per home, folders read, folders written and folders kept in the view, kept
    for later runs; the least recently used is closed past `MAX_RULESETS`. The folders read are
    granted by name as well: one made after the home was walked (a project created during the
    session) is not in the walk."""
    key = (home, private, readable, writable, kept, covered)
    with _rulesets_lock:
        if key in _rulesets:
            _rulesets.move_to_end(key)
            return _rulesets[key]
        grants = [
            *_readable(home, private, (*readable, *writable), covered), *sandbox.kept_grants(kept, home, private),
            *((path, sandbox.READ) for path in readable), *((path, sandbox.FULL) for path in writable),
        ]
        _rulesets[key] = fd = sandbox.build_ruleset(sandbox.landlock_abi(), grants, network=False)
        if len(_rulesets) > MAX_RULESETS:
            os.close(_rulesets.popitem(last=False)[1])
        return fd


@functools.cache
def _folder(kind: str) -> Path:
    """A private folder of this process: an empty `/dev/shm` for our programs (they use none),
    the blanks that cover what they do not see."""
    folder = Path(tempfile.mkdtemp(prefix=f"mzagent-own-{kind}-"))
    from mzagent_tui.agent.ground import leftovers

    leftovers.note(folder)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _confine(readable: Iterable[Path], writable: Iterable[Path], seen: Iterable[Path] = ()) -> Callable[[], None] | None:
    """The child's confinement: None where Landlock is not available (the hardening still holds).
    `seen` are kept in the view (not hidden under /tmp), read only as a command could read them."""
    if sandbox.landlock_abi() <= 0:
        return None
    from mzagent_tui.agent.config import app_folders  # config imports much; only needed here

    def real(paths: Iterable[Path]) -> tuple[Path, ...]:
        return tuple(sorted({Path(os.path.realpath(p)) for p in paths}))

    home = Path(os.path.realpath(Path.home()))
    readable, writable, private = real(readable), real(writable), real(app_folders())
    if not sandbox.namespaces_work():
        return sandbox.restrict(_ruleset(home, private, readable, writable, (), ()), None)
    view = _view(home, (*readable, *writable, *real(seen), *real(sandbox.program_folders())))
    covered, kept = sandbox.covered_and_kept(view.keep, network=False)
    return sandbox.restrict(_ruleset(home, private, readable, writable, tuple(kept), tuple(covered)), sandbox.enter_namespaces(network=False, view=view))


@functools.cache
def _view(home: Path, keep: tuple[Path, ...]) -> sandbox.View:
    """What our programs see: the folders they work in, the home without its unlisted dot-entries,
    no /tmp or /run of other programs (no Unix socket of the user's to connect to)."""
    hide = tuple(sandbox.hidden_home_entries(home, sandbox.HOME_ALLOWED, keep))
    return sandbox.View(_folder("shm"), (*keep, home), hide, blanks=sandbox.make_blanks(_folder("blanks")))


def run(
    argv: list[str],
    cwd: Path,
    *,
    timeout: float,
    input: bytes = b"",
    env: Mapping[str, str] | None = None,
    readable: Iterable[Path] = (),
    writable: Iterable[Path] = (),
    seen: Iterable[Path] = (),
) -> subprocess.CompletedProcess[bytes]:
    """Run a program of ours to completion: it reads what a confined command reads, plus `cwd`
    and `readable`, and writes only `writable`. `env` is added to `base_env()`. Raises OSError
    (FileNotFoundError for a program not on the trusted PATH) and subprocess.TimeoutExpired (the
    process is killed) as `subprocess.run` does."""
    return subprocess.run(
        _trusted(argv), cwd=cwd, input=input, capture_output=True, timeout=timeout, check=False,
        env={**base_env(), **(env or {})}, preexec_fn=_confine((cwd, *readable), writable, seen),
    )


def start(
    argv: list[str], cwd: Path, *, env: Mapping[str, str] | None = None, readable: Iterable[Path] = (), seen: Iterable[Path] = (),
) -> subprocess.Popen[bytes]:
    """Start a program of ours, read-only, that the caller talks to through its stdin and stdout."""
    return subprocess.Popen(
        _trusted(argv), cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={**base_env(), **(env or {})}, preexec_fn=_confine((cwd, *readable), (), seen),
    )


Holder = subprocess.Popen
"""A program `hold` started (its type, named here: only this module names what starts one)."""


def hold(argv: list[str], enter: Callable[[], None]) -> subprocess.Popen[bytes]:
    """Start a program of ours that only holds something for the session (its namespaces:
    shared_network.py): `enter` runs before its exec, its stdin is a pipe the caller closes to
    end it (the kernel closes it when the agent dies), its output goes nowhere."""
    return subprocess.Popen(
        _trusted(argv), cwd="/", stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=base_env(), preexec_fn=enter,
    )


def git(
    *args: str,
    cwd: Path,
    timeout: float,
    input: bytes = b"",
    env: Mapping[str, str] | None = None,
    readable: Iterable[Path] = (),
    writable: Iterable[Path] = (),
    user_config: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """`git ARGS` with the hardening. `env` may name the repository (GIT_DIR, GIT_WORK_TREE,
    GIT_INDEX_FILE), which is then readable too. `readable` comes from a repository's answers
    (its git dir, its common dir), so a private or secret folder there is not granted.
    `user_config`: git also reads the system and user config, as the user's git does (where
    the user's next `git commit` finds its hooks); the hardening still outranks them."""
    env = {**(user_config_env() if user_config else GIT_ENV), **(env or {})}
    named, seen = _git_paths(cwd, env)
    readable = [*readable, *(path for path in user_config_files() if user_config and path.exists())]
    return run(
        ["git", *GIT_HARDENING, *args], cwd, timeout=timeout, input=input, env=env,
        readable=[*(path for path in readable if not _closed(path)), *named], writable=writable, seen=seen,
    )


def git_head(*args: str, cwd: Path, limit: int, timeout: float, readable: Iterable[Path] = ()) -> tuple[bytes, int | None]:
    """The first `limit` bytes `git ARGS` prints (hardened, read-only, as `git` runs it) and its
    exit code; None instead of a code when it printed more than `limit` or ran past `timeout`
    (it is killed then): a caller scanning the output knows whether it saw all of it, and never
    holds more than `limit`."""
    env = dict(GIT_ENV)
    named, seen = _git_paths(cwd, env)
    process = start(["git", *GIT_HARDENING, *args], cwd, env=env, readable=[*(path for path in readable if not _closed(path)), *named], seen=seen)
    late = threading.Event()

    def stop() -> None:
        late.set()
        process.kill()

    timer = threading.Timer(timeout, stop)
    timer.start()
    data = bytearray()
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.close()
        while len(data) <= limit:
            piece = os.read(process.stdout.fileno(), 1 << 16)
            if not piece:
                break
            data += piece
        if len(data) > limit:
            process.kill()
        process.wait()
    finally:
        timer.cancel()
        if process.returncode is None:  # an error above: it must not outlive the call
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
    return bytes(data[:limit]), None if late.is_set() or len(data) > limit else process.returncode


def git_process(*args: str, cwd: Path, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A long-running `git ARGS` (`cat-file --batch`) with the hardening, read-only."""
    env = {**GIT_ENV, **(env or {})}
    named, seen = _git_paths(cwd, env)
    return start(["git", *GIT_HARDENING, *args], cwd, env=env, readable=named, seen=seen)


def _git_paths(cwd: Path, env: Mapping[str, str]) -> tuple[list[Path], list[Path]]:
    """What git reads to find its repository: the folders `env` names (granted), else those its
    search from `cwd` reaches (only kept in the view)."""
    named = [Path(env[name]) for name in ("GIT_DIR", "GIT_WORK_TREE") if env.get(name)]
    return (named, []) if named else ([], _git_reaches(cwd))


def _git_reaches(cwd: Path) -> list[Path]:
    """The folders git's search for the repository reaches: the nearest folder up from `cwd`
    holding a `.git`, the folder a `.git` file names (`gitdir:`, a submodule's or a linked
    worktree's) and the repository that one shares (`commondir`). Read here as git reads them, so that
    git's view shows what it will look for (a worktree under /tmp whose repository is elsewhere
    under /tmp); Landlock still decides what it may read (a `gitdir:` into `~/.password-store`
    stays unreadable)."""
    for folder in (cwd, *cwd.parents):
        dot = folder / ".git"
        if not os.path.lexists(dot):
            continue
        found = [folder]
        git_dir = dot
        if not dot.is_dir():
            target = read_git_pointer(dot, "gitdir: ")
            if not target:
                return found
            git_dir = Path(os.path.normpath(folder / target))
            found.append(git_dir)
        common = read_git_pointer(git_dir / "commondir")
        if common:
            found.append(Path(os.path.normpath(git_dir / common)))
        return found
    return []


def _trusted(argv: list[str]) -> list[str]:
    """`argv` with its program as the absolute file the trusted PATH finds."""
    program = trusted_path.which(argv[0])
    if program is None:
        raise FileNotFoundError(f"{argv[0]} is not found on the trusted PATH (the project and temp folders are left out)")
    return [program, *argv[1:]]


def have_git() -> bool:
    return trusted_path.which("git") is not None


def signal_reset_prefix() -> str:
    """`/usr/bin/env --default-signal=INT,QUIT` where this `env` has it (GNU coreutils 8.31+),
    else nothing: the command runner's supervising shell puts it before each command, so `env`
    is named by its trusted absolute path, never looked up on the command's PATH."""
    program = trusted_path.which("env")
    return _signal_reset(program) if program else ""


@functools.cache
def _signal_reset(program: str) -> str:
    prefix = [program, "--default-signal=INT,QUIT"]
    try:
        ok = run([*prefix, "true"], Path("/"), timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return shlex.join(prefix) if ok else ""
