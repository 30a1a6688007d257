"""Which MCP servers to start: `[mcp_servers.NAME]` tables in the user config, with Codex's keys.

Read only from the user's own config file (or handed over by an ACP client), never from the
project folder: a cloned repository must not be able to start a program.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mzagent_tui.agent.config import ConfigError, user_config_path

STARTUP_TIMEOUT = 10.0
TOOL_TIMEOUT = 60.0
_NAME = re.compile(r"[A-Za-z0-9_-]+")
_KEYS = {"command", "args", "env", "cwd", "enabled_tools", "startup_timeout_sec", "tool_timeout_sec", "enabled"}


@dataclass(frozen=True)
class McpServerConfig:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    """Extra variables for the server, over a minimal environment (no secrets of the user's)."""
    cwd: str = ""
    """Working folder; empty: the project."""
    enabled_tools: tuple[str, ...] | None = None
    """Only these tools (None: all)."""
    startup_timeout: float = STARTUP_TIMEOUT
    tool_timeout: float = TOOL_TIMEOUT


def load_mcp_servers(path: Path | None = None) -> list[McpServerConfig]:
    """The enabled `[mcp_servers.NAME]` tables of the user config; ConfigError on a bad entry."""
    path = path or user_config_path()
    if not path.is_file():
        return []
    try:
        with path.open("rb") as handle:
            tables = tomllib.load(handle).get("mcp_servers", {})
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if not isinstance(tables, dict):
        raise ConfigError(f"mcp_servers in {path} must be tables: [mcp_servers.NAME]")
    servers = []
    for name, table in tables.items():
        server = server_from_table(name, table, f"[mcp_servers.{name}] in {path}")
        if server is not None:
            servers.append(server)
    return servers


def server_from_table(name: str, table: Any, where: str) -> McpServerConfig | None:
    """One server from its table; None when `enabled = false`."""
    if not _NAME.fullmatch(name):
        raise ConfigError(f"{where}: a server name may hold only letters, digits, '_' and '-'")
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table with at least `command`")
    unknown = set(table) - _KEYS
    if unknown:
        raise ConfigError(f"{where} has unknown keys: {', '.join(sorted(unknown))} (known: {', '.join(sorted(_KEYS))})")
    if table.get("enabled", True) is False:
        return None
    command = table.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{where} needs `command`, the program that starts the server")
    args = table.get("args", [])
    env = table.get("env", {})
    tools = table.get("enabled_tools")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{where}: `args` must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ConfigError(f"{where}: `env` must be a table of strings")
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)):
        raise ConfigError(f"{where}: `enabled_tools` must be a list of tool names")
    cwd = table.get("cwd", "")
    if not isinstance(cwd, str):
        raise ConfigError(f"{where}: `cwd` must be a folder path")
    return McpServerConfig(
        name=name,
        command=command,
        args=tuple(args),
        env=dict(env),
        cwd=cwd,
        enabled_tools=None if tools is None else tuple(tools),
        startup_timeout=_seconds(table, "startup_timeout_sec", STARTUP_TIMEOUT, where),
        tool_timeout=_seconds(table, "tool_timeout_sec", TOOL_TIMEOUT, where),
    )


def _seconds(table: dict[str, Any], key: str, default: float, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{where}: `{key}` must be a positive number of seconds")
    return float(value)
