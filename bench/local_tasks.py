"""End-to-end tasks for the bundled local model: each in a fresh temp folder, with a checker.

    python bench/local_tasks.py [--only NAME ...] [--max-steps 10]

Starts the local model server once (provider `local`, temperature 0), runs every task as a new
conversation with commands approved, and prints a Markdown table of outcomes. Needs the
`local` extra. The CI test `tests/test_local_model.py` runs a few of these tasks.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mzagent_tui.agent.assembly import assemble  # noqa: E402
from mzagent_tui.agent.config import Settings  # noqa: E402
from mzagent_tui.agent.events import StopReason  # noqa: E402
from mzagent_tui.agent.loop import RunResult  # noqa: E402
from mzagent_tui.agent.model.local import LocalServer, model_path  # noqa: E402
from mzagent_tui.agent.run_config import RunConfig  # noqa: E402
from mzagent_tui.agent.safety.approval import StaticApprover  # noqa: E402


@dataclass
class Task:
    name: str
    prompt: str
    setup: Callable[[Path], None]
    check: Callable[[Path, RunResult], bool]


def _write(files: dict[str, str]) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        for name, text in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    return setup


def _read(root: Path, name: str) -> str:
    path = root / name
    return path.read_text() if path.is_file() else ""


def _answer_has(text: str) -> Callable[[Path, RunResult], bool]:
    return lambda root, result: result.final_answer is not None and text in result.final_answer


def _python_check(root: Path, module: str, expression: str) -> bool:
    import subprocess

    code = f"import sys; sys.path.insert(0, {str(root)!r}); from {module} import *; print({expression})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    return done.stdout.strip() == "True"


def _json_check(root: Path) -> bool:
    try:
        data = json.loads(_read(root, "config.json"))
    except ValueError:
        return False
    return data == {"name": "demo", "version": 2}


TASKS = [
    Task("create-file", "Create a file named hello.txt containing exactly the text: Hello, world!", _write({}),
         lambda root, r: _read(root, "hello.txt").strip() == "Hello, world!"),
    Task("fix-bug", "The function add in calc.py should return the sum of a and b, but it is wrong. Fix calc.py.",
         _write({"calc.py": "def add(a, b):\n    return a - b\n"}),
         lambda root, r: _python_check(root, "calc", "add(2, 3) == 5")),
    Task("run-and-report", "Run script.py with python3 and tell me the number it prints.",
         _write({"script.py": "print(6 * 7)\n"}), _answer_has("42")),
    Task("count-lines", "How many lines does data.txt have?",
         _write({"data.txt": "".join(f"row {i}\n" for i in range(17))}), _answer_has("17")),
    Task("write-json", 'Create config.json containing a JSON object with "name" set to "demo" and "version" set to the number 2.',
         _write({}), lambda root, r: _json_check(root)),
    Task("make-folder", "Create a folder named build with an empty file named .keep inside it.",
         _write({}), lambda root, r: (root / "build" / ".keep").is_file()),
    Task("read-version", "What version number is written in setup.cfg?",
         _write({"setup.cfg": "[metadata]\nname = demo\nversion = 3.1.4\n"}), _answer_has("3.1.4")),
    Task("append-line", "notes.txt has one line. Add a second line with the word second, keeping the first line.",
         _write({"notes.txt": "first\n"}),
         lambda root, r: _read(root, "notes.txt").split() == ["first", "second"]),
    Task("new-function", "Create math_utils.py with a function square(x) that returns x * x.",
         _write({}), lambda root, r: _python_check(root, "math_utils", "square(4) == 16")),
    Task("count-files", "How many .py files are in the src folder?",
         _write({f"src/m{i}.py": "" for i in range(5)} | {"src/readme.txt": ""}), _answer_has("5")),
    Task("rename", "Rename old.txt to new.txt.", _write({"old.txt": "keep me\n"}),
         lambda root, r: _read(root, "new.txt") == "keep me\n" and not (root / "old.txt").exists()),
    Task("uppercase", "Create upper.txt with the contents of words.txt in uppercase letters.",
         _write({"words.txt": "apple\nbanana\n"}), lambda root, r: _read(root, "upper.txt").split() == ["APPLE", "BANANA"]),
]


def run_task(task: Task, base_url: str, max_steps: int) -> tuple[bool, RunResult, float]:
    root = Path(tempfile.mkdtemp(prefix=f"mzagent-{task.name}-"))
    task.setup(root)
    settings = Settings(provider="local", base_url=base_url, model="local", temperature=0.0, max_steps=max_steps, max_tokens=1024, command_timeout=30)
    agent = assemble(RunConfig(settings, root, environ={"PATH": "/usr/bin:/bin"}), StaticApprover(True), lambda event: None)
    started = time.monotonic()
    result = agent.run(task.prompt)
    agent.session.close()
    return task.check(root, result), result, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--max-steps", type=int, default=10)
    args = parser.parse_args()
    server = LocalServer(model_path())
    server.launch()
    try:
        server.wait_ready()
        rows = []
        passed = 0
        tasks = [t for t in TASKS if args.only is None or t.name in args.only]
        for task in tasks:
            ok, result, seconds = run_task(task, server.base_url, args.max_steps)
            passed += ok
            stop = "final answer" if result.reason is StopReason.FINAL_ANSWER else result.reason.value
            rows.append(f"| {task.name} | {'pass' if ok else 'fail'} | {result.steps} | {stop} | {seconds:.0f} s |")
            print(rows[-1], flush=True)
        print("\n| task | result | steps | ended by | time |\n|---|---|---|---|---|")
        print("\n".join(rows))
        print(f"\n{passed}/{len(tasks)} passed")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
