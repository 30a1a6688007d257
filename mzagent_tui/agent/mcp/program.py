"""The program a started MCP server runs, and its PATH: from trusted places only.

Servers run outside the sandbox, as the user. With an activated `.venv` (or `./bin`,
`node_modules/.bin`, `.` on PATH), `uvx` or `npx` could be a copy the model wrote there, so the
server's program and everything it starts by name are looked up on the trusted PATH
(safety/trusted_path.py). A server whose program is in the project anyway (`command =
"/proj/.venv/bin/server"`) is not started: servers cannot be confined yet, and unconfined it
would run whatever the model last wrote there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.mcp.config import McpServerConfig
from mzagent_tui.agent.safety import trusted_path


@dataclass(frozen=True)
class ServerProgram:
    """The absolute program and the PATH to start a server with, or why it is not started."""

    program: str = ""
    path: str = ""
    refused: str = ""


def server_program(config: McpServerConfig) -> ServerProgram:
    """Where `config.command` is, looked up from the server's working folder (its `cwd`, else the
    home) on the PATH its `env` names, else ours, less every untrusted folder."""
    cwd = Path(config.cwd or Path.home())
    user_path = config.env.get("PATH", os.environ.get("PATH", os.defpath))
    trusted = trusted_path.trusted_path(user_path)
    command = config.command
    found = trusted_path.found_in_untrusted(command, trusted, cwd)
    if found is not None:
        return ServerProgram(refused=f"is not started: its program {command} is {found}, in the project or a folder commands can write, and MCP servers run outside the sandbox")
    program = os.path.join(cwd, command) if "/" in command else trusted_path.which(command, user_path)
    if program is None:
        elsewhere = trusted_path.found_in_untrusted(command, user_path, cwd)
        where = f" (PATH finds it only at {elsewhere}, which the model can write)" if elsewhere else ""
        return ServerProgram(refused=f"is not started: {command} is not found on PATH outside the project and temp folders{where}")
    return ServerProgram(program, trusted)
