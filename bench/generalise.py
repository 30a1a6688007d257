"""Does the agent finish tasks it was not tuned on? The suite, its fixed split, a runner, a report.

    python bench/generalise.py run --runner agent --half held-out --out bench/results/agent-held-out.jsonl
    python bench/generalise.py run --runner baseline --half held-out --out bench/results/baseline-held-out.jsonl
    python bench/generalise.py run --runner agent --grammar off --half held-out --out bench/results/agent-nogrammar-held-out.jsonl
    python bench/generalise.py run --suite realistic --runner agent --profile small --half held-out --out bench/results/realistic-small-held-out.jsonl
    python bench/generalise.py report bench/results/*.jsonl
    python bench/generalise.py ablate bench/results/agent-held-out.jsonl --control --out bench/results/ablation-held-out.jsonl
    python bench/generalise.py ablation-report bench/results/agent-held-out.jsonl bench/results/ablation-held-out.jsonl

Each task id hashes to a half: `tuning` (look at it while changing the agent) or `held-out`
(never look at its transcripts; only its number counts). Every (task, phrasing) runs in a fresh
temp folder, commands approved, bundled model at temperature 0. Results are appended as JSON
lines, so an interrupted run resumes where it stopped; each record counts the aids that acted
(aids/seam.py). `ablate` reruns, per aid, only the runs in which it acted, with it switched off.
Needs the `local` and `bench` extras.
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
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.realistic.task import RealisticTask  # noqa: E402
from bench.realistic.tasks import REALISTIC_TASKS  # noqa: E402
from bench.suite.dev import DEV_TASKS  # noqa: E402
from bench.suite.humaneval import humaneval_tasks  # noqa: E402
from bench.suite.tasks import TASKS, SuiteTask  # noqa: E402

HALVES = ("tuning", "held-out")
MAX_STEPS = 10
TIME_LIMIT = 300.0
"""Seconds a run may take, for both runners (`--time-limit`): a model that repeats itself at
1,024 tokens a step would otherwise hold the machine for most of an hour. On a shared machine a
wall-clock limit measures the load as much as the agent: the realistic runs use a longer one
(bench/README.md), so that only the model's steps end a run."""
SEED = 0
"""The first request's sampling seed (later ones count up from it), so the reply asked for at
temperature 0.7 after a format error is the same in every run: without it the same code changed
two HumanEval results between runs."""


def half_of(task_id: str) -> str:
    """The fixed split: the first byte of the id's SHA-256, even or odd."""
    return HALVES[hashlib.sha256(task_id.encode()).digest()[0] % 2]


Task = SuiteTask | RealisticTask
SUITES = ("suite", "realistic")
"""suite: the small tasks and the HumanEval slice (bench/suite); realistic: users' kind of work
(bench/realistic)."""


def all_tasks(suite: str = "suite") -> list[Task]:
    return list(REALISTIC_TASKS) if suite == "realistic" else TASKS + humaneval_tasks()


def _setup(task: Task, phrasing: int, parent: Path | None = None) -> Path:
    """A fresh project folder with the task's files, in a new folder in `parent` (the system's
    temp folder by default). It is named `project` in every run: the prompt names the project
    folder, and a random name made the same task's prompt differ from run to run."""
    root = Path(tempfile.mkdtemp(prefix="mzagent-suite-", dir=parent)) / "project"
    root.mkdir()
    for name, text in task.files_for(phrasing).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, newline="")
    for name in task.executables:
        (root / name).chmod(0o755)
    return root


def _run_agent(
    root: Path, prompt: str, base_url: str, grammar: str, disabled: list[str], fired: Counter[str], profile: str = "",
    time_limit: float = TIME_LIMIT,
) -> tuple[str | None, int, str]:
    """One task; every aid that acted is counted into `fired`."""
    from mzagent_tui.agent.assembly import assemble
    from mzagent_tui.agent.cancel import CancelToken
    from mzagent_tui.agent.config import Settings
    from mzagent_tui.agent.events import AidFired, Event
    from mzagent_tui.agent.run_config import RunConfig
    from mzagent_tui.agent.safety.approval import StaticApprover

    settings = Settings(
        provider="local", base_url=base_url, model="local", temperature=0.0, max_steps=MAX_STEPS,
        max_tokens=1024, command_timeout=30, grammar=grammar, seed=SEED, disable_aids=disabled, profile=profile,
        idle_timeout=max(120.0, time_limit / 2.5), max_step_wait=time_limit,
    )

    def count(event: Event) -> None:
        if isinstance(event, AidFired):
            fired[event.name] += 1

    agent = assemble(RunConfig(settings, root, environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}), StaticApprover(True), count)
    cancel = CancelToken()
    timer = threading.Timer(time_limit, cancel.cancel)
    timer.start()
    try:
        result = agent.run(prompt, cancel)
    finally:
        timer.cancel()
        agent.close()
        agent.session.close()
    return result.final_answer, result.steps, "time limit" if cancel.cancelled else result.reason.value


def _run_baseline(root: Path, prompt: str, base_url: str, time_limit: float = TIME_LIMIT) -> tuple[str | None, int, str]:
    from bench.baseline import Baseline

    result = Baseline(root, base_url, "local", max_steps=MAX_STEPS, time_limit=time_limit).run(prompt)
    return result.final_answer, result.steps, result.stop


@dataclass(frozen=True)
class Job:
    """One run to make: a task in one phrasing, the column it reports under, the aids switched off."""

    task: Task
    phrasing: int
    label: str
    disabled: tuple[str, ...] = ()


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def run(args: argparse.Namespace) -> None:
    pool = DEV_TASKS if args.half == "dev" else [t for t in all_tasks(args.suite) if args.half == "all" or half_of(t.id) == args.half]
    label = args.label or args.runner
    jobs = [
        Job(task, phrasing, label, tuple(args.disable_aid))
        for task in pool
        if not args.only or task.id in args.only
        for phrasing in args.phrasing
        if phrasing < len(task.phrasings)
    ]
    _run_jobs(jobs, Path(args.out), args)


AGAIN = "again"
"""The label of a control run: a run in which aids acted, again with every aid on. Where it
differs from the base run the model's own variation did it, not an aid: that is the noise an
aid's change is read against."""


def ablation_jobs(base: list[dict], aids: list[str], control: bool = False) -> list[Job]:
    """For each aid, the runs of `base` in which it acted, again with it switched off. A run in
    which an aid never acted is the same run without it (temperature 0, a fixed seed), so only
    these need running: an aid's whole effect on the half is in them. `control` adds each of
    those runs once more with nothing switched off."""
    tasks = {task.id: task for suite in SUITES for task in all_tasks(suite)}
    fired = [(name, record) for name in aids for record in base if record.get("aids", {}).get(name)]
    jobs = [Job(tasks[record["task"]], record["phrasing"], f"without {name}", (name,)) for name, record in fired]
    if not control:
        return jobs
    again = dict.fromkeys((record["task"], record["phrasing"]) for _, record in fired)
    return [Job(tasks[task], phrasing, AGAIN) for task, phrasing in again] + jobs  # first: a run cut short still knows the noise


def ablate(args: argparse.Namespace) -> None:
    base = _records(Path(args.base))
    names = args.aids or sorted({name for record in base for name in record.get("aids", {})})
    _run_jobs(ablation_jobs(base, names, args.control), Path(args.out), args)


def _judge(task: Task, root: Path, answer: str | None) -> tuple[bool, str | None]:
    """Passed or not, and why not where the checker says (the realistic suite's do)."""
    if isinstance(task, RealisticTask):
        why = task.verdict(root, answer)
        return why is None, why
    return task.check(root, answer), None


def _run_jobs(jobs: list[Job], out: Path, args: argparse.Namespace) -> None:
    from mzagent_tui.agent.model.local import LocalServer, model_path

    out.parent.mkdir(parents=True, exist_ok=True)
    done = {(r["task"], r["phrasing"], r["runner"]) for r in _records(out)}
    server = LocalServer(model_path())
    server.launch()
    try:
        server.wait_ready()
        for job in jobs:
            task, phrasing = job.task, job.phrasing
            if (task.id, phrasing, job.label) in done:
                continue
            root = _setup(task, phrasing)
            started = time.monotonic()
            fired: Counter[str] = Counter()
            try:
                if args.runner == "agent":
                    answer, steps, stop = _run_agent(
                        root, task.phrasings[phrasing], server.base_url, args.grammar, list(job.disabled), fired, args.profile,
                        args.time_limit,
                    )
                else:
                    answer, steps, stop = _run_baseline(root, task.phrasings[phrasing], server.base_url, args.time_limit)
            except Exception as exc:  # noqa: BLE001 - one broken run must not end the benchmark
                answer, steps, stop = None, 0, f"crash: {type(exc).__name__}: {exc}"
            seconds = time.monotonic() - started
            try:
                passed, why = _judge(task, root, answer)
            except Exception as exc:  # noqa: BLE001 - a checker that breaks on odd output counts as a fail, not a crash
                passed, why = False, f"the checker broke: {type(exc).__name__}"
            finally:
                shutil.rmtree(root.parent, ignore_errors=True)  # the session log keeps what the run did
            record = {
                "task": task.id, "category": task.category, "half": "dev" if args.half == "dev" else half_of(task.id), "phrasing": phrasing,
                "runner": job.label, "passed": passed, "steps": steps, "seconds": round(seconds, 1), "stop": stop,
                "disabled": list(job.disabled), "aids": dict(sorted(fired.items())),
            }
            if isinstance(task, RealisticTask):
                record |= {"profile": args.profile or "by the model", "why": why or ""}
            with out.open("a") as handle:
                handle.write(json.dumps(record) + "\n")
            print(f"{job.label}: {task.id} [{phrasing}] {'pass' if passed else 'FAIL'} {steps} steps {seconds:.0f} s {stop}", flush=True)
    finally:
        server.stop()


def ablation_report(base_path: str, paths: list[str]) -> str:
    """Per aid: the runs where it acted, passed with it on (the base run) and with it off."""
    base = {(r["task"], r["phrasing"]): r for r in _records(Path(base_path))}
    rows: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for path in paths:
        for record in _records(Path(path)):
            if record["runner"].startswith("without ") and (record["task"], record["phrasing"]) in base:
                rows[record["runner"].removeprefix("without ")].append((base[(record["task"], record["phrasing"])]["passed"], record["passed"]))
    again = [(base[(r["task"], r["phrasing"])]["passed"], r["passed"]) for path in paths for r in _records(Path(path))
             if r["runner"] == AGAIN and (r["task"], r["phrasing"]) in base]
    fired_in = Counter(name for record in base.values() for name in record.get("aids", {}))
    lines = ["| aid | runs it acted in | passed with it | passed without it | change |", "|---|---|---|---|---|"]
    for name in sorted(fired_in, key=lambda n: (-fired_in[n], n)):
        pairs = rows.get(name, [])
        if not pairs:
            lines.append(f"| `{name}` | {fired_in[name]} | — | not run | — |")
            continue
        on, off = sum(a for a, _ in pairs), sum(b for _, b in pairs)
        lines.append(f"| `{name}` | {fired_in[name]} | {on}/{len(pairs)} | {off}/{len(pairs)} | {off - on:+d} |")
    if again:
        flips = sum(a != b for a, b in again)
        lines.append(f"\nThe same runs again with every aid on: {sum(b for _, b in again)}/{len(again)} passed "
                     f"({sum(a for a, _ in again)}/{len(again)} in the base run), {flips} of {len(again)} came out differently.")
    return "\n".join(lines)


def report(paths: list[str]) -> str:
    """Per half and category: pass rate, median steps, median seconds, one column group per runner;
    "all runs both made" compares the runners on the same (task, phrasing) pairs only."""
    records = [record for path in paths for record in _records(Path(path))]
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
        lines.extend(_by_phrasing(mine, runners))
    return "\n".join(lines)


def _by_phrasing(records: list[dict], runners: list[str]) -> list[str]:
    """Per runner, the pass count of each phrasing and how many runs the time limit ended: a run
    cut short by a loaded machine is not the agent's failure, and the table alone hides it."""
    lines = [""]
    for runner in runners:
        runs = [r for r in records if r["runner"] == runner]
        counts = ", ".join(f"phrasing {phrasing}: {sum(r['passed'] for r in runs if r['phrasing'] == phrasing)}/{sum(r['phrasing'] == phrasing for r in runs)}"
                           for phrasing in sorted({r["phrasing"] for r in runs}))
        lines.append(f"- {runner}: {counts}; ended by the time limit: {sum(r['stop'] == 'time limit' for r in runs)} of {len(runs)}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    go = commands.add_parser("run")
    go.add_argument("--suite", choices=SUITES, default="suite", help="realistic: bench/realistic (users' kind of work)")
    go.add_argument("--runner", choices=("agent", "baseline"), required=True)
    go.add_argument("--label", default="", help="the column name in the report (default: the runner)")
    go.add_argument("--half", choices=(*HALVES, "all", "dev"), required=True, help="dev: the development tasks of bench/suite/dev.py, in neither half")
    go.add_argument("--phrasing", type=int, nargs="+", default=[0, 1])
    go.add_argument("--grammar", choices=("auto", "off"), default="auto", help="auto: as measured in bench/README.md (the app's default too)")
    go.add_argument("--profile", choices=("", "small", "full"), default="", help="what the model gets (docs/aids.md); empty: by the model (small for the bundled one)")
    go.add_argument("--only", nargs="*")
    go.add_argument("--disable-aid", action="append", default=[], metavar="NAME", help="switch an aid off (aids/seam.py)")
    go.add_argument("--time-limit", type=float, default=TIME_LIMIT, help="seconds per run (a guard against a model that never stops)")
    go.add_argument("--out", required=True)
    cut = commands.add_parser("ablate", help="rerun each run of a base file in which an aid acted, with that aid off")
    cut.add_argument("base", help="a `run --runner agent` results file (its records count the aids that acted)")
    cut.add_argument("--aids", nargs="*", help="these aids only (default: every aid that acted in the base runs)")
    cut.add_argument("--control", action="store_true", help="also run each of those runs again with every aid on (the noise)")
    cut.add_argument("--out", required=True)
    cut.set_defaults(runner="agent", grammar="auto", half="held-out", profile="", time_limit=TIME_LIMIT)
    show = commands.add_parser("report")
    show.add_argument("paths", nargs="+")
    table = commands.add_parser("ablation-report")
    table.add_argument("base")
    table.add_argument("paths", nargs="+")
    args = parser.parse_args()
    if args.command == "run":
        run(args)
    elif args.command == "ablate":
        ablate(args)
    elif args.command == "ablation-report":
        print(ablation_report(args.base, args.paths))
    else:
        print(report(args.paths))


if __name__ == "__main__":
    main()
