"""One hook as a process: `/bin/sh -c COMMAND` through the project's process runner (its timeout
stops the hook's whole process group), in the project folder, with the event as JSON on stdin.

Hooks are the user's own commands, so they run as the user unless `sandbox = true` confines one
like the agent's commands. One that runs as the user finds its programs on the trusted PATH
(trusted_path.py: no folder of the project, where the model writes), and one whose program is in
the project anyway (`/proj/.venv/bin/ruff`, `./bin/fmt`) runs confined, or not at all where there
is no sandbox. Either way their environment is the commands' allow-list plus the names the hook
lists in `pass_env`, never the agent's API keys.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.ground.providers import PROVIDERS
from mzagent_tui.agent.hooks.config import HookSpec
from mzagent_tui.agent.safety import trusted_path
from mzagent_tui.agent.safety.commands import analyse
from mzagent_tui.agent.safety.program_code import imports_from_working_folder, project_code
from mzagent_tui.agent.safety.sandbox import Confinement, Sandbox
from mzagent_tui.agent.safety.secrets import command_env
from mzagent_tui.agent.safety.textsafe import strip_control
from mzagent_tui.agent.tools.process import run_command

BLOCK_EXIT = 2
"""A before_tool hook that exits with this blocks the tool (as in Claude Code)."""
KEY_VARIABLES = frozenset({"MZAGENT_API_KEY", *(preset.key_var for preset in PROVIDERS.values() if preset.key_var)})


@dataclass(frozen=True)
class HookRun:
    """How a hook ended: ok, blocked, failed, timed_out or cancelled; its error output, cut."""

    status: str
    exit_code: int | None
    stderr: str


def hook_env(spec: HookSpec, commands_env: Mapping[str, str], environ: Mapping[str, str], api_key: str) -> dict[str, str]:
    """The commands' environment (the allow-list and `pass_env`) and the variables the hook names
    in its own `pass_env`, without the agent's keys: the providers' key variables, and any
    variable that holds the key in use."""
    env = {**commands_env, **command_env(environ, spec.pass_env)}
    return {
        name: value for name, value in env.items()
        if name not in KEY_VARIABLES and not (api_key and api_key in value)
    }


def confined_because(spec: HookSpec, root: Path, path_value: str) -> str:
    """Why the hook runs confined ("" when it runs as the user): `sandbox = true`, or a program of
    its command line (wrappers and `sh -c` scripts included) that is in a folder confined
    commands may write, found with `path_value` (the trusted PATH it would run with), one named
    by a relative path (from the project, or from wherever a `cd` before it went), or one not
    known before it runs (`$VENV/bin/ruff`); or code in the project that an interpreter or runner
    of its command line is given (`python3 tools/fmt.py`, `sh tools/fmt.sh`, `npx prettier`, read
    as for tool servers: safety/program_code.py), or Python importing from the project folder
    the hook starts in (`python3 -m fmt`)."""
    if spec.sandbox:
        return "hooks run confined unless marked sandbox = false"
    analysis = analyse(spec.command, root, path_value)
    if analysis.script.problems:
        return "its command line is not understood, so its programs are not known"
    folders = trusted_path.untrusted_folders(root)
    projects = (str(root), *trusted_path.projects())
    for part in analysis.parts:
        if part.words and not part.wrapper:
            code = project_code(part.words[0], part.words[1:], str(root), projects)
            if code is not None:
                return f"its argument {code} names code in the project for {os.path.basename(part.words[0])} to run"
            if imports_from_working_folder(part.words[0], part.words[1:]):
                return f"{os.path.basename(part.words[0])} imports from the project folder it starts in"
        for word in part.programs:
            if any(mark in word for mark in "$`*?[~\\"):
                return f"its program {word} is known only when it runs"
            if "/" in word and not os.path.isabs(word):
                return f"its program {word} is a path from the project folder (or a folder it moves to)"
            found = trusted_path.found_in_untrusted(word, path_value, root, folders)
            if found is not None:
                return f"its program {word} is {found}, in the project or a folder commands can write"
    return ""


def how_it_runs(spec: HookSpec, root: Path, sandbox: Sandbox, path_value: str) -> str:
    """What `mzagent config` says of a hook: "" when it runs as the user, else confined and why,
    or why it is not run (confined, where the sandbox is off or missing), as run_hook decides."""
    why = confined_because(spec, root, path_value)
    if not why:
        return ""
    mode = sandbox.confinement().mode
    if mode.startswith("workspace"):
        return f"sandboxed: {why}"
    return f"runs as you: the sandbox is {mode}" if spec.sandbox else f"not run: {why}, and the sandbox is {mode}"


def run_hook(
    spec: HookSpec, event: Mapping[str, Any], root: Path, env: Mapping[str, str], sandbox: Sandbox, cancel: CancelToken, output_path: Path,
    project_read_only: bool = False, repository: tuple[Path, ...] | None = None,
) -> HookRun:
    """Run it and say how it ended; a hook that exits 2 before a tool blocks it, any other
    non-zero exit is a failure the run goes on after. One that must run confined where the
    sandbox is off or missing is not run (a failure that says why). Confined, it gets the
    commands' walls: the project read-only in plan mode, and `repository` (the paths of the
    project's git repository, found as it starts) read-only."""
    trusted = trusted_path.trusted_path(env.get("PATH", os.defpath))
    why = confined_because(spec, root, trusted)
    confinement = sandbox.confinement(project_read_only=project_read_only) if why else Confinement("off")
    if confinement.mode.startswith("workspace"):
        env = sandbox.environment(dict(env))
    elif why and not spec.sandbox:
        return HookRun("failed", None, f"the hook was not run: {why}, and it runs only confined, but the sandbox is {confinement.mode}")
    else:
        env = {**env, "PATH": trusted}
    try:
        result = run_command(
            f"/bin/sh -c {shlex.quote(spec.command)}", root, env, spec.timeout, cancel, output_path,
            sandbox.preexec(confinement, repository), stdin=json.dumps(event, ensure_ascii=False, default=str).encode(),
        )
    except OSError as exc:
        return HookRun("failed", None, f"the hook could not start: {exc}")
    stderr = strip_control((result.stderr.head + result.stderr.tail).decode("utf-8", errors="replace"))
    if result.timed_out:
        status = "timed_out"
    elif result.cancelled:
        status = "cancelled"
    elif result.exit_code == 0:
        status = "ok"
    elif result.exit_code == BLOCK_EXIT and spec.event == "before_tool":
        status = "blocked"
    else:
        status = "failed"
    return HookRun(status, result.exit_code, stderr)
