"""Sockets and the network from inside the sandbox: unix sockets of the user's in /var/tmp, under
the home's readable folders and in /tmp through the agent's root in /proc, UDP and DNS, and a
host listener after the command raises its own loopback. Listeners must see nothing. (Rounds four
and six of the outside attacks; one strict xfail is a hole still open.)
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.attack_helpers import Listener, command, needs_namespaces, run


def connect_code(path: str) -> str:
    code = f"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{path}'); s.send(b'attack'); print('CONNECTED')"
    return f'python3 -c "{code}"'


# Unix sockets of the user's outside /tmp, /run and the hidden home entries ------------------


@pytest.fixture
def var_tmp() -> Iterator[Path]:
    try:
        folder = Path(tempfile.mkdtemp(prefix="r4-", dir="/var/tmp")).resolve()
    except OSError:
        pytest.skip("/var/tmp is not writable here")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@needs_namespaces
def test_a_unix_socket_in_var_tmp_is_out_of_reach(server, project: Path, home: Path, var_tmp: Path) -> None:
    """/var/tmp is sticky and world-writable like /tmp (and survives reboots): emacs, tmux
    (`TMUX_TMPDIR`), dev servers put sockets there. The view covers /tmp and /run only."""
    path = var_tmp / "tmux-0" / "default"
    path.parent.mkdir()
    listener = Listener(socket.AF_UNIX, str(path))
    texts, _ = run(server, project, command(connect_code(str(path))))
    assert listener.close() == [] and "CONNECTED" not in texts[0]


@needs_namespaces
@pytest.mark.xfail(
    strict=True,
    reason="open: Landlock before LANDLOCK_ACCESS_FS_RESOLVE_UNIX does not govern connect() to a pathname socket, "
    "and the home's readable folders are the real ones in the view (see issue 39's note)",
)
@pytest.mark.parametrize("where", [".cache/pip", ".local/share/pnpm", "snap/app/common"])
def test_a_unix_socket_under_a_readable_home_folder_is_out_of_reach(server, project: Path, home: Path, where: str) -> None:
    """A socket under an allowed dot-folder, or under a plain home folder (`~/snap/...`)."""
    (home / where).mkdir(parents=True)
    path = home / where / "s.sock"
    listener = Listener(socket.AF_UNIX, str(path))
    texts, _ = run(server, project, command(connect_code(str(path))))
    assert listener.close() == [] and "CONNECTED" not in texts[0]


# /tmp's sockets through the agent's root in /proc ---------------------------------------------


@needs_namespaces
@pytest.mark.parametrize("via", ["root", "cwd"])
def test_tmp_sockets_are_out_of_reach_through_the_agents_proc_root(server, project: Path, home: Path, short: Path, via: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mount view hides /tmp, but /proc/<agent>/root is the agent's (unhidden) root."""
    (short / "tmux-0").mkdir()
    path = short / "tmux-0" / "default"
    listener = Listener(socket.AF_UNIX, str(path))
    if via == "cwd":
        monkeypatch.chdir(short)
        target = f"/proc/{os.getpid()}/cwd/tmux-0/default"
    else:
        target = f"/proc/{os.getpid()}/root{path}"
    texts, _ = run(server, project, command(connect_code(target)))
    assert listener.close() == [] and "CONNECTED" not in texts[0]


# UDP and DNS out -------------------------------------------------------------------------------


@needs_namespaces
def test_udp_and_dns_do_not_leave_the_sandbox(server, project: Path, home: Path) -> None:
    listener = Listener(socket.AF_INET, ("127.0.0.1", 0), socket.SOCK_DGRAM)
    port = listener.socket.getsockname()[1]
    code = (
        f"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        f"[s.sendto(b'udp-out', (h, {port})) for h in ('127.0.0.1', '::ffff:127.0.0.1') if not h.startswith(':')]; "
        "print(socket.getaddrinfo('example.com', 53)); print('RESOLVED')"
    )
    texts, _ = run(server, project, command(f'python3 -c "{code}"'))
    assert listener.close() == [] and "RESOLVED" not in texts[0]


@needs_namespaces
def test_a_command_cannot_reach_a_host_listener_after_raising_its_own_loopback(server, project: Path, home: Path) -> None:
    """Held: a command run by root keeps CAP_NET_ADMIN in its network namespace and may raise its
    loopback, but that loopback is its own; raw and ping sockets reach nothing either."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        code = (
            "import socket, fcntl, struct; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
            "r=fcntl.ioctl(s, 0x8913, struct.pack('16sh', b'lo', 0)); f=struct.unpack('16sh', r[:18])[1]; "
            "\ntry: fcntl.ioctl(s, 0x8914, struct.pack('16sh', b'lo', f | 1)); print('LO UP')\nexcept OSError as e: print('lo', e)\n"
            f"s.sendto(b'leak-r6', ('127.0.0.1', {port})); print('SENT')\n"
            "try:\n r=socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); r.sendto(b'\\x08\\x00\\xf7\\xff\\x00\\x00\\x00\\x00', ('127.0.0.1', 0)); print('RAW SENT')\n"
            "except OSError as e: print('raw', e)\n"
        )
        (project / "probe.py").write_text(code)
        texts, _ = run(server, project, command("python3 probe.py; echo ran"))
        with pytest.raises(TimeoutError):
            listener.recvfrom(100)
    assert "ran" in texts[0], texts[0]
