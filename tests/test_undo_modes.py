"""Undo restores content and permissions, compared by sha256 and mode of every file of the
project before and after; unreadable files are left out of snapshots without stopping them."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from mzagent_tui.agent.events import FileChanged, Notice, Observation
from mzagent_tui.agent.sessions.history import load_session
from mzagent_tui.agent.sessions.undo import UndoRefused, undo
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, write_reply


def state(project: Path) -> dict[str, tuple[str, int]]:
    """Every file's digest and permission bits."""
    found = {}
    for path in sorted(project.rglob("*")):
        if path.is_file() and ".git" not in path.parts:
            found[path.relative_to(project).as_posix()] = (hashlib.sha256(path.read_bytes()).hexdigest(), stat.S_IMODE(path.stat().st_mode))
    return found


def command(text: str) -> Reply:
    return Reply(f"<thought>run</thought><action>run_terminal_command({json.dumps(text)})</action>")


def run(server, project: Path, *replies: Reply):  # noqa: ANN001, ANN201
    server.script(*replies, answer_reply())
    agent, recorder = make_agent(server, project, sandbox="off")
    agent.run("change things")
    return agent, recorder


def undo_last_run(agent) -> None:  # noqa: ANN001
    undo(agent.session, load_session(agent.session.folder).events, "run")


@pytest.fixture
def tree(project: Path) -> Path:
    (project / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (project / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    (project / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (project / "run.sh").chmod(0o755)
    (project / "a.txt").write_text("a\n")
    (project / "b.txt").write_text("b\n")
    (project / "c.txt").write_text("c\n")
    (project / "private.sh").write_text("#!/bin/sh\nexit 0\n")
    (project / "private.sh").chmod(0o750)
    (project / "secret.cfg").write_text("x=1\n")
    (project / "secret.cfg").chmod(0o640)
    return project


def test_writes_to_crlf_bom_and_executable_files_are_undone_exactly(server, tree: Path) -> None:
    before = state(tree)
    agent, _ = run(
        server, tree, command("cat crlf.txt bom.txt run.sh"),
        write_reply("crlf.txt", "ONE\nTWO\n"), write_reply("bom.txt", "bye\n"), write_reply("run.sh", "#!/bin/sh\necho bye\n"),
    )
    assert (tree / "crlf.txt").read_bytes() == b"ONE\r\nTWO\r\n" and stat.S_IMODE((tree / "run.sh").stat().st_mode) == 0o755
    undo_last_run(agent)
    assert state(tree) == before


def edit(path: str, old_text: str, new_text: str) -> Reply:
    return Reply(f"<thought>edit</thought><action>edit_file({json.dumps(path)}, {json.dumps(old_text)}, {json.dumps(new_text)})</action>")


def test_edits_to_crlf_bom_and_executable_files_are_undone_exactly(server, tree: Path) -> None:
    before = state(tree)
    agent, _ = run(server, tree, edit("crlf.txt", "two\n", "2\n"), edit("bom.txt", "", "more\n"), edit("run.sh", "echo hi", "echo bye"))
    assert (tree / "crlf.txt").read_bytes() == b"one\r\n2\r\n" and (tree / "bom.txt").read_bytes() == b"\xef\xbb\xbfhello\nmore\n"
    assert stat.S_IMODE((tree / "run.sh").stat().st_mode) == 0o755
    undo_last_run(agent)
    assert state(tree) == before


def test_a_command_that_modifies_three_deletes_a_750_file_and_creates_one_is_undone_exactly(server, tree: Path) -> None:
    before = state(tree)
    agent, recorder = run(server, tree, command("for f in a b c; do echo more >> $f.txt; done; rm private.sh; echo new > made.txt"))
    changed = {Path(e.path).name: e for e in recorder.of(FileChanged)}
    assert sorted(changed) == ["a.txt", "b.txt", "c.txt", "made.txt", "private.sh"]
    assert changed["private.sh"].deleted and changed["private.sh"].old_mode == 0o750
    undo_last_run(agent)
    assert state(tree) == before


def test_a_chmod_only_command_is_recorded_and_its_modes_undone(server, tree: Path) -> None:
    before = state(tree)
    agent, recorder = run(server, tree, command("chmod 600 secret.cfg && chmod 700 private.sh && chmod -x run.sh"))
    changed = {Path(e.path).name: e for e in recorder.of(FileChanged)}
    assert sorted(changed) == ["private.sh", "run.sh", "secret.cfg"]
    assert all(e.mode_only and e.backup is None for e in changed.values())
    assert changed["secret.cfg"].old_mode == 0o640
    assert "secret.cfg (permissions changed)" in recorder.of(Observation)[0].text
    undo_last_run(agent)
    assert state(tree) == before


def test_undo_refuses_after_the_user_edited_a_file_and_touches_nothing(server, tree: Path) -> None:
    agent, _ = run(server, tree, command("echo more >> a.txt; chmod 600 secret.cfg"))
    (tree / "a.txt").write_text("the user's edit\n")
    edited = state(tree)
    with pytest.raises(UndoRefused, match="a.txt was changed after the agent wrote it"):
        undo_last_run(agent)
    assert state(tree) == edited


FAKE_GIT = """#!/bin/sh
# git, but `add` cannot read locked.txt unless it is excluded (root reads any file, so the
# permission error is played here; what is tested is how the snapshots handle it)
case " $* " in
  *" add "*)
    case "$*" in
      *"exclude,literal)locked.txt"*) ;;
      *) echo 'error: open("locked.txt"): Permission denied' >&2; echo "error: unable to index file 'locked.txt'" >&2; echo 'fatal: adding files failed' >&2; exit 128 ;;
    esac ;;
esac
exec REAL_GIT "$@"
"""


def test_an_unreadable_file_is_named_and_left_out_while_the_rest_is_recorded(server, tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from mzagent_tui.agent.safety import trusted_path

    monkeypatch.setattr(trusted_path, "untrusted_folders", lambda *extra: (str(tree),))  # the fake git below lives in a temp folder, never trusted otherwise

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(FAKE_GIT.replace("REAL_GIT", shutil.which("git") or "git"))
    (bin_dir / "git").chmod(0o755)
    (tree / "locked.txt").write_text("no\n")
    old_path = os.environ["PATH"]
    os.environ["PATH"] = f"{bin_dir}:{old_path}"
    try:
        agent, recorder = run(server, tree, command("echo more >> a.txt; echo more >> locked.txt"))
    finally:
        os.environ["PATH"] = old_path
    assert [Path(e.path).name for e in recorder.of(FileChanged)] == ["a.txt"]
    notices = [n.text for n in recorder.of(Notice)]
    assert any("cannot be read: locked.txt" in n for n in notices)
    assert not any("not recorded in this session" in n for n in notices)
