"""The answer check `answer.command`: a command the task quotes must have run successfully since
the last change before a final answer is accepted (a small model checked `./tool.py` with
`python3 tool.py`, and answered what a script prints by guessing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mzagent_tui.agent.aids.completion import named_commands
from mzagent_tui.agent.events import AidFired, StopReason
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, last_user, read_reply, write_reply

TOOL = "#!/usr/bin/env python3\nimport sys\nprint(len(open(sys.argv[1]).read().split()))\n"


def command_reply(command: str) -> Reply:
    return Reply(f"<thought>run it</thought><action>run_terminal_command({json.dumps(command)})</action>")


@pytest.mark.parametrize(
    ("task", "commands"),
    [
        ("Set it up so that `./tool.py data.txt` works.", ["./tool.py data.txt"]),
        ("what does `python3   tool.py data.txt` print?", ["python3 tool.py data.txt"]),
        ("`make` fails with an error, fix it", ["make"]),
        ("`scripts/build.sh` should build it", ["scripts/build.sh"]),
        ("It needs `python` 3.11 and the `requests` package", []),  # the language, a package
        ("rename `count_words` to `word_count` in `tool.py`", []),  # names, not commands
        ("fix it, but do not run `make deploy`", []),
        ("`./missing.sh` should work", []),  # no such file: prose, or a file to make (answer.missing's)
        ("`./tool.py data.txt` and `./tool.py data.txt` again", ["./tool.py data.txt"]),
    ],
)
def test_the_commands_a_task_quotes_for_running(project: Path, task: str, commands: list[str]) -> None:
    (project / "tool.py").write_text(TOOL)
    (project / "scripts").mkdir()
    (project / "scripts" / "build.sh").write_text("echo built\n")
    assert named_commands(project, task) == commands


def _project(project: Path) -> None:
    (project / "tool.py").write_text(TOOL)  # no execute bit yet
    (project / "data.txt").write_text("one two three\n")


def test_checking_with_another_command_gets_the_named_one_run(server, project: Path) -> None:
    _project(project)
    server.script(
        command_reply("python3 tool.py data.txt"),
        answer_reply("It works: it prints 3."),
        command_reply("./tool.py data.txt"),  # the reminder's call: refused, no execute bit
        command_reply("chmod +x tool.py"),
        command_reply("./tool.py data.txt"),
        answer_reply("tool.py is executable now; ./tool.py data.txt prints 3."),
    )
    agent, rec = make_agent(server, project)
    result = agent.run("Set it up so that `./tool.py data.txt` works.")
    assert result.reason is StopReason.FINAL_ANSWER and result.steps == 6
    reminder = last_user(server.requests[2])
    assert "the task names the command ./tool.py data.txt" in reminder
    assert 'run_terminal_command("./tool.py data.txt")' in reminder
    assert [e.name for e in rec.of(AidFired)] == ["answer.command"]
    assert "3" in last_user(server.requests[5])  # the named command really ran and printed the count


def test_a_run_before_the_last_change_does_not_count(server, project: Path) -> None:
    _project(project)
    server.script(
        command_reply("python3 tool.py data.txt"),
        read_reply("tool.py"),
        write_reply("tool.py", TOOL.replace("len(", "0 + len(")),
        answer_reply("Done."),
        command_reply("python3 tool.py data.txt"),
        answer_reply("Done, it prints 3."),
    )
    agent, _ = make_agent(server, project)
    result = agent.run("`python3 tool.py data.txt` should print the word count; tidy the code.")
    assert result.steps == 6
    assert "has not run successfully since your last change" in last_user(server.requests[4])


def test_a_question_about_what_a_command_prints_is_answered_by_running_it(server, project: Path) -> None:
    _project(project)
    server.script(answer_reply("It prints 2."), command_reply("python3 tool.py data.txt"), answer_reply("It prints 3."))
    agent, _ = make_agent(server, project)
    result = agent.run("What does `python3 tool.py data.txt` print?")
    assert result.final_answer == "It prints 3." and result.steps == 3


def test_the_named_commands_own_output_files_do_not_undo_its_proof(server, project: Path) -> None:
    _project(project)
    (project / "save.sh").write_text("python3 tool.py data.txt > count.txt\n")
    server.script(command_reply("bash save.sh"), answer_reply("count.txt holds 3."))
    agent, _ = make_agent(server, project)
    result = agent.run("Run `bash save.sh` and tell me what count.txt holds.")
    assert (project / "count.txt").read_text() == "3\n"  # the command ran and wrote its file
    assert result.final_answer == "count.txt holds 3." and result.steps == 2


def test_the_check_can_be_switched_off(server, project: Path) -> None:
    _project(project)
    server.script(answer_reply("It prints 2."))
    agent, rec = make_agent(server, project, disable_aids=["answer.command", "answer.computed"])
    assert agent.run("What does `python3 tool.py data.txt` print?").final_answer == "It prints 2."
    assert not rec.of(AidFired)
    server.script(answer_reply("It prints 2."), answer_reply("It prints 2, I am sure."))
    agent, rec = make_agent(server, project, disable_aids=["answer.command"])
    agent.run("What does `python3 tool.py data.txt` print?")
    assert [e.name for e in rec.of(AidFired)] == ["answer.computed"]  # the other check still acts


STATS = "DATA = [3, 5, 8]\n\n\ndef mean(values):\n    return sum(values) / len(values)\n\n\nif __name__ == '__main__':\n    print(mean(DATA))\n"


def test_a_value_the_code_computes_is_not_guessed(server, project: Path) -> None:
    (project / "stats.py").write_text(STATS)
    server.script(
        read_reply("stats.py"),
        answer_reply("It prints 5."),
        command_reply("python3 stats.py"),
        answer_reply("It prints 5.333333333333333."),
    )
    agent, rec = make_agent(server, project)
    result = agent.run("What does stats.py print?")
    assert result.final_answer == "It prints 5.333333333333333." and result.steps == 4
    assert "you answered without running anything" in last_user(server.requests[2])
    assert 'python3 -c "import stats; ..."' in last_user(server.requests[2])
    assert "5.333333333333333" in last_user(server.requests[3])  # what it really printed
    assert [e.name for e in rec.of(AidFired)] == ["answer.computed"]


@pytest.mark.parametrize(
    "task",
    [
        "Which function in stats.py returns the mean?",  # about the code, answered by reading
        "Explain what stats.py does.",
        "Add a median function to stats.py.",  # work, not a question
    ],
)
def test_questions_about_the_code_itself_are_not_sent_to_run_it(server, project: Path, task: str) -> None:
    (project / "stats.py").write_text(STATS)
    server.script(read_reply("stats.py"), answer_reply("mean."), answer_reply("mean, again."))
    agent, rec = make_agent(server, project)
    agent.run(task)
    assert "answer.computed" not in [e.name for e in rec.of(AidFired)]


def test_a_change_to_a_question_that_wants_none_is_sent_back(server, project: Path) -> None:
    (project / "stats.py").write_text(STATS)
    server.script(
        read_reply("stats.py"),
        write_reply("stats.py", STATS.replace("len(values)", "max(len(values), 1)")),
        answer_reply("mean divides by zero on an empty list; I fixed it."),
        write_reply("stats.py", STATS),
        answer_reply("mean divides by zero on an empty list (len(values) is 0)."),
    )
    agent, rec = make_agent(server, project, disable_aids=["task.no_change"])  # the check behind it, when the project is writable
    result = agent.run("Why does mean() in stats.py crash on an empty list? Just explain, don't change the code.")
    assert result.steps == 5 and (project / "stats.py").read_text() == STATS
    reminder = last_user(server.requests[3])
    assert "asks you not to change anything, but these files are changed or new: stats.py" in reminder
    assert "write_to_file(\"stats.py\"" in reminder and "len(values)" in reminder  # the call that puts it back
    assert [e.name for e in rec.of(AidFired)] == ["answer.unasked"]


def test_a_change_the_task_asks_for_is_not_sent_back(server, project: Path) -> None:
    (project / "stats.py").write_text(STATS)
    server.script(read_reply("stats.py"), write_reply("stats.py", STATS.replace("len(values)", "max(len(values), 1)")), answer_reply("Fixed."))
    agent, rec = make_agent(server, project)
    agent.run("mean() in stats.py crashes on an empty list; fix it without changing its output for other lists.")
    assert "answer.unasked" not in [e.name for e in rec.of(AidFired)]


SHARDS = "import zlib\n\n\ndef shard_of(customer_id):\n    return zlib.crc32(customer_id.encode()) % 16\n"


@pytest.mark.parametrize(
    ("task", "example"),
    [
        ("Which shard number does customer C-20931 map to? Don't change anything.", "python3 -c \"import shards; ...\""),
        ("What does shard_of return for C-20931 in shards.py?", 'python3 -c "from shards import shard_of; print(shard_of(...))"'),
        ("How many seconds in total does `shard_of()` take? No code changes please.", 'python3 -c "from shards import shard_of; print(shard_of(...))"'),
    ],
)
def test_a_value_question_gets_a_call_to_run(server, project: Path, task: str, example: str) -> None:
    """"Which shard number …" is a value even though it starts with "which", and a question that
    names no file is about the project's code (here the only module)."""
    (project / "shards.py").write_text(SHARDS)
    server.script(read_reply("shards.py"), answer_reply("Shard 10."), answer_reply("Shard 10, I am sure."))
    agent, rec = make_agent(server, project)
    agent.run(task)
    assert [e.name for e in rec.of(AidFired) if e.name != "task.no_change"] == ["answer.computed"]
    assert example in last_user(server.requests[2])


def test_no_code_changes_please_is_a_question_that_wants_no_change(server, project: Path) -> None:
    (project / "shards.py").write_text(SHARDS)
    server.script(
        read_reply("shards.py"),
        write_reply("shards.py", SHARDS.replace("% 16", "% 8")),
        answer_reply("It is on shard 2."),
        write_reply("shards.py", SHARDS),
        answer_reply("It is on shard 10."),
    )
    agent, rec = make_agent(server, project, disable_aids=["answer.computed", "task.no_change"])
    agent.run("Which shard is customer C-20931 on, according to shards.py? No code changes please, I just need it.")
    assert [e.name for e in rec.of(AidFired)] == ["answer.unasked"]
    assert (project / "shards.py").read_text() == SHARDS


def test_running_something_else_than_the_code_is_not_running_it(server, project: Path) -> None:
    """The bundled model summed an order's prices with `python3 -c "import json; ..."` and quoted
    that, never running the shipping code the question was about."""
    (project / "stats.py").write_text(STATS)
    (project / "data.json").write_text("[3, 5, 8]\n")
    server.script(
        command_reply('python3 -c "print(3 + 5 + 8)"'),
        answer_reply("It prints 16."),
        command_reply('python3 -c "from stats import mean; print(mean([3, 5, 8]))"'),
        answer_reply("It prints 5.333333333333333."),
    )
    agent, rec = make_agent(server, project)
    result = agent.run("What does stats.py print for data.json? Don't change anything.")
    assert result.final_answer == "It prints 5.333333333333333." and result.steps == 4
    assert "you answered without running the code" in last_user(server.requests[2])
    assert [e.name for e in rec.of(AidFired)] == ["task.no_change", "answer.computed"]


def test_a_script_the_task_asks_for_is_run_as_named_once_it_exists(server, project: Path) -> None:
    """`./count.sh data.txt` names a file that does not exist when the task starts: once the model
    made it, the named command is what shows whether it works (here: the execute bit)."""
    (project / "data.txt").write_text("a\nb\n")
    script = "#!/bin/sh\nwc -l < \"$1\"\n"
    server.script(
        write_reply("count.sh", script),
        answer_reply("count.sh is written."),
        command_reply("./count.sh data.txt"),
        command_reply("chmod +x count.sh"),
        command_reply("./count.sh data.txt"),
        answer_reply("./count.sh data.txt prints 2."),
    )
    agent, rec = make_agent(server, project)
    result = agent.run("Write count.sh so that `./count.sh data.txt` prints how many lines data.txt has.")
    assert result.final_answer == "./count.sh data.txt prints 2." and result.steps == 6
    assert 'run_terminal_command("./count.sh data.txt")' in last_user(server.requests[2])
    assert [e.name for e in rec.of(AidFired)] == ["answer.command"]


def test_a_file_named_like_an_order_is_not_one(server, project: Path) -> None:
    """"report.py crashes …" starts with the word "report" but asks for a fix, not an answer."""
    (project / "report.py").write_text(STATS)
    server.script(read_reply("report.py"), answer_reply("It divides by the count."), answer_reply("Done."))
    agent, rec = make_agent(server, project, disable_aids=["answer.unchanged", "answer.idle"])
    agent.run("report.py crashes on an empty list. Print n/a as the average instead.")
    assert "answer.computed" not in [e.name for e in rec.of(AidFired)]
    server.script(read_reply("report.py"), answer_reply("It is 5."), answer_reply("It is 5.33."))
    agent, rec = make_agent(server, project)
    agent.run("Report the average report.py prints.")  # the order itself still asks for a value
    assert [e.name for e in rec.of(AidFired)] == ["answer.computed"]
