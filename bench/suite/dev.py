"""Development tasks: outside the suite and its split, for trying aids on kinds of task the
tuning half has few of (it has no multi-file task). Written in the eighteenth session from the
category names alone, before that session's held-out result was seen; the next fourteen, from the
categories the first twelve lacked, in the nineteenth session, the same way. Run them with
`python bench/generalise.py run --runner agent --half dev --phrasing 0 --out FILE`; they count
toward neither half, and the package may name their ids and files no more than the suite's
(tests/test_suite_checks.py checks both).
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.suite.checks import Check, all_of, answer_has, answer_number, exists, json_is, prints, python_true, read, tests_catch, text_is, unittest_passes
from bench.suite.tasks import SuiteTask

LOADER = "def load(path):\n    with open(path) as handle:\n        return handle.read().split()\n"
REPORT = "from loader import load\n\nprint(len(load('nouns.txt')))\n"
SITE = '{"host": "localhost", "port": 8000}\n'
SERVE = "PORT = 8000\n\nprint(f'serving on {PORT}')\n"
TRIPLER = "def triple(x):\n    return x * 3\n\n\ndef main():\n    print(triple(4))\n\n\nif __name__ == '__main__':\n    main()\n"
COUNTDOWN = "for i in range(3, 0, -1):\n    print(i)\nprint('liftoff')\n"
MEANIE = "import sys\n\nnums = [float(x) for x in open(sys.argv[1]).read().split()]\nprint(f'mean: {sum(nums) / len(nums):.2f}')\n"
SALUTE = "def salute(name):\n    return 'Hello ' + name\n"
MAIL_INI = "[mail]\nhost = smtp.kestrel.test\nport = 2525\n"
MAILER = "import configparser\n\nconf = configparser.ConfigParser()\nconf.read('conf/mail.ini')\nprint('sending through', conf['mail']['host'])\n"
GEOMETRY = (
    "import math\n\n\ndef circle_area(r):\n    return math.pi * r * r\n\n\ndef square_area(side):\n    return side * side\n\n\n"
    "def perimeter(sides):\n    return sum(sides)\n\n\ndef diagonal(w, h):\n    return math.hypot(w, h)\n"
)
PICKS = "def largest(xs):\n    best = 0\n    for x in xs:\n        if x > best:\n            best = x\n    return best\n"
LIMITS = "def clamp(value, low, high):\n    return max(low, min(value, high))\n"
TALLY = "def count_words(text):\n    return len(text.split(' '))\n"
TEST_TALLY = (
    "import unittest\n\nfrom wordcounter import count_words\n\n\nclass CountWords(unittest.TestCase):\n"
    "    def test_two(self):\n        self.assertEqual(count_words('a b'), 2)\n\n"
    "    def test_double_space(self):\n        self.assertEqual(count_words('a  b'), 2)\n\n"
    "    def test_empty(self):\n        self.assertEqual(count_words(''), 0)\n\n\nif __name__ == '__main__':\n    unittest.main()\n"
)
SIGNALS = "for line in ['ERROR disk', 'ok', 'ERROR net', 'WARN fan', 'ERROR cpu', 'ok']:\n    print(line)\n"
FIRST_USER = "from salute import salute\n\nprint(salute('Ann'))\n"
SECOND_USER = "from salute import salute\n\nprint(salute('Bo').upper())\n"


def _triple_moved(root: Path, answer: str | None) -> bool:
    moved_to, moved_from = read(root, "mathbits.py"), read(root, "tripler.py")
    return "def triple" in moved_to and "def triple" not in moved_from and "import" in moved_from and prints(["python3", "tripler.py"], "12")(root, answer)


def _renamed_everywhere(root: Path, answer: str | None) -> bool:
    module = read(root, "salute.py")
    return (
        "def hail" in module and "def salute" not in module
        and prints(["python3", "first_user.py"], "Hello Ann")(root, answer) and prints(["python3", "second_user.py"], "HELLO BO")(root, answer)
    )


def _texts_moved(root: Path, answer: str | None) -> bool:
    moved = all((root / "texts" / name).is_file() for name in ("alpha.txt", "beta.txt"))
    return moved and not (root / "alpha.txt").exists() and (root / "gamma.md").is_file()


def _catalog(root: Path, answer: str | None) -> bool:
    return read(root, "catalog.txt").split() == ["apples.csv", "pears.csv", "plums.csv"]


def _number_in(name: str, value: float) -> Check:
    def check(root: Path, answer: str | None) -> bool:
        try:
            return float(read(root, name).strip()) == value
        except ValueError:
            return False

    return check


def _pets_table(root: Path, answer: str | None) -> bool:
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in read(root, "pets.md").splitlines() if line.strip().startswith("|")]
    body = [row for row in rows if not all(set(cell) <= set(":-") for cell in row)]
    return len(rows) == 4 and set(rows[1][0]) <= set(":-") and body == [["name", "kind"], ["Rex", "dog"], ["Tom", "cat"]]


def _backed_up(root: Path, answer: str | None) -> bool:
    return "diary.md" in read(root, "backup.sh") and read(root, "diary.md.bak") == read(root, "diary.md") != ""


def _flattened(root: Path, answer: str | None) -> bool:
    return exists("flat/gears.py", "flat/cogs.py", "lib/gears.py", "lib/sub/cogs.py")(root, answer) and not (root / "flat" / "c.txt").exists()


def _site_port(root: Path, answer: str | None) -> bool:
    try:
        settings = json.loads(read(root, "site.json") or "null")
    except ValueError:
        return False
    return settings == {"host": "localhost", "port": 9000} and prints(["python3", "serve.py"], "serving on 9000")(root, answer)


DEV_TASKS = [
    SuiteTask("dev-rename-across", "multi-file", (
        "Rename the function load in loader.py to load_words, and update report.py to use the new name.",
    ), all_of(python_true("import loader; print(hasattr(loader, 'load_words') and not hasattr(loader, 'load'))"), prints(["python3", "report.py"], "3")),
        {"loader.py": LOADER, "report.py": REPORT, "nouns.txt": "a b c\n"}),
    SuiteTask("dev-port-both", "multi-file", (
        "Change the port from 8000 to 9000 everywhere: in site.json and in serve.py.",
    ), _site_port, {"site.json": SITE, "serve.py": SERVE}),
    SuiteTask("dev-move-function", "multi-file", (
        "Move the function triple from tripler.py into a new file mathbits.py, and make tripler.py import it from there.",
    ), _triple_moved, {"tripler.py": TRIPLER}),
    SuiteTask("dev-rename-users", "multi-file", (
        "Rename salute to hail in salute.py and in every file that uses it.",
    ), _renamed_everywhere, {"salute.py": SALUTE, "first_user.py": FIRST_USER, "second_user.py": SECOND_USER}),
    SuiteTask("dev-package", "multi-file", (
        "Create a package store with an empty __init__.py and a module basket.py holding class Basket with add(price) and total() methods.",
    ), python_true("from store.basket import Basket\nb = Basket(); b.add(2); b.add(3.5)\nprint(b.total() == 5.5)")),
    SuiteTask("dev-release-two", "multi-file", (
        "Create release.py defining RELEASE = '1.2', and change marquee.py so it prints that RELEASE instead of the hard-coded text.",
    ), all_of(python_true("import release; print(release.RELEASE == '1.2')"), prints(["python3", "marquee.py"], "release 1.2"), lambda root, answer: "1.0" not in read(root, "marquee.py")),
        {"marquee.py": "print('release ' + '1.0')\n"}),
    SuiteTask("dev-folders-make", "folders", (
        "Create the folders src, tests and docs, each holding an empty file named .keep.",
    ), exists("src/.keep", "tests/.keep", "docs/.keep")),
    SuiteTask("dev-folders-move-txt", "folders", (
        "Move every .txt file of the project into a folder named texts.",
    ), _texts_moved, {"alpha.txt": "one\n", "beta.txt": "two\n", "gamma.md": "# keep\n"}),
    SuiteTask("dev-folders-catalog", "folders", (
        "Write the names of the files in the fruit folder into catalog.txt, sorted, one per line.",
    ), _catalog, {"fruit/pears.csv": "x\n", "fruit/apples.csv": "y\n", "fruit/plums.csv": "z\n"}),
    SuiteTask("dev-run-save", "run-record", (
        "Run countdown.py and save everything it prints into launch.txt.",
    ), text_is("launch.txt", "3\n2\n1\nliftoff"), {"countdown.py": COUNTDOWN}),
    SuiteTask("dev-run-mean", "run-record", (
        "Run meanie.py with values.txt as its argument and write just the mean it prints (the number only) into average.txt.",
    ), text_is("average.txt", "4.25"), {"meanie.py": MEANIE, "values.txt": "2 4 5 6\n"}),
    SuiteTask("dev-run-lines", "run-record", (
        "How many lines does rows.py print? Put the number in rowcount.txt.",
    ), text_is("rowcount.txt", "37"), {"rows.py": "for i in range(37):\n    print('row', i)\n"}),
    SuiteTask("dev-answer-mailhost", "answer", (
        "Which mail host does mailer.py send through?",
    ), answer_has("smtp.kestrel.test"), {"conf/mail.ini": MAIL_INI, "mailer.py": MAILER}),
    SuiteTask("dev-answer-defs", "answer", (
        "How many functions does geometry.py define?",
    ), answer_number(4), {"geometry.py": GEOMETRY}),
    SuiteTask("dev-data-sales-total", "data", (
        "Add up the amount column of sales.csv and write the total into total.txt.",
    ), _number_in("total.txt", 61), {"sales.csv": "item,amount\npen,12\nbook,30\nmug,19\n"}),
    SuiteTask("dev-data-options-key", "data", (
        'Add a key "debug" with the value false to options.json, keeping the keys it has.',
    ), json_is("options.json", {"name": "kestrel", "workers": 4, "debug": False}), {"options.json": '{"name": "kestrel", "workers": 4}\n'}),
    SuiteTask("dev-data-pets-table", "data", (
        "Turn pets.csv into a Markdown table in pets.md, with its header row first.",
    ), _pets_table, {"pets.csv": "name,kind\nRex,dog\nTom,cat\n"}),
    SuiteTask("dev-modify-greeting", "modify", (
        "Change greet in greeter.py so the greeting defaults to 'Hi' instead of 'Hello'.",
    ), python_true("from greeter import greet; print(greet('Al') == 'Hi Al' and greet('Al', 'Yo') == 'Yo Al')"),
        {"greeter.py": "def greet(name, greeting='Hello'):\n    return f'{greeting} {name}'\n"}),
    SuiteTask("dev-modify-scale", "modify", (
        "Add a third parameter scale to area in shapes.py, defaulting to 1, that multiplies the result.",
    ), python_true("from shapes import area; print(area(2, 3) == 6 and area(2, 3, 2) == 12 and area(2, 3, scale=3) == 18)"),
        {"shapes.py": "def area(w, h):\n    return w * h\n"}),
    SuiteTask("dev-fix-largest", "fix-logic", (
        "largest in picks.py gives a wrong result when every number is negative. Fix it.",
    ), python_true("from picks import largest; print(largest([-3, -1, -2]) == -1 and largest([1, 5, 2]) == 5 and largest([7]) == 7)"), {"picks.py": PICKS}),
    SuiteTask("dev-fix-stopwatch", "fix-syntax", (
        "stopwatch.py does not run. Fix it.",
    ), prints(["python3", "stopwatch.py"], "180"), {"stopwatch.py": "def seconds(minutes)\n    return minutes * 60\n\nprint(seconds(3)\n"}),
    SuiteTask("dev-tests-limits", "tests", (
        "Write unittest tests for clamp from limits.py in test_limits.py, and run them.",
    ), tests_catch("test_limits.py", "limits.py", "def clamp(value, low, high):\n    return value\n"), {"limits.py": LIMITS}),
    SuiteTask("dev-tests-wordcounter", "tests", (
        "The tests in test_wordcounter.py fail. Fix wordcounter.py so they pass, without changing the tests.",
    ), unittest_passes("test_wordcounter.py", TEST_TALLY, 3), {"wordcounter.py": TALLY, "test_wordcounter.py": TEST_TALLY}),
    SuiteTask("dev-shell-backup", "shell", (
        "Write a shell script backup.sh that copies diary.md to diary.md.bak, then run it.",
    ), _backed_up, {"diary.md": "# notes\n- buy milk\n"}),
    SuiteTask("dev-run-errors", "run-record", (
        "Run signals.py and write how many of the lines it prints start with ERROR into errors.txt.",
    ), text_is("errors.txt", "3"), {"signals.py": SIGNALS}),
    SuiteTask("dev-folders-flat", "folders", (
        "Copy every .py file under lib, subfolders included, into a new folder named flat.",
    ), _flattened, {"lib/gears.py": "A = 1\n", "lib/sub/cogs.py": "B = 2\n", "lib/sub/c.txt": "c\n"}),
]
