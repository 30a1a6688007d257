"""Which MCP servers to start: `[mcp_servers.NAME]` tables in the user config, with Codex's keys.

Read only from the user's own config file (or handed over by an ACP client), never from the
project folder: a cloned repository must not be able to start a program.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mzagent_tui.agent.config import ConfigError, user_config_path

STARTUP_TIMEOUT = 10.0
TOOL_TIMEOUT = 60.0
_NAME = re.compile(r"[A-Za-z0-9_-]+")
_KEYS = {"command", "args", "env", "cwd", "url", "bearer_token_env_var", "http_headers", "enabled_tools", "startup_timeout_sec", "tool_timeout_sec", "enabled"}
_STDIO_KEYS = {"command", "args", "env", "cwd"}
_HTTP_KEYS = {"url", "bearer_token_env_var", "http_headers"}


@dataclass(frozen=True)
class McpServerConfig:
    """A server we start (`command`) or one already running that we reach over streamable HTTP (`url`)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    """Extra variables for the server, over a minimal environment (no secrets of the user's)."""
    cwd: str = ""
    """Working folder; empty: the home (see hub.py: not the project)."""
    enabled_tools: tuple[str, ...] | None = None
    """Only these tools (None: all)."""
    startup_timeout: float = STARTUP_TIMEOUT
    tool_timeout: float = TOOL_TIMEOUT
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    """HTTP headers sent with every request (a bearer token read from the environment is one)."""


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


def server_from_table(name: str, table: Any, where: str, environ: Mapping[str, str] | None = None) -> McpServerConfig | None:
    """One server from its table; None when `enabled = false`. `environ` (default: ours) holds
    the variable `bearer_token_env_var` names."""
    environ = os.environ if environ is None else environ
    if not _NAME.fullmatch(name):
        raise ConfigError(f"{where}: a server name may hold only letters, digits, '_' and '-'")
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table with `command` or `url`")
    unknown = set(table) - _KEYS
    if unknown:
        raise ConfigError(f"{where} has unknown keys: {', '.join(sorted(unknown))} (known: {', '.join(sorted(_KEYS))})")
    if table.get("enabled", True) is False:
        return None
    tools = table.get("enabled_tools")
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)):
        raise ConfigError(f"{where}: `enabled_tools` must be a list of tool names")
    common = McpServerConfig(  # the settings both kinds of server share
        name,
        enabled_tools=None if tools is None else tuple(tools),
        startup_timeout=_seconds(table, "startup_timeout_sec", STARTUP_TIMEOUT, where),
        tool_timeout=_seconds(table, "tool_timeout_sec", TOOL_TIMEOUT, where),
    )
    if "url" in table:
        if set(table) & _STDIO_KEYS:
            raise ConfigError(f"{where}: a server with `url` is already running: {', '.join(sorted(set(table) & _STDIO_KEYS))} do not apply")
        return dataclasses.replace(common, url=http_url(table["url"], f"{where}: `url`"), headers=_headers(table, where, environ))
    command = table.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{where} needs `command` (the program that starts the server) or `url` (a running server)")
    if set(table) & _HTTP_KEYS:
        raise ConfigError(f"{where}: {', '.join(sorted(set(table) & _HTTP_KEYS))} only go with `url`")
    args = table.get("args", [])
    env = table.get("env", {})
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{where}: `args` must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ConfigError(f"{where}: `env` must be a table of strings")
    cwd = table.get("cwd", "")
    if not isinstance(cwd, str):
        raise ConfigError(f"{where}: `cwd` must be a folder path")
    return dataclasses.replace(common, command=command, args=tuple(args), env=dict(env), cwd=cwd)


def http_url(url: Any, what: str) -> str:
    """A running server's address, from the user config or an ACP client: http(s) only."""
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(f"{what} must be an http:// or https:// address")
    return url


def _headers(table: dict[str, Any], where: str, environ: Mapping[str, str]) -> dict[str, str]:
    """`http_headers`, plus `Authorization: Bearer …` from the variable `bearer_token_env_var` names
    (the token stays out of the config file)."""
    headers = table.get("http_headers", {})
    if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise ConfigError(f"{where}: `http_headers` must be a table of strings")
    headers = dict(headers)
    variable = table.get("bearer_token_env_var")
    if variable is not None:
        if not isinstance(variable, str) or not variable:
            raise ConfigError(f"{where}: `bearer_token_env_var` must name an environment variable")
        token = environ.get(variable)
        if not token:
            raise ConfigError(f"{where}: the environment variable {variable} (bearer_token_env_var) is not set")
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _seconds(table: dict[str, Any], key: str, default: float, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{where}: `{key}` must be a positive number of seconds")
    return float(value)
