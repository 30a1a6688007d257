"""`[[hooks]]` in the user config, read and checked once at start.

Only the user config is read: a project (its `.env`, its `.mzagent/`) cannot add a hook, since a
hook runs a command of its own choosing without a dialog. A bad entry is a ConfigError that names
it, so the app and `mzagent run` refuse to start with one line instead of a traceback.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mzagent_tui.agent.config import ConfigError, user_config_path

EVENTS = ("before_tool", "after_tool", "run_end")
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYS = {"event", "tool", "command", "timeout", "sandbox", "pass_env"}


COMMAND_TOOLS = ("run_terminal_command", "start_background_command")
"""The tools that run a shell command: a hook for the first one is a hook for all."""


@dataclass(frozen=True)
class HookSpec:
    """One `[[hooks]]` entry. `tool`: "" or "*" for every tool, else a tool's exact name."""

    event: str
    command: str
    tool: str = ""
    timeout: float = DEFAULT_TIMEOUT
    sandbox: bool = True
    """Run confined in the sandbox commands run in (Landlock), by default: a hook's program reads
    the project (a formatter's config, a module `python -m` imports from the folder, what `npx`
    finds in node_modules) and the model writes the project, so only a hook the user marks
    `sandbox = false` runs as the user, trusting what the project holds."""
    pass_env: tuple[str, ...] = ()
    """Variables of the user's environment the hook gets besides the commands' allow-list."""

    def matches(self, event: str, tool: str) -> bool:
        """A hook for `run_terminal_command` is also one for `start_background_command`: both
        run a command (given as `command`), and a guard on one must not be passed by the other."""
        named = self.tool in ("", "*", tool) or (self.tool == "run_terminal_command" and tool in COMMAND_TOOLS)
        return self.event == event and named


def load_hooks(path: Path | None = None) -> list[HookSpec]:
    """The hooks of the user config (none when it has no `[[hooks]]`); ConfigError on a bad entry."""
    path = path or user_config_path()
    if not path.is_file():
        return []
    try:
        with path.open("rb") as handle:
            entries = tomllib.load(handle).get("hooks", [])
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if not isinstance(entries, list):
        raise ConfigError(f"hooks in {path} must be a list of tables: write each as [[hooks]]")
    return [hook_from(entry, f"hook {number} ([[hooks]] number {number} in {path})") for number, entry in enumerate(entries, 1)]


def hook_from(entry: Any, where: str) -> HookSpec:
    """One entry, checked: its keys, its event, a command, the types of tool, timeout and sandbox."""
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a table with event and command")
    unknown = set(entry) - _KEYS
    if unknown:
        raise ConfigError(f"{where} has unknown keys: {', '.join(sorted(unknown))} (known: {', '.join(sorted(_KEYS))})")
    event, command, tool = entry.get("event"), entry.get("command"), entry.get("tool", "")
    timeout, sandbox = entry.get("timeout", DEFAULT_TIMEOUT), entry.get("sandbox", True)
    if event not in EVENTS:
        raise ConfigError(f"{where}: event must be one of {', '.join(EVENTS)}, got {event!r}")
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{where}: command is missing (the shell command to run, as a string)")
    if not isinstance(tool, str):
        raise ConfigError(f"{where}: tool must be a tool's name or \"*\", got {tool!r}")
    if tool and event == "run_end":
        raise ConfigError(f"{where}: tool applies to before_tool and after_tool, not to run_end")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT:
        raise ConfigError(f"{where}: timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:.0f}, got {timeout!r}")
    if not isinstance(sandbox, bool):
        raise ConfigError(f"{where}: sandbox must be true or false, got {sandbox!r}")
    pass_env = entry.get("pass_env", [])
    if not isinstance(pass_env, list) or not all(isinstance(name, str) and _VARIABLE.fullmatch(name) for name in pass_env):
        raise ConfigError(f"{where}: pass_env must be a list of environment variable names, got {pass_env!r}")
    return HookSpec(event, command, tool, float(timeout), sandbox, tuple(pass_env))
