"""Time from a task to its first streamed update: `mzagent acp` against `mzagent run --json`, same run.

Both front-ends get the same scripted reply (a thought streamed in 7-character chunks, then a
final answer) from the scripted server on 127.0.0.1.

- ACP: a running `mzagent acp`, a new session per task (so each is a session's first task, as
  in the CLI); from sending `session/prompt` to the first `agent_thought_chunk` notification on
  its stdout, and to the prompt's response.
- CLI: `mzagent run --json` per task; from the `task_started` line to the first `text_delta`
  line, and to the process's exit (start-up included), for the same reply.

Medians of N tasks each and their ratio.

    python bench/acp_first_update.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.scripted_server import Reply, ScriptedServer  # noqa: E402

REPLY = "<thought>I read the task and will answer directly, since no file is needed.</thought><final_answer>4</final_answer>"


def environment(server: ScriptedServer, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MZAGENT_")}
    env.update({
        "MZAGENT_PROVIDER": "custom", "MZAGENT_BASE_URL": server.base_url, "MZAGENT_MODEL": "scripted",
        "MZAGENT_API_KEY": "sk-bench-1234567890", "MZAGENT_SANDBOX": "off",
        "XDG_CONFIG_HOME": str(home / "config"), "XDG_STATE_HOME": str(home / "state"),
    })
    return env


def acp_times(server: ScriptedServer, project: Path, env: dict[str, str], runs: int) -> tuple[list[float], list[float]]:
    process = subprocess.Popen([sys.executable, "-m", "mzagent_tui", "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=project)

    def send(message: dict) -> None:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()

    def receive() -> dict:
        return json.loads(process.stdout.readline())

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    receive()
    first, whole = [], []
    for run in range(runs):
        send({"jsonrpc": "2.0", "id": 1000 + run, "method": "session/new", "params": {"cwd": str(project), "mcpServers": []}})
        session = receive()["result"]["sessionId"]
        server.script(Reply(REPLY))
        began = time.perf_counter()
        send({"jsonrpc": "2.0", "id": 10 + run, "method": "session/prompt", "params": {"sessionId": session, "prompt": [{"type": "text", "text": "what is 2+2?"}]}})
        seen_first = None
        while True:
            message = receive()
            update = message.get("params", {}).get("update", {})
            if seen_first is None and update.get("sessionUpdate") == "agent_thought_chunk":
                seen_first = time.perf_counter() - began
            if message.get("id") == 10 + run:
                whole.append(time.perf_counter() - began)
                break
        first.append(seen_first if seen_first is not None else float("nan"))
    process.stdin.close()
    process.wait(30)
    return first, whole


def cli_times(server: ScriptedServer, project: Path, env: dict[str, str], runs: int) -> tuple[list[float], list[float]]:
    first, whole = [], []
    for _ in range(runs):
        server.script(Reply(REPLY))
        began = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "mzagent_tui", "run", "--json", "--no", "--project", str(project), "what is 2+2?"], stdout=subprocess.PIPE, text=True, env=env)
        task_started = delta = None
        for line in process.stdout:
            kind = json.loads(line)["type"]
            now = time.perf_counter()
            if kind == "task_started" and task_started is None:
                task_started = now
            if kind == "text_delta" and delta is None:
                delta = now
        process.wait(30)
        whole.append(time.perf_counter() - began)
        first.append(delta - task_started if delta and task_started else float("nan"))
    return first, whole


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    with ScriptedServer() as server, tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        project.mkdir()
        env = environment(server, home)
        acp_first, acp_whole = acp_times(server, project, env, runs)
        cli_first, cli_whole = cli_times(server, project, env, runs)
    rows = [
        ("ACP: session/prompt → first thought chunk", statistics.median(acp_first)),
        ("CLI: task_started → first text delta", statistics.median(cli_first)),
        ("ACP: session/prompt → response", statistics.median(acp_whole)),
        ("CLI: process start → exit (start-up included)", statistics.median(cli_whole)),
    ]
    for label, value in rows:
        print(f"{label:<48} {value * 1000:8.1f} ms")
    print(f"ratio first update, ACP / CLI: {rows[0][1] / rows[1][1]:.2f}")
    print(f"ratio whole task, ACP / CLI:   {rows[2][1] / rows[3][1]:.2f}")


if __name__ == "__main__":
    main()
