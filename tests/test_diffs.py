"""Every change the agent makes carries a unified diff: writes, files a command changed, new
files (all added), deleted files (all removed); binary files carry none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mzagent_tui.agent.events import FileChanged, event_from_dict
from mzagent_tui.agent.ground.diffs import MAX_DIFF_LINES, file_diff, is_binary
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, read_reply, write_reply


def test_a_write_carries_its_diff_and_counts(server, project: Path) -> None:
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    server.script(read_reply("calc.py"), write_reply("calc.py", "def add(a, b):\n    return a + b\n"), answer_reply())
    agent, rec = make_agent(server, project)
    agent.run("fix calc.py")
    [change] = rec.of(FileChanged)
    assert change.diff.splitlines() == [
        "--- a/calc.py", "+++ b/calc.py", "@@ -1,2 +1,2 @@", " def add(a, b):", "-    return a - b", "+    return a + b",
    ]
    assert (change.added, change.removed) == (1, 1)
    assert change.summary(project) == "changed calc.py (+1 −1)"


def test_a_new_file_is_all_added(server, project: Path) -> None:
    server.script(write_reply("notes/a.md", "one\ntwo\n"), answer_reply())
    agent, rec = make_agent(server, project)
    agent.run("t")
    [change] = rec.of(FileChanged)
    assert change.diff.splitlines()[:3] == ["--- /dev/null", "+++ b/notes/a.md", "@@ -0,0 +1,2 @@"]
    assert change.summary(project) == "created notes/a.md (+2 −0)"


def test_files_a_command_changed_carry_diffs_too(server, project: Path) -> None:
    (project / "a.txt").write_text("old\n")
    (project / "gone.txt").write_text("bye\n")
    server.script(Reply('<action>run_terminal_command("echo new > a.txt && rm gone.txt && printf x > made.txt && printf \'\\\\0\\\\1\' > bin.dat")</action>'), answer_reply())
    agent, rec = make_agent(server, project)
    agent.run("t")
    changes = {Path(c.path).name: c for c in rec.of(FileChanged)}
    assert "-old\n+new\n" in changes["a.txt"].diff
    assert changes["gone.txt"].deleted and changes["gone.txt"].diff.splitlines()[:2] == ["--- a/gone.txt", "+++ /dev/null"]
    assert changes["made.txt"].diff.endswith("+x\n\\ No newline at end of file\n")
    assert changes["bin.dat"].diff == "" and changes["bin.dat"].summary(project) == "created bin.dat (binary file created, 2 bytes)"
    assert changes["a.txt"].binary_size is None and changes["gone.txt"].binary_size is None


@pytest.mark.parametrize(
    ("data", "binary"),
    [
        (b"plain text\n", False),
        ("héllo wörld\n".encode(), False),
        ("é".encode()[:1], False),  # a character cut at the end of what was read
        (b"a\x00b", True),
        (b"x" * 7999 + b"\x00", True),
        (b"x" * 8000 + b"\x00", False),  # git looks at the first 8000 bytes only
        (b"caf\xe9\n", True),  # Latin-1: not UTF-8, would show U+FFFD
        (b"\xff\xfe", True),
    ],
)
def test_binary_is_decided_as_git_does_and_by_utf8(data: bytes, binary: bool) -> None:
    assert is_binary(data) is binary


def test_secrets_are_redacted_from_diffs(server, project: Path) -> None:
    server.script(write_reply("k.txt", "key=sk-test-secret-key-1234\n"), answer_reply())
    agent, rec = make_agent(server, project)
    agent.run("t")
    assert "sk-test-secret-key-1234" not in rec.of(FileChanged)[0].diff


def test_the_diff_survives_the_log() -> None:
    change = FileChanged("/p/a.py", created=False, diff="--- a/a.py\n+++ b/a.py\n", added=3, removed=1)
    assert event_from_dict(json.loads(json.dumps(change.to_dict()))) == change
    old_record = {k: v for k, v in change.to_dict().items() if k not in ("diff", "added", "removed")}
    assert event_from_dict(old_record) == FileChanged("/p/a.py", created=False)


def test_a_huge_change_is_cut_but_counted() -> None:
    old = "".join(f"line {i}\n" for i in range(30_000)).encode()
    new = "".join(f"LINE {i}\n" for i in range(30_000)).encode()
    diff = file_diff("big.txt", old, new)
    assert diff is not None and (diff.added, diff.removed) == (30_000, 30_000)
    assert diff.text.count("\n") == MAX_DIFF_LINES + 1 and diff.text.endswith(f"[diff cut at {MAX_DIFF_LINES} lines]\n")
