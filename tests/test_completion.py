"""Completion checks: one reminder per kind when the work the task asked for is not on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mzagent_tui.agent.aids.completion import claimed_files, read_task, task_targets
from mzagent_tui.agent.events import Notice, Observation, StopReason
from mzagent_tui.agent.ground.call_syntax import call_source
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
    # a dot-file is a file, and a source stays a source with an article before the file made
    ("Write the settings from settings.ini into a .env file: SECTION_KEY=value in upper case.", [".env"]),
    ("Add dist/ and *.egg-info to .gitignore", [".gitignore"]),
    ("Convert prices.csv to a new prices.json", ["prices.json"]),
    ("Run it with .venv/bin/python and fix app.py", ["app.py"]),
    ("Create a .gitignore file that ignores all .log files.", [".gitignore"]),
    ("Delete every .tmp file in the project.", []),
    ("Remove all files ending in .tmp, including those in subfolders.", []),
])
def test_the_files_a_task_asks_to_write(task: str, targets: list[str]) -> None:
    assert task_targets(task) == targets


TRACE = 'Traceback (most recent call last):\n  File "report.py", line 9, in <module>\n    main()\n  File "report.py", line 4, in main\nZeroDivisionError: division by zero'


@pytest.mark.parametrize(("task", "targets"), [
    # what someone did is the story of the bug, not the change asked for
    ("We added diya to students.txt and now `python3 report.py` fails:\n\n" + TRACE + "\n\nIt should show n/a for her.", ["report.py"]),
    ("I changed students.txt. Please update report.py to match.", ["report.py"]),
    # a traceback from the user's machine names their paths; library frames are not the project's
    ('The first `python3 report.py` gives:\n  File "/home/ines/proj/report.py", line 3, in <module>\n'
     '  File "/usr/lib/python3.11/pathlib.py", line 1058, in read_text\nFileNotFoundError: students.txt. It should not crash.', ["report.py"]),
    ('It fails:\n  File "/home/ines/proj/pkg/cli.py", line 3, in main\n  File "<frozen runpy>", line 88\nKeyError. It should not.', ["pkg/cli.py"]),
    # a question that wants no change has no file to change, whatever verbs it uses
    ("Which addresses in students.txt does report.py reject? Don't change anything.", []),
    ("With no variables set, how many rows does python3 report.py print? Don't change anything.", []),
    ("report.py writes it to students.txt (I checked). What's going on? Just explain it, no changes please.", []),
    # a limit on a change is not a question
    ("students.txt is not sorted. Fix it without changing any of its names.", ["students.txt"]),
    ("Write out.txt from students.txt. Please don't touch students.txt, it's the original.", ["out.txt"]),
    # shorthand and module paths are not files to make
    ("Add a --json flag (e.g. `report.py --json`) to report.py", ["report.py"]),
    ("Add a console script that runs pkg.cli:main to pyproject.toml", ["pyproject.toml"]),
    ("Write the list of pictures in images/ into images.txt", ["images.txt"]),
])
def test_what_a_task_asks_to_change_in_a_project(project: Path, task: str, targets: list[str]) -> None:
    for name in ("students.txt", "report.py", "pyproject.toml", "pkg/cli.py"):
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text("x\n")
    (project / "images").mkdir()
    assert list(read_task(project, task).targets) == targets


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


def test_each_kind_of_reminder_is_given_at_most_once(server, project: Path) -> None:
    """Missing files are the one kind said again, and only while fewer are missing each time."""
    server.script(
        answer_reply("Done."),  # out.txt and out.py missing
        write_reply("out.py", "print(x)\n"),
        answer_reply("Done."),  # out.txt still missing, out.py made since
        answer_reply("Done."),  # out.py uses a name it never defines
        answer_reply("Done."),  # out.txt still missing, nothing made since: accepted
    )
    agent, rec = make_agent(server, project)
    result = agent.run("Create out.txt and out.py")
    assert result.reason is StopReason.FINAL_ANSWER and result.steps == 5
    assert [n.text.split(";")[0] for n in rec.of(Notice)] == [
        "the task asks for out.txt, out.py, which do not exist", "the task still asks for out.txt",
        "out.py uses names it never defines or imports",
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


def test_an_unchanged_stub_is_named_as_one(server, project: Path) -> None:
    (project / "impl.py").write_text("def f():\n    raise NotImplementedError\n")
    server.script(read_reply("impl.py"), *[answer_reply("It is implemented.")] * 2)
    agent, rec = make_agent(server, project)
    assert agent.run("Implement f in impl.py.").final_answer == "It is implemented."
    reminder = last_user(server.requests[2])
    assert "so the task is not done yet; impl.py still raises NotImplementedError. You have read impl.py already" in reminder
    assert len(server.requests) == 3, "the second answer stands"
    assert [n.text for n in rec.of(Notice)] == ["the task asks to change impl.py, which is unchanged; the model was reminded once"]


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
    """Many .cfg files are not INI: one whose old content did not parse as INI is not checked at
    the write; one that was INI still is."""
    (project / "tool.cfg").write_text("retries = 5\n")
    (project / "setup.cfg").write_text("[metadata]\nname = demo\n")
    server.script(
        read_reply("tool.cfg"),
        read_reply("setup.cfg"),
        Reply('<action>write_to_file("tool.cfg", "retries = 6\\n")</action>'),
        Reply('<action>write_to_file("setup.cfg", "name = demo\\n")</action>'),
        answer_reply("Done."),
    )
    agent, rec = make_agent(server, project)
    agent.run("Set retries to 6 in tool.cfg and tidy setup.cfg")
    tool, setup = (o.text for o in rec.of(Observation) if o.tool == "write_to_file")
    assert "does not parse" not in tool
    assert "Warning: setup.cfg does not parse now: invalid INI" in setup


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
