"""The agent's side of its MCP servers: started when the agent is made, their tools registered at
its first task (each server within its startup timeout), stopped with it."""

from __future__ import annotations

import atexit
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mzagent_tui.agent.mcp.config import McpServerConfig
from mzagent_tui.agent.mcp.hub import INSTALL_HINT, McpHub, mcp_available
from mzagent_tui.agent.mcp.tools import McpTool, RemoteTool
from mzagent_tui.agent.safety.sandbox import Sandbox
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.registry import ToolRegistry, ToolResult


class McpTools:
    def __init__(self, servers: Sequence[McpServerConfig], log_folder: Path, sandbox: Sandbox | None = None) -> None:
        self._hub: McpHub | None = None
        self._notices: list[str] = []
        self._pending = bool(servers)
        if servers and not mcp_available():
            self._notices.append(f"MCP servers are configured but the mcp package is missing; install it with {INSTALL_HINT}")
        elif servers:
            self._hub = McpHub(list(servers), log_folder, sandbox)
            atexit.register(self._hub.close)

    def register(self, tools: ToolRegistry, ctx: ToolContext) -> bool:
        """Add the started servers' tools (once); True when any tool was added."""
        if not self._pending:
            return False
        self._pending = False
        if self._hub is None:
            return False
        remote_tools, failures = self._hub.wait_started()
        for remote in remote_tools:
            tools.add_tool(McpTool(remote, lambda r, a: self._call(r, a, ctx), ctx).tool())
        servers = sorted({remote.server for remote in remote_tools})
        if servers:
            self._notices.append(f"MCP: {len(remote_tools)} tools from {', '.join(servers)}")
        self._notices.extend(failures)
        return bool(remote_tools)

    def _call(self, remote: RemoteTool, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        assert self._hub is not None
        return self._hub.call(remote, arguments, ctx.cancel)

    def take_notices(self) -> list[str]:
        """What the user should hear about the servers (said once)."""
        notices, self._notices = self._notices, []
        return notices

    def close(self) -> None:
        if self._hub is not None:
            self._hub.close()
