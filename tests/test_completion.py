"""Completion checks: one reminder per kind when the work the task asked for is not on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mzagent_tui.agent.aids.completion import claimed_files, task_targets
from mzagent_tui.agent.events import Notice, Observation, StopReason
from mzagent_tui.agent.model.parsing import call_source, parse_reply
from mzagent_tui.agent.tools.syntax_check import syntax_problem
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, last_user, read_reply, write_reply


@pytest.mark.parametrize(("task", "targets"), [
    ("Run calc.py and save what it prints to result.txt.", ["result.txt"]),
    ("Create upper.txt with the contents of words.txt in uppercase.", ["upper.txt"]),
    ("Read data.csv and write the total of the second column into total.txt", ["total.txt"]),
    ("Fix the bug in calc.py", ["calc.py"]),
    ("Implement parse_date in dates/parse.py. The tests are in tests/test_parse.py.", ["dates/parse.py"]),
    ("Make the tests in test_stack.py pass.", []),
    ("How many lines does data.txt have?", []),
    ("Rename old.txt to new.txt.", []),
    ("Add a section to GUIDE.md. Then run check.py.", ["GUIDE.md"]),
    ("Convert prices.csv to prices.json with a number for each price.", ["prices.json"]),
    ("Translate notes.md into notes.fr.md", ["notes.fr.md"]),
    ("Copy a.txt to b.txt and change b.txt to uppercase", ["b.txt"]),
    ("Save the output of run.py to out.txt", ["out.txt"]),
    ("Change the port in app.ini to 9090", ["app.ini"]),
    ("Create a.py, b.py and c.py.", ["a.py", "b.py", "c.py"]),
    ("Write a package with two modules: alpha.py with shout(s), and beta.py with half(n).", ["alpha.py"]),
    ("Write tests for tally.py.", []),
    ("Add test cases of the parse function in parse.py to tests/test_parse.py", ["tests/test_parse.py"]),
    ("Fix the tests of x.py so they pass and update x.py", ["x.py"]),
    ("Add a constant VERSION = '2.0' to settings.py and set the version to 1.4.2", ["settings.py"]),
    ("Create clip.mp3, v2.0.txt and app.h264", ["clip.mp3", "v2.0.txt", "app.h264"]),
    ("Convert scores.json (a list of objects with name and score) to scores.csv with a header row.", ["scores.csv"]),
    ("Add a constant LIMIT = 5 to config.py and make cli.py print it.", ["config.py", "cli.py"]),
    ("Move greet into words.py and make main.py import it from there.", ["main.py"]),
    ("Make test_cli.py pass.", []),
    ("Make tests/test_cli.py pass and make deploy.sh executable.", []),
])
def test_the_files_a_task_asks_to_write(task: str, targets: list[str]) -> None:
    assert task_targets(task) == targets


@pytest.mark.parametrize(("answer", "claimed"), [
    ("I wrote report.md with the totals.", ["report.md"]),
    ("Saved 4181 to result.txt.", ["result.txt"]),
    ("Shape.area is abstract; it raises in base.py.", []),
    ("os.path.join builds the path. I created out.txt.", ["out.txt"]),
    ("I created the package with two modules: alpha.py and beta.py.", ["alpha.py", "beta.py"]),
    ("I read notes.md and words.md, then wrote out.md.", ["out.md"]),
])
def test_the_files_an_answer_claims(answer: str, claimed: list[str]) -> None:
    assert claimed_files(answer) == claimed


def test_a_package_claimed_after_only_making_its_folder_gets_a_reminder(server, project: Path) -> None:
    """"I created the package with two modules: alpha.py and beta.py" after only `mkdir -p kit`;
    the modules, written into the package's folder, count as there."""
    task = "Create a package named kit with two modules: alpha.py with shout(s), and beta.py with half(n)."
    server.script(
        Reply('<action>run_terminal_command("mkdir -p kit")</action>'),
        answer_reply("I created the package named kit with two modules: alpha.py and beta.py."),
        write_reply("kit/alpha.py", "def shout(s):\n    return s.upper()\n"),
        write_reply("kit/beta.py", "def half(n):\n    return n / 2\n"),
        answer_reply("Done: kit/alpha.py and kit/beta.py."),
    )
    agent, rec = make_agent(server, project)
    assert agent.run(task).final_answer == "Done: kit/alpha.py and kit/beta.py."
    assert "the task asks for alpha.py, beta.py, but none of these files exists" in last_user(server.requests[2])
    assert [n.text for n in rec.of(Notice)] == ["the task asks for alpha.py, beta.py, which do not exist; the model was reminded once"]


def test_files_still_missing_after_some_were_made_get_another_reminder(server, project: Path) -> None:
    """Reminded of two missing modules, a small model wrote one and answered again: it is reminded
    of the rest while each reminder finds fewer missing, and an answer that makes none stands."""
    task = "Create a package named kit with three modules: alpha.py, beta.py and gamma.py."
    server.script(
        write_reply("kit/__init__.py", ""),
        answer_reply("Created kit."),
        write_reply("kit/alpha.py", "A = 1\n"),
        answer_reply("Created kit."),
        answer_reply("Created kit."),
    )
    agent, rec = make_agent(server, project)
    result = agent.run(task)
    assert result.final_answer == "Created kit." and result.steps == 5
    assert len(server.requests) == 5
    assert last_user(server.requests[4]) == (
        "<observation>Reminder: the task also asks for beta.py, gamma.py, which do not exist yet. Create each now with "
        "write_to_file, or give your final answer again if the task does not need them.</observation>"
    )
    assert [n.text for n in rec.of(Notice)] == [
        "the task asks for alpha.py, beta.py, gamma.py, which do not exist; the model was reminded once",
        "the task still asks for beta.py, gamma.py; the model was reminded once",
    ]


def test_a_file_moved_instead_of_the_name_in_it_is_shown_the_command_that_moves_it_back(server, project: Path) -> None:
    """Told to rename a function in loader.py, a small model ran `mv loader.py loader_words.py`,
    was told to put the file back under its name, and went on without it."""
    (project / "loader.py").write_text("def load(p):\n    return p\n")
    (project / "other.py").write_text("def load(p):\n    return p\n")
    back = 'run_terminal_command("mv \'new dir/loader_words.py\' loader.py")'
    server.script(
        Reply("<action>run_terminal_command(\"mkdir 'new dir' && mv loader.py 'new dir/loader_words.py'\")</action>"),
        Reply(f"<action>{back}</action>"),
        answer_reply("Done."),
    )
    agent, rec = make_agent(server, project)
    agent.run("Rename the function load in loader.py to load_words.")
    assert [o for o in rec.of(Observation) if o.tool == "run_terminal_command"][0].text.endswith(
        "\nNote: loader.py, which the task names, is gone now: the command moved it to new dir/loader_words.py. The task asks "
        f"to change what is in loader.py, not to move or rename the file: put it back with {back}, then change its content if "
        "the task asks for that."
    )
    assert (project / "loader.py").read_text() == "def load(p):\n    return p\n"


def test_a_file_renamed_instead_of_the_name_in_it_is_told_it_is_gone(server, project: Path) -> None:
    """Told to rename a function, a small model renamed the file that defined it."""
    (project / "util.py").write_text("def total(xs):\n    return sum(xs)\n")
    (project / "app.py").write_text("from util import total\n\nprint(total([1]))\n")
    server.script(
        Reply("<action>run_terminal_command(\"mv util.py util_old.py && sed -i 's/total/sum_all/g' util_old.py app.py\")</action>"),
        answer_reply("Renamed."),
        answer_reply("Renamed."),
    )
    agent, rec = make_agent(server, project)
    agent.run("Rename the function total to sum_all in util.py and in app.py, which calls it.")
    assert rec.of(Observation)[-1].text.endswith(
        "\nNote: util.py, which the task names, is gone now. The task asks to change what is in it, not to delete, move or "
        "rename the file: put it back under its name, with its content changed if the task asks for that."
    )


FAILING_TEST = (
    "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertEqual(1, 1)\n\n"
    "    def test_sum(self):\n        self.assertEqual(sum([1, 2]), 4)\n"
)


def test_a_question_about_tests_answered_without_the_failing_test_is_reminded_of(server, project: Path) -> None:
    """A small model ran the tests, was told "Failing tests: test_sum", and answered with an assertion
    whose sides it had swapped, naming no test."""
    (project / "test_t.py").write_text(FAILING_TEST)
    server.script(
        Reply('<action>run_terminal_command("python3 -m unittest test_t")</action>'),
        answer_reply("The failing test is assertEqual(4, 3)."),
        answer_reply("test_sum fails: sum([1, 2]) is 3, not 4."),
    )
    agent, rec = make_agent(server, project)
    result = agent.run("One test in test_t.py fails. Which one?")
    assert result.final_answer == "test_sum fails: sum([1, 2]) is 3, not 4."
    assert last_user(server.requests[2]) == (
        "<observation>Reminder: the test runs in this task reported these failing tests: test_sum. Your answer does not name them. "
        "Answer the question again with what those runs showed.</observation>"
    )


def test_a_failing_test_fixed_instead_of_named_is_still_asked_for(server, project: Path) -> None:
    """Asked which test fails, a small model fixed the code, ran the tests again (they passed) and
    answered that it had fixed the failing test, naming none."""
    (project / "test_t.py").write_text(FAILING_TEST)
    server.script(
        Reply('<action>run_terminal_command("python3 -m unittest test_t")</action>'),
        read_reply("test_t.py"),
        write_reply("test_t.py", FAILING_TEST.replace("4)", "3)")),
        Reply('<action>run_terminal_command("python3 -m unittest test_t")</action>'),
        answer_reply("I fixed the failing test."),
        answer_reply("test_sum failed."),
    )
    agent, _ = make_agent(server, project)
    assert agent.run("One test in test_t.py fails. Which one?").final_answer == "test_sum failed."
    assert "reported these failing tests: test_sum." in last_user(server.requests[5])


@pytest.mark.parametrize(
    ("task", "answer"),
    [("Which test in test_t.py fails?", "test_sum fails."), ("Make the tests in test_t.py pass.", "I could not.")],
    ids=["named", "not a question"],
)
def test_no_failing_test_reminder_when_named_or_not_asked(server, project: Path, task: str, answer: str) -> None:
    (project / "test_t.py").write_text(FAILING_TEST)
    server.script(Reply('<action>run_terminal_command("python3 -m unittest test_t")</action>'), answer_reply(answer), answer_reply(answer))
    agent, rec = make_agent(server, project)
    agent.run(task)
    assert not [n for n in rec.of(Notice) if "failing" in n.text]


STACK = "class Stack:\n    def __init__(self):\n        self.items = []\n"
STACK_TEST = (
    "import unittest\n\nfrom stack import Stack\n\n\nclass T(unittest.TestCase):\n"
    "    def test_empty(self):\n        self.assertTrue(Stack().is_empty())\n\n"
    "    def test_size(self):\n        self.assertEqual(Stack().size(), 0)\n"
)
RUN_TESTS = Reply('<action>run_terminal_command("python3 -m unittest test_stack")</action>')


def test_a_fix_answered_without_running_the_failed_tests_again_is_sent_to_run_them(server, project: Path) -> None:
    """A small model wrote a fix after a failing run and answered "the tests are now passing"
    without running them; they were not (it had left out a method)."""
    (project / "stack.py").write_text(STACK)
    (project / "test_stack.py").write_text(STACK_TEST)
    half = STACK + "\n    def is_empty(self):\n        return not self.items\n"
    whole = half + "\n    def size(self):\n        return len(self.items)\n"
    server.script(
        RUN_TESTS, read_reply("stack.py"), write_reply("stack.py", half), answer_reply("The tests are now passing."),
        RUN_TESTS, write_reply("stack.py", whole), RUN_TESTS, answer_reply("Both tests pass."),
    )
    agent, rec = make_agent(server, project)
    assert agent.run("Make the tests in test_stack.py pass.").final_answer == "Both tests pass."
    assert last_user(server.requests[4]) == (
        "<observation>Reminder: when you last ran the tests, these failed: test_empty, test_size. You changed stack.py after that "
        "and have not run them again, so whether they pass now is not known. Run them again:\n"
        'run_terminal_command("python3 -m unittest test_stack")\n'
        "If they pass, give your final answer; if not, fix the code.</observation>"
    )
    assert [n.text for n in rec.of(Notice) if "tests failed" in n.text] == [
        "tests failed, stack.py changed since, and the tests were not run again; the model was reminded once"
    ]
    assert rec.of(Observation)[-1].ok


@pytest.mark.parametrize(
    "check",
    ['run_terminal_command("python3 -m pytest -q")', 'run_terminal_command("python3 -m unittest test_stack")'],
    ids=["another test command", "the same command"],
)
def test_no_retest_reminder_when_tests_ran_after_the_change(server, project: Path, check: str) -> None:
    (project / "stack.py").write_text(STACK)
    (project / "test_stack.py").write_text(STACK_TEST)
    server.script(RUN_TESTS, read_reply("stack.py"), write_reply("stack.py", STACK + "\n\nX = 1\n"), Reply(f"<action>{check}</action>"), answer_reply("Still failing."), answer_reply("Still failing."))
    agent, rec = make_agent(server, project)
    assert agent.run("Make the tests in test_stack.py pass.").final_answer == "Still failing."
    assert not [n for n in rec.of(Notice) if "not run again" in n.text], [n.text for n in rec.of(Notice)]


def test_an_answer_after_a_failed_test_run_with_nothing_changed_since_is_sent_back(server, project: Path) -> None:
    """A small model saw all three tests fail and answered "the test file should pass now"."""
    (project / "stack.py").write_text(STACK)
    (project / "test_stack.py").write_text(STACK_TEST)
    claim = "I fixed stack.py. The tests should pass now."
    server.script(RUN_TESTS, answer_reply(claim), answer_reply("They still fail: Stack has no is_empty."))
    agent, rec = make_agent(server, project)
    assert agent.run("Make the tests in test_stack.py pass.").final_answer == "They still fail: Stack has no is_empty."
    assert last_user(server.requests[2]) == (
        "<observation>Reminder: when the tests last ran (python3 -m unittest test_stack), these failed: test_empty, test_size, "
        "and no file was written since, so they still fail. Fix the code (each failure shows what the test expected and what "
        "it got), run the tests again, then answer; or say in your final answer why they cannot pass.</observation>"
    )


@pytest.mark.parametrize(
    ("task", "last"),
    [
        ("Which test in test_stack.py fails?", RUN_TESTS),
        ("Make the tests in test_stack.py pass.", Reply('<action>run_terminal_command("python3 -m unittest test_stack")</action>')),
    ],
    ids=["a question", "a passing run since"],
)
def test_no_failing_tests_reminder_for_a_question_or_after_a_passing_run(server, project: Path, task: str, last: Reply) -> None:
    (project / "stack.py").write_text(STACK)
    (project / "test_stack.py").write_text(STACK_TEST)
    fixed = STACK + "\n    def is_empty(self):\n        return not self.items\n\n    def size(self):\n        return len(self.items)\n"
    steps = [RUN_TESTS, answer_reply("test_empty and test_size.")] if task.startswith("Which") else [
        RUN_TESTS, read_reply("stack.py"), write_reply("stack.py", fixed), last, answer_reply("Fixed."),
    ]
    server.script(*steps)
    agent, rec = make_agent(server, project)
    agent.run(task)
    assert not [n for n in rec.of(Notice) if "nothing changed since" in n.text], [n.text for n in rec.of(Notice)]
    assert len(server.requests) == len(steps)


@pytest.mark.parametrize(
    ("task", "command"),
    [("Rename old.txt to new.txt.", "mv old.txt new.txt"), ("Delete the file old.txt.", "rm old.txt"), ("Read old.txt.", "mv old.txt x && mv x old.txt")],
    ids=["a rename the task asks for", "a deletion the task asks for", "put back in the same command"],
)
def test_no_gone_note_when_the_task_moves_the_file_or_it_is_back(server, project: Path, task: str, command: str) -> None:
    (project / "old.txt").write_text("old\n")
    server.script(Reply(f'<action>run_terminal_command("{command}")</action>'), answer_reply("Done."))
    agent, rec = make_agent(server, project)
    agent.run(task)
    assert "which the task names, is gone now" not in next(o.text for o in rec.of(Observation) if o.tool == "run_terminal_command")


def test_a_conversion_that_lost_records_is_reminded_of(server, project: Path) -> None:
    """Reminded that the CSV was missing, a small model wrote its header row alone and answered."""
    (project / "marks.json").write_text('[{"name": "Ann", "mark": 90}, {"name": "Bo", "mark": 85}]\n')
    server.script(
        write_reply("marks.csv", "name,mark\n"),
        answer_reply("Converted."),
        write_reply("marks.csv", "name,mark\nAnn,90\nBo,85\n"),
        answer_reply("Converted."),
    )
    agent, rec = make_agent(server, project)
    assert agent.run("Convert marks.json (a list of objects) to marks.csv with a header row name,mark.").steps == 4
    assert last_user(server.requests[2]) == (
        "<observation>Reminder: marks.json holds 2 records, but marks.csv holds 0. The conversion needs every record of "
        "marks.json in marks.csv. Write marks.csv again with all of them (write_to_file with the whole content), or give "
        "your final answer again if it is right as it is.</observation>"
    )
    assert [n.text for n in rec.of(Notice)] == ["marks.csv holds 0 of the 2 records of marks.json; the model was reminded once"]


def test_a_conversion_with_every_record_gets_no_records_reminder(server, project: Path) -> None:
    (project / "marks.csv").write_text("name,mark\nAnn,90\nBo,85\n")
    server.script(write_reply("marks.json", '[{"name": "Ann", "mark": 90}, {"name": "Bo", "mark": 85}]'), answer_reply("Converted."))
    agent, rec = make_agent(server, project)
    assert agent.run("Turn marks.csv into a JSON file named marks.json.").steps == 2
    assert not rec.of(Notice)


TEXT_UTILS = "def shout(text):\n    return text.upper() + '!'\n\n\ndef whisper(text):\n    return text.lower()\n"


def test_a_definition_a_rewrite_dropped_is_reminded_of_with_the_earlier_content(server, project: Path) -> None:
    """Told to change shout, a small model wrote the file with shout alone, ignored the write's
    note that whisper was gone, and answered."""
    (project / "text_utils.py").write_text(TEXT_UTILS)
    changed = TEXT_UTILS.replace("'!'", "'!!'")
    server.script(
        read_reply("text_utils.py"),
        write_reply("text_utils.py", "def shout(text):\n    return text.upper() + '!!'\n"),
        answer_reply("Changed."),
        write_reply("text_utils.py", changed),
        answer_reply("Changed."),
    )
    agent, rec = make_agent(server, project)
    assert agent.run("In text_utils.py, make shout end with two exclamation marks.").steps == 5
    assert last_user(server.requests[3]) == (
        "<observation>Reminder: text_utils.py no longer defines whisper, which it defined when the task started, and the task "
        f"does not ask to remove it. write_to_file replaces the whole file. Its content before this task was:\n{TEXT_UTILS}\n"
        "Write text_utils.py again with whisper kept and your change made, or give your final answer again if whisper should be gone.</observation>"
    )
    assert [n.text for n in rec.of(Notice)] == ["text_utils.py no longer defines whisper, which the task does not remove; the model was reminded once"]
    assert (project / "text_utils.py").read_text() == changed


@pytest.mark.parametrize(
    "task",
    ["Rename shout to yell and remove whisper from text_utils.py.", "Delete the function whisper; rename shout to yell in text_utils.py."],
)
def test_no_lost_definition_reminder_for_a_name_the_task_names(server, project: Path, task: str) -> None:
    (project / "text_utils.py").write_text(TEXT_UTILS)
    server.script(read_reply("text_utils.py"), write_reply("text_utils.py", "def yell(text):\n    return text.upper() + '!'\n"), answer_reply("Done."))
    agent, rec = make_agent(server, project)
    assert agent.run(task).steps == 3
    assert not [n for n in rec.of(Notice) if "no longer defines" in n.text]


def test_a_result_given_only_in_the_answer_is_sent_back_to_the_file(server, project: Path) -> None:
    server.script(
        answer_reply("The script prints 4181."),
        write_reply("result.txt", "4181\n"),
        answer_reply("Saved 4181 to result.txt."),
    )
    agent, rec = make_agent(server, project)
    result = agent.run("Run calc.py and save what it prints to result.txt.")
    assert result.final_answer == "Saved 4181 to result.txt." and result.steps == 3
    assert "the task asks for result.txt, but no such file exists" in last_user(server.requests[1])
    assert [n.text for n in rec.of(Notice)] == ["the task asks for result.txt, which does not exist; the model was reminded once"]


def test_an_unchanged_target_gets_one_reminder_and_a_second_answer_is_accepted(server, project: Path) -> None:
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    server.script(answer_reply("It is correct already."), answer_reply("It is correct already."))
    agent, _ = make_agent(server, project)
    result = agent.run("Fix the bug in calc.py")
    assert result.reason is StopReason.FINAL_ANSWER and result.steps == 2
    assert "exactly as it was when the task started" in last_user(server.requests[1])


def test_a_python_file_the_run_broke_is_pointed_out_once(server, project: Path) -> None:
    server.script(
        write_reply("calc.py", "def add(a, b)\n    return a + b\n"),
        answer_reply("Fixed."),
        answer_reply("Fixed."),
    )
    agent, rec = make_agent(server, project)
    result = agent.run("Fix calc.py")
    assert result.steps == 3
    reminder = last_user(server.requests[2])
    assert "Reminder: calc.py, which this task wrote, does not parse: SyntaxError: expected ':' (line 1)" in reminder
    assert any(n.text == "calc.py does not parse; the model was reminded once" for n in rec.of(Notice))


def test_a_file_written_before_the_task_is_not_checked(server, project: Path) -> None:
    (project / "broken.py").write_text("def x(:\n")
    server.script(answer_reply("It has a syntax error."))
    agent, _ = make_agent(server, project)
    assert agent.run("What is wrong with broken.py?").steps == 1


def test_each_kind_of_reminder_is_given_at_most_once(server, project: Path) -> None:
    """Missing files are the one kind said again, and only while fewer are missing each time."""
    server.script(
        answer_reply("Done."),  # out.txt and out.py missing
        write_reply("out.py", "x = (\n"),
        answer_reply("Done."),  # out.txt still missing, out.py made since
        answer_reply("Done."),  # out.py does not compile
        answer_reply("Done."),  # out.txt still missing, nothing made since: accepted
    )
    agent, rec = make_agent(server, project)
    result = agent.run("Create out.txt and out.py")
    assert result.reason is StopReason.FINAL_ANSWER and result.steps == 5
    assert [n.text.split(";")[0] for n in rec.of(Notice)] == [
        "the task asks for out.txt, out.py, which do not exist", "the task still asks for out.txt", "out.py does not parse",
    ]


def test_a_target_outside_the_project_is_ignored(server, project: Path) -> None:
    server.script(answer_reply("I cannot write there."))
    agent, _ = make_agent(server, project)
    assert agent.run("Write the report to ../../etc/report.txt").steps == 1


def test_a_reply_that_edits_nothing_under_a_question_is_accepted(server, project: Path) -> None:
    (project / "setup.ini").write_text("[x]\nversion = 3\n")
    server.script(Reply('<action>read_file("setup.ini")</action>'), answer_reply("Version 3."))
    agent, _ = make_agent(server, project)
    assert agent.run("What version is in setup.ini?").steps == 2


def test_a_named_file_that_does_not_parse_is_pointed_out_when_the_task_asks_for_a_fix(server, project: Path) -> None:
    (project / "data.json").write_text('{"a": [1 2]}\n')
    server.script(Reply('<action>read_file("data.json")</action>'), answer_reply("It is valid already."), answer_reply("It is valid already."))
    agent, rec = make_agent(server, project)
    result = agent.run("data.json is not valid JSON. Fix it without changing its values.")
    assert result.steps == 3
    reminder = last_user(server.requests[2])
    assert "Reminder: data.json, which the task names, does not parse: invalid JSON: Expecting ',' delimiter (line 1, column 10)" in reminder
    assert "You have read it: call write_to_file with the whole fixed data.json, or say in your final answer why" in reminder
    assert any(n.text == "data.json does not parse; the model was reminded once" for n in rec.of(Notice))


def test_a_named_json_file_with_only_trailing_commas_is_shown_the_call_that_removes_them(server, project: Path) -> None:
    """Told where the two trailing commas of data.json are, a small model read it again three
    times; the reminder now shows the call to send, which the model can copy."""
    (project / "data.json").write_text('{\n  "sizes": [1, 2,],\n  "open": true,\n}\n')
    fixed = '{\n  "sizes": [1, 2],\n  "open": true\n}\n'
    server.script(read_reply("data.json"), answer_reply("It is valid already."), write_reply("data.json", fixed), answer_reply("Fixed."))
    agent, _ = make_agent(server, project)
    assert agent.run("data.json is not valid JSON. Fix it without changing its values.").final_answer == "Fixed."
    assert last_user(server.requests[2]) == (
        "<observation>Reminder: data.json, which the task names, does not parse: invalid JSON: 2 commas after the last item of a "
        "list or object (line 2, column 17 and line 3, column 15): JSON allows none there, remove them. "
        f"Send this call, which removes only those commas:\n{call_source('write_to_file', ['data.json', fixed])}</observation>"
    )
    assert (project / "data.json").read_text() == fixed


def test_no_call_is_shown_for_a_json_file_a_link_leads_out_of_the_project_to(server, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"secret": "OUTSIDE-SECRET",}\n')
    (project / "data.json").symlink_to(outside)
    server.script(read_reply("data.json"), answer_reply("It is valid already."), answer_reply("It is valid already."))
    agent, _ = make_agent(server, project)
    agent.run("data.json is not valid JSON. Fix it.")
    assert not any("OUTSIDE-SECRET" in json.dumps(request) for request in server.requests)


def test_a_replace_task_names_its_file_as_a_target(server, project: Path) -> None:
    (project / "essay.txt").write_text("The colour.\n")
    server.script(answer_reply("The colour is now color."), answer_reply("Done."))
    agent, _ = make_agent(server, project)
    assert agent.run("Replace every occurrence of the word colour with color in essay.txt.").steps == 2
    assert "exactly as it was when the task started" in last_user(server.requests[1])


def test_a_write_that_leaves_a_file_unparseable_says_so_at_once(server, project: Path) -> None:
    server.script(
        Reply('<action>write_to_file("greet.py", "def greet(name):\\\\n    return name\\\\n")</action>'),
        Reply('<action>write_to_file("app.ini", "server:\\nport = 1\\n")</action>'),
        answer_reply("ok"),
        answer_reply("ok"),
    )
    agent, rec = make_agent(server, project)
    agent.run("Create greet.py and app.ini")
    first, second = (o.text for o in rec.of(Observation)[:2])
    assert "Warning: greet.py does not parse now: SyntaxError" in first
    assert "one line with \\n written out as backslash and n" in first
    assert "Warning: app.ini does not parse now: invalid INI: File contains no section headers." in second


def test_a_python_file_with_a_block_after_a_semicolon_is_explained() -> None:
    problem = syntax_problem("conv.py", b"import csv; with open('a.csv') as f: rows = list(csv.reader(f))\n")
    assert problem == (
        "SyntaxError: invalid syntax (line 1); a with/for/while/if/def/class/try statement cannot follow ; on the same line "
        "in Python: put each statement on its own line (\\n in the string) with indentation"
    )
    assert syntax_problem("ok.py", b"x = 1; y = 2\nif x:\n    pass\n") is None


def test_an_escaped_dollar_before_arithmetic_in_a_script_is_explained() -> None:
    problem = syntax_problem("sq.sh", b"for i in 1 2; do echo \\$(($i * $i)); done\n")
    assert problem is not None and problem.endswith(
        "; \\$ is a literal dollar sign in bash, so \\$(( ... )) is not arithmetic: write $(( ... )) with no backslash"
    )
    assert syntax_problem("sq.sh", b"for i in 1 2; do echo $((i * i)); done\n") is None


def test_the_one_file_a_fix_task_names_is_its_target_wherever_the_verb_is(server, project: Path) -> None:
    (project / "temp.py").write_text("def f(c):\n    return c * 5 / 9 + 32\n")
    server.script(answer_reply("The formula is correct."), answer_reply("The formula is correct."))
    agent, _ = make_agent(server, project)
    assert agent.run("f in temp.py gives wrong results. Fix the formula.").steps == 2
    assert "exactly as it was when the task started" in last_user(server.requests[1])


@pytest.mark.parametrize("tests", ["test_units.py", "tests/check_units.py", "units_test.py", "units.spec.js"])
def test_the_one_file_a_fix_task_names_is_not_its_target_when_it_is_a_test_file(server, project: Path, tests: str) -> None:
    """"The tests in test_x.py fail. Fix the code, not the tests": a reminder that the test file is
    unchanged would send the model to change the tests."""
    (project / tests).parent.mkdir(parents=True, exist_ok=True)
    (project / tests).write_text("import unittest\n")
    server.script(Reply(f'<action>read_file("{tests}")</action>'), answer_reply("The code is wrong."), answer_reply("Done."))
    agent, _ = make_agent(server, project)
    agent.run(f"The tests in {tests} fail. Fix the code, not the tests.")
    assert all(tests + ", but it is exactly as it was" not in last_user(request) for request in server.requests)


def test_a_target_the_run_left_empty_gets_one_reminder(server, project: Path) -> None:
    server.script(write_reply("list.txt", ""), answer_reply("Wrote the list."), answer_reply("Wrote the list."))
    agent, rec = make_agent(server, project)
    assert agent.run("Write the names of the files, one per line, into list.txt.").steps == 3
    assert "Reminder: the task asks to write into list.txt, but it is empty" in last_user(server.requests[2])
    assert [n.text for n in rec.of(Notice)] == ["the task asks to write into list.txt, which is empty; the model was reminded once"]


def test_an_unchanged_stub_is_named_as_one(server, project: Path) -> None:
    (project / "impl.py").write_text("def f():\n    raise NotImplementedError\n")
    server.script(*[answer_reply("It is implemented.")] * 3)
    agent, rec = make_agent(server, project)
    assert agent.run("Implement f in impl.py.").final_answer == "It is implemented."
    reminder = last_user(server.requests[1])
    assert "so the task is not done yet; impl.py still raises NotImplementedError. You have read impl.py already" in reminder
    stub = last_user(server.requests[2])
    assert "impl.py still raises NotImplementedError, so it is not implemented yet. Call write_to_file" in stub
    assert len(server.requests) == 3, "the third answer stands"
    assert [n.text for n in rec.of(Notice)][-1] == "impl.py still raises NotImplementedError; the model was reminded once"


def test_a_stub_written_with_its_raise_kept_is_reminded_of(server, project: Path) -> None:
    (project / "impl.py").write_text("def f():\n    raise NotImplementedError\n")
    server.script(
        read_reply("impl.py"),
        write_reply("impl.py", "def f():\n    raise NotImplementedError\n\n\ndef g():\n    return 1\n"),
        answer_reply("Done."),
        write_reply("impl.py", "def f():\n    return 1\n"),
        answer_reply("Done."),
    )
    agent, _ = make_agent(server, project)
    assert agent.run("Implement f in impl.py.").final_answer == "Done."
    assert "impl.py still raises NotImplementedError, so it is not implemented yet" in last_user(server.requests[3])
    assert len(server.requests) == 5


BUGGY = "def cents(euros):\n    # to cents\n    return euros * 10\n"


@pytest.mark.parametrize("rewrite", [
    'def cents(euros):\n    """Return euros times ten."""\n    return euros * 10\n',
    "def cents( euros ):\n    return (euros * 10)  # still ten\n\n",
])
def test_a_fix_that_changed_only_docstrings_comments_or_layout_is_reminded_of(server, project: Path, rewrite: str) -> None:
    """A small model "fixed" a bug by adding a docstring that described the bug."""
    (project / "money.py").write_text(BUGGY)
    server.script(
        Reply('<action>read_file("money.py")</action>'),
        write_reply("money.py", rewrite),
        answer_reply("Fixed."),
        write_reply("money.py", "def cents(euros):\n    return euros * 100\n"),
        answer_reply("Fixed: times 100."),
    )
    agent, rec = make_agent(server, project)
    assert agent.run("cents in money.py gives wrong results. Fix it.").final_answer == "Fixed: times 100."
    reminder = last_user(server.requests[3])
    assert "Reminder: the task asks to change money.py, but its code is the same as when the task started" in reminder
    assert "You have read it: call write_to_file now with the code itself changed." in reminder
    assert [n.text for n in rec.of(Notice)] == ["money.py was rewritten, but its code is the same; the model was reminded once"]


@pytest.mark.parametrize(("task", "rewrite"), [
    ("Add a docstring to cents in money.py.", 'def cents(euros):\n    """To cents."""\n    # to cents\n    return euros * 10\n'),
    ("Reformat money.py with four-space indents.", "def cents(euros):\n    # to cents\n    return euros*10\n"),
    ("Fix cents in money.py.", "def cents(euros):\n    return euros * 100\n"),
])
def test_no_same_code_reminder_for_layout_tasks_or_real_changes(server, project: Path, task: str, rewrite: str) -> None:
    (project / "money.py").write_text(BUGGY)
    server.script(read_reply("money.py"), write_reply("money.py", rewrite), answer_reply("Done."))
    agent, rec = make_agent(server, project)
    assert agent.run(task).final_answer == "Done."
    assert len(server.requests) == 3 and not rec.of(Notice)


def test_a_reminder_about_a_file_already_read_asks_for_the_write(server, project: Path) -> None:
    """A small model told "read the file if you need to" reads it again and answers again: when it
    has read the file in this run, the reminder names the write as the next step."""
    (project / "impl.py").write_text("def f():\n    raise NotImplementedError\n")
    server.script(
        Reply('<action>read_file("./impl.py")</action>'),
        answer_reply("It is implemented."),
        answer_reply("It is implemented."),
    )
    agent, _ = make_agent(server, project)
    agent.run("Implement f in impl.py.")
    reminder = last_user(server.requests[2])
    assert "impl.py still raises NotImplementedError. You have read impl.py already: call write_to_file now" in reminder
    assert "read the file if you need to" not in reminder


def test_a_written_file_holding_the_projects_absolute_path_is_reminded_of_once(server, project: Path) -> None:
    server.script(
        write_reply("copy.sh", f"cd {project}\ncp a.txt b.txt\n"),
        answer_reply("Wrote copy.sh."),
        answer_reply("It must run from anywhere, so it keeps the path."),
    )
    agent, rec = make_agent(server, project)
    assert agent.run("Write copy.sh, a script that copies a.txt to b.txt.").final_answer == "It must run from anywhere, so it keeps the path."
    assert f"copy.sh, which this task wrote, contains the project's absolute path ({project}) in line 1: cd {project}." in last_user(server.requests[2])
    assert "call write_to_file with the whole copy.sh again, the path made relative (or a `cd` to it left out)" in last_user(server.requests[2])
    assert len(server.requests) == 3
    assert "copy.sh holds the project's absolute path; the model was reminded once" in [n.text for n in rec.of(Notice)]


def test_a_question_about_running_answered_without_running_is_reminded_of(server, project: Path) -> None:
    (project / "test_units.py").write_text("def test_a():\n    assert 1 == 2\n")
    server.script(
        answer_reply("test_b fails."),
        Reply('<action>run_terminal_command("python3 -m pytest -q test_units.py")</action>'),
        answer_reply("test_a fails."),
    )
    agent, _ = make_agent(server, project)
    assert agent.run("One test in test_units.py fails. Which one?").final_answer == "test_a fails."
    assert "no command was run in this task, so the answer is a guess" in last_user(server.requests[1])


def test_a_task_asking_for_work_answered_after_only_reading_is_reminded_of(server, project: Path) -> None:
    (project / "test_units.py").write_text("from units import metres\n\n\ndef test_m():\n    assert metres(1) == 100\n")
    server.script(
        Reply('<action>read_file("test_units.py")</action>'),
        answer_reply("I read test_units.py."),
        answer_reply("It needs units.py."),
    )
    agent, rec = make_agent(server, project)
    assert agent.run("Make the tests in test_units.py pass.").final_answer == "It needs units.py."
    assert "so far you have only read: nothing was written and no command was run" in last_user(server.requests[2])
    assert "the task asks for work, and nothing was written or run; the model was reminded once" in [n.text for n in rec.of(Notice)]


UNITS_TEST = {"test_units.py": "def test_m():\n    assert True\n"}


@pytest.mark.parametrize(("files", "task", "replies"), [
    ({"base.py": "class Shape:\n    def area(self):\n        raise NotImplementedError\n"}, "What does Shape.area in base.py do?", []),
    ({}, "Write copy.sh, a script that copies a.txt to b.txt.", [write_reply("copy.sh", "cp a.txt b.txt\n")]),
    ({}, "What does config.ini say about the port?", []),
    ({}, "How many functions does util.py define?", []),
    ({}, "Tell me what the print calls in util.py are for.", []),
    (UNITS_TEST, "hello", []),
    (UNITS_TEST, "Tell me what test_units.py checks.", []),
    (UNITS_TEST, "List the tests in test_units.py", []),
])
def test_an_answer_that_needs_no_reminder_stands(server, project: Path, files: dict[str, str], task: str, replies: list[Reply]) -> None:
    """A file that is abstract on purpose, a script without the project's path, questions that
    reading answers, a greeting and orders that ask for an answer: no check holds them up."""
    for name, content in files.items():
        (project / name).write_text(content)
    server.script(*replies, answer_reply("It is so."))
    agent, _ = make_agent(server, project)
    assert agent.run(task).final_answer == "It is so."
    assert len(server.requests) == len(replies) + 1


def test_a_shell_script_that_does_not_parse_is_said_at_once(server, project: Path) -> None:
    server.script(
        Reply('<action>write_to_file("deploy.sh", "for i in 1 2; do echo \\\\$(($i*2))\\n")</action>'),  # no done: broken with or without the backslash
        Reply('<action>write_to_file("deploy.sh", "for i in 1 2; do echo $((i*2)); done\\n")</action>'),
        answer_reply("ok"),
    )
    agent, rec = make_agent(server, project)
    agent.run("Create deploy.sh")
    broken, fixed = (o.text for o in rec.of(Observation)[:2])
    assert "Warning: deploy.sh does not parse now: bash syntax error: line 1: syntax error near unexpected token `('" in broken
    assert "does not parse" not in fixed


def test_checking_a_script_runs_none_of_it(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """`bash -n` parses only; no start-up file (`BASH_ENV`) is read, and nothing in the script runs."""
    marker = tmp_path / "ran"
    startup = tmp_path / "startup.sh"
    startup.write_text(f"touch {marker}\n")
    monkeypatch.setenv("BASH_ENV", str(startup))
    monkeypatch.setenv("ENV", str(startup))
    assert syntax_problem("x.sh", f"touch {marker}\necho $(touch {marker})\n".encode()) is None
    assert syntax_problem("x.sh", f"touch {marker}\nif then\n".encode()) is not None
    assert not marker.exists()


def test_a_cfg_file_that_never_was_ini_is_not_called_broken(server, project: Path) -> None:
    """Many .cfg files are not INI: one whose old content did not parse as INI is not checked,
    neither at the write nor before the answer; one that was INI still is."""
    (project / "tool.cfg").write_text("retries = 5\n")
    (project / "setup.cfg").write_text("[metadata]\nname = demo\n")
    server.script(
        read_reply("tool.cfg"),
        read_reply("setup.cfg"),
        Reply('<action>write_to_file("tool.cfg", "retries = 6\\n")</action>'),
        Reply('<action>write_to_file("setup.cfg", "name = demo\\n")</action>'),
        answer_reply("Done."),
        answer_reply("Done."),
    )
    agent, rec = make_agent(server, project)
    agent.run("Set retries to 6 in tool.cfg and tidy setup.cfg")
    tool, setup = (o.text for o in rec.of(Observation) if o.tool == "write_to_file")
    assert "does not parse" not in tool
    assert "Warning: setup.cfg does not parse now: invalid INI" in setup
    reminders = [n.text for n in rec.of(Notice)]
    assert reminders == ["setup.cfg does not parse; the model was reminded once"]


def test_a_task_that_adds_to_a_file_is_reminded_when_the_file_lost_most_of_its_lines(server, project: Path) -> None:
    (project / "LOG.md").write_text("# Log\n\n- one\n- two\n- three\n")
    server.script(
        read_reply("LOG.md"),
        write_reply("LOG.md", "- zero\n"),
        answer_reply("Added."),
        write_reply("LOG.md", "# Log\n\n- zero\n- one\n- two\n- three\n"),
        answer_reply("Added."),
    )
    agent, rec = make_agent(server, project)
    result = agent.run("Add a line '- zero' above '- one' in LOG.md")
    assert result.final_answer == "Added." and result.steps == 5
    assert last_user(server.requests[3]).startswith(
        "<observation>Reminder: the task asks to add to LOG.md, but it now has 1 lines where it had 5: write_to_file replaces "
        "the whole file. Its content before this task was:\n# Log\n\n- one\n- two\n- three\n\nWrite it again with all of its "
        "earlier content plus the addition."
    ), "the earlier lines are quoted: read again, the file no longer has them"
    assert [n.text for n in rec.of(Notice)] == ["the task adds to LOG.md, which lost most of its lines; the model was reminded once"]


@pytest.mark.parametrize("task", ["Add a line '- four' at the end of LOG.md", "Append '- four' to LOG.md", "Add the entry '- four' to LOG.md"])
def test_a_task_that_adds_at_the_end_is_shown_the_write_that_keeps_the_old_lines(server, project: Path, task: str) -> None:
    """Told to keep the earlier lines, a small model dropped them again or wrote the reminder's own
    words into the file: the reminder shows the whole call, which parses to the old content."""
    old = '# Log\n\n- "one"\n- two\n- three'
    (project / "LOG.md").write_text(old)
    server.script(read_reply("LOG.md"), write_reply("LOG.md", "- four\n"), answer_reply("Added."), answer_reply("Added."))
    agent, _ = make_agent(server, project)
    agent.run(task)
    reminder = last_user(server.requests[3]).removeprefix("<observation>").removesuffix("</observation>")
    assert "Write it again with the earlier lines kept, your addition in place of NEW TEXT:\n" in reminder
    shown = reminder.split("NEW TEXT:\n", 1)[1]
    call = parse_reply(f"<action>{shown}</action>")
    assert (call.tool, call.args) == ("write_to_file", ["LOG.md", old + "\nNEW TEXT\n"])


@pytest.mark.parametrize(
    ("task", "name"),
    [("Add a docstring to f in calc.py", "calc.py"), ("Add a heading above the list in GUIDE.md", "GUIDE.md")],
)
def test_an_addition_that_goes_elsewhere_is_not_shown_at_the_end(server, project: Path, task: str, name: str) -> None:
    (project / name).write_text("def f():\n    return 1\n")
    server.script(read_reply(name), answer_reply("Added."), answer_reply("Added."))
    agent, _ = make_agent(server, project)
    agent.run(task)
    reminder = last_user(server.requests[2])
    assert "exactly as it was when the task started" in reminder and "NEW TEXT" not in reminder


def test_an_unchanged_file_a_task_adds_to_at_the_end_is_shown_the_write(server, project: Path) -> None:
    (project / "GUIDE.md").write_text("# Guide\n\nUse it.\n")
    server.script(read_reply("GUIDE.md"), answer_reply("It has the section."), answer_reply("It has the section."))
    agent, _ = make_agent(server, project)
    agent.run("Add a section Help at the end of GUIDE.md")
    reminder = last_user(server.requests[2])
    assert reminder.endswith(
        'your addition at the end, in place of NEW TEXT:\nwrite_to_file("GUIDE.md", ```\n# Guide\n\nUse it.\nNEW TEXT\n```)</observation>'
    )


@pytest.mark.parametrize(
    ("answer", "quoted"),
    [
        ("I read people.csv. Converting it to JSON...", "Converting it to JSON..."),
        ("The tests fail on spaces. I will fix this in slug.py. It is small.", "I will fix this in slug.py."),
        ("Read it.\nNow I'll write the table", "Now I'll write the table"),
        ("Let me run the tests.", "Let me run the tests."),
    ],
)
def test_an_answer_that_announces_a_step_is_sent_back_once(server, project: Path, answer: str, quoted: str) -> None:
    server.script(answer_reply(answer), answer_reply(answer))
    agent, rec = make_agent(server, project)
    result = agent.run("Tidy the project")
    assert result.final_answer == answer and result.steps == 2
    assert f'says what you are about to do ("{quoted}"), but a final answer ends the task' in last_user(server.requests[1])
    assert [n.text for n in rec.of(Notice)] == ["the answer announces a step instead of reporting it; the model was reminded once"]


@pytest.mark.parametrize(
    "answer",
    [
        "I will not change anything: it is right.",
        "The values are 1, 2, 3 ... and more.",
        "Done: it prints 'hi'.",
        "Fixed slug.py. Let me know if you need anything else.",
        "The tests pass. I'll be glad to add more.",
    ],
)
def test_an_answer_that_reports_is_not_called_a_promise(server, project: Path, answer: str) -> None:
    server.script(answer_reply(answer))
    agent, rec = make_agent(server, project)
    assert agent.run("Tidy the project").steps == 1
    assert rec.of(Notice) == []


def test_a_task_that_replaces_a_file_is_not_reminded_of_its_lost_lines(server, project: Path) -> None:
    (project / "LOG.md").write_text("# Log\n\n- one\n- two\n- three\n")
    server.script(read_reply("LOG.md"), write_reply("LOG.md", "# Log\n"), answer_reply("Cleared."))
    agent, _ = make_agent(server, project)
    assert agent.run("Remove every entry from LOG.md, keep the title").steps == 3


def test_a_path_no_file_can_have_is_refused_by_the_tool_and_the_run_goes_on(server, project: Path) -> None:
    """A NUL byte in a path argument once ended the run with "internal error: embedded null byte"."""
    server.script(
        Reply('<action>read_file("a\\x00b")</action>'),
        Reply('<action>write_to_file("a\\x00b", "x")</action>'),
        Reply(f'<action>read_file("{"n" * 5000}")</action>'),
        answer_reply("Could not."),
    )
    agent, rec = make_agent(server, project)
    assert agent.run("Look around.").final_answer == "Could not."
    assert [("NUL" in o.text or "longer than" in o.text, o.ok) for o in rec.of(Observation)] == [(True, False)] * 3


def test_lines_the_answer_lists_that_the_file_lacks_are_sent_to_the_file(server, project: Path) -> None:
    """Asked to write a folder's file names into a file, a small model wrote a temporary file's
    name into it and listed the names only in its answer."""
    (project / "images").mkdir()
    for name in ("cat.png", "bird.gif"):
        (project / "images" / name).write_text("x")
    server.script(
        write_reply("images.txt", "sorted_images.txt"),
        answer_reply("The names, sorted, are:\n- bird.gif\n- cat.png"),
        write_reply("images.txt", "bird.gif\ncat.png\n"),
        answer_reply("Written."),
    )
    agent, rec = make_agent(server, project)
    assert agent.run("Write the names of the files in the images folder, sorted, into images.txt.").final_answer == "Written."
    assert last_user(server.requests[2]) == (
        "<observation>Reminder: your answer lists 2 lines (bird.gif, cat.png), but images.txt, where the task wants the "
        "result, holds 'sorted_images.txt': none of those lines is in it. If they are the result, send this call:\n"
        f"{call_source('write_to_file', ['images.txt', 'bird.gif' + chr(10) + 'cat.png' + chr(10)])}\n"
        "Otherwise fix images.txt and give your final answer again.</observation>"
    )
    assert [n.text for n in rec.of(Notice)] == ["the answer lists lines that images.txt does not hold; the model was reminded once"]


@pytest.mark.parametrize(
    ("written", "answer"),
    [
        ("bird.gif\ncat.png\n", "The names are:\nbird.gif\ncat.png"),
        ("# Notes\n\nThe tool reads files.\nIt writes reports.\nIt is fast.\n", "notes.txt now has:\n- a heading\n- two lines"),
        ("b\n", "Done: the file holds the names."),
    ],
    ids=["the file holds them", "a longer file the list describes", "no list"],
)
def test_no_reminder_when_the_file_holds_the_listed_lines_or_more(server, project: Path, written: str, answer: str) -> None:
    server.script(write_reply("notes.txt", written), answer_reply(answer))
    agent, rec = make_agent(server, project)
    assert agent.run("Write the notes into notes.txt.").final_answer == answer
    assert not rec.of(Notice)


def test_an_answer_while_a_written_file_uses_undefined_names_is_sent_back_with_the_imports(server, project: Path) -> None:
    """A small model wrote app.py using VERSION without importing it, read the file and answered
    that it prints the version."""
    (project / "app.py").write_text("print('version ' + '1.0')\n")
    uses = "print('version ' + VERSION)\n"
    server.script(
        write_reply("version.py", "VERSION = '1.2'\n"),
        read_reply("app.py"),
        write_reply("app.py", uses),
        answer_reply("app.py prints the VERSION now."),
        write_reply("app.py", "from version import VERSION\n" + uses),
        answer_reply("Done."),
    )
    agent, rec = make_agent(server, project)
    assert agent.run("Create version.py with VERSION = '1.2' and make app.py print it.").final_answer == "Done."
    assert last_user(server.requests[4]) == (
        "<observation>Reminder: app.py uses VERSION (line 1), which it never defines or imports, so the code stops with "
        "NameError when that line runs. from version import VERSION brings it in from beside app.py: send this call, which "
        f"adds that import at the top:\n{call_source('write_to_file', ['app.py', 'from version import VERSION' + chr(10) + uses])}</observation>"
    )
    assert [n.text for n in rec.of(Notice)] == ["app.py uses names it never defines or imports; the model was reminded once"]


def test_modules_still_importing_a_renamed_name_are_reminded_of_with_the_first_one_s_rename(server, project: Path) -> None:
    """Asked to rename greet "in greet.py and in every file that uses it", a small model renamed it
    in greet.py and answered; one.py and two.py still imported greet."""
    (project / "greet.py").write_text("def greet(name):\n    return 'Hello ' + name\n")
    (project / "one.py").write_text("from greet import greet\n\nprint(greet('Ann'))\n")
    (project / "two.py").write_text("from greet import greet\n\nprint(greet('Bo'))\n")
    server.script(
        read_reply("greet.py"),
        write_reply("greet.py", "def welcome(name):\n    return 'Hello ' + name\n"),
        answer_reply("Renamed."),
        answer_reply("Renamed."),
    )
    agent, rec = make_agent(server, project)
    agent.run("Rename greet to welcome in greet.py and in every file that uses it.")
    fixed = "from greet import welcome\n\nprint(welcome('Ann'))\n"
    assert last_user(server.requests[3]) == (
        "<observation>Reminder: greet.py no longer defines what modules beside it import from it (one.py imports greet; "
        "two.py imports greet), so importing them fails with ImportError. Send this call, which makes the task's rename in "
        f"one.py (then do the same in two.py):\n{call_source('write_to_file', ['one.py', fixed])}</observation>"
    )


def test_no_importer_reminder_when_the_importers_changed_too(server, project: Path) -> None:
    (project / "hello.py").write_text("def greet(name):\n    return 'Hello ' + name\n")
    (project / "one.py").write_text("from hello import greet\n")
    server.script(  # both files are read ahead
        write_reply("hello.py", "def welcome(name):\n    return 'Hello ' + name\n"),
        write_reply("one.py", "from hello import welcome\n"),
        answer_reply("Renamed."),
    )
    agent, rec = make_agent(server, project)
    assert agent.run("Rename greet to welcome in hello.py and one.py.").final_answer == "Renamed."
    assert not rec.of(Notice)


def test_the_module_a_task_writes_tests_for_is_not_a_file_to_change(server, project: Path) -> None:
    """Told that limits.py was unchanged, a small model asked to write tests for it rewrote it."""
    (project / "limits.py").write_text("def clamp(value, low, high):\n    return max(low, min(value, high))\n")
    test = "import unittest\nfrom limits import clamp\n\n\nclass T(unittest.TestCase):\n    def test_low(self):\n        self.assertEqual(clamp(-1, 0, 9), 0)\n"
    server.script(
        Reply(f"<action>write_to_file(\"test_limits.py\", {json.dumps(test)})</action>"),
        Reply('<action>run_terminal_command("python3 -m unittest test_limits")</action>'),
        answer_reply("The tests pass."),
    )
    agent, _ = make_agent(server, project)
    assert agent.run("Write unittest tests for clamp from limits.py in test_limits.py, and run them.").final_answer == "The tests pass."


WC = "def count_words(text):\n    return len(text.split(' '))\n"
TEST_WC = "import unittest\n\nfrom wc import count_words\n\n\nclass T(unittest.TestCase):\n    def test_spaces(self):\n        self.assertEqual(count_words('a  b'), 2)\n"


FIXED_WC = "def count_words(text):\n    return len(text.split())\n"


def test_an_unchanged_fix_for_failing_tests_is_shown_how_to_run_them_when_none_ran(server, project: Path) -> None:
    """Told the tests in a file fail, a small model read only the code, found it right, and wrote it back unchanged."""
    (project / "wc.py").write_text(WC)
    (project / "test_wc.py").write_text(TEST_WC)
    server.script(
        read_reply("wc.py"),
        answer_reply("wc.py already passes the tests."),
        Reply('<action>run_terminal_command("python3 -m unittest test_wc")</action>'),
        Reply(f"<action>write_to_file(\"wc.py\", {json.dumps(FIXED_WC)})</action>"),
        Reply('<action>run_terminal_command("python3 -m unittest test_wc")</action>'),
        answer_reply("Fixed."),
    )
    agent, _ = make_agent(server, project)
    result = agent.run("The tests in test_wc.py fail. Fix wc.py so they pass.")
    assert result.final_answer == "Fixed."
    assert last_user(server.requests[2]).endswith(
        "No test has run in this task: run the tests in test_wc.py first to see what fails, with "
        'run_terminal_command("python3 -m unittest test_wc")</observation>'
    )


def test_the_unchanged_reminder_says_nothing_of_tests_once_they_ran(server, project: Path) -> None:
    (project / "wc.py").write_text(WC)
    (project / "test_wc.py").write_text(TEST_WC.replace("import unittest\n", "import unittest as u\n"))
    server.script(
        Reply('<action>run_terminal_command("python3 -m pytest -q test_wc.py")</action>'),
        answer_reply("wc.py already passes the tests."),
        answer_reply("again"),
    )
    agent, _ = make_agent(server, project)
    agent.run("The tests in test_wc.py fail. Fix wc.py so they pass.")
    assert "Reminder: the task asks to write or change wc.py" in last_user(server.requests[2])
    assert "No test has run" not in last_user(server.requests[2])
