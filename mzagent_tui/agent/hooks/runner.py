"""One hook as a process: `/bin/sh -c COMMAND` through the project's process runner (its timeout
stops the hook's whole process group), in the project folder, with the event as JSON on stdin.

Hooks are the user's own commands, so they run as the user unless `sandbox = true` confines one
like the agent's commands; either way the agent's API keys are not in their environment.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.hooks.config import HookSpec
from mzagent_tui.agent.model.providers import PROVIDERS
from mzagent_tui.agent.safety.sandbox import Confinement, Sandbox
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


def hook_env(environ: Mapping[str, str], api_key: str) -> dict[str, str]:
    """The user's environment without the agent's keys: the providers' key variables, and any
    variable that holds the key in use."""
    return {
        name: value for name, value in environ.items()
        if name not in KEY_VARIABLES and not (api_key and api_key in value)
    }


def run_hook(
    spec: HookSpec, event: Mapping[str, Any], root: Path, env: Mapping[str, str], sandbox: Sandbox, cancel: CancelToken, output_path: Path
) -> HookRun:
    """Run it and say how it ended; a hook that exits 2 before a tool blocks it, any other
    non-zero exit is a failure the run goes on after."""
    confinement = sandbox.confinement() if spec.sandbox else Confinement("off")
    if confinement.mode.startswith("workspace"):
        env = sandbox.environment(dict(env))
    try:
        result = run_command(
            f"/bin/sh -c {shlex.quote(spec.command)}", root, env, spec.timeout, cancel, output_path,
            sandbox.preexec(confinement), stdin=json.dumps(event, ensure_ascii=False, default=str).encode(),
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
