"""read_file / write_to_file against real files: containment, bad input, atomicity, backups."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mzagent_tui.agent.events import FileChanged
from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy, PolicyApprover, StaticApprover
from mzagent_tui.agent.safety.approval_requests import ApprovalRequest, SecretReadApproval
from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.files import READ_MAX_LINES, FileTools
from mzagent_tui.agent.tools.registry import ToolRegistry
from tests.conftest import Recorder, make_agent
from tests.scripted_server import answer_reply, last_user, read_reply


@pytest.fixture
def tools(project: Path, tmp_path: Path) -> tuple[ToolRegistry, Recorder, Session, ToolContext]:
    recorder = Recorder()
    session = Session(tmp_path / "session", Redactor(["sk-very-secret-value"]))
    ctx = ToolContext(project, session, recorder, PolicyApprover(StaticApprover(False), Policy()), session.redact, env={})
    files = FileTools(ctx)
    return ToolRegistry([files.read_file, files.write_to_file]), recorder, session, ctx


def read(tools, *args) -> tuple[str, bool]:  # noqa: ANN001
    result = tools[0].call("read_file", list(args))
    return result.text, result.ok


def write(tools, *args) -> tuple[str, bool]:  # noqa: ANN001
    result = tools[0].call("write_to_file", list(args))
    return result.text, result.ok


def test_read_relative_and_absolute(tools, project: Path) -> None:
    (project / "a.txt").write_text("hello\n")
    assert read(tools, "a.txt") == ("hello\n", True)
    assert read(tools, str(project / "a.txt")) == ("hello\n", True)


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "~/.ssh/id_rsa", "../proj-evil/x", "sub/../../x"])
def test_paths_outside_the_root_are_refused(tools, project: Path, path: str) -> None:
    evil = project.parent / "proj-evil"
    evil.mkdir(exist_ok=True)
    (evil / "x").write_text("secret")
    text, ok = read(tools, path)
    assert not ok and "outside the project" in text
    assert "secret" not in text and "root:" not in text
    text, ok = write(tools, path, "pwned")
    assert not ok and "outside the project" in text
    assert (evil / "x").read_text() == "secret"


def test_sibling_with_common_prefix_is_outside(tools, project: Path) -> None:
    sibling = Path(str(project) + "-evil")
    sibling.mkdir()
    (sibling / "x").write_text("secret")
    text, ok = read(tools, str(sibling / "x"))
    assert not ok and "outside" in text


def test_symlink_escapes_are_refused(tools, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    (project / "link.txt").symlink_to(outside / "secret.txt")
    (project / "linkdir").symlink_to(outside, target_is_directory=True)
    for path in ("link.txt", "linkdir/secret.txt"):
        text, ok = read(tools, path)
        assert not ok and "outside" in text and "top secret" not in text
    text, ok = write(tools, "linkdir/new.txt", "x")
    assert not ok and not (outside / "new.txt").exists()


def test_symlink_inside_the_project_is_fine(tools, project: Path) -> None:
    (project / "real.txt").write_text("real")
    (project / "alias.txt").symlink_to(project / "real.txt")
    assert read(tools, "alias.txt") == ("real", True)


@pytest.mark.parametrize(("path", "fragment"), [("", "empty"), ("   ", "empty"), ("a\x00b", "NUL"), ("a" * 5000, "longer than"), (42, "must be a string")])
def test_bad_paths_are_validation_errors(tools, path, fragment: str) -> None:
    text, ok = read(tools, path)
    assert not ok and fragment in text
    text, ok = write(tools, path, "x")
    assert not ok and fragment in text


def test_missing_file_and_folder(tools, project: Path) -> None:
    (project / "sub").mkdir()
    (project / "sub" / "b.py").write_text("")
    text, ok = read(tools, "nope.py")
    assert not ok and "does not exist" in text
    text, ok = read(tools, "sub")
    assert ok and text == "sub is a folder. Its entries, one per line:\nb.py"


def test_binary_and_special_files_are_refused(tools, project: Path) -> None:
    (project / "img.bin").write_bytes(b"\x89PNG\x00\x00data")
    text, ok = read(tools, "img.bin")
    assert not ok and "binary" in text
    os.mkfifo(project / "pipe")
    started = time.monotonic()
    text, ok = read(tools, "pipe")
    assert not ok and "not a regular file" in text
    assert time.monotonic() - started < 30


def test_device_files_are_outside_or_refused(tools) -> None:
    text, ok = read(tools, "/dev/zero")
    assert not ok


def test_non_utf8_is_reported_not_replaced(tools, project: Path) -> None:
    (project / "latin.txt").write_bytes("café".encode("latin-1"))
    text, ok = read(tools, "latin.txt")
    assert not ok and "not UTF-8" in text and "0xe9" in text


def test_large_files_come_in_pages(tools, project: Path) -> None:
    lines = [f"line {i}\n" for i in range(1, 5001)]
    (project / "big.txt").write_text("".join(lines))
    text, ok = read(tools, "big.txt")
    assert ok and text.startswith("line 1\n")
    assert f"line {READ_MAX_LINES}\n" in text and f"line {READ_MAX_LINES + 1}\n" not in text
    assert f"read_file('big.txt', {READ_MAX_LINES + 1})" in text
    text, ok = read(tools, "big.txt", 4001)
    assert ok and text.startswith("line 4001\n") and "end of file" in text
    text, ok = read(tools, "big.txt", 9999)
    assert ok and "ends at line 5000, so there is nothing at line" in text


def test_huge_single_line_is_bounded(tools, project: Path) -> None:
    (project / "one.txt").write_text("x" * 3_000_000)
    text, ok = read(tools, "one.txt")
    assert ok and len(text) < 100_000


def test_write_creates_parents_and_reports(tools, project: Path) -> None:
    text, ok = write(tools, "deep/er/new.py", "a\nb\n")
    assert ok and "created" in text and "2 lines" in text
    assert (project / "deep/er/new.py").read_text() == "a\nb\n"
    events = tools[1].of(FileChanged)
    assert events and events[0].created and events[0].backup is None


def test_write_keeps_a_backup_of_the_previous_content(tools, project: Path) -> None:
    (project / "f.txt").write_text("old content")
    read(tools, "f.txt")
    text, ok = write(tools, "f.txt", "new content")
    assert ok and "overwrote" in text
    event = tools[1].of(FileChanged)[-1]
    assert not event.created and Path(event.backup).read_text() == "old content"
    assert (project / "f.txt").read_text() == "new content"


def test_write_is_exact_no_second_unescape(tools, project: Path) -> None:
    write(tools, "raw.py", 'print("a\\nb")')
    assert (project / "raw.py").read_text() == 'print("a\\nb")'


def test_crlf_and_bom_survive_a_read_modify_write(tools, project: Path) -> None:
    (project / "win.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    text, ok = read(tools, "win.txt")
    assert ok and text.startswith("one")
    write(tools, "win.txt", text.replace("\r\n", "\n") + "three\n")
    assert (project / "win.txt").read_bytes() == b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n"


def test_write_keeps_file_mode(tools, project: Path) -> None:
    script = project / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    write(tools, "run.sh", "#!/bin/sh\necho hi\n")
    assert script.stat().st_mode & 0o777 == 0o755


@pytest.mark.parametrize(("content", "fragment"), [(123, "must be a string"), ("x" * (11 * 1024 * 1024), "byte limit"), ("\ud800", "not valid text")])
def test_bad_content_is_a_validation_error(tools, project: Path, content, fragment: str) -> None:
    text, ok = write(tools, "c.txt", content)
    assert not ok and fragment in text
    assert not (project / "c.txt").exists()


def test_writing_a_folder_is_refused(tools, project: Path) -> None:
    (project / "d").mkdir()
    text, ok = write(tools, "d", "x")
    assert not ok and "folder" in text


def test_no_temp_files_are_left(tools, project: Path) -> None:
    for i in range(5):
        write(tools, "f.txt", f"v{i}")
    assert sorted(p.name for p in project.iterdir()) == ["f.txt"]


def test_sensitive_files_ask_first(project: Path, tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    class Recording:
        def __init__(self, answer: bool) -> None:
            self.answer = answer

        def approve(self, request: ApprovalRequest) -> ApprovalDecision:
            asked.append(request)
            return ApprovalDecision(self.answer)

    (project / ".env").write_text("TOKEN=sk-very-secret-value\nPLAIN=1\n")
    session = Session(tmp_path / "s", Redactor(["sk-very-secret-value"]))
    for answer in (False, True):
        ctx = ToolContext(project, session, Recorder(), Recording(answer), session.redact, env={})
        result = ToolRegistry([FileTools(ctx).read_file]).call("read_file", [".env"])
        if answer:
            assert result.ok and "PLAIN=1" in result.text
            assert "sk-very-secret-value" not in result.text and "[redacted]" in result.text
        else:
            assert not result.ok and "did not allow" in result.text
    assert [type(r) for r in asked] == [SecretReadApproval, SecretReadApproval]


def test_a_git_config_with_a_token_in_a_remote_url_asks_first_and_one_without_does_not(project: Path, tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    class Refusing:
        def approve(self, request: ApprovalRequest) -> ApprovalDecision:
            asked.append(request)
            return ApprovalDecision(False)

    (project / ".git").mkdir()
    (project / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/o/r.git\n')
    session = Session(tmp_path / "s", Redactor([]))
    tools = ToolRegistry([FileTools(ToolContext(project, session, Recorder(), Refusing(), session.redact, env={})).read_file])
    assert tools.call("read_file", [".git/config"]).ok and not asked
    (project / ".git" / "config").write_text('[remote "origin"]\n\turl = https://x-access-token:ghs_abc123@github.com/o/r.git\n')
    result = tools.call("read_file", [".git/config"])
    assert not result.ok and "did not allow" in result.text and [type(r) for r in asked] == [SecretReadApproval]


WRITER = """
import sys
from pathlib import Path
from mzagent_tui.agent.safety.approval import StaticApprover
from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.files import FileTools
root = Path(sys.argv[1])
session = Session(Path(sys.argv[2]), Redactor([]))
tools = FileTools(ToolContext(root, session, lambda e: None, StaticApprover(True), Redactor([]), env={}))
print("ready", flush=True)
i = 0
while True:
    i += 1
    tools.write_to_file("data.txt", str(i % 10) * 2_000_000)
"""


def test_kill_9_during_writes_never_leaves_a_truncated_file(project: Path, tmp_path: Path) -> None:
    (project / "data.txt").write_text("0" * 2_000_000)
    for delay in (0.15, 0.3, 0.45):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(project), str(tmp_path / "s")], stdout=subprocess.PIPE)
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(delay)
        proc.kill()
        proc.wait()
        data = (project / "data.txt").read_bytes()
        assert len(data) == 2_000_000 and len(set(data)) == 1


def test_a_missing_path_points_at_the_closest_existing_ones(tools, project: Path) -> None:
    for name in ("README.md", "src/app.py", "src/util.py", "docs/guide.md"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("x\n")
    assert read(tools, "docs/README.md") == ("Error: docs/README.md does not exist. Closest existing paths: README.md.", False)
    assert read(tools, "utils.py")[0].endswith("Closest existing paths: src/util.py.")
    assert read(tools, "doc/guide.md")[0].endswith("Closest existing paths: docs/guide.md.")
    assert "No similar path exists" in read(tools, "zzz/qqq.txt")[0]


@pytest.mark.parametrize(
    "task", ["Write the names of the files in the images folder, sorted, into images.txt.", "Make images.txt: the sorted names in images/."]
)
def test_a_missing_file_the_task_asks_for_is_said_to_be_made_not_found(server, project: Path, task: str) -> None:
    """A small model sorted images.txt before it had written it, then wrote the name of the sorted
    copy into images.txt; a path that is not the task's still gets the closest existing ones."""
    (project / "images").mkdir()
    (project / "images" / "cat.png").write_text("x")
    (project / "image.txt").write_text("x")
    server.script(
        read_reply("images.txt"),
        read_reply("imagez.txt"),
        answer_reply("Done."),
        answer_reply("Done."),
    )
    agent, _ = make_agent(server, project)
    agent.run(task)
    made = (
        "It is the file the task asks you to create, so there is nothing in it to read or use yet: work out its content "
        'from the other files, then write it with write_to_file("images.txt", ...).'
    )
    assert last_user(server.requests[1]) == f"<observation>Error: images.txt does not exist. {made}</observation>"
    assert last_user(server.requests[2]).startswith("<observation>Error: imagez.txt does not exist. Closest existing paths: image.txt")


def test_a_path_through_the_project_folder_s_own_name_is_said_to_be_the_folder_itself(server, tmp_path: Path) -> None:
    """Told the project folder's name, a small model ran `find project -name '*.txt'` from inside
    it, was told only that project does not exist, and made an empty folder named project; told
    "project does not exist" before the explanation, it still made the folder."""
    root = tmp_path / "shop"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    server.script(read_reply("shop/a.txt"), answer_reply("Done."))
    agent, _ = make_agent(server, root)
    agent.run("List the text files.")
    itself = (
        "shop is the name of the project folder itself, the current folder of every command and the start of every "
        "relative path: leave shop/ out of paths, and write . for the folder itself."
    )
    assert last_user(server.requests[1]) == f"<observation>Error: {itself} shop/a.txt is a.txt.</observation>"
    assert "does not exist" not in last_user(server.requests[1])


def test_a_write_that_changes_nothing_says_so_and_touches_nothing(tools, project: Path) -> None:
    """No write, no backup, no FileChanged: the loop counts a write of the same content again as
    a repeat, which a small model made until it was stopped."""
    (project / "same.py").write_text("x = 1\n")
    read(tools, "same.py")
    before = (project / "same.py").stat().st_mtime_ns
    text, ok = write(tools, "same.py", "x = 1\n")
    assert ok and text == "Nothing written: same.py already holds exactly this content (1 line, 6 bytes)."
    assert (project / "same.py").stat().st_mtime_ns == before
    assert not tools[1].of(FileChanged)
    text, ok = write(tools, "same.py", "x = 2\n")
    assert ok and "Nothing written" not in text and len(tools[1].of(FileChanged)) == 1


def test_a_new_file_gets_no_note(tools, project: Path) -> None:
    text, ok = write(tools, "fresh.py", "x = 1\n")
    assert ok and text == "File written: fresh.py (created, 1 line, 6 bytes)."


def test_a_read_past_the_end_says_the_file_was_all_shown(tools, project: Path) -> None:
    """A small model read a one-line file from line 2, 3, 4 and 5, told only "has only 1 lines"."""
    (project / "a.txt").write_text("foo one\n")
    text, ok = read(tools, "a.txt", 2)
    assert ok and text == (
        "[a.txt ends at line 1, so there is nothing at line 2: past its end. Reading further shows nothing more; go on with the task]"
    )


def test_content_split_into_pieces_is_shown_joined(tools, project: Path) -> None:
    """A small model passed a CSV's header and rows as two arguments, and three times did not
    follow "takes 2 arguments": the error shows the call with the pieces joined."""
    text, ok = write(tools, "scores.csv", "name,score\n", "Ann,90\nBo,\"85\"\n")
    assert not ok and text == (
        "Error: write_to_file takes (file_path: str, content: str); it was called with 3 argument(s). "
        'Its content is one string: join the pieces into one, as in write_to_file("scores.csv", ```\nname,score\nAnn,90\nBo,"85"\n```)'
    )
    assert not (project / "scores.csv").exists()
    text, _ = write(tools, "palette.py", "COLORS = [", "red", "green", "blue", "]\n\n\ndef pick():\n    return COLORS[0]\n")
    assert text.endswith("it was called with 6 argument(s). Its content is one string: join the pieces into one.")
    text, _ = write(tools, "big.txt", "x" * 1500, "y" * 1500)
    assert text.endswith("it was called with 3 argument(s). Its content is one string: join the pieces into one.")
    text, _ = write(tools, "a.txt", "x", 3)
    assert text.endswith("it was called with 3 argument(s).")


@pytest.mark.parametrize("target", ["a.txt/b.py", "a.txt/c/b.py"])
def test_a_path_through_a_file_is_said_as_such_not_as_a_link(tools, project: Path, target: str) -> None:
    """A path that goes through a file where a folder should be is the model's mistake: it was
    reported as "a folder or file was replaced by a link", which sent a small model hunting links."""
    (project / "a.txt").write_text("hi\n")
    text, ok = write(tools, target, "x = 1\n")
    assert not ok and "a.txt is a file, not a folder" in text and "link" not in text
    assert (project / "a.txt").read_text() == "hi\n"


def test_a_folder_swapped_for_a_link_is_still_said_as_a_link(tools, project: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (project / "sub").symlink_to(tmp_path / "elsewhere")
    text, ok = write(tools, "sub/b.py", "x = 1\n")
    assert not ok and not (tmp_path / "elsewhere" / "b.py").exists()
