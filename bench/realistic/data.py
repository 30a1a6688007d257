"""Data conversions with an exact expected file: the format is spelled out in the request (or the
README), the input has the awkward rows real exports have (quoted commas, empty cells, lines that
are not records), and the source file must stay as it was."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from bench.realistic.checking import same_file, text
from bench.realistic.task import Change, Checker, RealisticTask, edit, expect

CONTACTS = '''name,email,age,tags
"Nguyen, Thi",thi.nguyen@example.vn,34,customer;newsletter
Bram de Vries,bram@example.nl,,supplier
Aisha Bello,aisha@example.ng,29,
O'Neill Kathleen,kathleen@example.ie,51,customer
'''
CONTACTS_JSON = [
    {"name": "Nguyen, Thi", "email": "thi.nguyen@example.vn", "age": 34, "tags": ["customer", "newsletter"]},
    {"name": "Bram de Vries", "email": "bram@example.nl", "age": None, "tags": ["supplier"]},
    {"name": "Aisha Bello", "email": "aisha@example.ng", "age": 29, "tags": []},
    {"name": "O'Neill Kathleen", "email": "kathleen@example.ie", "age": 51, "tags": ["customer"]},
]


def _json_file(name: str, wanted: object, source: str, original: str) -> Checker:
    def check(root: Path, answer: str | None) -> None:
        try:
            found = json.loads(text(root, name))
        except ValueError:
            expect(False, f"{name} is not valid JSON")
        expect(found == wanted, f"{name} holds {json.dumps(found)[:300]}")
        same_file(root, source, original)

    return check


INI = '''; deployment settings
[database]
host = db.internal
port = 5432
name = orders prod

[cache]
url = redis://cache.internal:6379/0
ttl = 300

[mail]
from = Orders Team <orders@example.com>
'''
ENV = '''DATABASE_HOST=db.internal
DATABASE_PORT=5432
DATABASE_NAME="orders prod"
CACHE_URL=redis://cache.internal:6379/0
CACHE_TTL=300
MAIL_FROM="Orders Team <orders@example.com>"
'''


def _env(root: Path, answer: str | None) -> None:
    found = text(root, ".env")
    expect(found.rstrip("\n") == ENV.rstrip("\n"), f".env is {found[:300]!r}")
    same_file(root, "settings.ini", INI)


APP_LOG = '''2024-06-01 12:00:01 INFO  server started on :8080
2024-06-01 12:00:04 INFO  request GET /api/items status=200 took=12ms
2024-06-01 12:00:05 WARN  slow query (340ms): SELECT * FROM items
2024-06-01 12:00:05 INFO  request POST /api/orders status=201 took=348ms
2024-06-01 12:00:09 INFO  request GET /api/orders/77 status=404 took=3ms
2024-06-01 12:00:12 ERROR worker 3 died, restarting
2024-06-01 12:00:15 INFO  request GET /api/items?page=2 status=200 took=15ms
'''
REQUESTS = [["time", "method", "path", "status", "ms"],
            ["2024-06-01 12:00:04", "GET", "/api/items", "200", "12"],
            ["2024-06-01 12:00:05", "POST", "/api/orders", "201", "348"],
            ["2024-06-01 12:00:09", "GET", "/api/orders/77", "404", "3"],
            ["2024-06-01 12:00:15", "GET", "/api/items?page=2", "200", "15"]]


def _requests(root: Path, answer: str | None) -> None:
    rows = list(csv.reader(io.StringIO(text(root, "requests.csv"))))
    expect(rows == REQUESTS, f"requests.csv holds {rows[:6]!r}")
    same_file(root, "app.log", APP_LOG)


TEMPS_F = '''station,date,temp_f
KSEA,2024-01-10,41.0
KSEA,2024-01-11,
KORD,2024-01-10,-4.5
KORD,2024-01-11,32
KPHX,2024-01-10,71.6
'''
TEMPS_C = '''station,date,temp_c
KSEA,2024-01-10,5.0
KSEA,2024-01-11,
KORD,2024-01-10,-20.3
KORD,2024-01-11,0.0
KPHX,2024-01-10,22.0
'''


def _temps(root: Path, answer: str | None) -> None:
    found = text(root, "temps_c.csv").replace("\r\n", "\n")
    expect(found.rstrip("\n") == TEMPS_C.rstrip("\n"), f"temps_c.csv is {found[:300]!r}")
    same_file(root, "temps_f.csv", TEMPS_F)

TASKS = [
    RealisticTask(
        "data-contacts-json", "data conversion",
        (
            "Convert contacts.csv to contacts.json as the README describes.",
            "I need the contacts as JSON for the new CRM import. Could you turn contacts.csv into contacts.json? The format the importer expects is in the README. "
            "Please don't touch the CSV, it's the original export.",
        ),
        {"README.md": "# contacts\n\ncontacts.json: a JSON array with one object per CSV row, keys `name`, `email`, `age` (a number, or null when empty) "
                      "and `tags` (a list, split on `;`, empty list when there are none), in the CSV's order.\n", "contacts.csv": CONTACTS},
        _json_file("contacts.json", CONTACTS_JSON, "contacts.csv", CONTACTS),
        Change({"contacts.json": json.dumps(CONTACTS_JSON, indent=2) + "\n"}),
        {
            "ages as text": Change({"contacts.json": json.dumps([{**c, "age": str(c["age"]) if c["age"] else ""} for c in CONTACTS_JSON], indent=2)}),
            "tags unsplit": Change({"contacts.json": json.dumps([{**c, "tags": ";".join(c["tags"])} for c in CONTACTS_JSON], indent=2)}),
            "quoted name split": Change({"contacts.json": json.dumps([{**c, "name": c["name"].split(",")[0]} for c in CONTACTS_JSON], indent=2)}),
            "the CSV rewritten": Change({"contacts.csv": edit('"Nguyen, Thi"', "Nguyen Thi")}),
        },
    ),
    RealisticTask(
        "data-ini-to-env", "data conversion",
        (
            "Write the settings from settings.ini into a .env file: SECTION_KEY=value in upper case, same order, values with spaces in double quotes.",
            "We're moving this service to containers and they want environment variables instead of settings.ini. Can you create a `.env` with every setting "
            "as SECTION_KEY=value (both upper case, e.g. DATABASE_HOST), in the order they appear? Values that contain spaces need double quotes around them. "
            "Leave settings.ini alone for now.",
        ),
        {"README.md": "# orders\n\nDeployment settings are in settings.ini.\n", "settings.ini": INI},
        _env,
        Change({".env": ENV}),
        {
            "spaces unquoted": Change({".env": ENV.replace('"', "")}),
            "key case kept": Change({".env": ENV.replace("DATABASE_HOST", "database_host")}),
            "the comment as a variable": Change({".env": "; deployment settings\n" + ENV}),
            "settings.ini emptied": Change({"settings.ini": ""}),
        },
    ),
    RealisticTask(
        "data-log-requests-csv", "data conversion",
        (
            "Extract the request lines of app.log into requests.csv with the columns time,method,path,status,ms (header first, ms without the unit).",
            "For a quick latency analysis I'd like a CSV of the HTTP requests in app.log: columns time, method, path, status, ms (just the number, no 'ms'), "
            "with that header row. Only the `request` lines, not the warnings or errors. Call it requests.csv.",
        ),
        {"README.md": "# api logs\n\napp.log: one day of the API server's log.\n", "app.log": APP_LOG},
        _requests,
        Change({"requests.csv": "\n".join(",".join(row) for row in REQUESTS) + "\n"}),
        {
            "unit kept": Change({"requests.csv": "\n".join(",".join(row) for row in REQUESTS).replace(",12\n", ",12ms\n") + "\n"}),
            "query string cut": Change({"requests.csv": "\n".join(",".join(row) for row in REQUESTS).replace("?page=2", "") + "\n"}),
            "no header": Change({"requests.csv": "\n".join(",".join(row) for row in REQUESTS[1:]) + "\n"}),
            "slow query line taken": Change({"requests.csv": "\n".join(",".join(row) for row in REQUESTS) + "\n2024-06-01 12:00:05,SELECT,items,,340\n"}),
        },
    ),
    RealisticTask(
        "data-fahrenheit-to-celsius", "data conversion",
        (
            "Make temps_c.csv from temps_f.csv: the same rows with temp_c in Celsius, one decimal; an empty reading stays empty.",
            "Our European partner needs the station readings in Celsius. Please produce temps_c.csv from temps_f.csv: same columns except `temp_f` becomes "
            "`temp_c`, values rounded to one decimal (like 5.0), and missing readings left empty. The Fahrenheit file stays as it is.",
        ),
        {"README.md": "# stations\n\ntemps_f.csv: daily mean temperature per station, Fahrenheit.\n", "temps_f.csv": TEMPS_F},
        _temps,
        Change({"temps_c.csv": TEMPS_C}),
        {
            "missing as 0": Change({"temps_c.csv": TEMPS_C.replace("2024-01-11,\n", "2024-01-11,-17.8\n")}),
            "header kept": Change({"temps_c.csv": TEMPS_C.replace("temp_c", "temp_f")}),
            "no rounding": Change({"temps_c.csv": TEMPS_C.replace("-20.3", "-20.27777777777778")}),
            "converted in place": Change({"temps_f.csv": TEMPS_C, "temps_c.csv": TEMPS_C}),
        },
    ),
]
