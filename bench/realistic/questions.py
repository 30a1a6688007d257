"""Questions: an explanation, or a value the code computes. Every starting file must stay
byte-identical, and the answer must carry the value (which is only known by reading the code
closely or running it: the names and comments suggest another)."""

from __future__ import annotations

import zlib

from bench.realistic.checking import answer_has, answer_number
from bench.realistic.task import Change, Checker, RealisticTask, edit

# --- retries: the total wait ------------------------------------------------------------------------

RETRY = '''"""Fetch with retries: exponential backoff, capped, for a flaky upstream."""

import time
import urllib.request

MAX_ATTEMPTS = 5
BASE_DELAY = 0.5   # seconds
FACTOR = 3
MAX_DELAY = 10.0


def delays():
    """The pause before each retry (there is none before the first attempt)."""
    delay = BASE_DELAY
    for _ in range(MAX_ATTEMPTS - 1):
        yield min(delay, MAX_DELAY)
        delay *= FACTOR


def fetch(url, opener=urllib.request.urlopen, sleep=time.sleep):
    last_error = None
    pauses = delays()
    for attempt in range(MAX_ATTEMPTS):
        try:
            return opener(url, timeout=5).read()
        except OSError as error:
            last_error = error
            if attempt < MAX_ATTEMPTS - 1:
                sleep(next(pauses))
    raise last_error
'''
CLIENT = '''from upstream.retry import fetch


def latest_rates():
    return fetch("https://rates.example.net/v1/latest")
'''

# --- workers: three layers of settings ------------------------------------------------------------

SETTINGS = '''"""Settings: built-in defaults, then config.json, then the profile's file, then APP_* variables."""

import json
import os
from pathlib import Path

DEFAULTS = {"workers": 4, "port": 8000, "profile": "dev"}
MAX_WORKERS = 6   # the box has 8 cores; leave two for the database


def load(folder="."):
    settings = dict(DEFAULTS)
    settings.update(json.loads(Path(folder, "config.json").read_text()))
    profile_file = Path(folder, f"config.{settings['profile']}.json")
    if profile_file.exists():
        settings.update(json.loads(profile_file.read_text()))
    for key in settings:
        value = os.environ.get(f"APP_{key.upper()}")
        if value is not None:
            settings[key] = type(DEFAULTS.get(key, ""))(value)
    settings["workers"] = min(settings["workers"], MAX_WORKERS)
    return settings
'''
SERVER = '''from settings import load


def main():
    settings = load()
    print(f"starting {settings['workers']} workers on port {settings['port']}")


if __name__ == "__main__":
    main()
'''

# --- the failing test --------------------------------------------------------------------------------

MONEY = '''from decimal import ROUND_HALF_UP, Decimal


def to_cents(amount):
    """'12.345' -> 1235: round half up to whole cents, as the bank does."""
    return int((Decimal(amount) * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def split(total_cents, people):
    """Split a bill; the first people pay the leftover cents."""
    share, left = divmod(total_cents, people)
    return [share + 1 if index < left else share for index in range(people)]


def format_cents(cents):
    return f"{cents // 100}.{cents % 100:02d}"
'''
MONEY_TESTS = '''import unittest

from billsplit import format_cents, split, to_cents


class ToCents(unittest.TestCase):
    def test_whole(self):
        self.assertEqual(to_cents("12"), 1200)

    def test_half_up(self):
        self.assertEqual(to_cents("0.125"), 13)


class Split(unittest.TestCase):
    def test_even(self):
        self.assertEqual(split(900, 3), [300, 300, 300])

    def test_leftover_goes_first(self):
        self.assertEqual(split(1000, 3), [334, 333, 333])


class Format(unittest.TestCase):
    def test_small(self):
        self.assertEqual(format_cents(5), "0.05")

    def test_negative_refund(self):
        self.assertEqual(format_cents(-250), "-2.50")


if __name__ == "__main__":
    unittest.main()
'''

# --- shipping: the cost of an order -------------------------------------------------------------

SHIPPING = '''"""Shipping cost for an order: zone rate per started kilo, bulky surcharge, free over a threshold."""

import json
import math

ZONE_RATES = {"domestic": 4.20, "eu": 7.90, "world": 14.50}   # per started kg
BULKY_SURCHARGE = 12.00   # once per order with any item longer than 100 cm
FREE_ABOVE = 150.00       # goods value, domestic only
PACKAGING_KG = 0.35


def weight(order):
    return sum(line["kg"] * line["qty"] for line in order["lines"]) + PACKAGING_KG


def cost(order):
    goods = sum(line["price"] * line["qty"] for line in order["lines"])
    if order["zone"] == "domestic" and goods > FREE_ABOVE:
        return 0.0
    price = math.ceil(weight(order)) * ZONE_RATES[order["zone"]]
    if any(line["cm"] > 100 for line in order["lines"]):
        price += BULKY_SURCHARGE
    return round(price, 2)


if __name__ == "__main__":
    with open("order.json") as handle:
        print(cost(json.load(handle)))
'''
ORDER = '''{
  "id": "SO-55812",
  "zone": "eu",
  "lines": [
    {"sku": "lamp-arc", "qty": 1, "kg": 3.2, "cm": 160, "price": 89.00},
    {"sku": "bulb-e27", "qty": 4, "kg": 0.08, "cm": 12, "price": 4.50},
    {"sku": "shade-linen", "qty": 2, "kg": 0.45, "cm": 40, "price": 22.00}
  ]
}
'''


def _shipping_cost() -> float:
    kg = 3.2 + 4 * 0.08 + 2 * 0.45 + 0.35
    return round(-(-kg // 1) * 7.90 + 12.00, 2)


# --- shards: where a customer's data lives -----------------------------------------------------

SHARDS = '''"""Which database shard holds a customer: a stable hash of the id, so it never moves."""

import zlib

SHARD_COUNT = 16
HOSTS = {n: f"db-{n // 4}.internal" for n in range(SHARD_COUNT)}


def shard_of(customer_id: str) -> int:
    return zlib.crc32(customer_id.strip().lower().encode()) % SHARD_COUNT


def host_of(customer_id: str) -> str:
    return HOSTS[shard_of(customer_id)]
'''
SHARD_NOTE = "Customer data is spread over 16 shards on 4 hosts; `shards.host_of(id)` says where a customer lives.\n"
CUSTOMER = "C-20931"


def _shard() -> int:
    return zlib.crc32(CUSTOMER.strip().lower().encode()) % 16


def _value(number: float) -> Checker:
    return lambda root, answer: answer_number(answer, number)


TASKS = [
    RealisticTask(
        "ask-retry-total-wait", "question: value",
        (
            "If the upstream is down, how many seconds in total does fetch() sleep before it gives up? Don't change any code.",
            "Our rates service was down last night and I'm trying to understand the timeline. When every attempt fails, how long does "
            "`fetch` in upstream/retry.py spend sleeping in total before it raises? Just explain, please don't change anything.",
        ),
        {"README.md": "# rates\n\nPulls exchange rates from upstream (`upstream/client.py`), retrying on network errors.\n",
         "upstream/__init__.py": "", "upstream/retry.py": RETRY, "upstream/client.py": CLIENT},
        _value(16.5),
        Change(answer="It sleeps 0.5 + 1.5 + 4.5 + 10 (capped from 13.5) = 16.5 seconds in total before raising."),
        {
            "the uncapped sum": Change(answer="0.5 + 1.5 + 4.5 + 13.5 = 20 seconds."),
            "a pause per attempt": Change(answer="Five pauses: 0.5, 1.5, 4.5, 10, 10, so 26.5 seconds."),
            "right value, but a print added to find it": Change({"upstream/retry.py": edit("    raise last_error\n", "    print('gave up')\n    raise last_error\n")}),
        },
        unchanged=True,
    ),
    RealisticTask(
        "ask-server-workers", "question: value",
        (
            "With the files as they are and no APP_ variables set, how many workers does python3 server.py start? Don't change anything.",
            "I'm confused by our settings layering. If I just run `python3 server.py` here (no APP_* environment variables), how many "
            "workers will it actually start? Please tell me and explain where the number comes from, without changing any files.",
        ),
        {"README.md": "# api\n\nStart with `python3 server.py`. Settings: see settings.py.\n", "settings.py": SETTINGS, "server.py": SERVER,
         "config.json": '{\n  "profile": "staging",\n  "workers": 2,\n  "port": 8080\n}\n',
         "config.staging.json": '{\n  "workers": 12\n}\n', "config.dev.json": '{\n  "workers": 1\n}\n'},
        _value(6),
        Change(answer="6 workers: config.json says 2, the staging profile file raises it to 12, and MAX_WORKERS caps it at 6."),
        {
            "the profile file's value": Change(answer="It starts 12 workers, from config.staging.json."),
            "config.json's value": Change(answer="2 workers, as config.json says."),
            "right value, but ran it with a changed file": Change({"config.dev.json": '{\n  "workers": 6\n}\n'}),
        },
        unchanged=True,
    ),
    RealisticTask(
        "ask-which-test-fails", "question: explain",
        (
            "Which test in test_billsplit.py fails, and why? Explain only; do not fix anything.",
            "CI is red on this repo and I don't have time to look right now. Can you tell me which test fails and what the cause is? "
            "Please don't fix it yet, I want to discuss it with the team first.",
        ),
        {"README.md": "# splitbill\n\nMoney helpers for splitting a bill. Tests: `python3 -m unittest`.\n", "billsplit.py": MONEY, "test_billsplit.py": MONEY_TESTS},
        lambda root, answer: answer_has(answer, "test_negative_refund"),
        Change(answer="test_negative_refund fails: format_cents(-250) gives '-3.50' because floor division rounds -250 // 100 down to -3."),
        {
            "fixed it although asked not to": Change({"billsplit.py": edit('    return f"{cents // 100}.{cents % 100:02d}"',
                                                                        '    sign = "-" if cents < 0 else ""\n    cents = abs(cents)\n    return f"{sign}{cents // 100}.{cents % 100:02d}"')}),
            "named another test": Change(answer="test_half_up fails: to_cents rounds 0.125 wrongly."),
        },
        unchanged=True,
    ),
    RealisticTask(
        "ask-shipping-cost", "question: value",
        (
            "What shipping cost does shipping.py compute for order.json? Don't change the files.",
            "A customer is asking why the shipping on order SO-55812 is what it is. What does our shipping code charge for that order "
            "(it's in order.json), and how does it get there? Don't change anything, I only need the number and the reasoning.",
        ),
        {"README.md": "# shipping\n\n`python3 shipping.py` prints the shipping cost of order.json.\n", "shipping.py": SHIPPING, "order.json": ORDER},
        _value(_shipping_cost()),
        Change(answer=f"It charges {_shipping_cost():.2f}: 4.77 kg with packaging rounds up to 5 started kilos at 7.90 (EU), plus the 12.00 bulky surcharge for the 160 cm lamp."),
        {
            "without the surcharge": Change(answer="39.50: 5 kg at 7.90."),
            "weight not rounded up": Change(answer=f"{round(4.77 * 7.90 + 12, 2)}"),
            "free shipping guess": Change(answer="It is free, the goods are over 150."),
        },
        unchanged=True,
    ),
    RealisticTask(
        "ask-customer-shard", "question: value",
        (
            f"Which shard number does customer {CUSTOMER} map to? Don't change anything.",
            f"Support needs to look at the raw rows of customer {CUSTOMER} in the database. Which shard (the number) is that customer on, "
            "according to shards.py? No code changes please, I just need the number.",
        ),
        {"README.md": "# accounts\n\n" + SHARD_NOTE, "shards.py": SHARDS},
        _value(_shard()),
        Change(answer=f"Customer {CUSTOMER} is on shard {_shard()} (host db-{_shard() // 4}.internal)."),
        {
            "hash of the id as written": Change(answer=f"Shard {zlib.crc32(CUSTOMER.encode()) % 16}."),
            "a guess": Change(answer=f"Shard {(_shard() + 5) % 16}."),
        },
        unchanged=True,
    ),
]

# --- which sign-ups the validator rejects -----------------------------------------------------------

VALIDATE = '''import re

EMAIL = re.compile(r"^[a-z0-9._%-]+@[a-z0-9-]+(\\.[a-z0-9-]+)*\\.[a-z]{2,6}$")


def is_valid_email(address):
    """Reject obvious typos before we send the confirmation mail."""
    return bool(EMAIL.match(address.strip().lower()))
'''
SIGNUPS = "maria.silva@example.com\nj.doe+news@example.org\nkim@mail.example.co.kr\nsam@example.photography\nlee@localhost\nAna.Gomez@Example.ES\n"

TASKS.append(
    RealisticTask(
        "ask-rejected-signups", "question: value",
        (
            "Which addresses in signups.txt does is_valid_email reject? Don't change anything.",
            "Marketing says some people who signed up never got the confirmation mail. Could you tell me which of the addresses in signups.txt our "
            "is_valid_email (validation.py) rejects? Please don't change the validator yet, I first want to know who is affected.",
        ),
        {"README.md": "# signup\n\nvalidation.py checks addresses before the confirmation mail goes out.\n", "validation.py": VALIDATE, "signups.txt": SIGNUPS},
        lambda root, answer: answer_has(answer, "j.doe+news@example.org", "sam@example.photography", "lee@localhost"),
        Change(answer="It rejects j.doe+news@example.org (the + is not allowed), sam@example.photography (the top-level domain is longer than 6 letters) and lee@localhost (no dot)."),
        {
            "one missed": Change(answer="It rejects j.doe+news@example.org and lee@localhost."),
            "the upper-case one instead of the long domain": Change(answer="It rejects j.doe+news@example.org, Ana.Gomez@Example.ES and lee@localhost."),
            "fixed the regex": Change({"validation.py": edit("[a-z0-9._%-]+@", "[a-z0-9._%+-]+@")}),
        },
        unchanged=True,
    )
)

