"""Requests with a boundary: "do X but do not touch Y", files with odd formatting where only the
asked-for bytes may change, and requests in two parts. The checker compares bytes (or source
segments) outside the change, and checks every part."""

from __future__ import annotations

import ast
from pathlib import Path

from bench.realistic.checking import answer_has, copy_of, evaluate, output_is, python, same_file, text
from bench.realistic.task import Change, RealisticTask, edit, expect

# --- v2 for the client, not the legacy client --------------------------------------------------------

CLIENT = '''import json
import urllib.request

BASE_URL = "https://api.example.com/v1"
TIMEOUT = 10


def url(path):
    return f"{BASE_URL}/{path.lstrip('/')}"


def get(path):
    with urllib.request.urlopen(url(path), timeout=TIMEOUT) as response:
        return json.load(response)
'''
LEGACY = CLIENT.replace("import json\n", '"""Kept for the v1-only batch jobs; do not change (see README)."""\n\nimport json\n')
SYNC = '''from client import url
from legacy_client import url as legacy_url

print(url("/orders"))
print(legacy_url("/orders"))
'''


def _v2(root: Path, answer: str | None) -> None:
    same_file(root, "legacy_client.py", LEGACY)
    output_is(python(root, "sync.py"), "https://api.example.com/v2/orders\nhttps://api.example.com/v1/orders")
    expect(evaluate(root, "import client\nprint(client.TIMEOUT, callable(client.get))") == "10 True", "client.py lost TIMEOUT or get")


# --- fix one function, touch nothing else ---------------------------------------------------------

USERS = '''"""User records in users.txt, one per line: id|name|email.  Other teams parse this file's
functions with their own tooling, so keep the layout of everything you do not need to change."""


def load_users(path="users.txt"):
    users = []
    with open(path) as handle:
        for line in handle:
            user_id, name, email = line.rstrip("\\n").split("|")
            users.append({"id": int(user_id), "name": name, "email": email})
    return users


def save_users(users, path = "users.txt"):
    with open(path, "w") as handle:
        for u in users:
            handle.write( "|".join([str(u["id"]), u["name"], u["email"]]) + "\\n" )


def find(users, email):
    return next((u for u in users if u["email"].lower() == email.lower()), None)   # case-insensitive
'''
USERS_TXT = "1|Ana Lima|ana@example.br\n\n2|Kofi Mensah|kofi@example.gh\n   \n3|Mei Tan|mei@example.sg\n"


def _segments(source: str) -> dict[str, str]:
    """Each top-level statement's whole lines (a comment at the end of its last line included)."""
    lines = source.splitlines()
    return {getattr(node, "name", f"statement {index}"): "\n".join(lines[node.lineno - 1:node.end_lineno]) for index, node in enumerate(ast.parse(source).body)}


def _one_function(root: Path, answer: str | None) -> None:
    source = text(root, "users.py")
    try:
        now = _segments(source)
    except SyntaxError:
        expect(False, "users.py does not parse")
    for name, segment in _segments(USERS).items():
        if name != "load_users":
            expect(now.get(name) == segment, f"{name} in users.py changed, and only load_users was to change")
    expect(set(now) == set(_segments(USERS)), "users.py gained or lost a top-level definition")
    found = evaluate(root, "from users import load_users\nprint([u['id'] for u in load_users()])")
    expect(found == "[1, 2, 3]", f"load_users() on users.txt gives ids {found}")
    with copy_of(root) as copy:
        (copy / "users.txt").write_text("\n7|Zoë Park|zoe@example.kr\n\t\n")
        found = evaluate(copy, "from users import load_users\nprint(load_users())")
        expect(found == "[{'id': 7, 'name': 'Zoë Park', 'email': 'zoe@example.kr'}]", f"load_users() with blank lines around gives {found}")


# --- type hints, docstrings untouched ------------------------------------------------------------

GEOMETRY = '''"""Plane geometry for the floor planner."""

import math


def distance(a, b):
    """Euclidean distance between two (x, y) points."""
    return math.hypot(b[0] - a[0], b[1] - a[1])


def polygon_area(points):
    """Area of a simple polygon (shoelace formula); the points in order, either direction."""
    total = 0.0
    for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1]):
        total += x1 * y2 - x2 * y1
    return abs(total) / 2


def scale(points, factor):
    """Every point multiplied by factor, about the origin."""
    return [(x * factor, y * factor) for x, y in points]
'''


def _hints(root: Path, answer: str | None) -> None:
    source = text(root, "geometry.py")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        expect(False, "geometry.py does not parse")
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    before = {node.name: node for node in ast.parse(GEOMETRY).body if isinstance(node, ast.FunctionDef)}
    expect(set(functions) == set(before), "geometry.py's functions changed")
    for name, node in functions.items():
        expect(all(arg.annotation is not None for arg in node.args.args) and node.returns is not None, f"{name} is not fully annotated")
        expect(ast.get_docstring(node, clean=False) == ast.get_docstring(before[name], clean=False), f"{name}'s docstring changed")
    found = evaluate(root, "from geometry import *\nprint(distance((0, 0), (3, 4)), polygon_area([(0, 0), (3, 0), (0, 3)]), scale([(1, 2)], 1.5))")
    expect(found == "5.0 4.5 [(1.5, 3.0)]", f"the functions compute other values now: {found}")
    expect(evaluate(root, "import geometry, math\nprint(geometry.math is math)") == "True", "geometry.py no longer imports math")


GEOMETRY_HINTED = (GEOMETRY.replace("import math\n", "import math\n\nPoint = tuple[float, float]\n")
                   .replace("def distance(a, b):", "def distance(a: Point, b: Point) -> float:")
                   .replace("def polygon_area(points):", "def polygon_area(points: list[Point]) -> float:")
                   .replace("def scale(points, factor):", "def scale(points: list[Point], factor: float) -> list[Point]:"))

# --- odd formatting: CRLF and a byte order mark -----------------------------------------------------

PRICES = "\ufeffsku;name;price_eur\r\nA-100;Desk lamp;39,90\r\nB-200;Monitor arm;12,50\r\nB-210;Cable tray;8,00\r\nC-300;Foot rest;24,00\r\n"


def _price(root: Path, answer: str | None) -> None:
    expected = PRICES.replace("B-200;Monitor arm;12,50", "B-200;Monitor arm;14,90").encode()
    found = (root / "prices.csv").read_bytes() if (root / "prices.csv").is_file() else b""
    expect(found == expected, "prices.csv differs from the original in more than B-200's price" if found else "prices.csv is gone")


# --- odd formatting: an aligned settings file -------------------------------------------------------

TUNING = '''# fmt: off
# Tuned by hand; the alignment is on purpose.
RETRY_LIMIT   = 3\t\t# attempts per job
BACKOFF_S     = 2.5\t\t# seconds, doubled each time
BATCH_SIZE    = 500\t\t# rows per insert
QUEUES        = ['fast',   'default',   'slow']
# fmt: on
'''


def _tuning(root: Path, answer: str | None) -> None:
    expected = TUNING.replace("RETRY_LIMIT   = 3\t", "RETRY_LIMIT   = 5\t")
    expect(text(root, "tuning.py") == expected, "tuning.py differs from the original in more than RETRY_LIMIT's value")


# --- odd formatting: a compose file ---------------------------------------------------------------

COMPOSE = '''# Staging stack.  Keep image tags pinned!
services:
  web:
    image: registry.example.com/shop-web:1.8.1   # bumped with the worker, usually
    ports: ["8080:80"]
    depends_on: [worker]

  worker:
    image: registry.example.com/shop-worker:1.8.1
    environment:
      QUEUE_URL: "redis://queue:6379/0"   # same as prod
      CONCURRENCY: '4'
'''


def _compose(root: Path, answer: str | None) -> None:
    expected = COMPOSE.replace("shop-worker:1.8.1", "shop-worker:1.8.2")
    expect(text(root, "docker-compose.yml") == expected, "docker-compose.yml differs from the original in more than the worker's tag")


# --- two parts: a fix and a changelog entry ------------------------------------------------------

CART = '''from decimal import Decimal


def line_total(price, quantity):
    """Price (a string like '19.99') times quantity, in cents."""
    return int(Decimal(price) * 100) * quantity


def cart_total(lines, discount_percent=0):
    """The cart's total in cents, after a percentage discount, rounded half up to a cent."""
    subtotal = sum(line_total(price, quantity) for price, quantity in lines)
    return int(subtotal * (100 - discount_percent) / 100)
'''
CHANGELOG = '''# Changelog

## Unreleased

- Cart page shows the number of items.

## 1.4.0 (2024-05-02)

- Discount codes.
'''


def _cart(root: Path, answer: str | None) -> None:
    found = evaluate(root, "from cart import cart_total\nprint(cart_total([('19.99', 3)], 15), cart_total([('0.10', 3)], 0), cart_total([('4.99', 1), ('2.50', 2)], 10), cart_total([('1.50', 1)], 1))")
    expect(found == "5097 30 899 149", f"cart_total gives {found}, expected 5097 30 899 149")
    log = text(root, "CHANGELOG.md")
    head, _, rest = log.partition("## 1.4.0")
    expect(rest == CHANGELOG.partition("## 1.4.0")[2] and head.startswith("# Changelog\n\n## Unreleased\n"), "CHANGELOG.md's other sections changed")
    entries = [line for line in head.splitlines() if line.startswith("- ")]
    expect("- Cart page shows the number of items." in entries and len(entries) >= 2, "no new entry under Unreleased in CHANGELOG.md")


CART_FIXED = (CART.replace("from decimal import Decimal", "from decimal import ROUND_HALF_UP, Decimal")
              .replace("    return int(subtotal * (100 - discount_percent) / 100)",
                       "    total = Decimal(subtotal) * (100 - discount_percent) / 100\n    return int(total.quantize(Decimal(1), rounding=ROUND_HALF_UP))"))

# --- two parts: a new default and an environment variable --------------------------------------------

SERVE = '''import argparse
import os


def options(argv=None):
    parser = argparse.ArgumentParser(description="Serve the reports folder.")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--root", default="reports")
    parser.add_argument("--show", action="store_true", help="print the settings and exit")
    return parser.parse_args(argv)


def main():
    args = options()
    if args.show:
        print(f"port={args.port} root={args.root}")
        return
    import http.server
    import functools
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=args.root)
    http.server.ThreadingHTTPServer(("", args.port), handler).serve_forever()


if __name__ == "__main__":
    main()
'''


def _serve(root: Path, answer: str | None) -> None:
    output_is(python(root, "serve.py", "--show"), "port=8081 root=reports")
    output_is(python(root, "serve.py", "--show", env={"PORT": "9300"}), "port=9300 root=reports")
    output_is(python(root, "serve.py", "--show", "--port", "7000", env={"PORT": "9300"}), "port=7000 root=reports")
    output_is(python(root, "serve.py", "--show", "--root", "out"), "port=8081 root=out")


# --- explain, do not change: a stale cache -------------------------------------------------------

PROFILES = '''import functools
import json
from pathlib import Path

STORE = Path("profiles.json")


@functools.lru_cache(maxsize=256)
def get_profile(user_id):
    return json.loads(STORE.read_text())[str(user_id)]


def update_profile(user_id, **changes):
    data = json.loads(STORE.read_text())
    data[str(user_id)].update(changes)
    STORE.write_text(json.dumps(data, indent=2))
'''

TASKS = [
    RealisticTask(
        "scope-v2-client-only", "do X, not Y",
        (
            "Point client.py at the v2 API (https://api.example.com/v2). Do not touch legacy_client.py.",
            "We're migrating to the v2 API. Please switch client.py over to https://api.example.com/v2. legacy_client.py has the same code "
            "but the batch jobs still need v1, so leave that file exactly as it is.",
        ),
        {"README.md": "# sync\n\nclient.py talks to the current API; legacy_client.py stays on v1 for the batch jobs.\n",
         "client.py": CLIENT, "legacy_client.py": LEGACY, "sync.py": SYNC},
        _v2,
        Change({"client.py": edit("/v1", "/v2")}),
        {
            "both changed": Change({"legacy_client.py": edit("/v1", "/v2")}),
            "legacy reformatted": Change({"legacy_client.py": edit("TIMEOUT = 10\n", "TIMEOUT = 10  # seconds\n")}),
            "timeout dropped": Change({"client.py": lambda source: source.replace("TIMEOUT = 10\n", "").replace("timeout=TIMEOUT", "timeout=10")}),
        },
    ),
    RealisticTask(
        "scope-one-function", "do X, not Y",
        (
            "load_users in users.py crashes on blank lines in users.txt. Make it skip them; change nothing else in users.py.",
            "users.txt sometimes has empty (or whitespace-only) lines and then load_users dies with `ValueError: not enough values to unpack`. "
            "Can you make load_users skip those lines? Please don't touch anything else in users.py, not even the formatting: another team "
            "diffs that file with their own tools.",
        ),
        {"README.md": "# users\n\nusers.txt holds one user per line: id|name|email.\n", "users.py": USERS, "users.txt": USERS_TXT},
        _one_function,
        Change({"users.py": edit("        for line in handle:\n", "        for line in handle:\n            if not line.strip():\n                continue\n")}),
        {
            "tidied save_users": Change({"users.py": edit('def save_users(users, path = "users.txt"):', 'def save_users(users, path="users.txt"):')}),
            "comment dropped in find": Change({"users.py": edit("   # case-insensitive", "")}),
            "empty lines only, not blank ones": Change({"users.py": edit("            if not line.strip():", '            if line == "\\n":')}),
        },
    ),
    RealisticTask(
        "scope-type-hints", "do X, not Y",
        (
            "Add type hints to every function in geometry.py. Do not change the docstrings or what the functions do.",
            "We're turning on mypy. Could you add type hints (parameters and return types) to all the functions in geometry.py? "
            "The docstrings are reviewed text, keep them word for word, and the behaviour must stay the same.",
        ),
        {"README.md": "# floorplan\n\nGeometry helpers for the floor planner.\n", "geometry.py": GEOMETRY},
        _hints,
        Change({"geometry.py": GEOMETRY_HINTED}),
        {
            "a docstring reworded": Change({"geometry.py": edit('"""Every point multiplied by factor, about the origin."""', '"""Scale every point by factor."""')}),
            "one function left": Change({"geometry.py": edit("def scale(points: list[Point], factor: float) -> list[Point]:", "def scale(points, factor):")}),
            "integer area": Change({"geometry.py": edit("    return abs(total) / 2", "    return abs(total) // 2")}),
        },
    ),
    RealisticTask(
        "format-crlf-price", "odd formatting",
        (
            "Change the price of B-200 in prices.csv to 14,90. Nothing else in the file may change.",
            "Quick one: the monitor arm (B-200) now costs 14,90 €. Please update prices.csv. Careful, that file comes from our ERP: it has Windows "
            "line endings, a BOM and semicolons, and the import breaks if any of that changes.",
        ),
        {"README.md": "# catalogue\n\nprices.csv is exported from the ERP (Windows line endings, UTF-8 with BOM, `;`-separated, decimal commas).\n", "prices.csv": PRICES},
        _price,
        Change({"prices.csv": edit("12,50", "14,90")}),
        {
            "line endings changed": Change({"prices.csv": lambda source: source.replace("\r\n", "\n")}),
            "BOM dropped": Change({"prices.csv": lambda source: source.lstrip("\ufeff")}),
            "decimal point": Change({"prices.csv": edit("14,90", "14.90")}),
        },
    ),
    RealisticTask(
        "format-aligned-settings", "odd formatting",
        (
            "Set RETRY_LIMIT in tuning.py to 5, keeping the file's alignment exactly as it is.",
            "Ops asked for 5 retries instead of 3. Can you change RETRY_LIMIT in tuning.py? The file is hand-aligned with tabs before the comments "
            "and deliberately not run through the formatter, so please change only that number.",
        ),
        {"README.md": "# jobs\n\ntuning.py: the job runner's knobs.\n", "tuning.py": TUNING, "runner.py": "from tuning import BATCH_SIZE, QUEUES, RETRY_LIMIT\n\nprint(RETRY_LIMIT, BATCH_SIZE, QUEUES)\n"},
        _tuning,
        Change({"tuning.py": edit("RETRY_LIMIT   = 3\t", "RETRY_LIMIT   = 5\t")}),
        {
            "tabs to spaces": Change({"tuning.py": lambda source: source.replace("\t\t", "    ")}),
            "formatted": Change({"tuning.py": edit("QUEUES        = ['fast',   'default',   'slow']", 'QUEUES = ["fast", "default", "slow"]')}),
            "realigned": Change({"tuning.py": edit("RETRY_LIMIT   = 5", "RETRY_LIMIT = 5")}),
        },
    ),
    RealisticTask(
        "format-compose-worker-tag", "odd formatting",
        (
            "Bump the worker image in docker-compose.yml to 1.8.2. Leave web and everything else as it is.",
            "We're rolling out the worker fix to staging first. Please bump only the worker's image tag to 1.8.2 in docker-compose.yml; the web "
            "image stays on 1.8.1 for now. Keep the comments and quoting as they are, the file is reviewed as a diff.",
        ),
        {"README.md": "# staging\n\n`docker compose up` with docker-compose.yml.\n", "docker-compose.yml": COMPOSE},
        _compose,
        Change({"docker-compose.yml": edit("shop-worker:1.8.1", "shop-worker:1.8.2")}),
        {
            "both bumped": Change({"docker-compose.yml": edit("shop-web:1.8.1", "shop-web:1.8.2")}),
            "comments lost": Change({"docker-compose.yml": edit("   # same as prod", "")}),
            "quotes normalised": Change({"docker-compose.yml": edit("CONCURRENCY: '4'", 'CONCURRENCY: "4"')}),
        },
    ),
    RealisticTask(
        "multi-cart-rounding-changelog", "two parts",
        (
            "cart_total in cart.py truncates instead of rounding half up to a cent. Fix it, and add a line about the fix under Unreleased in CHANGELOG.md.",
            "A customer noticed their total was a cent short: 3 x 19.99 with 15% off should be 50.97 and we charge 50.96. cart_total is supposed "
            "to round half up to the cent but it just truncates. Could you fix that and also note the fix in CHANGELOG.md under Unreleased? Thanks!",
        ),
        {"README.md": "# cart\n\nCart maths, in cents.\n", "cart.py": CART, "CHANGELOG.md": CHANGELOG},
        _cart,
        Change({"cart.py": CART_FIXED, "CHANGELOG.md": edit("- Cart page shows the number of items.\n", "- Cart page shows the number of items.\n- Cart totals round half up to the cent instead of truncating.\n")}),
        {
            "no changelog entry": Change({"CHANGELOG.md": CHANGELOG}),
            "entry replaces the old one": Change({"CHANGELOG.md": CHANGELOG.replace("- Cart page shows the number of items.", "- Cart totals round half up.")}),
            "round() (half even)": Change({"cart.py": CART.replace("    return int(subtotal * (100 - discount_percent) / 100)", "    return round(subtotal * (100 - discount_percent) / 100)")}),
        },
    ),
    RealisticTask(
        "multi-port-default-and-env", "two parts",
        (
            "In serve.py: make the default port 8081, and let a PORT environment variable set it when --port is not given.",
            "Two small changes to serve.py please. The default port should be 8081 now (8000 clashes with another service). And on the "
            "platform we deploy to, the port comes in the PORT environment variable, so use that when there's no --port; an explicit --port still wins.",
        ),
        {"README.md": "# reports\n\n`python3 serve.py [--port N] [--root DIR]` serves the reports folder; `--show` prints the settings.\n", "serve.py": SERVE},
        _serve,
        Change({"serve.py": edit('parser.add_argument("--port", type=int, default=8000)', 'parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8081)))')}),
        {
            "only the default": Change({"serve.py": edit('default=int(os.environ.get("PORT", 8081))', "default=8081")}),
            "only the variable": Change({"serve.py": edit('default=int(os.environ.get("PORT", 8081))', 'default=int(os.environ.get("PORT", 8000))')}),
            "the variable wins over --port": Change({"serve.py": edit("    args = options()\n", '    args = options()\n    args.port = int(os.environ.get("PORT", args.port))\n')}),
        },
    ),
    RealisticTask(
        "ask-stale-profile", "question: explain",
        (
            "Why does get_profile still return the old name after update_profile? Explain; don't change the code.",
            "Weird bug report from support: a user changes their display name, `update_profile` writes it to profiles.json (I checked the file), "
            "but `get_profile` keeps returning the old name until we restart the service. What's going on? Just explain it for now, no changes please.",
        ),
        {"README.md": "# profiles\n\nUser profiles stored in profiles.json.\n", "profiles.py": PROFILES,
         "profiles.json": '{\n  "42": {"name": "Old Name", "theme": "dark"}\n}\n'},
        lambda root, answer: answer_has(answer, "lru_cache"),
        Change(answer="get_profile is wrapped in functools.lru_cache, so after the first call it returns the cached dict and never reads profiles.json again; "
                      "update_profile writes the file but does not clear the cache (get_profile.cache_clear())."),
        {
            "fixed it anyway": Change({"profiles.py": edit("    STORE.write_text(json.dumps(data, indent=2))\n", "    STORE.write_text(json.dumps(data, indent=2))\n    get_profile.cache_clear()\n")}),
            "blames the file": Change(answer="update_profile probably does not flush the file before get_profile reads it."),
        },
        unchanged=True,
    ),
]
