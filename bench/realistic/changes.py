"""Changes to working code: an option added with the old behaviour kept, a rename across files, a
new module wired in. The checker compares the changed program with the program as given (run in
a scratch folder) wherever the old behaviour must stay, and runs the new behaviour on input the
request does not show."""

from __future__ import annotations

import csv
import io
import json
import re
import tarfile
from pathlib import Path

from bench.realistic.checking import copy_of, evaluate, output_before, output_is, python, python_files, run, succeeds, text
from bench.realistic.task import Change, RealisticTask, edit, expect

# --- top words: a --top option ----------------------------------------------------------------------

TOP_WORDS = '''#!/usr/bin/env python3
"""The most common words of a text file, most common first."""

import argparse
import re
from collections import Counter

STOP_WORDS = {"the", "a", "an", "and", "of", "to", "in", "is", "it", "that"}


def words(text, ignore_case):
    if ignore_case:
        text = text.lower()
    return [word for word in re.findall(r"[A-Za-z']+", text) if word.lower() not in STOP_WORDS]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path")
    parser.add_argument("-i", "--ignore-case", action="store_true", help="count Word and word together")
    args = parser.parse_args()
    with open(args.path) as handle:
        counts = Counter(words(handle.read(), args.ignore_case))
    for word, count in counts.most_common(10):
        print(f"{count:>5} {word}")


if __name__ == "__main__":
    main()
'''
SPEECH = (
    "Rivers carry the rain to the sea, and the sea gives the rain back to the rivers. "
    "Rain falls on hills; hills send rain down to rivers. The River Tay is the longest river in Scotland, "
    "and rivers like the Tay carry more water than any river in England. Water, water: rain is water, "
    "rivers are water, the sea is water. Hills hold water too. Sea fog, sea salt, sea spray. River river River.\n"
)


def _top_words(root: Path, answer: str | None) -> None:
    files = {"top_words.py": TOP_WORDS, "speech.txt": SPEECH}
    for flags in ([], ["-i"]):
        old = output_before(files, ["top_words.py", *flags, "speech.txt"])
        output_is(python(root, "top_words.py", *flags, "speech.txt"), old)
        for top in ("3", "12"):
            wider = output_before({**files, "top_words.py": TOP_WORDS.replace("most_common(10)", f"most_common({top})")}, ["top_words.py", *flags, "speech.txt"])
            output_is(python(root, "top_words.py", *flags, "--top", top, "speech.txt"), wider)


# --- disk usage: a --json option --------------------------------------------------------------------

USAGE = '''"""Disk use of the entries of a folder, largest first: `python3 usage.py FOLDER`."""

import os
import sys


def size_of(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for folder, _, names in os.walk(path):
        total += sum(os.path.getsize(os.path.join(folder, name)) for name in names)
    return total


def human(size):
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"


def usage(folder):
    entries = [(size_of(os.path.join(folder, name)), name) for name in os.listdir(folder)]
    return sorted(entries, key=lambda entry: (-entry[0], entry[1]))


def main(argv):
    folder = argv[1] if len(argv) > 1 else "."
    for size, name in usage(folder):
        print(f"{human(size):>10}  {name}")


if __name__ == "__main__":
    main(sys.argv)
'''
TREE = {"media/a.bin": "x" * 5000, "media/b/c.bin": "y" * 2600, "notes.txt": "z" * 700, "src/main.c": "w" * 700, "empty/.keep": ""}


def _usage(root: Path, answer: str | None) -> None:
    tree = {f"disk/{name}": content for name, content in TREE.items()}
    old = output_before({"usage.py": USAGE}, ["usage.py", "disk"], tree)
    with copy_of(root) as copy:
        for name, content in tree.items():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            (copy / name).write_text(content)
        output_is(python(copy, "usage.py", "disk"), old)
        done = python(copy, "usage.py", "--json", "disk")
        try:
            listed = json.loads(succeeds(done))
        except ValueError:
            expect(False, f"`usage.py --json disk` printed no JSON: {done.stdout[:200]!r}")
        wanted = [{"name": "media", "bytes": 7600}, {"name": "notes.txt", "bytes": 700}, {"name": "src", "bytes": 700}, {"name": "empty", "bytes": 0}]
        expect(listed == wanted, f"`usage.py --json disk` gave {listed!r}, expected {wanted!r}")


USAGE_JSON = edit('''def main(argv):
    folder = argv[1] if len(argv) > 1 else "."
    for size, name in usage(folder):''', '''def main(argv):
    as_json = "--json" in argv
    args = [arg for arg in argv[1:] if arg != "--json"]
    folder = args[0] if args else "."
    if as_json:
        print(json.dumps([{"name": name, "bytes": size} for size, name in usage(folder)]))
        return
    for size, name in usage(folder):''')

# --- slugify: a separator parameter -------------------------------------------------------------

SLUG = '''import re
import unicodedata


def slugify(text, max_length=60):
    """'Héllo, World!' -> 'hello-world': ASCII, lower case, words joined by hyphens."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = "-".join(words)
    return slug[:max_length].rstrip("-")
'''
BUILD = '''"""Write the blog's index: one line per post, title and URL."""

import json

from textkit.slug import slugify

with open("posts.json") as handle:
    posts = json.load(handle)
for post in posts:
    print(f"{post['title']}: /posts/{slugify(post['title'], max_length=30)}/")
'''
POSTS = json.dumps([{"title": "Crème brûlée at home"}, {"title": "Why we moved to Postgres (and back)"}, {"title": "  Ten tips: caching, queues & retries  "}], ensure_ascii=False) + "\n"
SLUG_TESTS = '''import unittest

from textkit.slug import slugify


class Slugify(unittest.TestCase):
    def test_accents(self):
        self.assertEqual(slugify("Héllo, World!"), "hello-world")

    def test_length(self):
        self.assertEqual(slugify("a" * 10 + " b", max_length=11), "aaaaaaaaaa")
'''
SLUG_HIDDEN = '''import unittest

from textkit.slug import slugify


class Separator(unittest.TestCase):
    def test_underscore(self):
        self.assertEqual(slugify("Héllo, big World!", separator="_"), "hello_big_world")

    def test_default_unchanged(self):
        self.assertEqual(slugify("  Ten tips: caching & retries "), "ten-tips-caching-retries")

    def test_dot_and_length(self):
        self.assertEqual(slugify("ab cd ef", max_length=6, separator="."), "ab.cd")

    def test_positional_length_still_second(self):
        self.assertEqual(slugify("ab cd ef", 5), "ab-cd")
'''


def _slug(root: Path, answer: str | None) -> None:
    from bench.realistic.checking import unittests_pass

    unittests_pass(root, {"tests/test_slug.py": SLUG_TESTS}, {"tests/test_hidden_separator.py": SLUG_HIDDEN}, minimum=6)
    old = output_before(SLUG_FILES, ["make_index.py"])
    output_is(python(root, "make_index.py"), old)


SLUG_FILES = {"README.md": "# blog\n\n`python3 make_index.py` prints the post index. Tests: `python3 -m unittest`.\n",
              "textkit/__init__.py": "", "textkit/slug.py": SLUG, "make_index.py": BUILD, "posts.json": POSTS,
              "tests/__init__.py": "", "tests/test_slug.py": SLUG_TESTS}

# --- backup.sh: a destination argument ---------------------------------------------------------------

BACKUP = '''#!/usr/bin/env bash
# Archive data/ as backups/data-YYYYMMDD-HHMMSS.tar.gz and keep the newest 5 archives.
set -euo pipefail

dest="backups"
mkdir -p "$dest"
stamp=$(date +%Y%m%d-%H%M%S)
tar -czf "$dest/data-$stamp.tar.gz" data
ls -1t "$dest"/data-*.tar.gz | tail -n +6 | xargs -r rm --
echo "wrote $dest/data-$stamp.tar.gz"
'''


def _archives(folder: Path) -> list[Path]:
    return sorted(folder.glob("data-*.tar.gz")) if folder.is_dir() else []


def _backup(root: Path, answer: str | None) -> None:
    with copy_of(root) as copy:
        out = succeeds(run(copy, ["./backup.sh"]))
        made = _archives(copy / "backups")
        expect(len(made) == 1, f"`./backup.sh` with no argument made {len(made)} archives in backups/")
        expect(f"wrote backups/{made[0].name}" in out, "`./backup.sh` no longer says what it wrote")
        with tarfile.open(made[0]) as archive:
            expect("data/accounts.csv" in archive.getnames(), "the archive does not hold data/accounts.csv")
        target = copy / "mnt" / "usb drive"
        succeeds(run(copy, ["./backup.sh", str(target)]))
        expect(len(_archives(target)) == 1, "`./backup.sh '/…/usb drive'` made no archive there")
        expect(len(_archives(copy / "backups")) == 1, "with a destination given it still wrote into backups/")
        for number in range(6):
            (target / f"data-2020010{number}-000000.tar.gz").write_bytes(b"old")
        succeeds(run(copy, ["./backup.sh", str(target)]))
        expect(len(_archives(target)) == 5, "the destination does not keep only the newest 5 archives")


# --- rename: calc_tax -> compute_vat ---------------------------------------------------------------

TAX = '''RATES = {"standard": 0.20, "reduced": 0.05, "zero": 0.0}


def calc_tax(net, band="standard"):
    """The VAT on a net amount, rounded to cents."""
    return round(net * RATES[band], 2)
'''
INVOICE_LINES = '''from billing.tax import calc_tax


def invoice_lines(items):
    for name, net, band in items:
        tax = calc_tax(net, band)
        yield f"{name:<10} {net:>8.2f} {tax:>7.2f} {net + tax:>8.2f}"
'''
BILLING_MAIN = '''from billing import tax
from billing.invoice import invoice_lines

ITEMS = [("desk", 240.00, "standard"), ("bread", 3.20, "reduced"), ("book", 12.99, "zero")]

for line in invoice_lines(ITEMS):
    print(line)
print(f"{'vat':<10} {sum(tax.calc_tax(net, band) for _, net, band in ITEMS):>17.2f}")
'''
TAX_TESTS = '''import unittest

from billing.tax import calc_tax


class CalcTax(unittest.TestCase):
    def test_standard(self):
        self.assertEqual(calc_tax(100), 20.0)

    def test_reduced(self):
        self.assertEqual(calc_tax(3.20, "reduced"), 0.16)
'''
RENAME_FILES = {"README.md": "# billing\n\n`python3 -m billing` prints a sample invoice. VAT comes from `billing.tax.calc_tax`.\n",
                "billing/__init__.py": "", "billing/tax.py": TAX, "billing/invoice.py": INVOICE_LINES, "billing/__main__.py": BILLING_MAIN,
                "tests/__init__.py": "", "tests/test_tax.py": TAX_TESTS}


def _no_word(root: Path, word: str, also: tuple[str, ...] = ()) -> None:
    for name, source in {**python_files(root), **{name: text(root, name) for name in also}}.items():
        expect(re.search(rf"\b{word}\b", source) is None, f"{name} still says {word}")


def _renamed_tax(root: Path, answer: str | None) -> None:
    _no_word(root, "calc_tax", ("README.md",))
    output_is(python(root, "-m", "billing"), output_before(RENAME_FILES, ["-m", "billing"]))
    expect(evaluate(root, "from billing.tax import compute_vat\nprint(compute_vat(50, 'reduced'))") == "2.5", "compute_vat(50, 'reduced') is not 2.5")
    done = python(root, "-m", "unittest", "discover", "-s", "tests", "-t", ".")
    expect(done.returncode == 0 and "Ran 2 tests" in done.stderr, "the project's tests no longer pass: " + done.stderr[-200:])


# --- rename a module: helpers.py -> textutils.py ----------------------------------------------------

HELPERS = '''def title_case(text):
    small = {"a", "an", "the", "of", "and", "in"}
    words = text.lower().split()
    return " ".join(w if i and w in small else w.capitalize() for i, w in enumerate(words))


def truncate(text, width):
    return text if len(text) <= width else text[: width - 1] + "…"
'''
CATALOG = '''import helpers
from helpers import truncate

BOOKS = ["the name of the rose", "a tale of two cities", "in search of lost time and other very long titles"]


def lines():
    return [truncate(helpers.title_case(book), 32) for book in BOOKS]
'''
SHOW = '''from catalog import lines
from helpers import title_case

print(title_case("the catalogue"))
for line in lines():
    print("-", line)
'''
MODULE_FILES = {"README.md": "# catalogue\n\n`python3 show.py` prints the catalogue.\n", "helpers.py": HELPERS, "catalog.py": CATALOG, "show.py": SHOW}


def _renamed_module(root: Path, answer: str | None) -> None:
    expect(not (root / "helpers.py").exists(), "helpers.py is still there")
    expect(text(root, "textutils.py").count("def ") >= 2, "textutils.py does not hold the helpers")
    _no_word(root, "helpers")
    output_is(python(root, "show.py"), output_before(MODULE_FILES, ["show.py"]))


# --- rename a config key ---------------------------------------------------------------------------

FETCHER = '''import json
import urllib.request

with open("config.json") as handle:
    CONFIG = json.load(handle)


def describe():
    return f"{CONFIG['base_url']} (timeout {CONFIG['timeout']} s, {CONFIG['retries']} retries)"


def get(path):
    return urllib.request.urlopen(CONFIG["base_url"] + path, timeout=CONFIG["timeout"]).read()


if __name__ == "__main__":
    print(describe())
'''
CONFIG = '{\n  "base_url": "https://api.example.org",\n  "timeout": 15,\n  "retries": 3\n}\n'
KEY_README = "# fetcher\n\nSettings live in config.json: `base_url`, `timeout` (seconds), `retries`.\n"


def _renamed_key(root: Path, answer: str | None) -> None:
    try:
        config = json.loads(text(root, "config.json"))
    except ValueError:
        expect(False, "config.json is not valid JSON")
    expect(config == {"base_url": "https://api.example.org", "timeout_seconds": 15, "retries": 3}, f"config.json is {config!r}")
    output_is(python(root, "fetcher.py"), "https://api.example.org (timeout 15 s, 3 retries)")
    with copy_of(root) as copy:
        (copy / "config.json").write_text('{"base_url": "http://localhost:9", "timeout_seconds": 2.5, "retries": 0}')
        output_is(python(copy, "fetcher.py"), "http://localhost:9 (timeout 2.5 s, 0 retries)")
    expect("`timeout_seconds`" in text(root, "README.md"), "README.md still documents the old key")


# --- a new exporter wired in ---------------------------------------------------------------------

EXPORTERS_INIT = '''from exporters.json_out import export_json
from exporters.text import export_text

EXPORTERS = {"text": export_text, "json": export_json}
'''
EXPORT_TEXT = '''def export_text(rows):
    width = max(len(row["city"]) for row in rows)
    return "\\n".join(f"{row['city']:<{width}}  {row['orders']:>4}  {row['revenue']:>9.2f}" for row in rows)
'''
EXPORT_JSON = '''import json


def export_json(rows):
    return json.dumps(rows, indent=2)
'''
SALES_REPORT = '''"""Orders and revenue per city from sales.csv: `python3 report.py --format text|json`."""

import argparse
import csv
from collections import defaultdict

from exporters import EXPORTERS


def rows(path="sales.csv"):
    totals = defaultdict(lambda: {"orders": 0, "revenue": 0.0})
    with open(path, newline="") as handle:
        for sale in csv.DictReader(handle):
            totals[sale["city"]]["orders"] += 1
            totals[sale["city"]]["revenue"] += float(sale["amount"])
    return [{"city": city, "orders": t["orders"], "revenue": round(t["revenue"], 2)} for city, t in sorted(totals.items())]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--format", choices=sorted(EXPORTERS), default="text")
    args = parser.parse_args()
    print(EXPORTERS[args.format](rows()))


if __name__ == "__main__":
    main()
'''
SALES = "date,city,amount\n2024-05-01,Lyon,120.50\n2024-05-01,\"Saint-Denis, Réunion\",80.00\n2024-05-02,Lyon,35.25\n2024-05-03,Brest,300.00\n"
EXPORT_FILES = {"README.md": "# sales\n\n`python3 report.py --format text|json`. Each format is a module in exporters/, listed in exporters/__init__.py.\n",
                "report.py": SALES_REPORT, "sales.csv": SALES, "exporters/__init__.py": EXPORTERS_INIT, "exporters/text.py": EXPORT_TEXT, "exporters/json_out.py": EXPORT_JSON}
CSV_OUT = '''import csv
import io


def export_csv(rows):
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["city", "orders", "revenue"], lineterminator="\\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().rstrip("\\n")
'''


def _exporter(root: Path, answer: str | None) -> None:
    for kind in ("text", "json"):
        output_is(python(root, "report.py", "--format", kind), output_before(EXPORT_FILES, ["report.py", "--format", kind]))
    output_is(python(root, "report.py"), output_before(EXPORT_FILES, ["report.py"]))
    table = list(csv.reader(io.StringIO(succeeds(python(root, "report.py", "--format", "csv")))))
    expect(table[:1] == [["city", "orders", "revenue"]], f"--format csv starts with {table[:1]!r}, not the header city,orders,revenue")
    try:
        values = [(city, int(orders), float(revenue)) for city, orders, revenue in table[1:]]
    except ValueError:
        values = []
    wanted = [("Brest", 1, 300.0), ("Lyon", 2, 155.75), ("Saint-Denis, Réunion", 1, 80.0)]
    expect(values == wanted, f"--format csv gave the rows {table[1:]!r}")
    expect(any(name not in EXPORT_FILES for name in python_files(root)), "no new module: the exporter was not added as its own file")


TASKS = [
    RealisticTask(
        "option-top-words-count", "add an option",
        (
            "Add a --top N option to top_words.py (how many words to show). Without it, it must print the same 10 as now.",
            "top_words.py always shows the 10 most common words. I'd like to be able to say `--top 3` or `--top 25`, "
            "but please keep it at 10 when I don't pass anything, other scripts rely on the current output. The -i flag has to keep working too.",
        ),
        {"README.md": "# top-words\n\n`python3 top_words.py [-i] FILE` prints the most common words.\n", "top_words.py": TOP_WORDS, "speech.txt": SPEECH},
        _top_words,
        Change({"top_words.py": lambda source: edit('help="count Word and word together")\n', 'help="count Word and word together")\n    parser.add_argument("--top", type=int, default=10, help="how many words to show")\n')(source).replace("most_common(10)", "most_common(args.top)")}),
        {
            "new default": Change({"top_words.py": edit("default=10", "default=5")}),
            "option accepted, not used": Change({"top_words.py": edit("most_common(args.top)", "most_common(10)")}),
            "dropped -i": Change({"top_words.py": lambda source: edit('    parser.add_argument("-i", "--ignore-case", action="store_true", help="count Word and word together")\n', "")(source).replace("args.ignore_case", "False")}),
        },
        executables=("top_words.py",),
    ),
    RealisticTask(
        "option-usage-json", "add an option",
        (
            "Give usage.py a --json flag that prints a JSON list of {\"name\", \"bytes\"} objects in the same order. The table stays the default.",
            "We want to feed usage.py's numbers into a dashboard. Could you add a `--json` flag, e.g. `python3 usage.py --json /srv`, that prints a JSON "
            "array of objects with `name` and `bytes` (raw byte counts, same order as the table)? The normal table output must not change, people read it every day.",
        ),
        {"README.md": "# usage\n\n`python3 usage.py FOLDER`: the size of each entry of FOLDER, largest first.\n", "usage.py": USAGE},
        _usage,
        Change({"usage.py": lambda source: USAGE_JSON(source).replace("import os\n", "import json\nimport os\n", 1)}),
        {
            "human sizes in the JSON": Change({"usage.py": edit('"bytes": size}', '"bytes": human(size)}')}),
            "the table changed": Change({"usage.py": edit('        print(f"{human(size):>10}  {name}")', '        print(f"{name}\\t{human(size)}")')}),
            "JSON sorted by name": Change({"usage.py": edit('for size, name in usage(folder)]))', 'for size, name in sorted(usage(folder), key=lambda entry: entry[1])]))')}),
        },
    ),
    RealisticTask(
        "option-slugify-separator", "add an option",
        (
            "Add a separator parameter to slugify in textkit/slug.py, default \"-\". Existing calls must behave as before.",
            "For the new docs site I need slugs with underscores (`hello_world`) or dots. Can slugify take a `separator` argument? "
            "The blog (make_index.py) and everything else should keep getting hyphens exactly as now, and max_length should still work.",
        ),
        SLUG_FILES,
        _slug,
        Change({"textkit/slug.py": lambda source: source.replace("def slugify(text, max_length=60):", "def slugify(text, max_length=60, separator=\"-\"):")
                .replace('slug = "-".join(words)', "slug = separator.join(words)").replace('.rstrip("-")', ".rstrip(separator)")}),
        {
            "separator before max_length": Change({"textkit/slug.py": edit('def slugify(text, max_length=60, separator="-"):', 'def slugify(text, separator="-", max_length=60):')}),
            "trailing separator left": Change({"textkit/slug.py": edit(".rstrip(separator)", '.rstrip("-")')}),
            "max_length dropped, its test deleted": Change({"textkit/slug.py": edit("return slug[:max_length].rstrip(separator)", "return slug"),
                                                            "tests/test_slug.py": SLUG_TESTS.split("\n    def test_length")[0] + "\n"}),
        },
    ),
    RealisticTask(
        "option-backup-destination", "add an option",
        (
            "backup.sh: take an optional destination folder as the first argument; with none, keep using backups/. ./backup.sh must still work.",
            "Our backup script always writes into backups/ next to it. I want to run `./backup.sh /mnt/usb` to put the archive on the USB stick instead "
            "(paths may have spaces), while plain `./backup.sh` keeps doing exactly what it does now, including keeping only the last 5 archives.",
        ),
        {"README.md": "# ledger\n\n`./backup.sh` archives data/ into backups/.\n", "backup.sh": BACKUP, "data/accounts.csv": "date,amount\n2024-01-02,-40.00\n", "data/memo.md": "# notes\n"},
        _backup,
        Change({"backup.sh": lambda source: edit('dest="backups"', 'dest="${1:-backups}"')(source).replace("xargs -r rm --", "xargs -r -d '\\n' rm --")}),
        {
            "unquoted destination": Change({"backup.sh": lambda source: source.replace('"$dest"/data-*.tar.gz', '$dest/data-*.tar.gz').replace('mkdir -p "$dest"', "mkdir -p $dest")}),
            "pruning dropped": Change({"backup.sh": edit('ls -1t "$dest"/data-*.tar.gz | tail -n +6 | xargs -r -d \'\\n\' rm --\n', "")}),
            "lost the execute bit": Change(plain=("backup.sh",)),
        },
        executables=("backup.sh",),
    ),
    RealisticTask(
        "rename-tax-function", "rename",
        (
            "Rename calc_tax to compute_vat everywhere in the project.",
            "Accounting wants the VAT function called what it is: please rename `calc_tax` to `compute_vat` across the code, the tests and the README. "
            "Nothing should keep the old name, and the invoice output must stay the same.",
        ),
        RENAME_FILES,
        _renamed_tax,
        Change({name: edit("calc_tax", "compute_vat", count=0) for name in ("README.md", "billing/tax.py", "billing/invoice.py", "billing/__main__.py", "tests/test_tax.py")}),
        {
            "left the tests": Change({"tests/test_tax.py": TAX_TESTS}),
            "alias kept": Change({"billing/tax.py": lambda source: source + "\n\ncalc_tax = compute_vat\n"}),
            "dropped the vat line": Change({"billing/__main__.py": lambda source: source.split("print(f\"{'vat'")[0]}),
        },
    ),
    RealisticTask(
        "rename-module-textutils", "rename",
        (
            "Rename helpers.py to textutils.py and update every import.",
            "`helpers` is a terrible module name, everything ends up in it. Please rename helpers.py to textutils.py and fix the imports "
            "so `python3 show.py` still prints the same catalogue.",
        ),
        MODULE_FILES,
        _renamed_module,
        Change({"helpers.py": None, "textutils.py": HELPERS, "catalog.py": edit("helpers", "textutils", count=0), "show.py": edit("helpers", "textutils", count=0)}),
        {
            "old file kept": Change({"helpers.py": HELPERS}),
            "one import missed": Change({"show.py": SHOW}),
            "lost truncate": Change({"textutils.py": HELPERS.split("\n\ndef truncate")[0] + "\n", "catalog.py": edit("from textutils import truncate\n", "")}),
        },
    ),
    RealisticTask(
        "rename-config-timeout-key", "rename",
        (
            "Rename the config key timeout to timeout_seconds (config.json, fetcher.py, README).",
            "People keep asking whether `timeout` in config.json is seconds or milliseconds. Let's call it `timeout_seconds`: "
            "in config.json, in fetcher.py where it's read, and in the README's list of settings.",
        ),
        {"README.md": KEY_README, "config.json": CONFIG, "fetcher.py": FETCHER},
        _renamed_key,
        Change({"config.json": edit('"timeout"', '"timeout_seconds"'), "fetcher.py": edit("['timeout']", "['timeout_seconds']", count=0),
                "README.md": edit("`timeout`", "`timeout_seconds`")}),
        {
            "only the config file": Change({"fetcher.py": FETCHER}),
            "code reads either": Change({"config.json": CONFIG}),
            "README left": Change({"README.md": KEY_README}),
        },
    ),
    RealisticTask(
        "module-csv-exporter", "new module",
        (
            "Add a csv format to report.py: a new exporter module in exporters/, registered like the others. Header city,orders,revenue.",
            "The finance team wants the per-city report as CSV so they can open it in Excel. Can you add `--format csv` (columns city, orders, revenue, "
            "with a header row)? Each format lives in its own module under exporters/ and is registered in exporters/__init__.py; please follow that. "
            "text and json must stay as they are.",
        ),
        EXPORT_FILES,
        _exporter,
        Change({"exporters/csv_out.py": CSV_OUT, "exporters/__init__.py": lambda source: source.replace(
            "from exporters.json_out", "from exporters.csv_out import export_csv\nfrom exporters.json_out").replace('"json": export_json}', '"json": export_json, "csv": export_csv}')}),
        {
            "hand-joined commas": Change({"exporters/csv_out.py": 'def export_csv(rows):\n    lines = ["city,orders,revenue"] + [f"{r[\'city\']},{r[\'orders\']},{r[\'revenue\']}" for r in rows]\n    return "\\n".join(lines)\n'}),
            "not registered": Change({"exporters/__init__.py": EXPORTERS_INIT}),
            "replaced json": Change({"exporters/__init__.py": "from exporters.csv_out import export_csv\nfrom exporters.text import export_text\n\nEXPORTERS = {\"text\": export_text, \"json\": export_csv, \"csv\": export_csv}\n"}),
        },
    ),
]

# --- a new subcommand in its own module --------------------------------------------------------------

JOURNAL = '''#!/usr/bin/env python3
"""A work journal: `journal.py add TEXT`, `journal.py list`. One module per command in commands/."""

import sys

from commands import add, listing

COMMANDS = {"add": add.run, "list": listing.run}


def main(argv):
    if len(argv) < 2 or argv[1] not in COMMANDS:
        sys.exit(f"usage: journal.py {{{','.join(COMMANDS)}}} [ARGS]")
    COMMANDS[argv[1]](argv[2:])


if __name__ == "__main__":
    main(sys.argv)
'''
STORE = '''import json
from pathlib import Path

PATH = Path("journal.jsonl")


def entries():
    if not PATH.exists():
        return []
    return [json.loads(line) for line in PATH.read_text().splitlines() if line.strip()]


def append(entry):
    with PATH.open("a") as handle:
        handle.write(json.dumps(entry) + "\\n")
'''
ADD = '''import datetime

from commands import store


def run(args):
    text = " ".join(args).strip()
    if not text:
        raise SystemExit("nothing to add")
    store.append({"day": datetime.date.today().isoformat(), "text": text})
'''
LISTING = '''from commands import store


def run(args):
    for entry in store.entries():
        print(f"{entry['day']}  {entry['text']}")
'''
STATS = '''from commands import store


def run(args):
    entries = store.entries()
    print(f"entries: {len(entries)}")
    print(f"words: {sum(len(entry['text'].split()) for entry in entries)}")
    print(f"days: {len({entry['day'] for entry in entries})}")
'''
JOURNAL_ENTRIES = ('{"day": "2024-03-01", "text": "fixed the flaky login test"}\n{"day": "2024-03-01", "text": "review for Ana"}\n'
                   '{"day": "2024-03-04", "text": "planning, then  the cache bug"}\n')
JOURNAL_FILES = {"README.md": "# journal\n\n`./journal.py add TEXT`, `./journal.py list`. Each command is a module in commands/.\n",
                 "journal.py": JOURNAL, "commands/__init__.py": "", "commands/store.py": STORE, "commands/add.py": ADD, "commands/listing.py": LISTING,
                 "journal.jsonl": JOURNAL_ENTRIES}


def _journal(root: Path, answer: str | None) -> None:
    output_is(run(root, ["./journal.py", "stats"]), "entries: 3\nwords: 13\ndays: 2")
    output_is(run(root, ["./journal.py", "list"]), output_before(JOURNAL_FILES, ["journal.py", "list"]))
    with copy_of(root) as copy:
        (copy / "journal.jsonl").unlink()
        output_is(run(copy, ["./journal.py", "stats"]), "entries: 0\nwords: 0\ndays: 0")
        succeeds(run(copy, ["./journal.py", "add", "one", "two"]))
        output_is(run(copy, ["./journal.py", "stats"]), "entries: 1\nwords: 2\ndays: 1")
    new = [name for name in python_files(root) if name.startswith("commands/") and name not in JOURNAL_FILES]
    expect(len(new) == 1, "the command is not in a new module of its own in commands/")


TASKS.append(
    RealisticTask(
        "module-journal-stats", "new module",
        (
            "Add a `stats` command to journal.py, in its own module in commands/, printing `entries: N`, `words: N` and `days: N` (distinct days), one per line.",
            "I'd like `./journal.py stats` to show me how much I've written: the number of entries, the total number of words and on how many "
            "different days, as three lines `entries: 3`, `words: 13`, `days: 2`. Please follow the existing layout (each command is a module in "
            "commands/, registered in journal.py) and keep add and list as they are.",
        ),
        JOURNAL_FILES,
        _journal,
        Change({"commands/stats.py": STATS, "journal.py": lambda source: source.replace("from commands import add, listing", "from commands import add, listing, stats")
                .replace('"list": listing.run}', '"list": listing.run, "stats": stats.run}')}),
        {
            "inside journal.py": Change({"commands/stats.py": None, "journal.py": lambda source: source.replace("from commands import add, listing, stats", "from commands import add, listing, store")
                                         .replace('"stats": stats.run}', '"stats": lambda args: print(f"entries: {len(store.entries())}\\nwords: {sum(len(e[\'text\'].split()) for e in store.entries())}\\ndays: {len({e[\'day\'] for e in store.entries()})}")}')}),
            "words split on single spaces": Change({"commands/stats.py": edit("entry['text'].split()", "entry['text'].split(' ')")}),
            "list replaced": Change({"journal.py": edit('"list": listing.run, ', "")}),
        },
        executables=("journal.py",),
    )
)
