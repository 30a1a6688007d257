"""The app as a user runs it, in a terminal (Textual draws on stderr, so both go to it): quitting ends the process even when a tool of the
run does not heed the cancel (a custom tool that sleeps), instead of waiting for it with the
screen gone."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from tests.scripted_server import Reply, answer_reply

CTRL_Q = b"\x11"


def _read_for(fd: int, seconds: float) -> bytes:
    """What the app draws in `seconds` (read so its writes never block on a full terminal)."""
    out = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    return out


def _wait_for(path: Path, fd: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        _read_for(fd, 0.2)
    return path.exists()


def test_quit_ends_the_app_while_a_custom_tool_ignores_the_cancel(server, project: Path, tmp_path: Path, isolated_home: Path) -> None:
    started = tmp_path / "tool-started"
    tool = tmp_path / "sleepy.py"
    tool.write_text(
        "import time\nfrom pathlib import Path\n\n\n"
        "def sleepy(seconds: str) -> str:\n"
        '    """Sleep, whatever the run says."""\n'
        f"    Path({str(started)!r}).write_text('yes')\n"
        "    time.sleep(float(seconds))\n"
        "    return 'slept'\n"
    )
    server.script(Reply('<thought>wait</thought><action>sleepy("300")</action>'), answer_reply())
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    app = subprocess.Popen(
        [sys.executable, "-m", "mzagent_tui", str(project), "--base-url", server.base_url, "--api-key", "sk-exit-test-1234", "--model", "m",
         "--sandbox", "off", "--tool", f"{tool}:sleepy"],
        stdin=terminal, stdout=terminal, stderr=terminal, env={**os.environ, "TERM": "xterm-256color"}, start_new_session=True,
    )
    os.close(terminal)
    try:
        drawn = b""
        deadline = time.monotonic() + 60
        while b"Describe a task" not in drawn and time.monotonic() < deadline:
            drawn += _read_for(controller, 0.2)
        assert b"Describe a task" in drawn, drawn[-2000:]
        _read_for(controller, 1)
        os.write(controller, b"go\r")
        assert _wait_for(started, controller, 60), "the tool never started"
        os.write(controller, CTRL_Q)
        deadline = time.monotonic() + 40
        while app.poll() is None and time.monotonic() < deadline:
            drawn += _read_for(controller, 0.2)
        drawn += _read_for(controller, 0.5)
        assert app.poll() == 0, "the app was still running 40 s after ctrl+q (the tool sleeps 300 s)"
        assert b"a tool was still running 5 s after the app closed; it was left behind" in drawn
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        os.close(controller)
