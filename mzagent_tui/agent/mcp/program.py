"""The program a started MCP server runs, its PATH, and whether it runs confined.

Servers run outside the sandbox, as the user. With an activated `.venv` (or `./bin`,
`node_modules/.bin`, `.` on PATH), `uvx` or `npx` could be a copy the model wrote there, so the
server's program and everything it starts by name are looked up on the trusted PATH
(safety/trusted_path.py). A server that would run what the model can write anyway — its program
is in the project (`command = "/proj/.venv/bin/server"`, or found only there), it works in the
project (`cwd`: `python -m mcpserve` imports the project's `mcpserve.py`), a script it is given is a
project file (`python /proj/mcpserve.py`), an interpreter or runner is given project code to run
(`python /proj/srv`, `uv run --directory /proj srv`, `npx /proj/pkg`: safety/program_code.py), or its `env` points into the project
(`PYTHONPATH=/proj/src`, `NODE_OPTIONS=--require /proj/hook.js`) — runs confined, as the model's
commands do but with the project read-only (see hub.py), or not at all where there is no sandbox.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.mcp.config import McpServerConfig
from mzagent_tui.agent.safety import trusted_path
from mzagent_tui.agent.safety.program_code import project_code
from mzagent_tui.agent.safety.sandbox import Confinement, Sandbox

CONFINED = "project read-only, no network"
"""What a confined server may do, as `mzagent config` says it."""


@dataclass(frozen=True)
class ServerProgram:
    """The absolute program and the PATH to start a server with, why it runs confined (empty:
    as the user), or why it is not started."""

    program: str = ""
    path: str = ""
    confined: str = ""
    refused: str = ""


def server_program(config: McpServerConfig) -> ServerProgram:
    """Where `config.command` is, looked up from the server's working folder (its `cwd`, else the
    home) on the PATH its `env` names, else ours: on the trusted PATH first, else (confined)
    where that PATH finds it in the project."""
    cwd = Path(os.path.abspath(config.cwd or Path.home()))
    user_path = config.env.get("PATH", os.environ.get("PATH", os.defpath))
    trusted = trusted_path.trusted_path(user_path)
    command = config.command
    if "/" in command:
        program: str | None = os.path.join(cwd, command)  # as exec gets it: `link/..` is the kernel's to resolve
    else:
        program = trusted_path.which(command, user_path) or trusted_path.lookup(command, user_path, cwd)
    if program is None:
        return ServerProgram(refused=f"is not started: {command} is not found on PATH")
    return ServerProgram(program, trusted, confined=_confined_because(config, program, cwd, user_path))


def _confined_because(config: McpServerConfig, program: str, cwd: Path, user_path: str) -> str:
    """Why the server runs what the model can write ("" when it does not): its program, or the
    interpreter its `#!` line leads to, is in the project or a folder commands can write (as for hooks); its working folder, the code an
    interpreter or runner among its arguments is given (a folder too: safety/program_code.py), a file
    among its arguments (another folder is taken for data: `server-filesystem /proj`) or a path
    its environment names, inside a value too, is in the project (a temp folder
    there is the user's own choice: confined commands write only their private one)."""
    if trusted_path.is_untrusted(os.path.dirname(program)) or trusted_path.is_untrusted(program):
        return f"its program {config.command} is {program}, in the project or a folder commands can write"
    interpreter = trusted_path.untrusted_interpreter(program, user_path)
    if interpreter is not None:
        return f"its program {program} is a script run by {interpreter}, in the project or a folder commands can write (or not found outside them)"
    projects = trusted_path.projects()
    if trusted_path.is_untrusted(str(cwd), projects):
        return f"it works in {cwd}, in the project (what it imports or runs by a relative name comes from there)"
    code = project_code(config.command, config.args, str(cwd), projects)
    if code is not None:
        return f"its argument {code} names code in the project for {os.path.basename(program)} to run"
    for argument in config.args:
        for named in {argument, argument.partition("=")[2]} - {""}:
            path = os.path.join(cwd, named)
            if os.path.isfile(path) and trusted_path.is_untrusted(path, projects):
                return f"its argument {argument} is a file in the project"
    for variable, value in config.env.items():
        if variable == "PATH":
            continue  # what it starts by name is looked up on the trusted PATH
        for named in _VALUE_WORDS.split(value):
            if os.path.isabs(named) and trusted_path.is_untrusted(named, projects):
                return f"its environment's {variable} names {named}, in the project"
    return ""


_VALUE_WORDS = re.compile(rf"[\s={re.escape(os.pathsep)}'\"]+")
"""Where a variable's value is cut into the paths it may name: a list (`PYTHONPATH=a:b`), the
options a tool reads from one (`NODE_OPTIONS=--require /proj/hook.js`, `-r=/proj/hook.js`) and
the quotes Node allows around a path with spaces (`--require "/proj/hook.js"`)."""


def server_confinement(sandbox: Sandbox | None) -> Confinement:
    """How a confined server runs: in the commands' sandbox, with the project read-only (its
    writes would happen at any time, outside the check after each command) and no network."""
    if sandbox is None:
        return Confinement("unavailable")
    return sandbox.confinement(project_read_only=True)


def not_started(why: str, mode: str) -> str:
    """Why a server that must run confined is not started where the sandbox is `mode`."""
    return f"is not started: {why}, and it runs only confined, but the sandbox is {mode}"


def how_it_runs(config: McpServerConfig, sandbox: Sandbox | None) -> str:
    """What `mzagent config` says of a server: how it runs and why."""
    if config.url:
        return f"already running: reached at {config.url}"
    found = server_program(config)
    if found.refused:
        return found.refused
    if not found.confined:
        return f"runs as you: {found.program}, found outside the project"
    mode = server_confinement(sandbox).mode
    if mode.startswith("workspace"):
        return f"sandboxed ({CONFINED}): {found.confined}"
    return not_started(found.confined, mode)
