"""Does the agent finish tasks it was not tuned on? The suite, its fixed split, a runner, a report.

    python bench/generalise.py run --runner agent --half held-out --out bench/results/agent-held-out.jsonl
    python bench/generalise.py run --runner baseline --half held-out --out bench/results/baseline-held-out.jsonl
    python bench/generalise.py run --runner agent --grammar off --half held-out --out bench/results/agent-nogrammar-held-out.jsonl
    python bench/generalise.py report bench/results/*.jsonl

Each task id hashes to a half: `tuning` (look at it while changing the agent) or `held-out`
(never look at its transcripts; only its number counts). Every (task, phrasing) runs in a fresh
temp folder, commands approved, bundled model at temperature 0. Results are appended as JSON
lines, so an interrupted run resumes where it stopped. Needs the `local` and `bench` extras.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.suite.dev import DEV_TASKS  # noqa: E402
from bench.suite.humaneval import humaneval_tasks  # noqa: E402
from bench.suite.tasks import TASKS, SuiteTask  # noqa: E402

HALVES = ("tuning", "held-out")
MAX_STEPS = 10
TIME_LIMIT = 300.0
"""Seconds a run may take, for both runners: a model that repeats itself at 1,024 tokens a
step would otherwise hold the machine for most of an hour."""
SEED = 0
"""The first request's sampling seed (later ones count up from it), so the reply asked for at
temperature 0.7 after a repeat or a format error is the same in every run: without it the same
code changed two HumanEval results between runs."""


def half_of(task_id: str) -> str:
    """The fixed split: the first byte of the id's SHA-256, even or odd."""
    return HALVES[hashlib.sha256(task_id.encode()).digest()[0] % 2]


def all_tasks() -> list[SuiteTask]:
    return TASKS + humaneval_tasks()


def _setup(task: SuiteTask, phrasing: int, parent: Path | None = None) -> Path:
    """A fresh project folder with the task's files, in a new folder in `parent` (the system's
    temp folder by default). It is named `project` in every run: the prompt names the project
    folder, and a random name made the same task's prompt differ from run to run."""
    root = Path(tempfile.mkdtemp(prefix="mzagent-suite-", dir=parent)) / "project"
    root.mkdir()
    for name, text in task.files_for(phrasing).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _run_agent(root: Path, prompt: str, base_url: str, grammar: str) -> tuple[str | None, int, str]:
    from mzagent_tui.agent.safety.approval import StaticApprover
    from mzagent_tui.agent.cancel import CancelToken
    from mzagent_tui.agent.config import Settings
    from mzagent_tui.agent.loop import Agent

    settings = Settings(
        provider="local", base_url=base_url, model="local", temperature=0.0, max_steps=MAX_STEPS,
        max_tokens=1024, command_timeout=30, grammar=grammar, seed=SEED,
    )
    agent = Agent(settings, root, StaticApprover(True), lambda event: None, environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    cancel = CancelToken()
    timer = threading.Timer(TIME_LIMIT, cancel.cancel)
    timer.start()
    try:
        result = agent.run(prompt, cancel)
    finally:
        timer.cancel()
        agent.close()
        agent.session.close()
    return result.final_answer, result.steps, "time limit" if cancel.cancelled else result.reason.value


def _run_baseline(root: Path, prompt: str, base_url: str) -> tuple[str | None, int, str]:
    from bench.baseline import Baseline

    result = Baseline(root, base_url, "local", max_steps=MAX_STEPS, time_limit=TIME_LIMIT).run(prompt)
    return result.final_answer, result.steps, result.stop


def run(args: argparse.Namespace) -> None:
    from mzagent_tui.agent.model.local import LocalServer, model_path

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            record = json.loads(line)
            done.add((record["task"], record["phrasing"]))
    pool = DEV_TASKS if args.half == "dev" else [t for t in all_tasks() if args.half == "all" or half_of(t.id) == args.half]
    chosen = [t for t in pool if not args.only or t.id in args.only]
    server = LocalServer(model_path())
    server.launch()
    try:
        server.wait_ready()
        for task in chosen:
            for phrasing in args.phrasing:
                if (task.id, phrasing) in done or phrasing >= len(task.phrasings):
                    continue
                root = _setup(task, phrasing)
                started = time.monotonic()
                try:
                    if args.runner == "agent":
                        answer, steps, stop = _run_agent(root, task.phrasings[phrasing], server.base_url, args.grammar)
                    else:
                        answer, steps, stop = _run_baseline(root, task.phrasings[phrasing], server.base_url)
                except Exception as exc:  # noqa: BLE001 - one broken run must not end the benchmark
                    answer, steps, stop = None, 0, f"crash: {type(exc).__name__}: {exc}"
                seconds = time.monotonic() - started
                try:
                    passed = task.check(root, answer)
                except Exception:  # noqa: BLE001 - a checker that breaks on odd output counts as a fail, not a crash
                    passed = False
                finally:
                    shutil.rmtree(root.parent, ignore_errors=True)  # the session log keeps what the run did
                record = {
                    "task": task.id, "category": task.category, "half": "dev" if args.half == "dev" else half_of(task.id), "phrasing": phrasing,
                    "runner": args.label or args.runner, "passed": passed, "steps": steps, "seconds": round(seconds, 1), "stop": stop,
                }
                with out.open("a") as handle:
                    handle.write(json.dumps(record) + "\n")
                print(f"{task.id} [{phrasing}] {'pass' if passed else 'FAIL'} {steps} steps {seconds:.0f} s {stop}", flush=True)
    finally:
        server.stop()


def report(paths: list[str]) -> str:
    """Per half and category: pass rate, median steps, median seconds, one column group per runner;
    "all runs both made" compares the runners on the same (task, phrasing) pairs only."""
    records = [json.loads(line) for path in paths for line in Path(path).read_text().splitlines() if line.strip()]
    runners = list(dict.fromkeys(r["runner"] for r in records))
    lines = []
    for half in (*HALVES, "dev"):
        mine = [r for r in records if r["half"] == half]
        if not mine:
            continue
        lines.append(f"\n**{half}** (pass / runs, median steps, median seconds)\n")
        lines.append("| category | " + " | ".join(runners) + " |")
        lines.append("|---|" + "---|" * len(runners))
        groups: dict[str, list[dict]] = defaultdict(list)
        for record in mine:
            groups[record["category"]].append(record)
        keys = [{(r["task"], r["phrasing"]) for r in mine if r["runner"] == runner} for runner in runners]
        common = set.intersection(*keys) if keys else set()
        groups["**all runs both made**"] = [r for r in mine if (r["task"], r["phrasing"]) in common]
        for category in sorted(c for c in groups if not c.startswith("**")) + ["**all runs both made**", "**all**"]:
            rows = mine if category == "**all**" else groups[category]
            cells = []
            for runner in runners:
                runs = [r for r in rows if r["runner"] == runner]
                if not runs:
                    cells.append("—")
                    continue
                passed = sum(r["passed"] for r in runs)
                cells.append(
                    f"{passed}/{len(runs)} ({100 * passed / len(runs):.0f}%), {statistics.median(r['steps'] for r in runs):g}, "
                    f"{statistics.median(r['seconds'] for r in runs):.0f} s"
                )
            lines.append(f"| {category} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    go = commands.add_parser("run")
    go.add_argument("--runner", choices=("agent", "baseline"), required=True)
    go.add_argument("--label", default="", help="the column name in the report (default: the runner)")
    go.add_argument("--half", choices=(*HALVES, "all", "dev"), required=True, help="dev: the development tasks of bench/suite/dev.py, in neither half")
    go.add_argument("--phrasing", type=int, nargs="+", default=[0, 1])
    go.add_argument("--grammar", choices=("auto", "off"), default="auto", help="auto: as measured in bench/README.md (the app's default too)")
    go.add_argument("--only", nargs="*")
    go.add_argument("--out", required=True)
    show = commands.add_parser("report")
    show.add_argument("paths", nargs="+")
    args = parser.parse_args()
    if args.command == "run":
        run(args)
    else:
        print(report(args.paths))


if __name__ == "__main__":
    main()
