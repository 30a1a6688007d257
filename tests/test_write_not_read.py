"""The `write.not_read` aid: write_to_file replaces an existing file only once the model has seen
it (read it, written it, or named it in a command). A small model wrote a test file's content over
the code it had never looked at. The write tool itself writes what it is given."""

from __future__ import annotations

from pathlib import Path

from mzagent_tui.agent.events import AidFired, FileChanged, Observation, ToolStarted
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, last_user, read_reply, write_reply


def run(server, project: Path, *replies: Reply, disable: list[str] | None = None) -> tuple[list[str], list]:  # noqa: ANN001
    server.script(*replies, answer_reply("Done."))
    agent, rec = make_agent(server, project, disable_aids=disable or [])
    agent.run("Work on the files")
    return [o.text for o in rec.of(Observation)], rec


def test_a_file_the_model_never_read_is_not_overwritten(server, project: Path) -> None:
    (project / "solver.py").write_text("def f():\n    return 1\n")
    said, rec = run(
        server, project,
        write_reply("solver.py", "import unittest\n"), read_reply("./solver.py"), write_reply("solver.py", "def f():\n    return 2\n"),
    )
    assert said[0] == (
        "Error: nothing was written: solver.py already exists and you have not read it. write_to_file replaces the whole file, "
        'so call read_file("solver.py") first, then write_to_file with its whole new content'
    )
    assert said[2].startswith("File written: solver.py (overwrote")
    assert (project / "solver.py").read_text() == "def f():\n    return 2\n"
    assert len(rec.of(FileChanged)) == 1 and [a.name for a in rec.of(AidFired)] == ["write.not_read"]
    assert len(rec.of(ToolStarted)) == 3, "the refused call is reported like any other"


def test_new_empty_and_already_written_files_need_no_read(server, project: Path) -> None:
    (project / "empty.txt").write_text("")
    said, rec = run(server, project, write_reply("new.txt", "one\n"), write_reply("empty.txt", "two\n"), write_reply("new.txt", "three\n"))
    assert all(text.startswith("File written") for text in said), said
    assert (project / "new.txt").read_text() == "three\n" and (project / "empty.txt").read_text() == "two\n"
    assert not rec.of(AidFired)


def test_reading_one_path_does_not_unlock_another_that_only_looks_alike(server, project: Path) -> None:
    (project / "sub").mkdir()
    (project / "a.txt").write_text("top\n")
    (project / "sub" / "a.txt").write_text("nested\n")
    (project / "link.txt").symlink_to(project / "sub" / "a.txt")
    said, _ = run(server, project, read_reply("a.txt"), write_reply("sub/a.txt", "x\n"), read_reply("link.txt"), write_reply("sub/a.txt", "y\n"))
    assert "you have not read it" in said[1]
    assert said[3].startswith("File written"), "the link's target was read"
    assert (project / "sub" / "a.txt").read_text() == "y\n"


def test_a_command_that_names_a_file_counts_as_seeing_it(server, project: Path) -> None:
    """`cat notes.txt` shows the file, `python3 gen.py > out.txt` chose it; `ls` names neither."""
    for name in ("notes.txt", "out.txt", "other.txt"):
        (project / name).write_text("old\n")
    run(
        server, project,
        Reply('<action>run_terminal_command("ls && cat notes.txt && echo hi >out.txt")</action>'),
        write_reply("notes.txt", "new\n"), write_reply("out.txt", "new\n"), write_reply("other.txt", "new\n"),
    )
    assert [(project / name).read_text() for name in ("notes.txt", "out.txt", "other.txt")] == ["new\n", "new\n", "old\n"]
    assert "other.txt already exists and you have not read it" in last_user(server.requests[4])


def test_a_file_an_in_place_edit_names_is_not_seen(server, project: Path) -> None:
    """After `sed -i` matched nothing in main.py, a small model wrote main.py from its guess and its
    import was gone: sed names the file without showing it."""
    (project / "main.py").write_text("from config import load\n")
    (project / "notes.txt").write_text("old\n")
    run(
        server, project,
        Reply("<action>run_terminal_command(\"sed -i 's/nothing/here/' main.py && cat notes.txt\")</action>"),
        write_reply("main.py", "def load():\n    pass\n"),
        write_reply("notes.txt", "new\n"),
    )
    assert "main.py already exists and you have not read it" in last_user(server.requests[2])
    assert [(project / name).read_text() for name in ("main.py", "notes.txt")] == ["from config import load\n", "new\n"]


def test_switched_off_a_file_not_read_is_written(server, project: Path) -> None:
    (project / "solver.py").write_text("def f():\n    return 1\n")
    said, rec = run(server, project, write_reply("solver.py", "x = 2\n"), disable=["write.not_read"])
    assert said[0].startswith("File written: solver.py (overwrote") and (project / "solver.py").read_text() == "x = 2\n"
    assert "write.not_read" not in [a.name for a in rec.of(AidFired)]
