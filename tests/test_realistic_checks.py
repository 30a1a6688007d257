"""The realistic suite's checkers (bench/realistic): each must pass its reference solution and
reject doing nothing and every near miss (hard-coding, a dropped block, edited tests, a wrong
value), or the suite's numbers would say nothing about users' work."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from bench.generalise import HALVES, all_tasks, half_of  # noqa: E402
from bench.realistic.tasks import REALISTIC_TASKS  # noqa: E402
from bench.realistic.validate import cases  # noqa: E402


@pytest.mark.parametrize("task", REALISTIC_TASKS, ids=lambda task: task.id)
def test_the_checker_passes_the_reference_and_rejects_nothing_done_and_each_near_miss(task) -> None:  # noqa: ANN001
    outcomes = cases(task)
    assert [(outcome.case, outcome.verdict) for outcome in outcomes if not outcome.right] == []
    assert sum(outcome.case.startswith("near miss") for outcome in outcomes) >= 2


def test_every_task_has_a_terse_and_a_chatty_phrasing_and_ids_are_unique() -> None:
    assert all(len(task.phrasings) == 2 and len(task.phrasings[0]) < len(task.phrasings[1]) for task in REALISTIC_TASKS)
    ids = [task.id for task in all_tasks("suite") + all_tasks("realistic")]
    assert len(ids) == len(set(ids))


def test_the_split_is_fixed_and_both_halves_are_used() -> None:
    halves = [half_of(task.id) for task in REALISTIC_TASKS]
    assert set(halves) == set(HALVES)
    assert 0.3 < halves.count("held-out") / len(halves) < 0.7


def test_a_question_s_checker_rejects_the_right_answer_when_a_file_changed(tmp_path) -> None:  # noqa: ANN001
    from bench.generalise import _setup

    questions = [task for task in REALISTIC_TASKS if task.unchanged]
    assert questions
    for task in questions:
        root = _setup(task, 0, tmp_path)
        assert task.check(root, task.reference.answer)
        first = sorted(task.files)[0]
        (root / first).write_text((root / first).read_text() + "\n")
        assert task.verdict(root, task.reference.answer) == f"{first} changed, and the question asked for no change"


def test_the_agent_names_no_realistic_task_or_its_files() -> None:
    """As for the other suite (tests/test_suite_checks.py): an aid that names a task's files would
    be written for the suite, not for users' work."""
    import re

    source = "\n".join(path.read_text() for path in (pathlib.Path(__file__).resolve().parents[1] / "mzagent_tui").rglob("*.py"))
    names = {pathlib.PurePath(name).name for task in REALISTIC_TASKS for name in task.files} | {task.id for task in REALISTIC_TASKS}
    universal = {"__init__.py", "__main__.py", "README.md", "Makefile", "pyproject.toml", "docker-compose.yml", "config.json", "CHANGELOG.md"}
    named = sorted(name for name in names - universal if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", source))
    assert named == []


def test_a_task_starts_with_its_bytes_line_endings_and_execute_bits(tmp_path) -> None:  # noqa: ANN001
    from bench.generalise import _setup

    by_id = {task.id: task for task in REALISTIC_TASKS}
    bank = _setup(by_id["bug-bank-export-latin1"], 0, tmp_path)
    assert (bank / "export.csv").read_bytes() == by_id["bug-bank-export-latin1"].files["export.csv"]
    assert b"\xe4" in (bank / "export.csv").read_bytes()
    prices = _setup(by_id["format-crlf-price"], 1, tmp_path)
    assert (prices / "prices.csv").read_bytes().startswith(b"\xef\xbb\xbfsku;name;price_eur\r\n")
    backup = _setup(by_id["option-backup-destination"], 0, tmp_path)
    assert os.access(backup / "backup.sh", os.X_OK) and not os.access(backup / "README.md", os.X_OK)


def test_the_report_counts_each_phrasing_and_the_runs_the_time_limit_ended(tmp_path) -> None:  # noqa: ANN001
    import json

    from bench.generalise import report

    records = [
        {"task": "a", "category": "bug report", "half": "held-out", "phrasing": 0, "runner": "agent small", "passed": True, "steps": 3, "seconds": 40, "stop": "answered"},
        {"task": "b", "category": "bug report", "half": "held-out", "phrasing": 0, "runner": "agent small", "passed": False, "steps": 1, "seconds": 300, "stop": "time limit"},
        {"task": "a", "category": "bug report", "half": "held-out", "phrasing": 1, "runner": "agent small", "passed": False, "steps": 10, "seconds": 90, "stop": "max steps"},
    ]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert "- agent small: phrasing 0: 1/2, phrasing 1: 0/1; ended by the time limit: 1 of 3" in report([str(path)]).splitlines()
