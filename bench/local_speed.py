"""How fast the bundled model runs here: load time, prompt and generation tokens per second.

    python bench/local_speed.py

Starts the local server, sends the agent's real system prompt plus a short task three times
(the first fills llama.cpp's prompt cache), and reads the token counts from the usage the
server reports. Needs the `local` extra.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import openai  # noqa: E402

from mzagent_tui.agent.local import LocalServer, model_path  # noqa: E402
from mzagent_tui.agent.prompt import render_system_prompt  # noqa: E402
from mzagent_tui.agent.tools.registry import ToolRegistry  # noqa: E402


def read_file(file_path: str) -> str:
    """Read a file."""
    return ""


def main() -> None:
    started = time.monotonic()
    server = LocalServer(model_path())
    server.launch()
    try:
        server.wait_ready()
        load = time.monotonic() - started
        client = openai.OpenAI(api_key="none", base_url=server.base_url)
        system = render_system_prompt(Path(tempfile.mkdtemp()), ToolRegistry([read_file]))
        runs = []
        for i in range(3):
            question = f"<question>Write a Python function that returns the {i + 2}th Fibonacci number.</question>"
            t0 = time.monotonic()
            reply = client.chat.completions.create(
                model="local", temperature=0, max_tokens=128,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
            )
            runs.append((time.monotonic() - t0, reply.usage.prompt_tokens, reply.usage.completion_tokens))
        first, rest = runs[0], runs[1:]
        print(f"load (start to first answer of /v1/models): {load:.1f} s")
        print(f"cold request: {first[1]} prompt + {first[2]} generated tokens in {first[0]:.1f} s")
        gen_rates = [completion / seconds for seconds, _, completion in rest]
        print(f"warm requests (system prompt cached): median {statistics.median(gen_rates):.1f} generated tokens/s end to end")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
