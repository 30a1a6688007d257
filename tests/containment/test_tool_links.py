"""The agent's own file tools and undo under links: undo does not follow a folder swapped for a
link while it works, and `write_to_file` through a link at the end of the path does not write
outside the project. (Round five of the outside attacks.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mzagent_tui.agent.safety.approval import Policy, Rules
from tests.attack_helpers import action, command, run
from tests.conftest import make_agent
from tests.scripted_server import answer_reply

# Undo through a folder swapped for a link between its check and its write -------------------


def _session_of(server, project: Path, *calls: str) -> Path:  # noqa: ANN001
    server.script(*[action(c) for c in calls], answer_reply())
    agent, _ = make_agent(server, project, env={"PATH": os.environ["PATH"], "HOME": os.environ["HOME"]})
    agent.policy = Policy("yolo", Rules())
    agent.approver.policy = agent.policy
    folder = agent.session.folder
    try:
        agent.run("work")
    finally:
        agent.close()
    return folder


@pytest.mark.parametrize("kind", ["created", "overwritten"])
def test_undo_does_not_follow_a_folder_swapped_for_a_link_while_it_works(server, project: Path, home: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Undo checks every path is inside the project, then removes or restores the files one by
    one, unconfined. A process the model left running (`setsid … &` escapes the command's group)
    that watches the project (inotify) swaps `d` for a link to a folder outside as soon as the
    first file goes: the later unlink or write then lands outside. The swap is made here at
    that moment, so the test does not depend on the race."""
    from mzagent_tui.agent.safety.secrets import Redactor
    from mzagent_tui.agent.sessions import session as session_module
    from mzagent_tui.agent.sessions.undo import undo_session

    (outside / ".profile").write_text("the user's own profile\n")
    if kind == "overwritten":
        (project / "d").mkdir()
        (project / "d" / ".profile").write_text("old\n")
        (project / "one.txt").write_text("old\n")
    folder = _session_of(server, project, command("mkdir -p d && echo new > d/.profile && echo new > one.txt"))
    original = session_module.Session.record_event
    swapped: list[bool] = []

    def record_event(self, event) -> None:  # noqa: ANN001
        original(self, event)
        if not swapped:
            swapped.append(True)
            (project / "d").rename(project / "d-real")
            (project / "d").symlink_to(outside)

    monkeypatch.setattr(session_module.Session, "record_event", record_event)
    outcome = undo_session(folder, "last", Redactor([]))
    assert swapped, outcome
    assert (outside / ".profile").read_text() == "the user's own profile\n", outcome
    assert sorted(p.name for p in outside.iterdir()) == [".profile"], outcome


def test_write_to_file_through_a_link_at_the_end_of_the_path_does_not_write_outside(server, project: Path, outside: Path) -> None:
    (outside / "target.txt").write_text("outside\n")
    (project / "link.txt").symlink_to(outside / "target.txt")
    (project / "dirlink").symlink_to(outside)
    run(server, project, 'write_to_file("link.txt", "pwned\\n")', 'write_to_file("dirlink/new.txt", "pwned\\n")',
        'edit_file("link.txt", "outside", "pwned")', mode="yolo")
    assert (outside / "target.txt").read_text() == "outside\n" and sorted(p.name for p in outside.iterdir()) == ["target.txt"]
