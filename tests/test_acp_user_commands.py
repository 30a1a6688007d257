"""`!command` as an ACP prompt: a tool call of its own, run without a permission request or a model."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from acp import PROTOCOL_VERSION, text_block
from acp.schema import ToolCallProgress, ToolCallStart
from acp.stdio import spawn_agent_process

from tests.test_acp import RecordingClient, settle

CHECKOUT = str(Path(__file__).resolve().parent.parent)


async def test_a_bang_prompt_runs_as_a_tool_call_without_asking(endpoint, project: Path, tmp_path: Path) -> None:
    client = RecordingClient()
    env = {**os.environ, "PYTHONPATH": CHECKOUT}  # this checkout, from a folder that is not it
    async with spawn_agent_process(client, sys.executable, "-m", "mzagent_tui", "acp", env=env, cwd=tmp_path) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(project))
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("!echo from-acp > out.txt; cat out.txt")])
        await settle(client)
    assert response.stop_reason == "end_turn"
    assert (project / "out.txt").read_text() == "from-acp\n"
    assert client.permissions == [] and endpoint.requests == []
    [start] = client.of(ToolCallStart)
    assert start.kind == "execute" and "echo from-acp" in start.title
    done = client.of(ToolCallProgress)[-1]
    assert done.status == "completed" and done.tool_call_id == start.tool_call_id and "from-acp" in done.raw_output["output"]
    assert done.raw_output["exit_code"] == 0
