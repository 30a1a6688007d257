"""Rewind and fork: the files (the agent's writes and what its commands changed) and the
conversation back to the end of an earlier task, headless and in the core."""

from __future__ import annotations

import hashlib
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from mzagent_tui.agent.events import Event, FileChanged, Rewound, Stopped, StopReason, TaskStarted, Undone
from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.sessions.history import list_sessions, load_session
from mzagent_tui.agent.sessions.rewind import fork_session, rewind_session, task_label
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.sessions.undo import undo_session, writes_of
from tests.conftest import make_agent
from tests.scripted_server import Reply, ScriptedServer, answer_reply, read_reply, write_reply

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-rewind-secret-key-555"


def no_redaction(text: str) -> str:
    return text


REDACT: Redactor = no_redaction


def command_reply(command: str) -> Reply:
    return Reply(f"<thought>run it</thought><action>run_terminal_command({json.dumps(command)})</action>")


def mzagent(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, importing this checkout (not the editable install)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "mzagent_tui", *args], input=stdin, capture_output=True, text=True, timeout=90, env=env)


def endpoint(server: ScriptedServer) -> list[str]:
    return ["--base-url", server.base_url, "--api-key", KEY, "--model", "m"]


@pytest.fixture
def two_files(project: Path) -> Path:
    (project / "notes.txt").write_text("my notes\n")
    (project / "data.txt").write_text("data v1\n")
    return project


def sent_text(request: dict) -> str:
    return "\n".join(str(message.get("content")) for message in request["messages"])


def test_headless_rewind_to_0_puts_both_files_back_and_the_model_sees_neither_task(server: ScriptedServer, two_files: Path) -> None:
    project = two_files
    server.script(read_reply("notes.txt"), write_reply("notes.txt", "rewritten by the agent\n"), write_reply("new.txt", "made\n"), answer_reply("wrote"))
    first = mzagent("run", *endpoint(server), "--yes", "--project", str(project), "FIRST-TASK rewrite the notes")
    assert first.returncode == 0, first.stderr
    server.script(command_reply("echo 'data v2' > data.txt"), answer_reply("ran"))
    second = mzagent("run", *endpoint(server), "--yes", "--continue", "--project", str(project), "SECOND-TASK change the data")
    assert second.returncode == 0, second.stderr
    assert (project / "notes.txt").read_text() == "rewritten by the agent\n" and (project / "data.txt").read_text() == "data v2\n"

    listed = mzagent("rewind", "--list", "--project", str(project))
    assert listed.stdout.splitlines() == ["task 1: FIRST-TASK rewrite the notes", "task 2: SECOND-TASK change the data"]
    rewound = mzagent("rewind", "--to", "0", "--project", str(project))
    assert rewound.returncode == 0, rewound.stdout + rewound.stderr
    assert (project / "notes.txt").read_text() == "my notes\n"
    assert (project / "data.txt").read_text() == "data v1\n"
    assert not (project / "new.txt").exists()
    assert "rewound to before the first task (files and conversation)" in rewound.stdout

    server.script(answer_reply("fresh"))
    third = mzagent("run", *endpoint(server), "--yes", "--continue", "--project", str(project), "THIRD-TASK look again")
    assert third.returncode == 0, third.stderr
    sent = sent_text(server.requests[-1])
    assert "THIRD-TASK" in sent
    for earlier in ("FIRST-TASK", "SECOND-TASK", "rewritten by the agent", "data v2", "undid"):
        assert earlier not in sent
    assert len(server.requests[-1]["messages"]) == 2  # a fresh system prompt and the task
    assert len(list_sessions(project)) == 1  # the same session went on


def test_the_default_takes_back_the_last_task_only(server: ScriptedServer, two_files: Path) -> None:
    project = two_files
    server.script(read_reply("notes.txt"), write_reply("notes.txt", "v2\n"), answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--project", str(project), "FIRST-TASK").returncode == 0
    server.script(read_reply("notes.txt"), write_reply("notes.txt", "v3\n"), answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--continue", "--project", str(project), "SECOND-TASK").returncode == 0

    rewound = mzagent("rewind", "--project", str(project))
    assert rewound.returncode == 0 and (project / "notes.txt").read_text() == "v2\n"
    server.script(answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--continue", "--project", str(project), "THIRD-TASK").returncode == 0
    sent = sent_text(server.requests[-1])
    assert "FIRST-TASK" in sent and "SECOND-TASK" not in sent and "THIRD-TASK" in sent


def test_a_file_changed_by_the_user_since_is_never_overwritten_without_asking(server: ScriptedServer, two_files: Path) -> None:
    project = two_files
    server.script(command_reply("echo 'data v2' > data.txt"), answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--project", str(project), "FIRST-TASK").returncode == 0
    (project / "data.txt").write_text("my own edit\n")

    refused = mzagent("rewind", "--to", "0", "--project", str(project))
    assert refused.returncode == 1
    assert "data.txt was changed after the agent wrote it" in refused.stderr and "--overwrite" in refused.stderr
    assert (project / "data.txt").read_text() == "my own edit\n"
    assert not any(isinstance(e, Rewound) for e in load_session(list_sessions(project)[0].folder).events)  # nor was the conversation cut

    forced = mzagent("rewind", "--to", "0", "--overwrite", "--project", str(project))
    assert forced.returncode == 0 and (project / "data.txt").read_text() == "data v1\n"


def test_conversation_only_leaves_the_files_and_files_only_keeps_the_conversation(server: ScriptedServer, two_files: Path) -> None:
    project = two_files
    server.script(command_reply("echo 'data v2' > data.txt"), answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--project", str(project), "FIRST-TASK").returncode == 0

    files_only = mzagent("rewind", "--to", "0", "--files-only", "--project", str(project))
    assert files_only.returncode == 0 and (project / "data.txt").read_text() == "data v1\n"
    server.script(answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--continue", "--project", str(project), "SECOND-TASK").returncode == 0
    sent = sent_text(server.requests[-1])
    assert "FIRST-TASK" in sent and "restored data.txt" in sent  # the conversation went on, and the model was told

    server.script(command_reply("echo 'data v3' > data.txt"), answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--continue", "--project", str(project), "THIRD-TASK").returncode == 0
    conversation_only = mzagent("rewind", "--to", "1", "--conversation-only", "--project", str(project))
    assert conversation_only.returncode == 0 and (project / "data.txt").read_text() == "data v3\n"
    server.script(answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--continue", "--project", str(project), "FOURTH-TASK").returncode == 0
    sent = sent_text(server.requests[-1])
    assert "FIRST-TASK" in sent and "SECOND-TASK" not in sent and "THIRD-TASK" not in sent


def test_bad_points_are_refused_with_the_range_and_change_nothing(server: ScriptedServer, two_files: Path) -> None:
    project = two_files
    nothing = mzagent("rewind", "--project", str(project))
    assert nothing.returncode == 2 and "no sessions yet" in nothing.stderr
    server.script(answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--project", str(project), "FIRST-TASK").returncode == 0
    log = load_session(list_sessions(project)[0].folder).folder / "log.jsonl"
    before = log.read_bytes()
    for point in ("1", "5", "-1"):
        refused = mzagent("rewind", "--to", point, "--project", str(project))
        assert refused.returncode == 1 and "has 1 task: rewind to 0 (before the first) up to 0" in refused.stdout
    assert log.read_bytes() == before


def test_a_fork_keeps_the_original_whole_and_continues_from_the_point(server: ScriptedServer, two_files: Path) -> None:
    project = two_files
    server.script(read_reply("notes.txt"), write_reply("notes.txt", "v2\n"), answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--project", str(project), "FIRST-TASK").returncode == 0
    server.script(command_reply("echo 'data v2' > data.txt"), answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--continue", "--project", str(project), "SECOND-TASK").returncode == 0
    [original] = list_sessions(project)
    original_log = (original.folder / "log.jsonl").read_bytes()

    forked = mzagent("rewind", "--to", "1", "--fork", "--project", str(project))
    assert forked.returncode == 0, forked.stdout + forked.stderr
    assert (original.folder / "log.jsonl").read_bytes() == original_log
    assert (project / "data.txt").read_text() == "data v1\n" and (project / "notes.txt").read_text() == "v2\n"
    fork = next(s for s in list_sessions(project) if s.folder != original.folder)
    assert f"forked into session {fork.id}" in forked.stdout
    assert [t.text for t in load_session(original.folder).tasks] == ["FIRST-TASK", "SECOND-TASK"]

    server.script(answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--continue", "--project", str(project), "THIRD-TASK").returncode == 0
    sent = sent_text(server.requests[-1])
    assert "FIRST-TASK" in sent and "SECOND-TASK" not in sent and "THIRD-TASK" in sent
    assert [t.text for t in load_session(fork.folder).tasks] == ["FIRST-TASK", "THIRD-TASK"]
    assert (original.folder / "log.jsonl").read_bytes() == original_log


def test_a_rewind_counts_user_commands_as_tasks_and_a_second_rewind_agrees(server: ScriptedServer, two_files: Path) -> None:
    """The cut is made when the log is read, so every later reading (and a rewind of a rewind) agrees."""
    project = two_files
    server.script(answer_reply("one"))
    agent, _ = make_agent(server, project)
    agent.run("FIRST-TASK")
    server.script(write_reply("a.txt", "A\n"), answer_reply("two"))
    agent.run("SECOND-TASK")
    server.script(write_reply("b.txt", "B\n"), answer_reply("three"))
    agent.run("!echo THIRD-COMMAND")
    agent.run("FOURTH-TASK")
    folder = agent.session.folder
    assert [task_label(t) for t in load_session(folder).tasks] == ["task 1: FIRST-TASK", "task 2: SECOND-TASK", "task 3: !echo THIRD-COMMAND", "task 4: FOURTH-TASK"]

    outcome = rewind_session(folder, 2, "all", REDACT, agent.session)
    assert outcome.refused is None and [e.path for e in outcome.done] == [str(project / "b.txt")]
    history = load_session(folder)
    assert [t.text for t in history.tasks] == ["FIRST-TASK", "SECOND-TASK"]
    assert (project / "a.txt").exists() and not (project / "b.txt").exists()
    assert "THIRD-COMMAND" not in json.dumps(history.messages) and "SECOND-TASK" in json.dumps(history.messages)
    assert history.messages[-1]["role"] == "assistant"  # the conversation ends where task 2 ended
    assert isinstance(history.events[-1], Rewound) and not any(isinstance(e, Undone) for e in history.events)

    again = rewind_session(folder, 1, "all", REDACT)
    assert again.refused is None and not (project / "a.txt").exists()
    history = load_session(folder)
    assert [t.text for t in history.tasks] == ["FIRST-TASK"]
    assert sum(isinstance(e, TaskStarted) for e in history.events) == 1
    assert history.messages[1]["content"].endswith("<question>FIRST-TASK</question>")


def test_a_fork_that_must_ask_leaves_no_session_behind(server: ScriptedServer, two_files: Path) -> None:
    project = two_files
    server.script(read_reply("notes.txt"), write_reply("notes.txt", "v2\n"), answer_reply())
    agent, _ = make_agent(server, project)
    agent.run("FIRST-TASK")
    (project / "notes.txt").write_text("mine\n")
    outcome = fork_session(agent.session.folder, 0, "all", REDACT)
    assert outcome.conflicts == [f"{project / 'notes.txt'} was changed after the agent wrote it"]
    assert len(list_sessions(project)) == 1 and (project / "notes.txt").read_text() == "mine\n"
    assert fork_session(agent.session.folder, 0, "files", REDACT).refused is not None


def logged_session(project: Path, *records: tuple) -> Path:
    """A session log written record by record: ("message", role, content), ("compacted", [messages]),
    ("resumed",) or an event."""
    session = Session.create(project, REDACT)
    for record in records:
        if isinstance(record, Event):
            session.record_event(record)
        elif record[0] == "message":
            session.record("message", role=record[1], content=record[2])
        elif record[0] == "compacted":
            session.record("compacted", messages=record[1])
        else:
            session.record(record[0])
    session.close()
    return session.folder


def task(number: int, answer: str = "done") -> tuple:
    """The records of one finished task, as the loop writes them: its question first, then the event."""
    return (
        ("message", "user", f"<question>TASK-{number}</question>"), TaskStarted(f"TASK-{number}", number > 1),
        ("message", "assistant", f"<final_answer>{answer}-{number}</final_answer>"), Stopped(StopReason.FINAL_ANSWER, "", 1),
    )


def test_the_cut_before_a_compaction_brings_back_the_messages_it_replaced(project: Path) -> None:
    system = ("message", "system", "PROMPT")
    summary = [{"role": "system", "content": "PROMPT"}, {"role": "user", "content": "SUMMARY of tasks 1 and 2"}]
    folder = logged_session(project, system, *task(1), *task(2), ("compacted", summary), *task(3), Rewound(2, 1, False))
    history = load_session(folder)
    assert [m["content"] for m in history.messages] == [
        "PROMPT", "<question>TASK-1</question>", "<final_answer>done-1</final_answer>", "<question>TASK-2</question>", "<final_answer>done-2</final_answer>",
    ]
    folder = logged_session(project, system, *task(1), *task(2), ("compacted", summary), *task(3), *task(4), Rewound(3, 1, False))
    assert [m["content"] for m in load_session(folder).messages][-3:] == ["SUMMARY of tasks 1 and 2", "<question>TASK-3</question>", "<final_answer>done-3</final_answer>"]


def test_rewinding_past_an_interrupted_task_drops_it_and_a_kept_one_is_still_repaired(project: Path) -> None:
    interrupted = (("message", "user", "<question>TASK-2</question>"), TaskStarted("TASK-2", True), ("message", "assistant", "<action>half</action>"))
    repair = ("message", "user", "[interrupted]")
    folder = logged_session(project, ("message", "system", "PROMPT"), *task(1), *interrupted, ("resumed",), repair, *task(3), Rewound(1, 2, False))
    history = load_session(folder)
    assert [t.text for t in history.tasks] == ["TASK-1"] and not history.interrupted
    assert history.messages[-1]["content"] == "<final_answer>done-1</final_answer>"
    folder = logged_session(project, ("message", "system", "PROMPT"), *task(1), *interrupted, ("resumed",), repair, *task(3), Rewound(2, 1, False))
    history = load_session(folder)
    assert [t.text for t in history.tasks] == ["TASK-1", "TASK-2"] and history.interrupted
    assert history.messages[-1]["content"] == "<action>half</action>" and history.repairs() != []


def test_a_forged_or_damaged_rewind_record_cuts_nothing(project: Path) -> None:
    folder = logged_session(project, ("message", "system", "PROMPT"), *task(1), *task(2))
    whole = load_session(folder)
    with (folder / "log.jsonl").open("a") as log:
        for to in (-1, 2, 99, "1", True, None, 1.5):
            log.write(json.dumps({"t": 1, "type": "event", "event": {"type": "rewound", "to": to, "taken_back": 1, "files": False}}) + "\n")
        log.write('{"t": 1, "type": "event", "event": {"type": "rewound", "to": 0\n')
    history = load_session(folder)
    assert history.messages == whole.messages and [t.text for t in history.tasks] == ["TASK-1", "TASK-2"]
    assert history.bad_lines == 1
    assert rewind_session(folder, 2, "all", REDACT).refused == f"session {history.id} has 2 tasks: rewind to 0 (before the first) up to 1, not 2"


def test_an_undo_made_after_a_kept_task_stays_undone_and_the_model_is_told_again(server: ScriptedServer, project: Path) -> None:
    server.script(write_reply("a.txt", "A\n"), answer_reply("one"), answer_reply("two"))
    agent, _ = make_agent(server, project)
    agent.run("FIRST-TASK")
    agent.run("SECOND-TASK")
    assert undo_session(agent.session.folder, "last", REDACT, agent.session).refused is None  # made after task 2
    assert not (project / "a.txt").exists()
    assert rewind_session(agent.session.folder, 1, "all", REDACT, agent.session).refused is None
    history = load_session(agent.session.folder)
    assert [w.undone for w in writes_of(history.events)] == [True]
    assert [u.write for u in history.untold_undos()] == [1]
    server.script(answer_reply("three"))
    resumed, _ = make_agent(server, project, history=history)
    resumed.run("THIRD-TASK")
    sent = sent_text(server.requests[-1])
    assert "Note: the user undid write 1" in sent and "SECOND-TASK" not in sent


def test_overwriting_after_the_question_never_follows_a_link_out_of_the_project(server: ScriptedServer, project: Path, tmp_path: Path) -> None:
    """A file swapped for a link since the agent wrote it: the rewind asks, and even with yes
    refuses (undo's check of where the path leads), its target untouched, the conversation kept."""
    (project / "notes.txt").write_text("my notes\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("not the project's\n")
    server.script(read_reply("notes.txt"), write_reply("notes.txt", "agent\n"), answer_reply())
    agent, _ = make_agent(server, project)
    agent.run("FIRST-TASK")
    (project / "notes.txt").unlink()
    (project / "notes.txt").symlink_to(outside)
    asked = rewind_session(agent.session.folder, 0, "all", REDACT)
    assert asked.conflicts == [f"{project / 'notes.txt'} was changed after the agent wrote it"]
    refused = rewind_session(agent.session.folder, 0, "all", REDACT, overwrite=True).refused
    assert refused is not None and "outside the project" in refused and refused.endswith("the conversation was not rewound")
    assert outside.read_text() == "not the project's\n" and (project / "notes.txt").is_symlink()
    assert [t.text for t in load_session(agent.session.folder).tasks] == ["FIRST-TASK"]


def test_a_folder_swapped_for_a_link_out_of_the_project_is_refused(server: ScriptedServer, project: Path, tmp_path: Path) -> None:
    (project / "sub").mkdir()
    (project / "sub" / "f.txt").write_text("v1\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    server.script(read_reply("sub/f.txt"), write_reply("sub/f.txt", "v2\n"), answer_reply())
    agent, _ = make_agent(server, project)
    agent.run("FIRST-TASK")
    (project / "sub").rename(project / "moved")
    (project / "sub").symlink_to(elsewhere)
    (elsewhere / "f.txt").write_text("v2\n")  # what the agent left, so no question stands in the way
    outcome = rewind_session(agent.session.folder, 0, "all", REDACT, overwrite=True)
    assert outcome.refused is not None and "outside the project" in outcome.refused
    assert (elsewhere / "f.txt").read_text() == "v2\n"
    assert [t.text for t in load_session(agent.session.folder).tasks] == ["FIRST-TASK"]  # nor was the conversation cut


@pytest.mark.parametrize(("answer", "taken_back"), [("n", False), ("y", True)])
def test_at_a_terminal_the_question_is_asked_and_its_answer_kept(server: ScriptedServer, two_files: Path, answer: str, taken_back: bool) -> None:
    project = two_files
    server.script(command_reply("echo 'data v2' > data.txt"), answer_reply())
    assert mzagent("run", *endpoint(server), "--yes", "--project", str(project), "FIRST-TASK").returncode == 0
    (project / "data.txt").write_text("my own edit\n")
    controller, terminal = pty.openpty()
    try:
        os.write(controller, f"{answer}\n".encode())
        done = subprocess.run(
            [sys.executable, "-m", "mzagent_tui", "rewind", "--to", "0", "--project", str(project)],
            stdin=terminal, capture_output=True, text=True, timeout=90, env={**os.environ, "PYTHONPATH": str(REPO)},
        )
    finally:
        os.close(terminal)
        os.close(controller)
    assert "data.txt was changed after the agent wrote it" in done.stderr and "Rewind anyway? [y/N]" in done.stderr
    assert (done.returncode == 0) is taken_back
    assert (project / "data.txt").read_text() == ("data v1\n" if taken_back else "my own edit\n")


def test_a_log_naming_a_file_outside_the_project_is_refused_even_with_yes(project: Path, tmp_path: Path) -> None:
    """A forged log cannot make a rewind (which writes without a sandbox) remove or write outside the project."""
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    digest = hashlib.sha256(b"keep me\n").hexdigest()
    for path in (str(outside), str(project / ".." / "outside.txt")):
        records = (
            ("message", "user", "<question>TASK-1</question>"), TaskStarted("TASK-1"),
            FileChanged(path, created=True, sha256=digest), Stopped(StopReason.FINAL_ANSWER, "", 1),
        )
        folder = logged_session(project, *records)
        outcome = rewind_session(folder, 0, "all", REDACT, overwrite=True)
        assert outcome.refused is not None and "outside the project" in outcome.refused and outcome.done == []
        assert outside.read_text() == "keep me\n"
        assert [t.text for t in load_session(folder).tasks] == ["TASK-1"]
    inside = project / "inside.txt"
    inside.write_text("keep me\n")
    folder = logged_session(project, records[0], records[1], FileChanged(str(inside), created=True, sha256=digest), records[3])
    assert rewind_session(folder, 0, "all", REDACT).refused is None and not inside.exists()  # a positive control: the same log inside is taken back
