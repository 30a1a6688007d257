"""Development tasks: outside the suite and its split, for trying aids on kinds of task the
tuning half has few of (it has no multi-file task). Written in the eighteenth session from the
category names alone, before that session's held-out result was seen. Run them with
`python bench/generalise.py run --runner agent --half dev --phrasing 0 --out FILE`; they count
toward neither half, and the package may name their ids and files no more than the suite's
(tests/test_suite_checks.py checks both).
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.suite.checks import all_of, exists, prints, python_true, read, text_is
from bench.suite.tasks import SuiteTask

LOADER = "def load(path):\n    with open(path) as handle:\n        return handle.read().split()\n"
REPORT = "from loader import load\n\nprint(len(load('nouns.txt')))\n"
SITE = '{"host": "localhost", "port": 8000}\n'
SERVE = "PORT = 8000\n\nprint(f'serving on {PORT}')\n"
TRIPLER = "def triple(x):\n    return x * 3\n\n\ndef main():\n    print(triple(4))\n\n\nif __name__ == '__main__':\n    main()\n"
COUNTDOWN = "for i in range(3, 0, -1):\n    print(i)\nprint('liftoff')\n"
MEANIE = "import sys\n\nnums = [float(x) for x in open(sys.argv[1]).read().split()]\nprint(f'mean: {sum(nums) / len(nums):.2f}')\n"
SALUTE = "def salute(name):\n    return 'Hello ' + name\n"
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
]
