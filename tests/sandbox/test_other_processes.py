"""Other processes of the user, out of a confined command's reach: another terminal's keystrokes,
another process's environment, command line, cwd, root and descriptors, the descriptors of the
agent, and the kernel keyrings of the agent's session and user. Secret values must not appear in
what the model is sent. (Rounds five, six and seven of the outside attacks.)
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.attack_helpers import command, needs_namespaces, needs_own_pids, needs_wall, run

# Another terminal of the user: keystrokes read from /dev/pts/N ---------------------------------


@needs_wall
def test_a_confined_command_cannot_read_the_keystrokes_of_another_terminal(server, project: Path, home: Path) -> None:
    """A terminal the user types in (a sudo password in another tab) is /dev/pts/N, the user's
    own device: writes to it are refused, but a read takes the keystrokes meant for its shell."""
    master, slave = os.openpty()
    name = os.ttyname(slave)

    def type_secret() -> None:
        for _ in range(40):
            time.sleep(0.1)
            os.write(master, b"typed-password-77aa\n")

    typist = threading.Thread(target=type_secret, daemon=True)
    typist.start()
    try:
        texts, _ = run(server, project, command(f"timeout 3 head -c 200 {name}; echo; ls -l {name}"))
    finally:
        typist.join()
        os.close(master)
        os.close(slave)
    assert "77aa" not in texts[0], texts[0]


# Another process of the user: its environment through /proc -----------------------------------


@needs_wall
def test_a_confined_command_cannot_read_the_environment_of_another_process_of_the_user(server, project: Path, home: Path) -> None:
    """The shell the user started mzagent from holds the key in its environment; it is not the
    agent, so hiding the agent's own secrets does not cover it."""
    import subprocess
    import sys

    shell = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env={**os.environ, "OPENAI_API_KEY": "sk-shell-key-77aa"})
    try:
        texts, _ = run(server, project, command(f"cat /proc/{shell.pid}/environ | tr '\\0' '\\n' | grep -a 77aa; cat /proc/{shell.pid}/cmdline"))
    finally:
        shell.kill()
        shell.wait()
    assert "sk-shell-key-77aa" not in texts[0]


# The session keyring the agent runs in ---------------------------------------------------------

_ADD_KEY, _REQUEST_KEY, _KEYCTL = 248, 249, 250
_KEYCTL_READ, _KEYCTL_REVOKE = 11, 3
_SESSION_KEYRING, _USER_KEYRING = -3, -4


def add_key(name: bytes, payload: bytes, keyring: int) -> int:
    """A `user` key in one of the agent's keyrings (its id, to revoke); skips where there are none."""
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        pytest.skip("the syscall numbers are x86_64 Linux's")
    key = ctypes.CDLL(None, use_errno=True).syscall(_ADD_KEY, b"user", name, payload, ctypes.c_size_t(len(payload)), ctypes.c_int(keyring))
    if key < 0:
        pytest.skip(f"no kernel keyrings here (errno {ctypes.get_errno()}: a seccomp filter or a kernel without keys)")
    return key


def revoke_key(key: int) -> None:
    ctypes.CDLL(None, use_errno=True).syscall(_KEYCTL, _KEYCTL_REVOKE, key)


@pytest.fixture
def session_key() -> Iterator[str]:
    """A `user` key in the agent's session keyring, as `keyctl add user NAME VALUE @s`, pam_keyinit's
    login keyring or a Kerberos/AFS/cifs tool leaves one; revoked at the end."""
    payload = b"session-keyring-secret-r6-77cc"
    key = add_key(b"r6-attack-key", payload, _SESSION_KEYRING)
    yield payload.decode()
    revoke_key(key)


@needs_wall
def test_a_confined_command_cannot_read_the_agents_session_keyring(server, project: Path, home: Path, session_key: str) -> None:
    code = (
        "import ctypes; l=ctypes.CDLL(None, use_errno=True); "
        "k=l.syscall(249, b'user', b'r6-attack-key', None, ctypes.c_int(0)); "
        "b=ctypes.create_string_buffer(100); n=l.syscall(250, 11, k, b, 100); "
        "print('ran', k, n, b.value.decode()[::-1])"
    )
    texts, _ = run(server, project, command(f'python3 -c "{code}"'))
    assert "ran" in texts[0], texts[0]
    assert session_key[::-1] not in texts[0], texts[0]


@needs_namespaces
def test_a_confined_command_cannot_read_the_users_keyring(server, project: Path, home: Path) -> None:
    """Held: the user keyring (`@u`: systemd's cached passwords, cifscreds) is one per user
    namespace since Linux 5.3, and the command has a user namespace of its own."""
    payload = b"user-keyring-secret-r6-77c1"
    key = add_key(b"r6-user-key", payload, _USER_KEYRING)
    try:
        code = (
            "import ctypes; l=ctypes.CDLL(None, use_errno=True); "
            "k=l.syscall(249, b'user', b'r6-user-key', None, ctypes.c_int(0)); "
            f"b=ctypes.create_string_buffer(100); n=l.syscall(250, 11, k, b, 100); m=l.syscall(250, 11, {key}, b, 100); "
            "print('ran', k, n, m, b.value.decode()[::-1])"
        )
        texts, _ = run(server, project, command(f'python3 -c "{code}"'))
    finally:
        revoke_key(key)
    assert "ran" in texts[0], texts[0]
    assert payload.decode()[::-1] not in texts[0], texts[0]


# The command lines of processes outside the sandbox ------------------------------------------


@needs_own_pids
def test_a_confined_command_cannot_read_the_command_line_of_a_process_outside(server, project: Path, home: Path) -> None:
    """Was a hole: commands shared the machine's /proc, and /proc/<pid>/cmdline is not
    ptrace-guarded, so a token on the command line of an MCP server mzagent started, or of any
    program of the user, was readable. Commands now have a PID namespace and a /proc of their own
    (tests/test_attacks_pid_namespace.py has its control)."""
    token = "cmdline-token-r6-77dd"
    outside = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", f"--token={token}"])
    try:
        # the pattern is assembled in a file so that no process of the command carries it whole
        script = (
            "printf '%s%s' cmdline-token- r6-77dd > pat.txt; "
            "for f in /proc/[0-9]*/cmdline; do grep -a -q -f pat.txt $f 2>/dev/null && echo found $f; done; echo ran"
        )
        texts, _ = run(server, project, command(script))
    finally:
        outside.kill()
        outside.wait()
    assert "ran" in texts[0], texts[0]
    assert f"/proc/{outside.pid}/cmdline" not in texts[0], texts[0]


@needs_wall
def test_the_cwd_root_and_fds_of_a_process_outside_stay_closed(server, project: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Held: /proc/<pid>/{cwd,root,fd} of a process the sandbox did not start are ptrace-guarded,
    and Landlock refuses ptrace access to a process outside the command's domain. Run without the
    PID namespace (where the kernel refuses one), in which the process would not be seen at all,
    so that this wall is the one tried."""
    from mzagent_tui.agent.safety import sandbox as sandbox_module

    monkeypatch.setattr(sandbox_module, "pid_namespace_works", lambda: False)
    secret = home / ".ssh" / "id_rsa"
    holder = subprocess.Popen([sys.executable, "-c", f"import time; f=open({str(secret)!r}); time.sleep(60)"], cwd=home / ".ssh")
    try:
        pid = holder.pid
        script = f"cat /proc/{pid}/cwd/id_rsa | rev; cat /proc/{pid}/root{secret} | rev; for f in /proc/{pid}/fd/*; do cat $f | rev; done; ls -d /proc/{pid} && echo ran"
        texts, _ = run(server, project, command(script))
    finally:
        holder.kill()
        holder.wait()
    assert f"/proc/{holder.pid}" in texts[0] and "ran" in texts[0], texts[0]
    assert "6r RESU EHT FO YEK ETAVIRP" not in texts[0], texts[0]


# What a command inherits besides its environment ---------------------------------------------


@needs_wall
def test_a_command_inherits_no_descriptor_of_the_agent(server, project: Path, home: Path) -> None:
    """Held: the agent's open files (the session log, the model connection, a snapshot's cat-file
    pipe) are not among the descriptors of the command or of its supervising shell."""
    script = (
        "python3 -c \"import os; print('fds', sorted(os.listdir('/proc/self/fd')))\"; "
        "for f in /proc/self/fd/* /proc/$PPID/fd/*; do echo \"$f -> $(readlink $f)\"; done; echo ran"
    )
    texts, _ = run(server, project, command(script))
    assert "ran" in texts[0] and "fds [" in texts[0], texts[0]
    links = [line for line in texts[0].splitlines() if " -> " in line]
    assert links, texts[0]
    for line in links:
        target = line.split(" -> ", 1)[1]
        assert "socket:" not in target and "log.jsonl" not in target and "sessions" not in target and "snapshots" not in target, line


# The keyring ------------------------------------------------------------------------------------

_KEYCTL_GET_PERSISTENT = 22


@needs_namespaces
def test_a_command_cannot_join_a_named_keyring_of_the_agents_user_or_its_persistent_keyring(server, project: Path) -> None:
    """Held: KEYCTL_JOIN_SESSION_KEYRING by the name of an existing keyring, the persistent keyring
    and linking @u/@us into the new session keyring reach only the command's own user namespace."""
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        pytest.skip("the syscall numbers are x86_64 Linux's")
    libc = ctypes.CDLL(None, use_errno=True)
    named = libc.syscall(_ADD_KEY, b"keyring", b"r7-named-ring", None, ctypes.c_size_t(0), ctypes.c_int(-3))
    if named < 0:
        pytest.skip(f"no kernel keyrings here (errno {ctypes.get_errno()})")
    payload = b"named-keyring-secret-r7-1a"
    key = libc.syscall(_ADD_KEY, b"user", b"r7-key", payload, ctypes.c_size_t(len(payload)), ctypes.c_int(named))
    persistent = libc.syscall(_KEYCTL, _KEYCTL_GET_PERSISTENT, -1, -3)
    pkey = libc.syscall(_ADD_KEY, b"user", b"r7-pkey", payload, ctypes.c_size_t(len(payload)), ctypes.c_int(persistent)) if persistent >= 0 else -1
    code = (
        "import ctypes; l=ctypes.CDLL(None, use_errno=True); b=ctypes.create_string_buffer(100)\n"
        "j=l.syscall(250, 1, b'r7-named-ring'); print('join', j, ctypes.get_errno())\n"
        "p=l.syscall(250, 22, -1, -3); print('persistent', p)\n"
        "l.syscall(250, 8, -4, -3); l.syscall(250, 8, -5, -3)\n"
        "for d in (-3, -4, -5, p):\n"
        " for name in (b'r7-key', b'r7-pkey'):\n"
        "  k=l.syscall(249, b'user', name, None, ctypes.c_int(0)); n=l.syscall(250, 11, k, b, 100); print('read', name, k, n, b.value.decode()[::-1])\n"
        f"for k in ({key}, {pkey}):\n"
        " n=l.syscall(250, 11, k, b, 100); print('byid', k, n, b.value.decode()[::-1])\n"
        "print('ran')\n"
    )
    (project / "probe.py").write_text(code)
    try:
        texts, _ = run(server, project, command("python3 probe.py"))
    finally:
        for k in (key, pkey, named):
            if k >= 0:
                libc.syscall(_KEYCTL, _KEYCTL_REVOKE, k)
    assert "ran" in texts[0], texts[0]
    assert payload.decode()[::-1] not in texts[0], texts[0]
