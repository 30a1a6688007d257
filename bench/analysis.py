"""Time to judge one command: parse (tree-sitter-bash), unwrap, safe list, path checks, rules.

Runs every command of the policy tests and the attack corpus through `Policy.evaluate` in all
three modes, after one warm-up pass, in a scratch project like the tests' (a `.env`, a link out,
a fake home). Reports median, p95 and max per evaluation in ms. Then the price of asking git
what a repository holds (`committed_secrets`): `git log -p` judged in a repository of
`--commits` commits, the first time (git lists the history's paths) and again (the answer is
kept until a ref, a reflog or the index changes).

    python bench/analysis.py [--rounds 5] [--commits 500]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mzagent_tui.agent.safety.approval import Policy  # noqa: E402
from tests.gate import test_gate_attacks as attacks  # noqa: E402
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


def history_repository(commits: int) -> Path:
    """A repository of `commits` commits of ten files each, made by `git fast-import` in one go."""
    root = Path(tempfile.mkdtemp()) / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    stream = []
    for n in range(commits):
        stream.append(f"commit refs/heads/main\ncommitter b <b@example.com> {1_700_000_000 + n} +0000\ndata 2\nc\n")
        for f in range(10):
            body = f"{n}-{f}\n"
            stream.append(f"M 644 inline src/m{n % 50}/f{f}.py\ndata {len(body)}\n{body}")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input="".join(stream), text=True, check=True)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=root, check=True)
    return root


def history_scan(commits: int, rounds: int) -> None:
    root = history_repository(commits)
    policy = Policy("auto-safe", standard_rules())
    start = time.perf_counter()
    policy.evaluate("git log -p", root)
    first = (time.perf_counter() - start) * 1000
    again: list[float] = []
    for _ in range(rounds * 20):
        start = time.perf_counter()
        policy.evaluate("git log -p", root)
        again.append((time.perf_counter() - start) * 1000)
    plain: list[float] = []
    for _ in range(rounds * 20):
        start = time.perf_counter()
        policy.evaluate("git log --oneline", root)
        plain.append((time.perf_counter() - start) * 1000)
    kept = statistics.median(again)
    print(f"git log -p in a repository of {commits} commits: first {first:.1f} ms (history listed), then median {kept:.3f} ms "
          f"(kept; {first / kept:.0f}x less); git log --oneline (no listing) median {statistics.median(plain):.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--commits", type=int, default=500)
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
    history_scan(args.commits, args.rounds)


if __name__ == "__main__":
    main()
