"""`python -m bench.realistic validate` checks every checker (see validate.py); `list` shows the
tasks with their half. Running the agent on them is generalise.py's `run --suite realistic`."""

from __future__ import annotations

import argparse
import sys
import time

from bench.generalise import half_of
from bench.realistic.tasks import REALISTIC_TASKS
from bench.realistic.validate import validate


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.realistic")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("validate", help="every checker against its reference, doing nothing, and each near miss")
    check.add_argument("--only", nargs="*", help="these task ids only")
    check.add_argument("--verbose", action="store_true", help="every case with the checker's reason, not only the wrong ones")
    commands.add_parser("list", help="the tasks, their category and half")
    args = parser.parse_args()
    if args.command == "list":
        for task in REALISTIC_TASKS:
            print(f"{half_of(task.id):<9} {task.category:<20} {task.id}")
        return 0
    tasks = [task for task in REALISTIC_TASKS if not args.only or task.id in args.only]
    started = time.monotonic()
    outcomes = validate(tasks)
    wrong = [outcome for outcome in outcomes if not outcome.right]
    for outcome in outcomes if args.verbose else wrong:
        mark = "ok   " if outcome.right else "WRONG"
        print(f"{mark} {outcome.task}: {outcome.case}: {outcome.verdict or 'passed'}")
    print(f"{len(tasks)} tasks, {len(outcomes)} cases, {len(wrong)} wrong, {time.monotonic() - started:.1f} s")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
