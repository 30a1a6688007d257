"""Bug reports, most with the traceback the user saw. The checker runs the command from the report
on the user's input and on inputs the report does not show, and runs the parts of the program the
report never mentions (a summary line, a second subcommand), since a rewrite that drops them is a
failure the user finds later."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from bench.realistic.checking import copy_of, evaluate, output_is, python, succeeds, text
from bench.realistic.task import Change, RealisticTask, edit, expect

# --- invoice: an empty discount cell -------------------------------------------------------------

INVOICE = '''"""Print the total of an orders export, per customer and overall."""

import csv
import sys
from collections import defaultdict

VAT_RATE = 0.2


def line_total(row):
    price = float(row["unit_price"])
    qty = int(row["qty"])
    discount = float(row["discount"])
    return price * qty * (1 - discount / 100)


def format_money(amount):
    return f"{amount:,.2f}"


def totals(path):
    per_customer = defaultdict(float)
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            per_customer[row["customer"]] += line_total(row)
    return per_customer


def main(argv):
    per_customer = totals(argv[1])
    for customer, amount in sorted(per_customer.items()):
        print(f"{customer:<12} {format_money(amount):>10}")
    net = sum(per_customer.values())
    print(f"{'net':<12} {format_money(net):>10}")
    print(f"{'with VAT':<12} {format_money(net * (1 + VAT_RATE)):>10}")


if __name__ == "__main__":
    main(sys.argv)
'''
ORDERS = """order_id,customer,sku,unit_price,qty,discount
1001,acme,BOLT-10,0.35,400,5
1002,acme,NUT-10,0.12,400,
1003,brightway,GEAR-3,18.50,12,10
1004,cortex,SHAFT-1,112.00,2,
1005,brightway,BOLT-10,0.35,1000,7.5
1006,cortex,GEAR-3,18.50,4,0
"""
ORDERS_HIDDEN = """order_id,customer,sku,unit_price,qty,discount
2001,delta,PLATE-2,45.00,3,
2002,acme,NUT-10,0.12,250,12
2003,delta,BOLT-10,0.35,90,
"""


def _invoice_report(orders: str) -> str:
    per: dict[str, float] = defaultdict(float)
    for row in csv.DictReader(io.StringIO(orders)):
        per[row["customer"]] += float(row["unit_price"]) * int(row["qty"]) * (1 - float(row["discount"] or 0) / 100)
    lines = [f"{name:<12} {amount:>10,.2f}" for name, amount in sorted(per.items())]
    net = sum(per.values())
    return "\n".join([*lines, f"{'net':<12} {net:>10,.2f}", f"{'with VAT':<12} {net * 1.2:>10,.2f}"])


def _invoice(root: Path, answer: str | None) -> None:
    output_is(python(root, "invoice.py", "orders.csv"), _invoice_report(ORDERS))
    with copy_of(root) as copy:
        (copy / "march.csv").write_text(ORDERS_HIDDEN)
        output_is(python(copy, "invoice.py", "march.csv"), _invoice_report(ORDERS_HIDDEN))


INVOICE_TRACE = """Traceback (most recent call last):
  File "/home/sam/invoicer/invoice.py", line 40, in <module>
    main(sys.argv)
  File "/home/sam/invoicer/invoice.py", line 30, in main
    per_customer = totals(argv[1])
  File "/home/sam/invoicer/invoice.py", line 25, in totals
    per_customer[row["customer"]] += line_total(row)
  File "/home/sam/invoicer/invoice.py", line 13, in line_total
    discount = float(row["discount"])
ValueError: could not convert string to float: ''"""

# --- access log: a second timestamp format --------------------------------------------------------

PARSE = '''from datetime import datetime

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def parse_line(line):
    """'2024-03-05 10:02:11 GET /api/items 200 0.031' -> a dict of the fields."""
    date, time, method, path, status, seconds = line.split()
    return {
        "when": datetime.strptime(f"{date} {time}", TIME_FORMAT),
        "method": method,
        "path": path,
        "status": int(status),
        "seconds": float(seconds),
    }
'''
SUMMARIZE = '''"""Requests and server errors per day, and the slowest request, from an access log."""

import sys
from collections import Counter

from logstats.parse import parse_line


def summarize(lines):
    requests, errors = Counter(), Counter()
    slowest = None
    for line in lines:
        if not line.strip():
            continue
        entry = parse_line(line)
        day = entry["when"].date().isoformat()
        requests[day] += 1
        if entry["status"] >= 500:
            errors[day] += 1
        if slowest is None or entry["seconds"] > slowest["seconds"]:
            slowest = entry
    return requests, errors, slowest


def main():
    with open(sys.argv[1]) as handle:
        requests, errors, slowest = summarize(handle)
    for day in sorted(requests):
        print(f"{day}  {requests[day]} requests, {errors[day]} errors")
    if slowest is not None:
        print(f"slowest: {slowest['method']} {slowest['path']} ({slowest['seconds']:.3f} s)")


if __name__ == "__main__":
    main()
'''
ACCESS = """2024-03-05 10:02:11 GET /api/items 200 0.031
2024-03-05 10:02:15 POST /api/orders 201 0.210
2024-03-05 23:59:58 GET /api/items 503 1.002
2024-03-06T00:00:03Z GET /api/items 200 0.040
2024-03-06T00:01:44Z GET /api/report 500 2.480
2024-03-06 08:15:00 DELETE /api/orders/7 204 0.050
"""
ACCESS_HIDDEN = """2024-04-01T09:00:00Z GET /health 200 0.002
2024-04-01T09:00:05Z POST /api/login 502 0.700
2024-04-02 11:30:00 GET /api/items 200 0.900
"""


def _access_report(log: str) -> str:
    requests: dict[str, int] = defaultdict(int)
    errors: dict[str, int] = defaultdict(int)
    slowest = None
    for line in log.splitlines():
        fields = line.split()
        stamp = " ".join(fields[:2]) if len(fields) == 6 else fields[0]
        when = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S" if len(fields) == 6 else "%Y-%m-%dT%H:%M:%SZ")
        method, path, status, seconds = fields[-4:]
        day = when.date().isoformat()
        requests[day] += 1
        errors[day] += int(status) >= 500
        if slowest is None or float(seconds) > slowest[2]:
            slowest = (method, path, float(seconds))
    lines = [f"{day}  {requests[day]} requests, {errors[day]} errors" for day in sorted(requests)]
    return "\n".join([*lines, f"slowest: {slowest[0]} {slowest[1]} ({slowest[2]:.3f} s)"])


def _access(root: Path, answer: str | None) -> None:
    output_is(python(root, "summarize.py", "access.log"), _access_report(ACCESS))
    with copy_of(root) as copy:
        (copy / "april.log").write_text(ACCESS_HIDDEN)
        output_is(python(copy, "summarize.py", "april.log"), _access_report(ACCESS_HIDDEN))
    stamp = evaluate(root, "from logstats.parse import parse_line\nprint(parse_line('2024-03-05 10:02:11 GET /a 200 0.1')['when'].isoformat())")
    expect(stamp == "2024-03-05T10:02:11", f"parse_line gives {stamp!r} for the old format")


PARSE_FIXED = edit(
    '''    date, time, method, path, status, seconds = line.split()
    return {
        "when": datetime.strptime(f"{date} {time}", TIME_FORMAT),''',
    '''    fields = line.split()
    if len(fields) == 5:
        when = datetime.strptime(fields[0], ISO_FORMAT)
    else:
        when = datetime.strptime(f"{fields[0]} {fields[1]}", TIME_FORMAT)
    method, path, status, seconds = fields[-4:]
    return {
        "when": when,''',
)

# --- todo: the first run has no file ------------------------------------------------------------

TODO = '''#!/usr/bin/env python3
"""A to-do list in todo.json: add, list, done."""

import json
import sys
from pathlib import Path

STORE = Path("todo.json")


def load():
    return json.loads(STORE.read_text())


def save(items):
    STORE.write_text(json.dumps(items, indent=2) + "\\n")


def main(argv):
    items = load()
    command = argv[1] if len(argv) > 1 else "list"
    if command == "add":
        items.append({"text": " ".join(argv[2:]), "done": False})
        save(items)
    elif command == "done":
        items[int(argv[2]) - 1]["done"] = True
        save(items)
    elif command == "list":
        if not items:
            print("nothing to do")
        for number, item in enumerate(items, 1):
            print(f"{number}. [{'x' if item['done'] else ' '}] {item['text']}")
    else:
        sys.exit(f"unknown command: {command}")


if __name__ == "__main__":
    main(sys.argv)
'''
TODO_TRACE = """Traceback (most recent call last):
  File "/home/ines/todo/todo.py", line 39, in <module>
    main(sys.argv)
  File "/home/ines/todo/todo.py", line 19, in main
    items = load()
  File "/home/ines/todo/todo.py", line 12, in load
    return json.loads(STORE.read_text())
  File "/usr/lib/python3.11/pathlib.py", line 1058, in read_text
    with self.open(mode='r', encoding=encoding, errors=errors) as f:
FileNotFoundError: [Errno 2] No such file or directory: 'todo.json'"""


def _todo(root: Path, answer: str | None) -> None:
    with copy_of(root) as copy:
        (copy / "todo.json").unlink(missing_ok=True)
        output_is(python(copy, "todo.py", "list"), "nothing to do")
        succeeds(python(copy, "todo.py", "add", "buy", "milk"))
        succeeds(python(copy, "todo.py", "add", "call", "the", "bank"))
        succeeds(python(copy, "todo.py", "done", "2"))
        output_is(python(copy, "todo.py"), "1. [ ] buy milk\n2. [x] call the bank")
        done = python(copy, "todo.py", "frobnicate")
        expect(done.returncode != 0 and "unknown command" in done.stderr, "an unknown command no longer says so")


# --- grades: a student with no grades yet -----------------------------------------------------------

GRADES = '''"""Average grade per student, from grades.csv and the class list."""

import csv


def read_students(path="students.txt"):
    with open(path) as handle:
        return [line.strip() for line in handle if line.strip()]


def read_grades(path="grades.csv"):
    grades = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            grades.setdefault(row["student"], []).append(float(row["grade"]))
    return grades


def average(values):
    return sum(values) / len(values)


def main():
    grades = read_grades()
    for student in read_students():
        print(f"{student:<10} {average(grades.get(student, [])):.1f}")
    everyone = [grade for values in grades.values() for grade in values]
    print(f"{'class':<10} {average(everyone):.1f}")


if __name__ == "__main__":
    main()
'''
STUDENTS = "amara\nbenoit\nchen\ndiya\n"
GRADES_CSV = "student,subject,grade\namara,maths,15\namara,physics,12.5\nbenoit,maths,9\nchen,maths,17\nchen,physics,18\nbenoit,physics,11\n"
GRADES_TRACE = """Traceback (most recent call last):
  File "report.py", line 30, in <module>
    main()
  File "report.py", line 24, in main
    print(f"{student:<10} {average(grades.get(student, [])):.1f}")
  File "report.py", line 19, in average
    return sum(values) / len(values)
ZeroDivisionError: division by zero"""


def _grades(root: Path, answer: str | None) -> None:
    output_is(python(root, "report.py"), "amara      13.8\nbenoit     10.0\nchen       17.5\ndiya       n/a\nclass      13.8")
    with copy_of(root) as copy:
        (copy / "students.txt").write_text("zoe\namara\n")
        (copy / "grades.csv").write_text("student,subject,grade\namara,art,8\n")
        output_is(python(copy, "report.py"), "zoe        n/a\namara      8.0\nclass      8.0")


# --- shop: a circular import ---------------------------------------------------------------------

SHOP_MODELS = '''from dataclasses import dataclass

from shop.pricing import with_tax


@dataclass
class Item:
    name: str
    net: float
    category: str = "general"

    @property
    def gross(self):
        return with_tax(self.net, self.category)
'''
SHOP_PRICING = '''from shop.models import Item

TAX = {"general": 0.20, "food": 0.05, "books": 0.0}


def with_tax(net, category):
    return round(net * (1 + TAX[category]), 2)


def basket_total(items):
    """The gross total of a basket; anything that is not an Item is a programming error."""
    for item in items:
        if not isinstance(item, Item):
            raise TypeError(f"not an Item: {item!r}")
    return round(sum(item.gross for item in items), 2)
'''
SHOP_MAIN = '''from shop.models import Item
from shop.pricing import basket_total

basket = [Item("kettle", 24.99), Item("tea", 3.40, "food"), Item("novel", 8.99, "books")]
for item in basket:
    print(f"{item.name:<8} {item.gross:>7.2f}")
print(f"{'total':<8} {basket_total(basket):>7.2f}")
'''
SHOP_TRACE = """$ python3 -m shop
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "<frozen runpy>", line 88, in _run_code
  File "/home/ola/shop/shop/__main__.py", line 1, in <module>
    from shop.models import Item
  File "/home/ola/shop/shop/models.py", line 3, in <module>
    from shop.pricing import with_tax
  File "/home/ola/shop/shop/pricing.py", line 1, in <module>
    from shop.models import Item
ImportError: cannot import name 'Item' from partially initialized module 'shop.models' (most likely due to a circular import) (/home/ola/shop/shop/models.py)"""


def _shop(root: Path, answer: str | None) -> None:
    output_is(python(root, "-m", "shop"), "kettle     29.99\ntea         3.57\nnovel       8.99\ntotal      42.55")
    for first in ("shop.pricing", "shop.models"):
        verdict = evaluate(root, f"import {first}\nfrom shop.pricing import basket_total\nfrom shop.models import Item\n"
                                 "try:\n    basket_total([Item('a', 1.0), 'b'])\n    print('accepted')\n"
                                 "except TypeError:\n    print(basket_total([Item('a', 10.0, 'food')]))")
        expect(verdict == "10.5", f"importing {first} first, then pricing a basket: {verdict!r} (a non-Item must still raise TypeError)")


# --- contacts: unhashable records -------------------------------------------------------------------

DEDUPE = '''"""Drop repeated records from a JSON export, keeping the first of each, and say how many went."""

import json
import sys


def dedupe(records):
    seen = set()
    kept = []
    for record in records:
        key = tuple(sorted(record.items()))
        if key in seen:
            continue
        seen.add(key)
        kept.append(record)
    return kept


def main(path):
    with open(path) as handle:
        records = json.load(handle)
    kept = dedupe(records)
    target = path.removesuffix(".json") + ".deduped.json"
    with open(target, "w") as handle:
        json.dump(kept, handle, indent=2)
        handle.write("\\n")
    print(f"{len(records) - len(kept)} duplicates removed, {len(kept)} records written to {target}")


if __name__ == "__main__":
    main(sys.argv[1])
'''
CONTACTS = [
    {"name": "Rui Costa", "email": "rui@example.pt", "tags": ["supplier"]},
    {"name": "Lena Berg", "email": "lena@example.se", "tags": []},
    {"name": "Rui Costa", "email": "rui@example.pt", "tags": ["supplier"]},
    {"name": "Rui Costa", "email": "rui@example.pt", "tags": ["customer"]},
    {"name": "Lena Berg", "email": "lena@example.se", "tags": []},
    {"name": "Tomás Ruiz", "email": "tomas@example.es", "tags": ["supplier", "eu"]},
]
CONTACTS_HIDDEN = [
    {"id": 1, "address": {"city": "Oslo", "zip": "0150"}, "phones": ["+47 1"]},
    {"id": 1, "phones": ["+47 1"], "address": {"zip": "0150", "city": "Oslo"}},
    {"id": 2, "address": {"city": "Oslo", "zip": "0150"}, "phones": ["+47 1"]},
]


def _unique(records: list[dict]) -> list[dict]:
    kept: list[dict] = []
    for record in records:
        if record not in kept:
            kept.append(record)
    return kept


def _dedupe(root: Path, answer: str | None) -> None:
    with copy_of(root) as copy:
        output_is(python(copy, "dedupe.py", "contacts.json"), "2 duplicates removed, 4 records written to contacts.deduped.json")
        written = json.loads(text(copy, "contacts.deduped.json"))
        expect(written == _unique(CONTACTS), "contacts.deduped.json holds other records than the first of each")
        (copy / "people.json").write_text(json.dumps(CONTACTS_HIDDEN))
        output_is(python(copy, "dedupe.py", "people.json"), "1 duplicates removed, 2 records written to people.deduped.json")
        expect(json.loads(text(copy, "people.deduped.json")) == _unique(CONTACTS_HIDDEN), "nested records are not compared by value")


TASKS = [
    RealisticTask(
        "bug-invoice-empty-discount", "bug report",
        (
            "invoice.py crashes on orders.csv (ValueError: could not convert string to float: ''). An empty discount means no discount. Fix it.",
            "Hi! Running `python3 invoice.py orders.csv` blows up for me since the new export:\n\n" + INVOICE_TRACE
            + "\n\nI think some orders just have no discount filled in, which should count as 0%. Can you fix the script so the totals come out right?",
        ),
        {"README.md": "# invoicer\n\nTotals an orders export per customer: `python3 invoice.py orders.csv`.\n", "invoice.py": INVOICE, "orders.csv": ORDERS},
        _invoice,
        Change({"invoice.py": edit('float(row["discount"])', 'float(row["discount"] or 0)')}),
        {
            "hard-coded output": Change({"invoice.py": edit("def main(argv):\n", f"def main(argv):\n    print({_invoice_report(ORDERS)!r})\n    return\n")}),
            "dropped the __main__ block": Change({"invoice.py": edit('\n\nif __name__ == "__main__":\n    main(sys.argv)\n', "\n")}),
            "skips rows it cannot read": Change({"invoice.py": edit(
                '            per_customer[row["customer"]] += line_total(row)',
                '            try:\n                per_customer[row["customer"]] += line_total(row)\n            except ValueError:\n                continue',
            )(INVOICE)}),
            "dropped the VAT line": Change({"invoice.py": edit("    print(f\"{'with VAT':<12} {format_money(net * (1 + VAT_RATE)):>10}\")\n", "")}),
        },
    ),
    RealisticTask(
        "bug-access-log-iso-time", "bug report",
        (
            "summarize.py fails on access.log: lines from the new proxy have ISO timestamps like 2024-03-06T00:00:03Z. Make it read both formats.",
            "Since we put the new proxy in front, `python3 summarize.py access.log` dies with\n\n"
            "  File \"/srv/logstats/logstats/parse.py\", line 8, in parse_line\n    date, time, method, path, status, seconds = line.split()\n"
            "ValueError: not enough values to unpack (expected 6, got 5)\n\n"
            "The proxy writes its time as `2024-03-06T00:00:03Z` (one field, UTC) instead of `2024-03-06 00:00:03`. We still have old lines in the same files, so both have to work. Could you sort it out?",
        ),
        {"README.md": "# logstats\n\nDaily request and error counts: `python3 summarize.py access.log`.\n", "logstats/__init__.py": "", "logstats/parse.py": PARSE, "summarize.py": SUMMARIZE, "access.log": ACCESS},
        _access,
        Change({"logstats/parse.py": lambda source: PARSE_FIXED(source).replace('TIME_FORMAT = "%Y-%m-%d %H:%M:%S"\n', 'TIME_FORMAT = "%Y-%m-%d %H:%M:%S"\nISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"\n')}),
        {
            "skips the new lines": Change({"logstats/parse.py": PARSE, "summarize.py": edit("        entry = parse_line(line)\n", "        try:\n            entry = parse_line(line)\n        except ValueError:\n            continue\n")}),
            "dropped the slowest request": Change({"summarize.py": edit(
                "    if slowest is not None:\n        print(f\"slowest: {slowest['method']} {slowest['path']} ({slowest['seconds']:.3f} s)\")\n", "")}),
            "hard-coded output": Change({"summarize.py": edit("def main():\n", f"def main():\n    print({_access_report(ACCESS)!r})\n    return\n")}),
        },
    ),
    RealisticTask(
        "bug-todo-first-run", "bug report",
        (
            "todo.py crashes with FileNotFoundError when todo.json does not exist yet. It should start with an empty list.",
            "I cloned my little todo tool on a new laptop and the very first `python3 todo.py list` gives me this:\n\n" + TODO_TRACE
            + "\n\nObviously there's no todo.json yet on a fresh machine. It should just behave like an empty list (and `add` should create the file). Please fix.",
        ),
        {"README.md": "# todo\n\n`python3 todo.py add TEXT`, `python3 todo.py list`, `python3 todo.py done N`. Items live in todo.json.\n", "todo.py": TODO},
        _todo,
        Change({"todo.py": edit("def load():\n    return json.loads(STORE.read_text())", "def load():\n    if not STORE.exists():\n        return []\n    return json.loads(STORE.read_text())")}),
        {
            "made the file instead of fixing the code": Change({"todo.py": None, "todo.json": "[]\n"}),
            "dropped the done command": Change({"todo.py": edit('''    elif command == "done":
        items[int(argv[2]) - 1]["done"] = True
        save(items)
''', "")}),
            "list no longer says nothing to do": Change({"todo.py": edit('''        if not items:
            print("nothing to do")
''', "")}),
        },
    ),
    RealisticTask(
        "bug-grades-no-grades", "bug report",
        (
            "report.py crashes with ZeroDivisionError for a student with no grades yet. Print n/a as that student's average instead.",
            "We added a new student (diya) to students.txt and now `python3 report.py` fails:\n\n" + GRADES_TRACE
            + "\n\nShe simply has no grades yet. For students like her the report should show `n/a` where the average would be, everything else as before.",
        ),
        {"README.md": "# grades\n\n`python3 report.py` prints each student's average from grades.csv, then the class average.\n", "report.py": GRADES, "students.txt": STUDENTS, "grades.csv": GRADES_CSV},
        _grades,
        Change({"report.py": edit(
            '        print(f"{student:<10} {average(grades.get(student, [])):.1f}")',
            '        values = grades.get(student, [])\n        shown = f"{average(values):.1f}" if values else "n/a"\n        print(f"{student:<10} {shown}")',
        )}),
        {
            "skips the student": Change({"report.py": edit('    for student in read_students():\n', '    for student in read_students():\n        if student not in grades:\n            continue\n')}),
            "dropped the class average": Change({"report.py": edit("    print(f\"{'class':<10} {average(everyone):.1f}\")\n", "")}),
            "zero instead of n/a": Change({"report.py": edit("def average(values):\n", "def average(values):\n    if not values:\n        return 0\n")(GRADES)}),
        },
    ),
    RealisticTask(
        "bug-shop-circular-import", "bug report",
        (
            "python3 -m shop fails with a circular import between shop/models.py and shop/pricing.py. Fix it without changing what it prints.",
            "Hey, after I added the type check in pricing.py the app won't start anymore:\n\n" + SHOP_TRACE
            + "\n\nI'd like to keep the check that basket_total only accepts Items. Can you untangle the imports?",
        ),
        {"README.md": "# shop\n\nA price calculator. Run it with `python3 -m shop`.\n", "shop/__init__.py": "", "shop/models.py": SHOP_MODELS, "shop/pricing.py": SHOP_PRICING, "shop/__main__.py": SHOP_MAIN},
        _shop,
        Change({"shop/pricing.py": lambda source: edit("from shop.models import Item\n\n", "")(source).replace(
            '    for item in items:\n        if', '    from shop.models import Item\n\n    for item in items:\n        if')}),
        {
            "dropped the type check": Change({"shop/pricing.py": SHOP_PRICING.replace("from shop.models import Item\n\n", "").replace(
                '    for item in items:\n        if not isinstance(item, Item):\n            raise TypeError(f"not an Item: {item!r}")\n', "")}),
            "hard-coded output, the cycle left": Change({"shop/__main__.py": "print('kettle     29.99\\ntea         3.57\\nnovel       8.99\\ntotal      42.55')\n",
                                                         "shop/pricing.py": SHOP_PRICING}),
        },
    ),
    RealisticTask(
        "bug-dedupe-unhashable", "bug report",
        (
            "dedupe.py fails on contacts.json with TypeError: unhashable type: 'list'. Fix it; records are equal when all their fields are equal.",
            "Running `python3 dedupe.py contacts.json` ends with\n\n  File \"dedupe.py\", line 12, in dedupe\n    if key in seen:\nTypeError: unhashable type: 'list'\n\n"
            "The export started including a `tags` list (and some other exports have nested address objects). Two records are duplicates when every field is the same, key order doesn't matter. Please make it work again.",
        ),
        {"README.md": "# dedupe\n\n`python3 dedupe.py FILE.json` writes FILE.deduped.json without repeated records.\n", "dedupe.py": DEDUPE, "contacts.json": json.dumps(CONTACTS, indent=2, ensure_ascii=False) + "\n"},
        _dedupe,
        Change({"dedupe.py": lambda source: edit("        key = tuple(sorted(record.items()))", "        key = json.dumps(record, sort_keys=True)")(source)}),
        {
            "keys on the top level only": Change({"dedupe.py": edit("        key = json.dumps(record, sort_keys=True)", "        key = str(sorted(record.items()))")}),
            "keys on the name": Change({"dedupe.py": edit("        key = json.dumps(record, sort_keys=True)", "        key = record.get('name', json.dumps(record))")}),
            "dropped the summary line": Change({"dedupe.py": edit('    print(f"{len(records) - len(kept)} duplicates removed, {len(kept)} records written to {target}")\n', "")}),
        },
    ),
]

# --- bank export: Latin-1 ------------------------------------------------------------------------------

STATEMENT = '''"""Spending per payee from the bank's CSV export: `python3 spending.py export.csv`."""

import csv
import sys
from collections import Counter


def spending(path):
    totals = Counter()
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle, delimiter=";"):
            amount = float(row["Betrag"].replace(".", "").replace(",", "."))
            if amount < 0:
                totals[row["Empfänger"]] += -amount
    return totals


if __name__ == "__main__":
    for payee, total in spending(sys.argv[1]).most_common():
        print(f"{total:>9.2f}  {payee}")
'''
EXPORT = "Datum;Empfänger;Betrag\n02.05.2024;Bäckerei Müller;-4,80\n03.05.2024;Stadtwerke Köln;-1.120,00\n05.05.2024;Gehalt;2.950,00\n06.05.2024;Bäckerei Müller;-6,20\n"
EXPORT_HIDDEN = "Datum;Empfänger;Betrag\n01.06.2024;Café Größe;-12,50\n02.06.2024;Zahnarzt Dr. Öz;-80,00\n03.06.2024;Café Größe;-3,00\n"
LATIN1_TRACE = """Traceback (most recent call last):
  File "/home/jonas/finanzen/spending.py", line 20, in <module>
    for payee, total in spending(sys.argv[1]).most_common():
  File "/home/jonas/finanzen/spending.py", line 11, in spending
    for row in csv.DictReader(handle, delimiter=";"):
  File "<frozen codecs>", line 322, in decode
UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe4 in position 11: invalid continuation byte"""


def _spending(root: Path, answer: str | None) -> None:
    output_is(python(root, "spending.py", "export.csv"), " 1120.00  Stadtwerke Köln\n    11.00  Bäckerei Müller")
    with copy_of(root) as copy:
        (copy / "june.csv").write_bytes(EXPORT_HIDDEN.encode("latin-1"))
        output_is(python(copy, "spending.py", "june.csv"), "    80.00  Zahnarzt Dr. Öz\n    15.50  Café Größe")


TASKS.append(
    RealisticTask(
        "bug-bank-export-latin1", "bug report",
        (
            "spending.py fails on export.csv with UnicodeDecodeError; the bank's exports are Latin-1. Fix it.",
            "My little spending script stopped working with the new bank export:\n\n" + LATIN1_TRACE
            + "\n\nThe bank says their CSV files are ISO-8859-1 (Latin-1). Every export will be like that. Can you make `python3 spending.py export.csv` work, umlauts included?",
        ),
        {"README.md": "# finanzen\n\n`python3 spending.py export.csv`: money spent per payee, largest first.\n", "spending.py": STATEMENT, "export.csv": EXPORT.encode("latin-1")},
        _spending,
        Change({"spending.py": edit('open(path, newline="")', 'open(path, newline="", encoding="latin-1")')}),
        {
            "decoding errors ignored": Change({"spending.py": edit('encoding="latin-1"', 'errors="ignore"')}),
            "the export converted instead": Change({"spending.py": STATEMENT, "export.csv": EXPORT}),
            "income counted too": Change({"spending.py": edit("            if amount < 0:\n                totals[row[\"Empfänger\"]] += -amount", "            totals[row[\"Empfänger\"]] += abs(amount)")}),
        },
    )
)
