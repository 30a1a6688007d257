"""The small-task suite: 66 tasks in 11 categories, each with two phrasings and a checker.

Every task starts in a fresh folder holding `files`. Phrasing 0 is plain and direct, phrasing
1 says the same thing another way (other words, other order), so a change that only fits one
wording shows up as a gap between them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.suite.checks import (
    Check,
    all_of,
    answer_has,
    answer_number,
    executable,
    exists,
    gone,
    json_is,
    prints,
    python_true,
    read,
    tests_catch,
    text_is,
    unchanged,
    unittest_passes,
)


@dataclass(frozen=True)
class SuiteTask:
    id: str
    category: str
    phrasings: tuple[str, ...]
    check: Check
    files: Mapping[str, str] = field(default_factory=dict)
    empty_for: tuple[int, ...] = ()
    """Phrasings that start from an empty folder (the task text carries what the files would)."""
    executables: tuple[str, ...] = ()
    """Files that start with the execute permission (none here; the realistic suite's have some)."""

    def files_for(self, phrasing: int) -> Mapping[str, str]:
        return {} if phrasing in self.empty_for else self.files


def _py(module: str, expression: str) -> Check:
    return python_true(f"from {module} import *\nprint(bool({expression}))")


def _fizzbuzz() -> str:
    out = []
    for n in range(1, 16):
        out.append("FizzBuzz" if n % 15 == 0 else "Fizz" if n % 3 == 0 else "Buzz" if n % 5 == 0 else str(n))
    return "\n".join(out)


def _gitignore(root, answer) -> bool:  # noqa: ANN001 - a Check
    import pathspec

    spec = pathspec.PathSpec.from_lines("gitwildmatch", read(root, ".gitignore").splitlines())
    return spec.match_file("pkg/__pycache__/m.pyc") and spec.match_file("logs/run.log") and spec.match_file("x.log") and not spec.match_file("main.py")


def _checklist(root, answer) -> bool:  # noqa: ANN001
    lines = [line.strip().lower() for line in read(root, "todo.md").splitlines() if line.strip().startswith(("- [ ]", "* [ ]"))]
    return len(lines) == 3 and all(any(item in line for line in lines) for item in ("buy milk", "call bob", "write report"))


def _ini_port(root, answer) -> bool:  # noqa: ANN001
    import configparser

    parser = configparser.ConfigParser()
    try:
        parser.read_string(read(root, "settings.ini"))
        server = parser["server"]
        return server.get("port") == "9090" and server.get("host") == "0.0.0.0" and parser["log"].get("level") == "info"
    except (configparser.Error, KeyError):
        return False


def _sorted_names(root, answer) -> bool:  # noqa: ANN001
    lines = [line for line in read(root, "names.txt").splitlines() if line.strip()]
    return lines == sorted(NAMES)


def _color(root, answer) -> bool:  # noqa: ANN001
    text = read(root, "essay.txt")
    return "colour" not in text.lower() and text.lower().count("color") == 3 and "painted" in text


def _md_table(root, answer) -> bool:  # noqa: ANN001
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in read(root, "table.md").splitlines() if line.strip().startswith("|")]
    return len(rows) >= 4 and rows[0] == ["Name", "Score"] and ["Ann", "90"] in rows and ["Bo", "85"] in rows


def _people_json(root, answer) -> bool:  # noqa: ANN001
    import json

    try:
        data = json.loads(read(root, "people.json"))
    except ValueError:
        return False
    expected = [{"name": row["name"], "age": int(row["age"])} for row in csv.DictReader(io.StringIO(PEOPLE))]
    return data == expected


def _license_section(root, answer) -> bool:  # noqa: ANN001
    text = read(root, "GUIDE.md")
    return text.startswith(GUIDE_START) and text.rstrip().endswith("MIT") and "## License" in text.split("## Usage", 1)[-1]


def _images_list(root, answer) -> bool:  # noqa: ANN001
    return [line.strip() for line in read(root, "images.txt").splitlines() if line.strip()] == sorted(IMAGES)


def _backup(root, answer) -> bool:  # noqa: ANN001
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    if not (root / "backup.sh").is_file():
        return False
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "p"
        shutil.copytree(root, copy)
        shutil.rmtree(copy / "backup", ignore_errors=True)
        done = subprocess.run(["bash", "backup.sh"], cwd=copy, capture_output=True, timeout=30)
        return done.returncode == 0 and all((copy / "backup" / name).is_file() for name in ("a.txt", "b.txt")) and not (copy / "backup" / "c.md").exists()


def _lines_script(root, answer) -> bool:  # noqa: ANN001
    from bench.suite.checks import run

    (root / "seven.txt").write_text("".join(f"{n}\n" for n in range(7)))
    done = run(root, ["bash", "lines.sh", "seven.txt"])
    (root / "seven.txt").unlink()
    return done is not None and done.returncode == 0 and done.stdout.split()[:1] == ["7"]


def _no_def(module: str, name: str) -> Check:
    return python_true(f"import ast\ntree = ast.parse(open('{module}').read())\nprint(not any(getattr(n, 'name', None) == '{name}' for n in ast.walk(tree)))")


def _nothing_named(word: str, *files: str) -> Check:
    return lambda root, answer: all(word not in read(root, name) for name in files)


NAMES = ["mallory", "alice", "trent", "bob", "eve", "carol"]
IMAGES = ["cat.png", "dog.jpg", "bird.gif", "fish.png"]
PEOPLE = "name,age\nAnn,34\nBo,27\nCy,45\n"
GUIDE_START = "# widget\n\nA tiny widget library.\n\n## Usage\n\nImport it.\n"
SALES = "item,amount\npen,3.50\nbook,12.25\nbag,20.00\nink,4.25\n"
USERS = '[{"name": "a", "active": true}, {"name": "b", "active": false}, {"name": "c", "active": true}, {"name": "d", "active": true}, {"name": "e", "active": false}, {"name": "f", "active": true}]\n'
GEN = "for i in range(3000):\n    print(f'row {i}: {i * i * 7 % 1000}')\n"
MATH_TESTS = (
    "import unittest\nfrom mathx import add, sub\n\n\nclass T(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n"
    "    def test_add_neg(self):\n        self.assertEqual(add(-1, -2), -3)\n\n"
    "    def test_sub(self):\n        self.assertEqual(sub(5, 2), 3)\n\n"
    "    def test_sub_zero(self):\n        self.assertEqual(sub(5, 0), 5)\n\n\nif __name__ == '__main__':\n    unittest.main()\n"
)
STACK_TESTS = (
    "import unittest\nfrom stack import Stack\n\n\nclass StackTest(unittest.TestCase):\n"
    "    def test_push_pop(self):\n        s = Stack()\n        s.push(1)\n        s.push(2)\n        self.assertEqual(s.pop(), 2)\n        self.assertEqual(s.pop(), 1)\n\n"
    "    def test_empty(self):\n        self.assertTrue(Stack().is_empty())\n\n"
    "    def test_size(self):\n        s = Stack()\n        s.push('x')\n        self.assertEqual(s.size(), 1)\n\n\nif __name__ == '__main__':\n    unittest.main()\n"
)
PARSE_TESTS = (
    "import unittest\nfrom parse import parse_pair\n\n\nclass ParseTest(unittest.TestCase):\n"
    "    def test_simple(self):\n        self.assertEqual(parse_pair('a=1'), ('a', '1'))\n\n"
    "    def test_spaces(self):\n        self.assertEqual(parse_pair(' a = 1 '), ('a', '1'))\n\n"
    "    def test_equals_in_value(self):\n        self.assertEqual(parse_pair('url=x=y'), ('url', 'x=y'))\n\n"
    "    def test_empty_value(self):\n        self.assertEqual(parse_pair('a='), ('a', ''))\n\n"
    "    def test_key(self):\n        self.assertEqual(parse_pair('name=v')[0], 'name')\n\n\nif __name__ == '__main__':\n    unittest.main()\n"
)
SLUG_TESTS = (
    "import unittest\nfrom slug import slug\n\n\nclass SlugTest(unittest.TestCase):\n"
    "    def test_lower(self):\n        self.assertEqual(slug('Hello'), 'hello')\n\n"
    "    def test_spaces(self):\n        self.assertEqual(slug('Hello World'), 'hello-world')\n\n"
    "    def test_strip(self):\n        self.assertEqual(slug('  Hi  '), 'hi')\n\n\nif __name__ == '__main__':\n    unittest.main()\n"
)
CALC2_TESTS = (
    "import unittest\nfrom divide import divide\n\n\nclass DivideTest(unittest.TestCase):\n"
    "    def test_divide(self):\n        self.assertEqual(divide(6, 3), 2)\n\n\nif __name__ == '__main__':\n    unittest.main()\n"
)

TASKS: list[SuiteTask] = [
    # create
    SuiteTask("create-greeting", "create", (
        "Create a file greeting.txt containing exactly the text: Good morning",
        "I need a new text file called greeting.txt. Its only content should be the words Good morning.",
    ), text_is("greeting.txt", "Good morning")),
    SuiteTask("create-fizzbuzz", "create", (
        "Create fizz.py that prints the numbers from 1 to 15, one per line, but prints Fizz for multiples of 3, Buzz for multiples of 5 and FizzBuzz for multiples of both.",
        "Write the classic FizzBuzz program for 1 through 15 as fizz.py (one output per line: Fizz for multiples of three, Buzz for five, FizzBuzz for fifteen, otherwise the number).",
    ), prints(["python3", "fizz.py"], _fizzbuzz())),
    SuiteTask("create-gitignore", "create", (
        "Create a .gitignore file that ignores __pycache__ folders and all .log files.",
        "Git should not track log files (*.log) or Python's __pycache__ directories here. Add the ignore file for that.",
    ), _gitignore),
    SuiteTask("create-class", "create", (
        "Create shapes.py with a class Rectangle whose constructor takes width and height, and a method area() that returns width * height.",
        "Add a module shapes.py. It needs class Rectangle(width, height) with an area() method giving the product of the two.",
    ), _py("shapes", "Rectangle(3, 4).area() == 12 and Rectangle(2.5, 2).area() == 5")),
    SuiteTask("create-checklist", "create", (
        "Create todo.md with a Markdown checklist (unchecked boxes) of three items: buy milk, call Bob, write report.",
        "Make a Markdown to-do list in todo.md: three open checkbox items, namely buy milk, call Bob and write report.",
    ), _checklist),
    SuiteTask("create-constants", "create", (
        "Create constants.py that defines PI = 3.14159 and E = 2.71828.",
        "Put two module-level constants in a new file constants.py: E equal to 2.71828 and PI equal to 3.14159.",
    ), _py("constants", "PI == 3.14159 and E == 2.71828")),
    # modify
    SuiteTask("modify-rename-function", "modify", (
        "In text_utils.py, rename the function shout to yell. It should still do the same thing.",
        "The function shout in text_utils.py should be called yell from now on; keep its behaviour.",
    ), all_of(_py("text_utils", "yell('hey') == 'HEY!' and whisper('HI') == 'hi'"), _no_def("text_utils.py", "shout")),
        files={"text_utils.py": "def shout(text):\n    return text.upper() + '!'\n\n\ndef whisper(text):\n    return text.lower()\n"}),
    SuiteTask("modify-add-parameter", "modify", (
        "Change greet in greet.py so it takes a second parameter punctuation, defaulting to \"!\", which is put at the end instead of the fixed \"!\".",
        "greet(name) in greet.py always ends with an exclamation mark. Give it an optional punctuation argument (default \"!\") that is used instead.",
    ), _py("greet", "greet('Ann') == 'Hello, Ann!' and greet('Ann', '?') == 'Hello, Ann?' and greet('Bo', punctuation='.') == 'Hello, Bo.'"),
        files={"greet.py": "def greet(name):\n    return 'Hello, ' + name + '!'\n"}),
    SuiteTask("modify-ini-port", "modify", (
        "In settings.ini, change the port from 8080 to 9090 and leave everything else as it is.",
        "The server should listen on 9090 now, not 8080. Update settings.ini accordingly without touching other settings.",
    ), _ini_port, files={"settings.ini": "[server]\nhost = 0.0.0.0\nport = 8080\n\n[log]\nlevel = info\n"}),
    SuiteTask("modify-docstring", "modify", (
        "Add a docstring to the function mean in stats.py.",
        "mean() in stats.py is undocumented. Document it with a docstring; do not change what it computes.",
    ), python_true("import ast, stats\nfn = next(n for n in ast.parse(open('stats.py').read()).body if getattr(n, 'name', '') == 'mean')\nprint(bool(ast.get_docstring(fn)) and stats.mean([1, 2, 6]) == 3)"),
        files={"stats.py": "def mean(values):\n    return sum(values) / len(values)\n"}),
    SuiteTask("modify-sort-lines", "modify", (
        "Sort the lines of names.txt alphabetically, in place.",
        "names.txt should list the same names in alphabetical order. Rewrite it that way.",
    ), _sorted_names, files={"names.txt": "\n".join(NAMES) + "\n"}),
    SuiteTask("modify-replace-word", "modify", (
        "Replace every occurrence of the word colour with color in essay.txt.",
        "Use American spelling in essay.txt: each colour must become color.",
    ), _color, files={"essay.txt": "The colour of the sky changes.\nShe painted it a bright colour.\nWhat colour is it now?\n"}),
    # fix-syntax
    SuiteTask("fix-syntax-colon", "fix-syntax", (
        "dbl.py has a syntax error. Fix it so that double(x) returns twice x.",
        "Importing dbl.py fails. Repair the file; double(x) should give 2 * x.",
    ), _py("dbl", "double(21) == 42"), files={"dbl.py": "def double(x)\n    return x * 2\n"}),
    SuiteTask("fix-syntax-paren", "fix-syntax", (
        "basket.py does not compile. Fix the syntax error; total(items) should return the sum of the items.",
        "Python reports a SyntaxError in basket.py. Correct it (total should add up the list it is given).",
    ), _py("basket", "total([1, 2, 3.5]) == 6.5"), files={"basket.py": "def total(items):\n    return sum(items\n\n\ndef count(items):\n    return len(items)\n"}),
    SuiteTask("fix-syntax-indent", "fix-syntax", (
        "even.py has an indentation error. Fix it.",
        "Running even.py gives IndentationError. Make it valid Python; is_even(n) tells whether n is even.",
    ), _py("even", "is_even(4) and not is_even(7)"), files={"even.py": "def is_even(n):\nreturn n % 2 == 0\n"}),
    SuiteTask("fix-syntax-quote", "fix-syntax", (
        "who.py has an unterminated string. Fix it so name() returns Alice.",
        "There is a broken string literal in who.py. Repair it; name() must give 'Alice'.",
    ), _py("who", "name() == 'Alice'"), files={"who.py": "def name():\n    return \"Alice\n"}),
    SuiteTask("fix-syntax-json", "fix-syntax", (
        "data.json is not valid JSON. Fix it without changing any of its values.",
        "A JSON parser rejects data.json. Make it parse, keeping the same keys and values.",
    ), json_is("data.json", {"name": "box", "sizes": [1, 2, 3], "open": True}),
        files={"data.json": '{\n  "name": "box",\n  "sizes": [1, 2, 3,],\n  "open": true,\n}\n'}),
    SuiteTask("fix-syntax-bracket", "fix-syntax", (
        "palette.py has a syntax error. Fix it; COLORS is a list of three colour names.",
        "palette.py will not import because of a missing bracket. Please repair it (pick() should return the first colour).",
    ), _py("palette", "COLORS == ['red', 'green', 'blue'] and pick() == 'red'"),
        files={"palette.py": "COLORS = [\"red\", \"green\", \"blue\"\n\n\ndef pick():\n    return COLORS[0]\n"}),
    # fix-logic
    SuiteTask("fix-logic-max", "fix-logic", (
        "biggest in nums.py returns the wrong value. Fix it so it returns the largest number of the list.",
        "biggest([3, 9, 2]) in nums.py should be 9 but is not. Correct the function.",
    ), _py("nums", "biggest([3, 9, 2]) == 9 and biggest([-5, -1]) == -1"), files={"nums.py": "def biggest(values):\n    return min(values)\n"}),
    SuiteTask("fix-logic-off-by-one", "fix-logic", (
        "first_n in take.py should return the first n items of a list, but it returns one too few. Fix it.",
        "take.py: first_n(items, n) is off by one (first_n([1,2,3], 2) gives [1]). Make it return exactly n items.",
    ), _py("take", "first_n([1, 2, 3], 2) == [1, 2] and first_n([1, 2, 3], 3) == [1, 2, 3]"), files={"take.py": "def first_n(items, n):\n    return items[:n - 1]\n"}),
    SuiteTask("fix-logic-fahrenheit", "fix-logic", (
        "to_fahrenheit in temp.py gives wrong results. Fix the formula.",
        "temp.py converts 100 degrees Celsius to something other than 212 Fahrenheit. Correct to_fahrenheit.",
    ), _py("temp", "to_fahrenheit(100) == 212 and to_fahrenheit(0) == 32"), files={"temp.py": "def to_fahrenheit(celsius):\n    return celsius * 5 / 9 + 32\n"}),
    SuiteTask("fix-logic-leap", "fix-logic", (
        "is_leap in dates.py says 1900 is a leap year. Fix it to follow the Gregorian rules.",
        "Correct the leap-year check in dates.py: years divisible by 100 are not leap years unless divisible by 400.",
    ), _py("dates", "not is_leap(1900) and is_leap(2000) and is_leap(2024) and not is_leap(2023)"), files={"dates.py": "def is_leap(year):\n    return year % 4 == 0\n"}),
    SuiteTask("fix-logic-average-empty", "fix-logic", (
        "average([]) in avg.py crashes. Make it return 0 for an empty list.",
        "avg.py raises ZeroDivisionError when average gets no values; it should give 0 then, and keep working for other lists.",
    ), _py("avg", "average([]) == 0 and average([2, 4]) == 3"), files={"avg.py": "def average(values):\n    return sum(values) / len(values)\n"}),
    SuiteTask("fix-logic-vowels", "fix-logic", (
        "count_vowels in vowels.py does not count capital vowels. Fix it.",
        "vowels.py: count_vowels('AEiou') returns 3 instead of 5. Upper-case vowels must count too.",
    ), _py("vowels", "count_vowels('AEiou') == 5 and count_vowels('xyz') == 0"), files={"vowels.py": "def count_vowels(text):\n    return sum(1 for ch in text if ch in 'aeiou')\n"}),
    # answer
    SuiteTask("answer-maintainer", "answer", (
        "Who maintains this project?",
        "Tell me the name of the person listed as this project's maintainer.",
    ), answer_has("Dana Reyes"), files={"ABOUT.md": "# tiler\n\nSplits images into tiles.\n\nMaintainer: Dana Reyes\nLicense: MIT\n"}),
    SuiteTask("answer-function-count", "answer", (
        "How many functions are defined in lib.py?",
        "Count the function definitions in lib.py and tell me the number.",
    ), answer_number(7), files={"lib.py": "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(7)) + "VALUE = 3\n"}),
    SuiteTask("answer-port", "answer", (
        "Which host port does the db service use in docker-compose.yml?",
        "In docker-compose.yml, what port on the host is mapped for the db service?",
    ), answer_number(5433), files={"docker-compose.yml": "services:\n  web:\n    image: nginx\n    ports:\n      - \"8081:80\"\n  db:\n    image: postgres:16\n    ports:\n      - \"5433:5432\"\n"}),
    SuiteTask("answer-largest-file", "answer", (
        "Which file in the data folder is the largest?",
        "Of the files inside data/, tell me which one has the most bytes.",
    ), answer_has("beta.txt"), files={"data/alpha.txt": "a" * 120, "data/beta.txt": "b" * 900, "data/gamma.txt": "c" * 400}),
    SuiteTask("answer-pinned-version", "answer", (
        "Which version of requests does this project pin?",
        "Look at the dependencies: what exact requests version is required?",
    ), answer_has("2.31.0"), files={"requirements.txt": "flask==3.0.0\nrequests==2.31.0\nclick>=8\nrich==13.7.0\n"}),
    SuiteTask("answer-todo-count", "answer", (
        "How many TODO comments are there in the src folder?",
        "Count the TODO comments across all files under src and give me the total.",
    ), answer_number(3), files={"src/parser.py": "# TODO: split\nx = 1\n# TODO: rename\n", "src/b.py": "def f():\n    pass  # TODO: implement\n", "src/c.py": "y = 2\n"}),
    # run-record
    SuiteTask("run-save-output", "run-record", (
        "Run calc.py with python3 and save what it prints to result.txt.",
        "Put the output of `python3 calc.py` into a file named result.txt.",
    ), text_is("result.txt", "4181"), files={"calc.py": "a, b = 0, 1\nfor _ in range(19):\n    a, b = b, a + b\nprint(a)\n"}),
    SuiteTask("run-exit-code", "run-record", (
        "What exit code does check.py end with when run with python3?",
        "Run check.py and tell me its exit status.",
    ), answer_number(3), files={"check.py": "import sys\nprint('checking')\nsys.exit(3)\n"}),
    SuiteTask("run-python-version", "run-record", (
        "Which Python 3 version is installed? Write just the version number (for example 3.10.4) into pyversion.txt.",
        "Find out the exact version of python3 on this machine and record it, number only, in pyversion.txt.",
    ), lambda root, answer: read(root, "pyversion.txt").strip() == __import__("platform").python_version()),
    SuiteTask("run-last-line", "run-record", (
        "Run gen.py with python3 and tell me the last line it prints.",
        "gen.py prints many lines. What is the final line of its output?",
    ), answer_has("row 2999: 993"), files={"gen.py": GEN}),
    SuiteTask("run-stderr", "run-record", (
        "Run server.py with python3 and tell me which config key it complains about.",
        "server.py fails when started. Which configuration key does its error name?",
    ), answer_has("tiemout"), files={"server.py": "import sys\nprint('starting')\nraise SystemExit(\"config error: unknown key 'tiemout' in server.cfg\")\n", "server.cfg": "tiemout = 5\n"}),
    SuiteTask("run-word-count", "run-record", (
        "Count the words in story.txt with wc and write the number into count.txt.",
        "Use a shell command to find how many words story.txt has; store only that number in count.txt.",
    ), text_is("count.txt", "23"), files={"story.txt": "Once upon a time there was a small robot.\nIt liked to count words in stories.\nThis story has exactly twenty three words.\n"}),
    # folders
    SuiteTask("folders-move-logs", "folders", (
        "Move all .log files into a folder named logs.",
        "Tidy up: every .log file in the project root should end up inside a logs directory.",
    ), all_of(exists("logs/a.log", "logs/b.log"), gone("a.log", "b.log"), text_is("keep.txt", "keep")),
        files={"a.log": "one\n", "b.log": "two\n", "keep.txt": "keep\n"}),
    SuiteTask("folders-create-tree", "folders", (
        "Create the folders src/app and tests, each containing an empty __init__.py.",
        "Set up a package layout: src/app/__init__.py and tests/__init__.py, both empty files.",
    ), exists("src/app/__init__.py", "tests/__init__.py")),
    SuiteTask("folders-delete-tmp", "folders", (
        "Delete every .tmp file in the project, in every folder.",
        "Remove all files ending in .tmp, including those in subfolders. Keep everything else.",
    ), all_of(gone("x.tmp", "a/y.tmp", "a/b/z.tmp"), exists("a/keep.txt", "main.py")),
        files={"x.tmp": "", "a/y.tmp": "", "a/b/z.tmp": "", "a/keep.txt": "k\n", "main.py": "print(1)\n"}),
    SuiteTask("folders-copy", "folders", (
        "Copy template.txt into the folders alpha and beta (both exist already).",
        "Both alpha/ and beta/ need their own copy of template.txt.",
    ), all_of(text_is("alpha/template.txt", "T1"), text_is("beta/template.txt", "T1"), text_is("template.txt", "T1")),
        files={"template.txt": "T1\n", "alpha/notes.txt": "a", "beta/notes.txt": "b"}),
    SuiteTask("folders-list-to-file", "folders", (
        "Write the names of the files in the images folder, one per line, sorted alphabetically, into images.txt.",
        "Make images.txt: an alphabetical list of the file names found in images/, a name per line.",
    ), _images_list, files={f"images/{name}": "x" for name in IMAGES}),
    SuiteTask("folders-rename", "folders", (
        "Rename the folder old_docs to docs.",
        "The old_docs directory should be called docs now.",
    ), all_of(text_is("docs/guide.md", "# Guide"), gone("old_docs")), files={"old_docs/guide.md": "# Guide\n"}),
    # data
    SuiteTask("data-json-version", "data", (
        "Set the version in package.json to 1.2.0.",
        "Bump package.json's version field to 1.2.0 (nothing else changes).",
    ), json_is("package.json", {"name": "web", "version": "1.2.0", "private": True, "scripts": {"test": "jest"}}),
        files={"package.json": '{\n  "name": "web",\n  "version": "1.1.4",\n  "private": true,\n  "scripts": {"test": "jest"}\n}\n'}),
    SuiteTask("data-csv-total", "data", (
        "What is the total of the amount column in sales.csv?",
        "Add up all amounts in sales.csv and tell me the sum.",
    ), answer_number(40), files={"sales.csv": SALES}),
    SuiteTask("data-csv-to-json", "data", (
        "Convert people.csv to people.json: a JSON list of objects with keys name and age, where age is a number.",
        "I want the rows of people.csv as JSON in people.json (an array of {\"name\": ..., \"age\": <integer>} objects, in the same order).",
    ), _people_json, files={"people.csv": PEOPLE}),
    SuiteTask("data-markdown-table", "data", (
        "Create table.md with a Markdown table with the columns Name and Score and the rows Ann 90 and Bo 85.",
        "Write a two-column Markdown table (header Name | Score) into table.md listing Ann with 90 and Bo with 85.",
    ), _md_table),
    SuiteTask("data-json-count", "data", (
        "How many users in users.json are active?",
        "Count the entries of users.json whose active flag is true.",
    ), answer_number(4), files={"users.json": USERS}),
    SuiteTask("data-readme-section", "data", (
        "Add a section titled License with the text MIT at the end of GUIDE.md (a level-two heading).",
        "GUIDE.md needs a final '## License' section saying MIT. Keep the rest of the file.",
    ), _license_section, files={"GUIDE.md": GUIDE_START}),
    # shell
    SuiteTask("shell-hello", "shell", (
        "Create a shell script hello.sh that prints hello world, and make it executable.",
        "I want an executable hello.sh; running it should output: hello world",
    ), all_of(executable("hello.sh"), prints(["./hello.sh"], "hello world"))),
    SuiteTask("shell-backup", "shell", (
        "Write backup.sh, a bash script that copies every .txt file into a folder named backup, creating the folder if needed.",
        "Create a bash script backup.sh: it must make a backup directory when missing and copy all .txt files there.",
    ), _backup, files={"a.txt": "a\n", "b.txt": "b\n", "c.md": "c\n"}),
    SuiteTask("shell-args", "shell", (
        "Write greet.sh, a bash script that prints Hi, NAME where NAME is its first argument.",
        "Create greet.sh so that `bash greet.sh Bob` prints exactly: Hi, Bob",
    ), prints(["bash", "greet.sh", "Bob"], "Hi, Bob")),
    SuiteTask("shell-count-lines", "shell", (
        "Write lines.sh, a bash script that prints the number of lines of the file given as its first argument.",
        "I need a script lines.sh: `bash lines.sh FILE` outputs how many lines FILE has.",
    ), _lines_script),
    SuiteTask("shell-fix-script", "shell", (
        "build.sh fails with a syntax error. Fix it.",
        "Running `bash build.sh x` breaks. Repair the script so it prints Building x.",
    ), prints(["bash", "build.sh", "x"], "Building x"), files={"build.sh": "#!/bin/bash\necho \"Building $1\n"}),
    SuiteTask("shell-squares", "shell", (
        "Write squares.sh, a bash script that prints the squares of 1 to 5, one per line.",
        "Create a bash script squares.sh printing 1, 4, 9, 16 and 25 on separate lines.",
    ), prints(["bash", "squares.sh"], "1\n4\n9\n16\n25")),
    # multi-file
    SuiteTask("multi-move-function", "multi-file", (
        "Move the function slugify from webapp.py into a new module text.py, and import it in webapp.py so webapp.py still works.",
        "slugify should live in its own module text.py. Take it out of webapp.py and have webapp.py import it from there.",
    ), all_of(prints(["python3", "webapp.py"], "hello-world"), _py("text", "slugify('A B') == 'a-b'"), _no_def("webapp.py", "slugify")),
        files={"webapp.py": "def slugify(text):\n    return text.strip().lower().replace(' ', '-')\n\n\ndef main():\n    print(slugify('Hello World'))\n\n\nif __name__ == '__main__':\n    main()\n"}),
    SuiteTask("multi-rename-everywhere", "multi-file", (
        "Rename the function calc_total to compute_total everywhere in the project.",
        "calc_total is a bad name: call it compute_total in every file that defines or uses it.",
    ), all_of(_nothing_named("calc_total", "billing.py", "main.py"), prints(["python3", "main.py"], "30")),
        files={"billing.py": "def calc_total(prices):\n    return sum(prices)\n", "main.py": "from billing import calc_total\n\nprint(calc_total([10, 20]))\n"}),
    SuiteTask("multi-version-bump", "multi-file", (
        "Bump the version from 1.0.0 to 1.1.0 in both pyproject.toml and mylib/__init__.py.",
        "Release 1.1.0: the version string is in pyproject.toml and in mylib/__init__.py, and both must say 1.1.0 instead of 1.0.0.",
    ), all_of(lambda root, a: 'version = "1.1.0"' in read(root, "pyproject.toml"), _py("mylib", "__version__ == '1.1.0'"), _nothing_named("1.0.0", "pyproject.toml", "mylib/__init__.py")),
        files={"pyproject.toml": '[project]\nname = "mylib"\nversion = "1.0.0"\n', "mylib/__init__.py": "__version__ = '1.0.0'\n"}),
    SuiteTask("multi-config-constant", "multi-file", (
        "Add TIMEOUT = 30 to config.py and make client.py use it instead of the hard-coded 10.",
        "client.py hard-codes a timeout of 10. Define TIMEOUT = 30 in config.py and have client.py read it from there.",
    ), all_of(_py("client", "get_timeout() == 30"), lambda root, a: "10" not in read(root, "client.py"), _py("config", "TIMEOUT == 30")),
        files={"config.py": "NAME = 'client'\n", "client.py": "def get_timeout():\n    return 10\n"}),
    SuiteTask("multi-package", "multi-file", (
        "Create a package shapes with two modules: circle.py with area(r) returning 3.14159 * r * r, and square.py with area(side) returning side * side.",
        "Make a Python package called shapes containing square.py (area(side) = side squared) and circle.py (area(r) = 3.14159 times r squared).",
    ), python_true("import shapes.circle, shapes.square\nprint(abs(shapes.circle.area(2) - 12.56636) < 1e-6 and shapes.square.area(3) == 9)")),
    SuiteTask("multi-usage-doc", "multi-file", (
        "Create USAGE.md that lists every command-line option defined in cli.py.",
        "Document the options that cli.py accepts in a new file USAGE.md (all of them).",
    ), lambda root, a: all(option in read(root, "USAGE.md") for option in ("--input", "--output", "--verbose", "--limit")),
        files={"cli.py": "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--input', required=True)\nparser.add_argument('--output', default='out.txt')\nparser.add_argument('--verbose', action='store_true')\nparser.add_argument('--limit', type=int, default=10)\n"}),
    # tests
    SuiteTask("tests-count-run", "tests", (
        "Run the tests in test_mathx.py with python3 -m unittest and tell me how many tests ran.",
        "How many unit tests does test_mathx.py have when you run it?",
    ), answer_number(4), files={"mathx.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n", "test_mathx.py": MATH_TESTS}),
    SuiteTask("tests-write", "tests", (
        "Write a unittest file test_wordcount.py with at least two test cases for count_words in wordcount.py.",
        "count_words in wordcount.py has no tests. Add test_wordcount.py (unittest, two or more tests).",
    ), tests_catch("test_wordcount.py", "wordcount.py", "def count_words(text):\n    return 0\n"),
        files={"wordcount.py": "def count_words(text):\n    return len(text.split())\n"}),
    SuiteTask("tests-make-pass", "tests", (
        "Make the tests in test_stack.py pass.",
        "test_stack.py fails because stack.py is incomplete. Finish the Stack class so the tests pass.",
    ), unittest_passes("test_stack.py", STACK_TESTS, minimum=3),
        files={"stack.py": "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n        self.items.append(item)\n", "test_stack.py": STACK_TESTS}),
    SuiteTask("tests-which-fails", "tests", (
        "One test in test_parse.py fails. Which one?",
        "Run test_parse.py and tell me the name of the failing test.",
    ), answer_has("test_equals_in_value"), files={"parse.py": "def parse_pair(text):\n    parts = text.split('=')\n    return parts[0].strip(), parts[-1].strip()\n", "test_parse.py": PARSE_TESTS}),
    SuiteTask("tests-fix-code", "tests", (
        "The tests in test_slug.py fail. Fix the code, not the tests.",
        "Make test_slug.py pass by correcting slug.py; the test file must stay as it is.",
    ), all_of(unittest_passes("test_slug.py", SLUG_TESTS, minimum=3), unchanged("test_slug.py", SLUG_TESTS)),
        files={"slug.py": "def slug(text):\n    return text.lower().replace(' ', '-')\n", "test_slug.py": SLUG_TESTS}),
    SuiteTask("tests-add-case", "tests", (
        "Add a test to test_divide.py that checks that divide(1, 0) raises ZeroDivisionError.",
        "test_divide.py should also test division by zero: divide(1, 0) must raise ZeroDivisionError. Add that test.",
    ), all_of(tests_catch("test_divide.py", "divide.py", "def divide(a, b):\n    return a / b if b else None\n"), lambda root, a: "ZeroDivisionError" in read(root, "test_divide.py")),
        files={"divide.py": "def divide(a, b):\n    return a / b\n", "test_divide.py": CALC2_TESTS}),
]
