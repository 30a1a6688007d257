"""Shell scripts, Makefiles and packaging. Where the user names a command (`./x.sh`, `make test`)
the checker runs exactly that command: the execute bit, the shebang and make's tabs are part of
the task, and `bash x.sh` working is not the request."""

from __future__ import annotations

import gzip
import os
import time
import tomllib
from pathlib import Path

from bench.realistic.checking import copy_of, evaluate, output_before, output_is, run, runs_directly, succeeds, text
from bench.realistic.task import Change, Failed, RealisticTask, edit, expect

# --- compress_logs.sh: folders with spaces --------------------------------------------------------

COMPRESS = '''#!/usr/bin/env bash
# Gzip every .log file in a folder (default: logs) except the newest, which is still being written.
dir=${1:-logs}
newest=$(ls -t $dir/*.log | head -n 1)
for f in $(ls $dir/*.log); do
  if [ "$f" != "$newest" ]; then
    gzip $f
  fi
done
'''
COMPRESS_FIXED = '''#!/usr/bin/env bash
# Gzip every .log file in a folder (default: logs) except the newest, which is still being written.
dir=${1:-logs}
newest=$(ls -t "$dir"/*.log | head -n 1)
for f in "$dir"/*.log; do
  if [ "$f" != "$newest" ]; then
    gzip -- "$f"
  fi
done
'''


def _logs(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for age, name in enumerate(reversed(names)):
        (folder / name).write_text(f"lines of {name}\n")
        os.utime(folder / name, (now - 3600 * age, now - 3600 * age))


def _compressed(folder: Path, name: str) -> None:
    packed = folder / f"{name}.gz"
    expect(packed.is_file() and not (folder / name).exists(), f"{folder.name}/{name} was not replaced by {name}.gz")
    expect(gzip.decompress(packed.read_bytes()).decode() == f"lines of {name}\n", f"{name}.gz does not hold the log")


def _compress(root: Path, answer: str | None) -> None:
    runs_directly(root, "compress_logs.sh")
    with copy_of(root) as copy:
        spaced = copy / "logs archive"
        _logs(spaced, ["api 2024-01.log", "api 2024-02.log", "worker.log"])
        succeeds(run(copy, ["./compress_logs.sh", "logs archive"]))
        _compressed(spaced, "api 2024-01.log")
        _compressed(spaced, "api 2024-02.log")
        expect((spaced / "worker.log").is_file(), "the newest log was compressed too")
        _logs(copy / "logs", ["old.log", "new.log"])
        succeeds(run(copy, ["./compress_logs.sh"]))
        _compressed(copy / "logs", "old.log")
        expect((copy / "logs" / "new.log").is_file(), "with no argument the newest log in logs/ was compressed")


# --- count_errors.sh: a new script the user names -----------------------------------------------

SERVICE_LOG = '''2024-06-01 12:00:01 INFO  [api] started
2024-06-01 12:00:03 ERROR [db] connection refused
2024-06-01 12:00:04 WARN  [cache] miss storm
2024-06-01 12:00:05 ERROR [api] upstream timeout
2024-06-01 12:00:06 ERROR [db] connection refused
2024-06-01 12:00:09 ERROR [queue] consumer lag 120s
2024-06-01 12:00:12 ERROR [db] deadlock detected
2024-06-01 12:00:14 INFO  [api] ERROR page served to client
'''
HIDDEN_LOG = '''2024-06-02 08:00:00 ERROR [mail] smtp 451
2024-06-02 08:00:01 ERROR [auth] bad token
2024-06-02 08:00:02 ERROR [mail] smtp 451
2024-06-02 08:00:03 WARN  [auth] slow
'''
COUNT_ERRORS = '''#!/usr/bin/env bash
# Errors per component, most first: "db 3".
set -euo pipefail
grep -E '^[0-9-]+ [0-9:]+ ERROR ' "$1" | sed -E 's/^.* ERROR +\\[([^]]+)\\].*$/\\1/' | sort | uniq -c | sort -k1,1nr -k2,2 | awk '{print $2, $1}'
'''


def _count_errors(root: Path, answer: str | None) -> None:
    runs_directly(root, "count_errors.sh")
    output_is(run(root, ["./count_errors.sh", "service.log"]), "db 3\napi 1\nqueue 1")
    with copy_of(root) as copy:
        (copy / "other.log").write_text(HIDDEN_LOG)
        output_is(run(copy, ["./count_errors.sh", "other.log"]), "mail 2\nauth 1")


# --- csvstat.py: make ./csvstat.py work -------------------------------------------------------------

CSVSTAT = '''"""Column statistics for a CSV file: count, mean, min and max of each numeric column."""

import csv
import statistics
import sys


def numeric_columns(rows):
    columns = {}
    for row in rows:
        for name, value in row.items():
            try:
                columns.setdefault(name, []).append(float(value))
            except ValueError:
                columns[name] = None if name not in columns else columns[name]
    return {name: values for name, values in columns.items() if values}


def main(path):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    for name, values in numeric_columns(rows).items():
        print(f"{name}: n={len(values)} mean={statistics.mean(values):.2f} min={min(values):g} max={max(values):g}")


if __name__ == "__main__":
    main(sys.argv[1])
'''
SALES = "region,units,price\nnorth,12,9.5\nsouth,7,11\nwest,30,8.25\n"


def _csvstat(root: Path, answer: str | None) -> None:
    runs_directly(root, "csvstat.py")
    expected = output_before({"csvstat.py": CSVSTAT, "sales.csv": SALES}, ["csvstat.py", "sales.csv"])
    output_is(run(root, ["./csvstat.py", "sales.csv"]), expected)
    with copy_of(root) as copy:
        (copy / "sub").mkdir()
        (copy / "sub" / "w.csv").write_text("kg\n2\n4\n")
        output_is(run(copy / "sub", ["../csvstat.py", "w.csv"]), "kg: n=2 mean=3.00 min=2 max=4")


# --- make test ------------------------------------------------------------------------------------

MAKEFILE = '''PYTHON ?= python3

.PHONY: run lint

run:
\t$(PYTHON) -m invoices sample.csv

lint:
\t$(PYTHON) -m py_compile invoices/*.py
'''
INVOICES_INIT = '''def vat(net, rate=0.2):
    return round(net * rate, 2)
'''
INVOICES_MAIN = '''import csv
import sys

from invoices import vat

with open(sys.argv[1], newline="") as handle:
    for row in csv.DictReader(handle):
        net = float(row["net"])
        print(f"{row['client']}: {net:.2f} + {vat(net):.2f} VAT")
'''
INVOICE_TESTS = '''import unittest

from invoices import vat


class Vat(unittest.TestCase):
    def test_default_rate(self):
        self.assertEqual(vat(100), 20.0)

    def test_rounding(self):
        self.assertEqual(vat(0.99), 0.2)

    def test_other_rate(self):
        self.assertEqual(vat(50, 0.05), 2.5)
'''
MAKE_FILES = {"README.md": "# invoices\n\n`make run` prints the sample invoices; `make lint` compiles the package.\n", "Makefile": MAKEFILE,
              "invoices/__init__.py": INVOICES_INIT, "invoices/__main__.py": INVOICES_MAIN, "sample.csv": "client,net\nAcme,120\nBolt,99.99\n",
              "tests/__init__.py": "", "tests/test_vat.py": INVOICE_TESTS}


def _make(root: Path, *target: str) -> str:
    done = run(root, ["make", "--no-print-directory", *target])
    return succeeds(done) + done.stderr


def _make_test(root: Path, answer: str | None) -> None:
    tested = _make(root, "test")
    expect("Ran 3 tests" in tested, "`make test` did not run the 3 tests in tests/")
    expect(_make(root, "run").strip().endswith("Bolt: 99.99 + 20.00 VAT"), "`make run` no longer prints the invoices")
    _make(root, "lint")
    with copy_of(root) as copy:
        (copy / "invoices" / "__init__.py").write_text(INVOICES_INIT.replace("0.2)", "0.25)"))
        expect(run(copy, ["make", "test"]).returncode != 0, "`make test` succeeds when a test fails")


# --- a Makefile with spaces -----------------------------------------------------------------------

SITE_MAKEFILE = '''# Build the static site into dist/.
PAGES := $(wildcard pages/*.md)

.PHONY: build clean

build: dist/index.html

dist/index.html: $(PAGES) render.py
\tmkdir -p dist
        python3 render.py $(PAGES) > $@

clean:
\trm -rf dist
'''
RENDER = '''"""Join Markdown pages into one HTML page: each `# Title` becomes an <h1>, other lines paragraphs."""

import html
import sys

parts = ["<!doctype html>", "<title>Handbook</title>"]
for path in sys.argv[1:]:
    with open(path) as handle:
        for line in handle:
            line = line.strip()
            if line.startswith("# "):
                parts.append(f"<h1>{html.escape(line[2:])}</h1>")
            elif line:
                parts.append(f"<p>{html.escape(line)}</p>")
print("\\n".join(parts))
'''
PAGES = {"pages/01-welcome.md": "# Welcome\n\nRead this first.\n", "pages/02-tools.md": "# Tools & access\n\nAsk IT for a laptop.\n"}
SITE_HTML = "<!doctype html>\n<title>Handbook</title>\n<h1>Welcome</h1>\n<p>Read this first.</p>\n<h1>Tools &amp; access</h1>\n<p>Ask IT for a laptop.</p>\n"


def _site(root: Path, answer: str | None) -> None:
    with copy_of(root) as copy:
        _make(copy, "build")
        expect(text(copy, "dist/index.html") == SITE_HTML, "`make build` wrote another dist/index.html")
        (copy / "pages" / "03-more.md").write_text("# More\n")
        _make(copy, "build")
        expect(text(copy, "dist/index.html").endswith("<h1>More</h1>\n"), "a new page is not built")
        _make(copy, "clean")
        expect(not (copy / "dist").exists(), "`make clean` left dist/")


# --- pyproject.toml: a console script and a version -----------------------------------------------

PYPROJECT = '''[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "wordfreq-lite"
version = "0.2.4"
description = "Word frequencies for plain-text corpora"
requires-python = ">=3.10"
dependencies = [
    "regex>=2023.10",
]

[tool.setuptools.packages.find]
include = ["wordfreq*"]
'''
CLI = '''import argparse
import collections
import re


def main(argv=None):
    parser = argparse.ArgumentParser(prog="wordfreq")
    parser.add_argument("path")
    args = parser.parse_args(argv)
    with open(args.path) as handle:
        words = re.findall(r"\\w+", handle.read().lower())
    for word, count in collections.Counter(words).most_common(5):
        print(count, word)
'''


def _pyproject(root: Path, answer: str | None) -> None:
    try:
        project = tomllib.loads(text(root, "pyproject.toml"))
    except tomllib.TOMLDecodeError as error:
        raise Failed(f"pyproject.toml does not parse: {error}") from None
    table = project.get("project", {})
    expect(table.get("scripts") == {"wordfreq": "wordfreq.cli:main"}, f"[project.scripts] is {table.get('scripts')!r}")
    expect(table.get("version") == "0.3.0", f"the version is {table.get('version')!r}")
    before = tomllib.loads(PYPROJECT)
    for key in ("name", "dependencies", "requires-python", "description"):
        expect(table.get(key) == before["project"][key], f"[project] {key} changed")
    expect(project.get("build-system") == before["build-system"] and project.get("tool") == before["tool"], "other tables changed")
    expect(evaluate(root, "from wordfreq.cli import main\nprint(callable(main))") == "True", "wordfreq.cli:main is not there")


TASKS = [
    RealisticTask(
        "shell-compress-logs-spaces", "shell script",
        (
            "./compress_logs.sh fails for a folder with spaces in its name. Fix it.",
            "When I run `./compress_logs.sh \"logs archive\"` I get `ls: cannot access 'logs': No such file or directory` and nothing gets compressed. "
            "Our log folders (and some file names) have spaces. Please make the script handle that; the newest log must still be left alone.",
        ),
        {"README.md": "# ops\n\n`./compress_logs.sh [FOLDER]` gzips old logs (default folder: logs).\n", "compress_logs.sh": COMPRESS},
        _compress,
        Change({"compress_logs.sh": COMPRESS_FIXED}),
        {
            "newest compressed too": Change({"compress_logs.sh": edit('  if [ "$f" != "$newest" ]; then\n    gzip -- "$f"\n  fi\n', '  gzip -- "$f"\n')}),
            "lost the execute bit": Change(plain=("compress_logs.sh",)),
            "default folder dropped": Change({"compress_logs.sh": edit("dir=${1:-logs}", 'dir="$1"')}),
        },
        executables=("compress_logs.sh",),
    ),
    RealisticTask(
        "shell-count-errors", "shell script",
        (
            "Write count_errors.sh: `./count_errors.sh service.log` prints each component with its number of ERROR lines, most first (ties by name), like `db 3`.",
            "I keep grepping our logs by hand. Could you write a small script so that `./count_errors.sh service.log` prints, for each component "
            "(the name in square brackets), how many ERROR lines it has, one per line like `db 3`, biggest count first and ties in alphabetical order? "
            "Only real ERROR-level lines count, not INFO lines that happen to contain the word.",
        ),
        {"README.md": "# ops\n\nservice.log: the service's log, one line per event: date, time, level, [component], message.\n", "service.log": SERVICE_LOG},
        _count_errors,
        Change({"count_errors.sh": COUNT_ERRORS}, executable=("count_errors.sh",)),
        {
            "not executable": Change(plain=("count_errors.sh",)),
            "any line with ERROR": Change({"count_errors.sh": edit("grep -E '^[0-9-]+ [0-9:]+ ERROR ' \"$1\"", "grep ERROR \"$1\"")}),
            "hard-coded": Change({"count_errors.sh": "#!/usr/bin/env bash\nprintf 'db 3\\napi 1\\nqueue 1\\n'\n"}),
            "count first": Change({"count_errors.sh": edit(" | awk '{print $2, $1}'", "")}),
        },
    ),
    RealisticTask(
        "shell-run-directly", "shell script",
        (
            "Make `./csvstat.py sales.csv` work.",
            "The README says to run `./csvstat.py sales.csv`, but in a fresh checkout that gives `Permission denied`, and even after chmod the shell "
            "tries to run it as a shell script. Can you make that exact command work? It should also work from another folder (`../csvstat.py file.csv`).",
        ),
        {"README.md": "# csvstat\n\n`./csvstat.py FILE.csv` prints count, mean, min and max of each numeric column.\n", "csvstat.py": CSVSTAT, "sales.csv": SALES},
        _csvstat,
        Change({"csvstat.py": "#!/usr/bin/env python3\n" + CSVSTAT}, executable=("csvstat.py",)),
        {
            "chmod only": Change({"csvstat.py": CSVSTAT}),
            "shebang only": Change(plain=("csvstat.py",)),
            "a wrapper script instead": Change({"csvstat.py": CSVSTAT, "csvstat": "#!/bin/sh\nexec python3 \"$(dirname \"$0\")/csvstat.py\" \"$@\"\n"}, executable=("csvstat",), plain=("csvstat.py",)),
        },
    ),
    RealisticTask(
        "make-test-target", "build file",
        (
            "Add a `make test` target that runs the unit tests in tests/.",
            "We have `make run` and `make lint` but nothing for the tests, and people forget to run them. Could you add `make test` so it runs the unit tests "
            "in tests/ and fails when a test fails? The other targets should keep working as they do.",
        ),
        MAKE_FILES,
        _make_test,
        Change({"Makefile": lambda source: source.replace(".PHONY: run lint", ".PHONY: run lint test") + "\ntest:\n\t$(PYTHON) -m unittest discover -s tests -t . -v\n"}),
        {
            "never fails": Change({"Makefile": edit("-t . -v\n", "-t . -v || true\n")}),
            "spaces for the tab": Change({"Makefile": edit("test:\n\t$(PYTHON)", "test:\n    $(PYTHON)")}),
            "run target replaced": Change({"Makefile": edit("run:\n\t$(PYTHON) -m invoices sample.csv\n", "run:\n\t$(PYTHON) -m unittest\n")}),
        },
    ),
    RealisticTask(
        "make-missing-separator", "build file",
        (
            "make build fails with `Makefile:10: *** missing separator (did you mean TAB instead of 8 spaces?).  Stop.` Fix the Makefile.",
            "I edited the Makefile on a new machine and now `make build` only says\n\n    Makefile:10: *** missing separator (did you mean TAB instead of 8 spaces?).  Stop.\n\n"
            "I don't see anything wrong with line 10. Could you fix it so the site builds into dist/ again (and `make clean` still works)?",
        ),
        {"README.md": "# handbook\n\n`make build` renders pages/*.md into dist/index.html.\n", "Makefile": SITE_MAKEFILE, "render.py": RENDER, **PAGES},
        _site,
        Change({"Makefile": edit("        python3 render.py", "\tpython3 render.py")}),
        {
            "clean dropped": Change({"Makefile": edit("clean:\n\trm -rf dist\n", "")}),
            "pages hard-coded": Change({"Makefile": edit("\tpython3 render.py $(PAGES) > $@", "\tpython3 render.py pages/01-welcome.md pages/02-tools.md > $@")}),
            "rendered by hand": Change({"Makefile": edit("\tpython3 render.py $(PAGES) > $@\n", ""), "dist/index.html": SITE_HTML}),
        },
    ),
    RealisticTask(
        "pkg-console-script", "build file",
        (
            "In pyproject.toml add a console script `wordfreq` for wordfreq.cli:main, and bump the version to 0.3.0.",
            "Two things for the release: people should be able to type `wordfreq FILE` after `pip install`, so please add a console script entry point "
            "called wordfreq pointing at the main function in wordfreq/cli.py. And bump the version to 0.3.0. Don't change anything else in pyproject.toml.",
        ),
        {"README.md": "# wordfreq-lite\n\n`python3 -m wordfreq.cli FILE` prints the five most common words.\n", "pyproject.toml": PYPROJECT,
         "wordfreq/__init__.py": "", "wordfreq/cli.py": CLI},
        _pyproject,
        Change({"pyproject.toml": lambda source: edit('version = "0.2.4"', 'version = "0.3.0"')(source).replace(
            "\n[tool.setuptools", '\n[project.scripts]\nwordfreq = "wordfreq.cli:main"\n\n[tool.setuptools')}),
        {
            "version not bumped": Change({"pyproject.toml": edit('version = "0.3.0"', 'version = "0.2.4"')}),
            "dotted target": Change({"pyproject.toml": edit('"wordfreq.cli:main"', '"wordfreq.cli.main"')}),
            "dependency dropped": Change({"pyproject.toml": edit('dependencies = [\n    "regex>=2023.10",\n]', "dependencies = []")}),
            "scripts under tool": Change({"pyproject.toml": edit("[project.scripts]", "[tool.scripts]")}),
        },
    ),
]
