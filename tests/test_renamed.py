"""The answer check `answer.renamed`: a task that renames a name or a file is not done while the
project still uses the old one (a small model renamed in one file of five, or ran a `sed` on a file
that does not exist, and answered)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mzagent_tui.agent.aids.renamed import Rename, leftovers, rename_note, renames_in
from mzagent_tui.agent.events import AidFired, StopReason
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, last_user, read_reply, write_reply

TAX = "RATE = 0.2\n\n\ndef calc_tax(amount):\n    return round(amount * RATE, 2)\n"
INVOICE = "from billing.tax import calc_tax\n\n\ndef total(amount):\n    return amount + calc_tax(amount)\n"
README = "# billing\n\n`calc_tax(amount)` gives the VAT; `calc_tax_rate` is another thing.\n"
SUBSTITUTE = "perl -pi -e 's/\\bcalc_tax\\b/compute_vat/g' README.md billing/invoice.py billing/tax.py"


def command_reply(command: str) -> Reply:
    return Reply(f"<thought>run it</thought><action>run_terminal_command({json.dumps(command)})</action>")


def _billing(project: Path) -> None:
    (project / "billing").mkdir()
    (project / "billing" / "__init__.py").write_text("")
    (project / "billing" / "tax.py").write_text(TAX)
    (project / "billing" / "invoice.py").write_text(INVOICE)
    (project / "README.md").write_text(README)


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("Rename calc_tax to compute_vat everywhere in the project.", [Rename("calc_tax", "compute_vat")]),
        ("please rename `calc_tax` to `compute_vat` across the code.", [Rename("calc_tax", "compute_vat")]),
        ("Rename the config key timeout to timeout_seconds.", [Rename("timeout", "timeout_seconds")]),
        ("Rename helpers.py to textutils.py and update every import.",
         [Rename("helpers", "textutils", old_file="helpers.py", new_file="textutils.py", code_only=True)]),
        ("rename notes.txt to todo.txt", [Rename("notes.txt", "todo.txt", old_file="notes.txt", new_file="todo.txt")]),
        ("I renamed calc_tax to compute_vat and now it crashes", []),  # a report, not an order
        ("rename x to y", []),  # too short to search for: in every file
        ("rename foo to foo", []),
    ],
)
def test_the_renames_a_task_asks_for(task: str, expected: list[Rename]) -> None:
    assert renames_in(task) == expected


def test_the_old_name_is_found_as_a_whole_word_only(project: Path) -> None:
    _billing(project)
    places = leftovers(project, Rename("calc_tax", "compute_vat"))
    assert places == [
        "README.md:3: `calc_tax(amount)` gives the VAT; `calc_tax_rate` is another thing.",
        "billing/invoice.py:1: from billing.tax import calc_tax",
        "billing/invoice.py:5: return amount + calc_tax(amount)",
        "billing/tax.py:4: def calc_tax(amount):",
    ]
    (project / "README.md").write_text("`calc_tax_rate` and precalc_tax are other names\n")
    assert not any(place.startswith("README.md") for place in leftovers(project, Rename("calc_tax", "compute_vat")))


def test_a_module_is_looked_for_in_code_and_by_its_file(project: Path) -> None:
    (project / "helpers.py").write_text("def shout(s):\n    return s.upper()\n")
    (project / "show.py").write_text("from helpers import shout\nprint(shout('a'))\n")
    (project / "README.md").write_text("Small helpers live in helpers.py.\n")
    (project / "blob.py").write_bytes(b"import helpers\0\xff")  # not text: skipped, not a crash
    rename = renames_in("Rename helpers.py to textutils.py")[0]
    assert leftovers(project, rename) == ["helpers.py: the file is still there", "show.py:1: from helpers import shout"]


def test_the_note_offers_commands_that_lose_nothing(project: Path) -> None:
    rename = renames_in("Rename helpers.py to textutils.py")[0]
    (project / "helpers.py").write_text("A = 1\n")
    places = ["helpers.py: the file is still there", "show.py:1: from helpers import A"]
    assert "mv helpers.py textutils.py && perl -pi -e" in rename_note(project, rename, places)
    (project / "textutils.py").write_text("A = 1\n")
    assert "rm helpers.py && perl -pi -e" in rename_note(project, rename, places)
    (project / "textutils.py").write_text("A = 2\n")  # the model's new file differs: neither moved over nor removed
    note = rename_note(project, rename, places)
    assert "mv " not in note and "rm " not in note and "perl -pi -e 's/\\\\bhelpers\\\\b/textutils/g' show.py" in note


def test_a_plain_word_gets_its_places_and_no_blanket_replacement(project: Path) -> None:
    rename = renames_in("Rename the config key timeout to timeout_seconds")[0]
    note = rename_note(project, rename, ["fetcher.py:3: requests.get(url, timeout=config['timeout'])"])
    assert "fetcher.py:3:" in note and "perl" not in note and "run_terminal_command" not in note


def test_a_rename_done_in_one_file_is_sent_back_with_the_places_left(server, project: Path) -> None:
    _billing(project)
    server.script(
        command_reply("find . -name 'calc_tax.py' -exec sed -i 's/calc_tax/compute_vat/g' {} \\;"),
        answer_reply("I renamed calc_tax to compute_vat everywhere."),
        command_reply(SUBSTITUTE),
        answer_reply("Renamed in tax.py, invoice.py and the README."),
    )
    agent, rec = make_agent(server, project)
    result = agent.run("Rename calc_tax to compute_vat everywhere in the project.")
    assert result.reason is StopReason.FINAL_ANSWER and result.steps == 4
    reminder = last_user(server.requests[2])
    assert "billing/invoice.py:5: return amount + calc_tax(amount)" in reminder
    assert f"run_terminal_command({json.dumps(SUBSTITUTE)})" in reminder
    assert [e.name for e in rec.of(AidFired)] == ["answer.renamed"]
    assert "calc_tax(" not in (project / "billing" / "invoice.py").read_text()
    assert "`calc_tax_rate`" in (project / "README.md").read_text()  # the other name kept


def test_it_reminds_again_while_the_model_makes_progress_and_not_after(server, project: Path) -> None:
    _billing(project)
    server.script(
        read_reply("billing/tax.py"),
        write_reply("billing/tax.py", TAX.replace("calc_tax", "compute_vat")),
        answer_reply("Done."),
        read_reply("billing/invoice.py"),
        write_reply("billing/invoice.py", INVOICE.replace("calc_tax", "compute_vat")),
        answer_reply("Done now."),  # the README is left: fewer places, so one more reminder
        answer_reply("Done, the README can stay."),  # no progress since: accepted
    )
    agent, rec = make_agent(server, project)
    result = agent.run("Rename calc_tax to compute_vat everywhere in the project.")
    assert result.reason is StopReason.FINAL_ANSWER and result.final_answer == "Done, the README can stay."
    assert [e.name for e in rec.of(AidFired)] == ["answer.renamed", "answer.renamed"]
    assert "README.md:3:" in last_user(server.requests[6]) and "billing/" not in last_user(server.requests[6])


def test_switched_off_it_lets_the_answer_through(server, project: Path) -> None:
    _billing(project)
    server.script(answer_reply("Renamed."))
    agent, rec = make_agent(server, project, disable_aids=["answer.renamed", "answer.idle"])
    result = agent.run("Rename calc_tax to compute_vat everywhere in the project.")
    assert result.final_answer == "Renamed." and result.steps == 1
    assert rec.of(AidFired) == []


def test_a_rename_run_twice_is_found_and_undone(project: Path) -> None:
    """`sed -i s/timeout/timeout_seconds/g` run a second time after a partial failure made
    `timeout_seconds_seconds`; the old name is gone, so only this finds it."""
    (project / "config.json").write_text('{"timeout_seconds_seconds": 15}\n')
    (project / "fetch.py").write_text("TIMEOUT = config['timeout_seconds']\n")
    rename = renames_in("Rename the config key timeout to timeout_seconds.")[0]
    places = leftovers(project, rename)
    assert places == ['config.json:1: {"timeout_seconds_seconds": 15}   <- renamed twice']
    note = rename_note(project, rename, places)
    assert "renamed twice, to timeout_seconds_seconds" in note
    command = "perl -pi -e 's/\\btimeout_seconds_seconds\\b/timeout_seconds/g' config.json"
    assert f"run_terminal_command({json.dumps(command)})" in note
    subprocess.run(command, shell=True, cwd=project, check=True)
    assert (project / "config.json").read_text() == '{"timeout_seconds": 15}\n' and leftovers(project, rename) == []
