"""What an approved command changes is recorded (snapshots) and taken back by the same undo as
`write_to_file`, with the same refusal to discard the user's edits."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from mzagent_tui.agent.events import FileChanged, Notice, Observation
from mzagent_tui.agent.safety import trusted_path
from mzagent_tui.agent.sessions import snapshots
from mzagent_tui.agent.sessions.history import load_session
from mzagent_tui.agent.sessions.snapshots import SnapshotError, Snapshots
from mzagent_tui.agent.sessions.undo import UndoRefused, undo, write_label, writes_of
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, write_reply


def command_reply(command: str) -> Reply:
    return Reply(f"<thought>run it</thought><action>run_terminal_command({json.dumps(command)})</action>")


def run_steps(server, project: Path, *replies: Reply, env: dict[str, str] | None = None):  # noqa: ANN001, ANN201
    server.script(*replies, answer_reply())
    agent, rec = make_agent(server, project, env=env)
    agent.run("change things")
    return agent, rec


def events_of(agent):  # noqa: ANN001, ANN201
    return load_session(agent.session.folder).events


def git(project: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def files(project: Path) -> Path:
    (project / "keep.txt").write_bytes(b"line one\r\nline two\r\n")
    (project / "sub").mkdir()
    (project / "sub" / "gone.txt").write_text("I will be deleted\n")
    (project / "script.sh").write_text("#!/bin/sh\necho hi\n")
    (project / "script.sh").chmod(0o755)
    (project / ".gitignore").write_text("build/\n")
    return project


def test_bytecode_caches_are_recorded_but_not_told_to_the_model(server, project: Path) -> None:
    """A check that imports a module leaves __pycache__ behind; the observation does not list it."""
    command = "mkdir -p __pycache__ pkg/__pycache__ && echo x > __pycache__/m.pyc && echo y > pkg/__pycache__/n.pyc"
    _, rec = run_steps(server, project, command_reply(command), command_reply("echo z > __pycache__/m.pyc && echo new > made.txt"))
    assert sorted(Path(e.path).name for e in rec.of(FileChanged)) == ["m.pyc", "m.pyc", "made.txt", "n.pyc"]
    only_caches, with_file = (o.text for o in rec.of(Observation))
    assert "Files changed" not in only_caches
    assert with_file.endswith("Files changed by the command: made.txt (created).")


def test_a_commands_changes_are_recorded_and_undone_exactly(server, files: Path) -> None:
    project = files
    command = "sed -i 's/one/ONE/' keep.txt && rm -r sub && echo new > made.txt && mkdir -p build && echo x > build/out.o && ln -s keep.txt link"
    agent, rec = run_steps(server, project, command_reply(command))
    changed = {Path(e.path).name: e for e in rec.of(FileChanged)}
    assert sorted(changed) == ["gone.txt", "keep.txt", "made.txt"], "ignored files and symlinks are not recorded"
    assert changed["made.txt"].created and changed["gone.txt"].deleted and changed["gone.txt"].sha256 is None
    assert Path(changed["keep.txt"].backup).read_bytes() == b"line one\r\nline two\r\n"
    observation = rec.of(Observation)[0].text
    assert "Files changed by the command: keep.txt (modified), made.txt (created), sub/gone.txt (deleted)." in observation

    repository = agent.session.folder.parent / "snapshots.git"
    assert repository.stat().st_mode & 0o777 == 0o700, "copies of the project's files are the user's alone"
    shutil.rmtree(repository)  # only a cache: what undo needs was saved with the session
    done = undo(agent.session, events_of(agent), "last")
    assert len(done) == 3
    assert (project / "keep.txt").read_bytes() == b"line one\r\nline two\r\n"
    assert (project / "sub" / "gone.txt").read_text() == "I will be deleted\n"
    assert not (project / "made.txt").exists()
    assert (project / "build" / "out.o").exists(), "ignored output is not the command's to take back"
    assert (project / "script.sh").stat().st_mode & 0o777 == 0o755


def test_undo_of_a_command_refuses_after_a_user_edit_and_changes_nothing(server, files: Path) -> None:
    project = files
    agent, _ = run_steps(server, project, command_reply("echo more >> keep.txt && rm sub/gone.txt"))
    (project / "keep.txt").write_text("my own edit\n")
    with pytest.raises(UndoRefused, match="keep.txt was changed after the agent wrote it"):
        undo(agent.session, events_of(agent), "last")
    assert not (project / "sub" / "gone.txt").exists(), "all or nothing: the deleted file was not restored either"
    (project / "keep.txt").write_text("line one\r\nline two\r\nmore\n")
    (project / "sub" / "gone.txt").write_text("a new file of mine\n")
    with pytest.raises(UndoRefused, match="gone.txt was created again"):
        undo(agent.session, events_of(agent), "last")
    assert (project / "sub" / "gone.txt").read_text() == "a new file of mine\n"


def test_undo_last_takes_back_one_step_and_run_takes_back_writes_and_commands(server, project: Path) -> None:
    agent, _ = run_steps(server, project, write_reply("a.txt", "agent\n"), command_reply("echo more >> a.txt && touch b.txt"))
    writes = writes_of(events_of(agent))
    assert [write_label(w, project) for w in writes] == ["#1  run 1  created a.txt", "#2  run 1  overwrote a.txt", "#3  run 1  created b.txt"]
    done = undo(agent.session, events_of(agent), "last")
    assert [e.write for e in done] == [3, 2], "the command's step, both files"
    assert (project / "a.txt").read_text() == "agent\n" and not (project / "b.txt").exists()
    done = undo(agent.session, events_of(agent), "last")
    assert [e.write for e in done] == [1] and not (project / "a.txt").exists()


def test_the_projects_own_git_repository_is_left_alone(server, files: Path) -> None:
    project = files
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    index_before = (project / ".git" / "index").read_bytes()
    agent, rec = run_steps(server, project, command_reply("echo changed > keep.txt"))
    assert [Path(e.path).name for e in rec.of(FileChanged)] == ["keep.txt"]
    assert (project / ".git" / "index").read_bytes() == index_before
    assert git(project, "status", "--porcelain") == " M keep.txt\n"
    undo(agent.session, events_of(agent), "last")
    assert git(project, "status", "--porcelain") == ""


def test_without_git_commands_still_run_and_the_user_is_told_once(server, files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = files
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "echo", "cat", "rm"):
        found = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
        if found.startswith("/"):
            (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(trusted_path, "FALLBACK_PATH", str(bin_dir))  # a temp folder is never trusted: no git found at all
    _, rec = run_steps(server, project, command_reply("echo a > a.txt"), command_reply("rm a.txt"), env={"PATH": str(bin_dir)})
    assert not (project / "a.txt").exists(), "both commands ran"
    notices = [n.text for n in rec.of(Notice) if "not recorded" in n.text]
    assert notices == ["Files changed by commands are not recorded in this session, so undo cannot take them back: git is not installed."]
    assert rec.of(FileChanged) == []


def test_a_command_that_changes_nothing_says_nothing_about_files(server, files: Path) -> None:
    _, rec = run_steps(server, files, command_reply("cat keep.txt"))
    assert rec.of(FileChanged) == [] and "Files changed" not in rec.of(Observation)[0].text


def test_a_project_too_slow_to_snapshot_is_not_tried_again_by_later_sessions(files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sessions" / "one").mkdir(parents=True)
    (tmp_path / "sessions" / "two").mkdir()
    Snapshots(files, tmp_path / "sessions" / "one").take()  # creates the repository at full speed
    monkeypatch.setattr(snapshots, "SNAPSHOT_TIMEOUT", 0.000001)
    slow = Snapshots(files, tmp_path / "sessions" / "two")
    with pytest.raises(SnapshotError, match="took longer than"):
        slow.take()
    monkeypatch.setattr(snapshots, "SNAPSHOT_TIMEOUT", 30.0)
    with pytest.raises(SnapshotError, match="delete .*too-slow to try again"):
        Snapshots(files, tmp_path / "sessions" / "one").take()
    (tmp_path / "sessions" / "snapshots.git" / "too-slow").unlink()
    assert Snapshots(files, tmp_path / "sessions" / "one").take()


def test_a_formatter_changing_many_files_is_taken_back_in_one_step(server, project: Path) -> None:
    for n in range(30):
        (project / f"m{n:02}.py").write_text(f"x  =  {n}\n")
    agent, rec = run_steps(server, project, command_reply("for f in m*.py; do sed -i 's/  =  / = /' $f; done"))
    assert len(rec.of(FileChanged)) == 30
    assert rec.of(Observation)[0].text.endswith("m19.py (modified) and 10 more.")
    assert len(undo(agent.session, events_of(agent), "last")) == 30
    assert all((project / f"m{n:02}.py").read_text() == f"x  =  {n}\n" for n in range(30))
