"""The plain baseline: a minimal ReAct loop with the same XML reply format and none of the aids.

No format repair, no reminders, no hints in observations, no grammar, no snapshots: the model's
reply is matched with one regex, the call is read with `ast`, the tool runs, its raw result
goes back. What the real agent adds is measured against this (bench/generalise.py).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from string import Template

import openai

PROMPT = Template(r"""You are a coding agent working inside a project folder. Solve the user's task step by step.

Every reply has a <thought>...</thought> with your reasoning, then EITHER exactly one tool call
<action>tool_name("argument", "argument")</action>
OR, when the task is finished, <final_answer>your answer</final_answer>.
After an <action>, stop and wait for the <observation>. Arguments are Python string literals.

Example:
<question>Create hello.py that prints Hello.</question>
<thought>I will write the file.</thought>
<action>write_to_file("hello.py", "print(\"Hello\")\n")</action>
<observation>ok</observation>
<thought>Done.</thought>
<final_answer>I created hello.py.</final_answer>

Tools:
- read_file(file_path): the text of a file in the project.
- write_to_file(file_path, content): write a file (replacing it).
- run_terminal_command(command): run a shell command in the project folder; returns its output.

Project folder: $root
Files: $files
""")
ACTION = re.compile(r"<action>(.*?)</action>", re.DOTALL)
FINAL = re.compile(r"<final_answer>(.*?)</final_answer>", re.DOTALL)


@dataclass
class BaselineResult:
    final_answer: str | None
    steps: int
    stop: str


class Baseline:
    def __init__(self, root: Path, base_url: str, model: str, max_steps: int = 10, max_tokens: int = 1024, time_limit: float = 300.0) -> None:
        self.root = root
        self.client = openai.OpenAI(base_url=base_url, api_key="none", max_retries=0, timeout=600)
        self.model = model
        self.max_steps = max_steps
        self.max_tokens = max_tokens
        self.time_limit = time_limit

    def read_file(self, file_path: str) -> str:
        return (self.root / file_path).read_text()

    def write_to_file(self, file_path: str, content: str) -> str:
        path = self.root / file_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        return "ok"

    def run_terminal_command(self, command: str) -> str:
        done = subprocess.run(
            command, shell=True, cwd=self.root, capture_output=True, text=True, timeout=30,
            stdin=subprocess.DEVNULL, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
        return (done.stdout + done.stderr)[-5000:] or "(no output)"

    def call(self, action: str) -> str:
        try:
            node = ast.parse(action.strip(), mode="eval").body
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                return "error: not a tool call"
            tool = {"read_file": self.read_file, "write_to_file": self.write_to_file, "run_terminal_command": self.run_terminal_command}.get(node.func.id)
            if tool is None:
                return f"error: no tool {node.func.id}"
            args = [ast.literal_eval(arg) for arg in node.args]
            kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
            return str(tool(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - the baseline reports every failure as text
            return f"error: {exc}"

    def run(self, task: str) -> BaselineResult:
        files = ", ".join(sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*") if p.is_file())) or "(none)"
        messages = [
            {"role": "system", "content": PROMPT.substitute(root=self.root, files=files)},
            {"role": "user", "content": f"<question>{task}</question>"},
        ]
        deadline = time.monotonic() + self.time_limit
        for step in range(1, self.max_steps + 1):
            stream = self.client.chat.completions.create(
                model=self.model, messages=messages, temperature=0.0, max_tokens=self.max_tokens, stop=["<observation>"], stream=True,
            )
            text = ""
            for chunk in stream:
                if chunk.choices:
                    text += chunk.choices[0].delta.content or ""
                if time.monotonic() > deadline:
                    stream.close()
                    return BaselineResult(None, step, "time limit")
            messages.append({"role": "assistant", "content": text})
            action = ACTION.search(text)
            final = FINAL.search(text)
            if final and not action:
                return BaselineResult(final.group(1).strip(), step, "final answer")
            if action is None:
                messages.append({"role": "user", "content": "<observation>error: no action or final answer</observation>"})
                continue
            messages.append({"role": "user", "content": f"<observation>{self.call(action.group(1))}</observation>"})
        return BaselineResult(None, self.max_steps, "max steps")
