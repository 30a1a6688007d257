"""Every checker against its reference solution (must pass), against doing nothing (must fail)
and against each near miss (must fail), each in a fresh folder. A checker that passes nothing
or rejects nothing would make the suite's numbers meaningless."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory

from bench.generalise import _setup
from bench.realistic.task import Change, RealisticTask

IDLE_ANSWERS = (None, "Done. I have made the change and checked it.")
"""Doing nothing: no answer at all, and a claim of success with no work behind it."""


@dataclass(frozen=True)
class Outcome:
    """One case of one task: what was tried, what the checker said, and whether that was right."""

    task: str
    case: str
    verdict: str | None
    right: bool


def _attempt(task: RealisticTask, parent: Path, changes: tuple[Change, ...], answer: str | None) -> str | None:
    root = _setup(task, 0, parent)
    for change in changes:
        change.apply(root)
    return task.verdict(root, answer)


def cases(task: RealisticTask) -> list[Outcome]:
    outcomes = []
    with TemporaryDirectory() as scratch:
        parent = Path(scratch)
        for answer in IDLE_ANSWERS:
            verdict = _attempt(task, parent, (), answer)
            outcomes.append(Outcome(task.id, f"nothing done, answer {answer!r}", verdict, verdict is not None))
        reference_answer = task.reference.answer or "Done."
        verdict = _attempt(task, parent, (task.reference,), reference_answer)
        outcomes.append(Outcome(task.id, "reference", verdict, verdict is None))
        for name, near in task.near_misses.items():
            try:
                verdict = _attempt(task, parent, (task.reference, near), near.answer or reference_answer)
            except (ValueError, OSError) as error:
                outcomes.append(Outcome(task.id, f"near miss {name}", f"the mutation does not apply: {error}", False))
                continue
            outcomes.append(Outcome(task.id, f"near miss {name}", verdict, verdict is not None))
    return outcomes


def validate(tasks: list[RealisticTask], workers: int = 8) -> list[Outcome]:
    with ThreadPoolExecutor(workers) as pool:
        return [outcome for outcomes in pool.map(cases, tasks) for outcome in outcomes]
