"""The bundled model server, measured against the raw engine in the same run.

    python bench/local_speed.py [--steps 20] [--sweep]

1. A 20-step session through our server (the settings `local.server_settings` chooses): each
   step sends the whole conversation so far (the agent's real system prompt, a task, then for
   every step the model's reply and an observation of ~150 tokens). Reports the server's RSS
   after every step (peak), and the time to first token of step 1 (cold) and of later steps
   (the server keeps the KV cache of the shared prefix).
2. Throughput: one cold prompt of the session's final size and 64 generated tokens, through the
   server and through `llama_cpp.Llama` called directly with the same settings, one after the
   other (a fresh nonce at the start of the prompt defeats every cache).
3. `--sweep`: cold prompt time for n_batch 256 / 512 / 1024 and flash attention off / on,
   called directly: the figures behind the chosen settings.
Needs the `local` extra and psutil.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import openai  # noqa: E402
import psutil  # noqa: E402

from mzagent_tui.agent.local import LocalServer, ServerSettings, model_path, server_settings  # noqa: E402
from mzagent_tui.agent.prompt import render_system_prompt  # noqa: E402
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
    """(time to first token, total time, prompt tokens, completion tokens, text). llama_cpp.server
    sends no usage when streaming: the prompt is counted by a second, non-streamed request of one
    token (its prefix is cached, so it costs almost nothing), the completion by its chunks."""
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


def direct(settings: ServerSettings, messages: list[dict[str, str]]) -> tuple[float, float, int]:
    """(time to first token, total time, generated tokens) from the engine called directly."""
    from llama_cpp import Llama

    from mzagent_tui.agent.llama_server import without_extra_buffers

    without_extra_buffers()  # as the server does (agent/llama_server.py)
    llama = Llama(
        str(model_path()), n_ctx=settings.context, n_threads=settings.threads, n_threads_batch=settings.threads,
        n_batch=settings.batch, n_ubatch=settings.batch, logits_all=settings.logits_all, flash_attn=settings.flash_attn,
        use_mmap=settings.mmap, use_mlock=False, verbose=False,
    )
    started = time.monotonic()
    first = None
    completion = 0
    for chunk in llama.create_chat_completion(messages=messages, temperature=0, max_tokens=GENERATE, stream=True):
        if chunk["choices"][0]["delta"].get("content"):
            first = first or time.monotonic() - started
            completion += 1
    total = time.monotonic() - started
    del llama
    return first or total, total, completion


def sweep(messages: list[dict[str, str]], base: ServerSettings, prompt: int) -> None:
    for flash in (False, True):
        for batch in (256, 512, 1024):
            ttft, _, _ = direct(dataclasses.replace(base, batch=batch, flash_attn=flash), cold(messages))
            print(f"sweep: n_batch {batch:4d}, flash attention {'on ' if flash else 'off'}: cold prompt of {prompt} tokens in {ttft:5.1f} s ({prompt / ttft:5.1f} tokens/s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    settings = server_settings()
    print(f"settings: {settings.describe()}", flush=True)
    started = time.monotonic()
    server = LocalServer(model_path(), settings)
    server.launch()
    try:
        server.wait_ready()
        print(f"load: {time.monotonic() - started:.1f} s", flush=True)
        assert server.process is not None
        client = openai.OpenAI(api_key="none", base_url=server.base_url, timeout=900)
        messages, rows, fifth = session(client, server.process.pid, args.steps)
        cached = [ttft for ttft, _, _ in rows[1:]]
        uncached = stream_once(client, cold(fifth), GENERATE)[0]
        print(f"peak server RSS over {args.steps} steps: {max(r for _, _, r in rows) / 2**20:.0f} MB")
        print(f"time to first token: cold step 1 {rows[0][0]:.1f} s; step 5 {rows[4][0]:.1f} s; later steps median {statistics.median(cached):.1f} s "
              f"(step 5 / step 1 = {rows[4][0] / rows[0][0]:.2f}); step 5's prompt sent cold: {uncached:.1f} s (cached / cold = {rows[4][0] / uncached:.2f})")
        ttft, total, prompt, completion, _ = stream_once(client, cold(messages), GENERATE)
        server_rates = (prompt / ttft, (completion - 1) / (total - ttft))
    finally:
        server.stop()
    ttft, total, completion = direct(settings, cold(messages))
    direct_rates = (prompt / ttft, (completion - 1) / (total - ttft))
    print(f"cold {prompt} prompt tokens, {GENERATE} generated: server {server_rates[0]:.1f} prompt t/s, {server_rates[1]:.1f} generated t/s; "
          f"direct {direct_rates[0]:.1f} / {direct_rates[1]:.1f}; ratio {server_rates[0] / direct_rates[0]:.2f} / {server_rates[1] / direct_rates[1]:.2f}")
    if args.sweep:
        sweep(messages[:8], settings, rows[3][1])


if __name__ == "__main__":
    main()
