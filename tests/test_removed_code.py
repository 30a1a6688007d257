"""The answer check `answer.removed`: a rewrite that took away code the task never named (a
function, a constant, the main block) is shown to the model, with the old code, before its answer
is accepted."""

from __future__ import annotations

from pathlib import Path

from mzagent_tui.agent.aids.removed import MAIN_BLOCK, removed_parts
from mzagent_tui.agent.events import AidFired, StopReason
from tests.conftest import make_agent
from tests.scripted_server import answer_reply, last_user, read_reply, write_reply

APP = '''import sys
from functools import cache

RATE = 3


def parse(line):
    return [int(x) for x in line.split(",")]


@cache
def total(rows):
    return sum(row[0] for row in rows)


if __name__ == "__main__":
    print(total(parse(l) for l in sys.stdin))
'''
ONLY_TOTAL = "def total(rows):\n    return sum(row[1] for row in rows)\n"
FIXED = APP.replace("row[0]", "row[1]")


def test_what_a_rewrite_took_away() -> None:
    removed = removed_parts(APP.encode(), ONLY_TOTAL.encode(), "Fix total in app.py: it sums the wrong column.")
    assert [part.name for part in removed] == ["RATE", "parse", MAIN_BLOCK]
    assert removed[2].source.startswith('if __name__ == "__main__":') and "print(total" in removed[2].source


def test_what_the_task_names_may_go() -> None:
    task = "Remove parse and the RATE constant from app.py, and drop the __main__ block."
    assert removed_parts(APP.encode(), ONLY_TOTAL.encode(), task) == []


def test_decorators_are_part_of_what_went() -> None:
    removed = removed_parts(APP.encode(), b"RATE = 3\ndef parse(line):\n    pass\n", "fix it")
    assert [part.name for part in removed] == ["total", MAIN_BLOCK]
    assert removed[0].source.startswith("@cache\ndef total")


def test_unreadable_sides_say_nothing() -> None:
    assert removed_parts(APP.encode(), b"def total(:\n", "fix") == []
    assert removed_parts(b"\xff\xfe", ONLY_TOTAL.encode(), "fix") == []


def test_a_rewrite_that_dropped_code_is_sent_back_with_the_old_code(server, project: Path) -> None:
    (project / "app.py").write_text(APP)
    server.script(
        read_reply("app.py"),
        write_reply("app.py", ONLY_TOTAL),
        answer_reply("Fixed total."),
        write_reply("app.py", FIXED),
        answer_reply("Fixed total; the rest of app.py is as it was."),
    )
    agent, rec = make_agent(server, project, disable_aids=["write.removed"])
    result = agent.run("Fix total in app.py: it sums the wrong column.")
    assert result.reason is StopReason.FINAL_ANSWER and result.steps == 5
    reminder = last_user(server.requests[3])
    assert "removed `RATE`, `parse`, the if __name__" in reminder
    assert "def parse(line):" in reminder and 'print(total(parse(l) for l in sys.stdin))' in reminder
    assert [e.name for e in rec.of(AidFired)] == ["answer.removed"]
    assert (project / "app.py").read_text() == FIXED


def test_a_rewrite_that_kept_everything_is_accepted(server, project: Path) -> None:
    (project / "app.py").write_text(APP)
    server.script(read_reply("app.py"), write_reply("app.py", FIXED), answer_reply("Fixed total."))
    agent, rec = make_agent(server, project)
    assert agent.run("Fix total in app.py: it sums the wrong column.").steps == 3
    assert not rec.of(AidFired)


def test_the_write_that_dropped_code_is_told_at_once_with_the_old_code(server, project: Path) -> None:
    """`write.removed`: the observation of the write itself names what went and quotes it; the
    model puts it back before answering, and the answer check has nothing left to say."""
    (project / "app.py").write_text(APP)
    server.script(read_reply("app.py"), write_reply("app.py", ONLY_TOTAL), write_reply("app.py", FIXED), answer_reply("Fixed total."))
    agent, rec = make_agent(server, project)
    result = agent.run("Fix total in app.py: it sums the wrong column.")
    assert result.reason is StopReason.FINAL_ANSWER and result.steps == 4
    observation = last_user(server.requests[2])
    assert observation.startswith("<observation>File written: app.py (overwrote")
    assert "removed `RATE`, `parse`, the if __name__" in observation and "def parse(line):" in observation
    assert "If removing it was intended, go on." in observation
    assert [e.name for e in rec.of(AidFired)] == ["write.removed"]
    assert (project / "app.py").read_text() == FIXED


def test_a_write_that_kept_everything_gets_no_note(server, project: Path) -> None:
    (project / "app.py").write_text(APP)
    server.script(read_reply("app.py"), write_reply("app.py", FIXED), answer_reply("Fixed total."))
    agent, _ = make_agent(server, project)
    agent.run("Fix total in app.py: it sums the wrong column.")
    assert last_user(server.requests[2]) == "<observation>File written: app.py (overwrote, 17 lines, 253 bytes).</observation>"


def test_the_write_note_can_be_switched_off(server, project: Path) -> None:
    (project / "app.py").write_text(APP)
    server.script(read_reply("app.py"), write_reply("app.py", ONLY_TOTAL), answer_reply("Fixed total."), answer_reply("Fixed total."))
    agent, rec = make_agent(server, project, disable_aids=["write.removed", "answer.removed"])
    assert agent.run("Fix total in app.py: it sums the wrong column.").steps == 3
    assert "removed" not in last_user(server.requests[2]) and not rec.of(AidFired)
