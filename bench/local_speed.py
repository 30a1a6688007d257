"""The bundled model's two engines, measured side by side in one run.

    python bench/local_speed.py [--steps 20] [--compare PYTHON]

For each engine: a 20-step session (the agent's real system prompt, a task, then for every step
the model's reply and an observation of ~150 tokens, each step sending the whole conversation),
reporting the server's peak RSS, the time to first token of step 1 (cold) and of later steps
(the server keeps the shared prefix's KV cache), step 5's prompt sent cold for comparison; then
one cold prompt of the session's final size with 64 generated tokens for prompt and generation
speed (a fresh nonce at the start of the prompt defeats every cache).

The prebuilt engine is xllamacpp's llama-server (the `local` extra). `--compare PYTHON` names the
interpreter of a virtual environment holding the compiled one (`pip install
'llama-cpp-python[server]==0.3.36'`, a compile), started the way the app starts it, with the
same settings. Needs the `local` extra and psutil.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import openai  # noqa: E402
import psutil  # noqa: E402

from mzagent_tui.agent.model.local import LocalServer, ServerSettings, free_port, model_path, server_settings  # noqa: E402
from mzagent_tui.agent.model.prompt import render_system_prompt  # noqa: E402
from mzagent_tui.agent.tools.registry import ToolRegistry  # noqa: E402

OBSERVATION = "<observation>" + "\n".join(f"line {i}: value = compute(item_{i}, factor={i * 3})" for i in range(12)) + "</observation>"
GENERATE = 64


def read_file(file_path: str) -> str:
    """Read a file."""
    return ""


def rss(pid: int) -> int:
    process = psutil.Process(pid)
    return process.memory_info().rss + sum(child.memory_info().rss for child in process.children(recursive=True))


def stream_once(client: openai.OpenAI, messages: list[dict[str, str]], max_tokens: int) -> tuple[float, float, int, int, str]:
    """(time to first token, total time, prompt tokens, completion tokens, text). Usage is not
    sent when streaming by every engine: the prompt is counted by a second, non-streamed request
    of one token (its prefix is cached, so it costs almost nothing), the completion by its chunks."""
    started = time.monotonic()
    first = None
    text: list[str] = []
    for chunk in client.chat.completions.create(model="local", temperature=0, max_tokens=max_tokens, messages=messages, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            if first is None:
                first = time.monotonic() - started
            text.append(chunk.choices[0].delta.content)
    total = time.monotonic() - started
    counted = client.chat.completions.create(model="local", temperature=0, max_tokens=1, messages=messages)
    assert counted.usage is not None
    return first or total, total, counted.usage.prompt_tokens, len(text), "".join(text)


def session(client: openai.OpenAI, pid: int, steps: int) -> tuple[list[dict[str, str]], list[tuple[float, int, int]], list[dict[str, str]]]:
    """The conversation after `steps` steps, (first-token time, prompt tokens, RSS) per step,
    and the conversation as step 5 sent it."""
    system = render_system_prompt(Path(tempfile.mkdtemp()), ToolRegistry([read_file]))
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "<question>Read config.py and explain what compute() does.</question>"}]
    rows = []
    fifth: list[dict[str, str]] = []
    for step in range(1, steps + 1):
        if step == 5:
            fifth = list(messages)
        ttft, _, prompt, _, text = stream_once(client, messages, GENERATE)
        rows.append((ttft, prompt, rss(pid)))
        print(f"step {step:2d}: prompt {prompt:5d} tokens, first token after {ttft:5.1f} s, server RSS {rss(pid) / 2**20:6.0f} MB", flush=True)
        messages += [{"role": "assistant", "content": text or "<thought>next</thought>"}, {"role": "user", "content": OBSERVATION}]
    return messages, rows, fifth


def cold(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    fresh = [dict(m) for m in messages]
    fresh[0]["content"] = f"[{uuid.uuid4()}]\n" + fresh[0]["content"]
    return fresh


@dataclass
class Measured:
    name: str
    load: float
    rows: list[tuple[float, int, int]]
    fifth_cold: float
    prompt_rate: float
    generate_rate: float

    def line(self) -> str:
        cached = statistics.median(ttft for ttft, _, _ in self.rows[1:])
        return (
            f"{self.name}: load {self.load:.1f} s; peak RSS {max(r for _, _, r in self.rows) / 2**20:.0f} MB; "
            f"prompt {self.prompt_rate:.1f} t/s, generated {self.generate_rate:.1f} t/s; first token: step 1 (cold) "
            f"{self.rows[0][0]:.1f} s, later steps median {cached:.2f} s, step 5 {self.rows[4][0]:.2f} s vs the same "
            f"prompt cold {self.fifth_cold:.1f} s (cached / cold = {self.rows[4][0] / self.fifth_cold:.2f})"
        )


ROOT = Path(__file__).resolve().parents[1]


def compiled_engine(python: str, settings: ServerSettings, port: int) -> subprocess.Popen[bytes]:
    """The compiled engine as the app starts it (`llama_server --engine compiled`), run by the
    interpreter that has llama-cpp-python, with this checkout on its path."""
    return subprocess.Popen([
        python, "-m", "mzagent_tui.agent.model.llama_server", "--engine", "compiled", "--model", str(model_path()),
        "--alias", "local", "--port", str(port), *settings.arguments(),
    ], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})


def measure(name: str, base_url: str, pid: int, started: float, steps: int) -> Measured:
    client = openai.OpenAI(api_key="none", base_url=base_url, timeout=900)
    while True:
        try:
            client.models.list()
            break
        except (openai.APIConnectionError, openai.InternalServerError):  # not listening yet, or 503 while loading
            time.sleep(0.25)
    load = time.monotonic() - started
    messages, rows, fifth = session(client, pid, steps)
    fifth_cold = stream_once(client, cold(fifth), GENERATE)[0]
    ttft, total, prompt, completion, _ = stream_once(client, cold(messages), GENERATE)
    return Measured(name, load, rows, fifth_cold, prompt / ttft, (completion - 1) / (total - ttft))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--compare", help="the Python of a virtual environment with llama-cpp-python[server]")
    args = parser.parse_args()
    settings = server_settings()
    print(f"settings: {settings.describe()}", flush=True)
    results = []
    started = time.monotonic()
    server = LocalServer(model_path(), settings, engine="prebuilt")
    server.launch()
    try:
        assert server.process is not None
        results.append(measure("prebuilt (xllamacpp's llama-server)", server.base_url, server.process.pid, started, args.steps))
    finally:
        server.stop()
    if args.compare:
        port = free_port()
        started = time.monotonic()
        process = compiled_engine(args.compare, settings, port)
        try:
            results.append(measure("compiled (llama-cpp-python 0.3.36)", f"http://127.0.0.1:{port}/v1", process.pid, started, args.steps))
        finally:
            process.terminate()
            process.wait(10)
    for result in results:
        print(result.line())
    if len(results) == 2:
        new, old = results
        print(f"prebuilt / compiled: prompt {new.prompt_rate / old.prompt_rate:.2f}x, generated {new.generate_rate / old.generate_rate:.2f}x, "
              f"peak RSS {max(r for *_, r in new.rows) / max(r for *_, r in old.rows):.2f}x")


if __name__ == "__main__":
    main()
