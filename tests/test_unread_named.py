"""The after-write aid `write.unread`: a write that changed nothing, while the task names files
the model has not read, names them. Told "invoice.py crashes on orders.csv", a small model read
the data file and wrote it back unchanged until it was stuck, never opening the program."""

from __future__ import annotations

from pathlib import Path

from mzagent_tui.agent.events import AidFired
from tests.conftest import make_agent
from tests.scripted_server import answer_reply, last_user, read_reply, write_reply

PROGRAM = "import csv, sys\nfor row in csv.DictReader(open(sys.argv[1])):\n    print(float(row['discount']))\n"
DATA = "id,discount\n1,5\n2,\n"
TASK = "invoice.py crashes on orders.csv (ValueError: could not convert string to float: ''). Fix it."


def _project(project: Path) -> None:
    (project / "invoice.py").write_text(PROGRAM)
    (project / "orders.csv").write_text(DATA)


def test_writing_the_input_back_unchanged_names_the_program_not_read(server, project: Path) -> None:
    _project(project)
    server.script(read_reply("orders.csv"), write_reply("orders.csv", DATA), read_reply("invoice.py"), answer_reply("Nothing to do."))
    agent, rec = make_agent(server, project, disable_aids=["answer.unchanged", "answer.idle", "write.same"])
    agent.run(TASK)
    observation = last_user(server.requests[2])
    assert observation.startswith("<observation>Nothing written: orders.csv already holds exactly this content")
    assert "Note: the task names invoice.py, which you have not read yet" in observation
    assert "AidFired" not in observation and [e.name for e in rec.of(AidFired)] == ["write.unread"]
    assert (project / "orders.csv").read_text() == DATA


def test_nothing_is_said_once_every_named_file_was_read(server, project: Path) -> None:
    _project(project)
    server.script(read_reply("invoice.py"), read_reply("orders.csv"), write_reply("orders.csv", DATA), answer_reply("Nothing to do."))
    agent, rec = make_agent(server, project, disable_aids=["answer.unchanged", "answer.idle", "write.same"])
    agent.run(TASK)
    assert "Note:" not in last_user(server.requests[3]) and not rec.of(AidFired)


def test_a_write_that_changed_the_file_is_not_commented(server, project: Path) -> None:
    _project(project)
    server.script(read_reply("orders.csv"), write_reply("orders.csv", DATA + "3,1\n"), answer_reply("Done."))
    agent, rec = make_agent(server, project, disable_aids=["answer.unchanged", "answer.idle", "write.same"])
    agent.run(TASK)
    assert "Note:" not in last_user(server.requests[2]) and not rec.of(AidFired)


def test_a_named_file_that_does_not_exist_or_lies_outside_is_not_named(server, project: Path) -> None:
    (project / "orders.csv").write_text(DATA)
    task = "invoice.py and ../secret.py crash on orders.csv. Fix it."
    (project.parent / "secret.py").write_text("x = 1\n")
    server.script(read_reply("orders.csv"), write_reply("orders.csv", DATA), answer_reply("Nothing to do."))
    agent, rec = make_agent(server, project, disable_aids=["answer.unchanged", "answer.idle", "answer.missing", "write.same"])
    agent.run(task)
    assert "Note:" not in last_user(server.requests[2]) and not rec.of(AidFired)
