"""Time to judge one command: parse (tree-sitter-bash), unwrap, safe list, path checks, rules.

Runs every command of the policy tests and the attack corpus through `Policy.evaluate` in all
three modes, after one warm-up pass, in a scratch project like the tests' (a `.env`, a link out,
a fake home). Reports median, p95 and max per evaluation in ms.

    python bench/analysis.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mzagent_tui.agent.approval import Policy  # noqa: E402
from tests import test_gate_attacks as attacks  # noqa: E402
from tests.test_policy import TABLE, standard_rules  # noqa: E402


def commands() -> list[str]:
    corpus = [row[0] for row in TABLE]
    for family in (attacks.WRAPPED_SHELL, attacks.TOKENIZER, attacks.SAFE_LIST_OPTIONS, attacks.ENVIRONMENT, attacks.READS, attacks.FOLDER_READS, attacks.DENY_BYPASS, attacks.RUNNERS, attacks.STILL_ALLOWED):
        corpus.extend(family)
    return corpus


def scratch_project() -> Path:
    root, home = attacks.attack_project(Path(tempfile.mkdtemp()))
    os.environ["HOME"] = str(home)
    return root


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    root = scratch_project()
    policies = [Policy(mode, standard_rules()) for mode in ("ask", "auto-safe", "yolo")]
    corpus = commands()
    for command in corpus:
        policies[0].evaluate(command, root)
    times: list[float] = []
    for _ in range(args.rounds):
        for command in corpus:
            for policy in policies:
                start = time.perf_counter()
                policy.evaluate(command, root)
                times.append((time.perf_counter() - start) * 1000)
    times.sort()
    p95 = times[int(len(times) * 0.95)]
    print(f"{len(corpus)} commands x 3 modes x {args.rounds} rounds = {len(times)} evaluations")
    print(f"median {statistics.median(times):.3f} ms, p95 {p95:.3f} ms, max {times[-1]:.3f} ms")


if __name__ == "__main__":
    main()
