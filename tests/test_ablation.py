"""The targeted ablation of bench/generalise.py: an aid's effect on a half is measured by
rerunning only the runs in which it acted, so which runs are chosen and how they are tallied
decide the table in docs/aids.md."""

from __future__ import annotations

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from bench.generalise import AGAIN, ablation_jobs, ablation_report, all_tasks  # noqa: E402

A, B, C = (task.id for task in all_tasks()[:3])


def record(task: str, passed: bool, aids: dict[str, int], runner: str = "agent", phrasing: int = 0) -> dict:
    return {"task": task, "phrasing": phrasing, "runner": runner, "passed": passed, "aids": aids}


def test_only_the_runs_in_which_an_aid_acted_are_run_again_with_it_off() -> None:
    base = [record(A, True, {"stuck": 2}), record(B, False, {}), record(C, True, {"stuck": 1, "answer.idle": 1}, phrasing=1)]
    jobs = ablation_jobs(base, ["stuck", "answer.idle", "examples"])
    assert [(job.task.id, job.phrasing, job.label, job.disabled) for job in jobs] == [
        (A, 0, "without stuck", ("stuck",)),
        (C, 1, "without stuck", ("stuck",)),
        (C, 1, "without answer.idle", ("answer.idle",)),
    ]


def test_the_report_sets_each_aids_runs_with_it_against_the_same_runs_without_it(tmp_path: pathlib.Path) -> None:
    base, cut = tmp_path / "base.jsonl", tmp_path / "cut.jsonl"
    base.write_text("\n".join(json.dumps(r) for r in [record(A, True, {"stuck": 1}), record(B, False, {"stuck": 1, "examples": 1}), record(C, True, {"answer.missing": 1})]))
    cut.write_text("\n".join(json.dumps(r) for r in [
        record(A, False, {}, "without stuck"), record(B, False, {"examples": 1}, "without stuck"), record(B, True, {}, "without examples"),
    ]))
    lines = ablation_report(str(base), [str(cut)]).splitlines()
    assert "| `stuck` | 2 | 1/2 | 0/2 | -1 |" in lines
    assert "| `examples` | 1 | 0/1 | 1/1 | +1 |" in lines
    assert "| `answer.missing` | 1 | — | not run | — |" in lines
    assert lines.index("| `stuck` | 2 | 1/2 | 0/2 | -1 |") < lines.index("| `examples` | 1 | 0/1 | 1/1 | +1 |")


def test_the_control_runs_each_run_in_which_an_aid_acted_once_more_with_every_aid_on(tmp_path: pathlib.Path) -> None:
    base = [record(A, True, {"stuck": 2, "examples": 1}), record(B, False, {})]
    jobs = ablation_jobs(base, ["stuck", "examples"], control=True)
    assert [(job.task.id, job.label, job.disabled) for job in jobs][:1] == [(A, AGAIN, ())]
    saved, cut = tmp_path / "base.jsonl", tmp_path / "cut.jsonl"
    saved.write_text("\n".join(json.dumps(r) for r in base))
    cut.write_text(json.dumps(record(A, False, {"stuck": 2, "examples": 1}, AGAIN)))
    assert "0/1 passed (1/1 in the base run), 1 of 1 came out differently" in ablation_report(str(saved), [str(cut)])
