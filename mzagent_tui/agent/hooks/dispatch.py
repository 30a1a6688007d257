"""Which hooks an event calls, what each is told, and what its outcome does to the run.

The loop calls `before_tool`/`after_tool` around its one tool call and `run_end` once a run has
ended. Every hook that ran is a `HookOutcome` event: logged always, shown when it did not end ok.

A hook's program may run what the model wrote (`python -m black` imports the project's modules,
`make fmt` runs its Makefile), so a hook gets the checks a command gets: the repository as git
reads it is read-only to it and a `.git` it made or changed is asked about, the project is
read-only in plan mode (when it runs confined), and a file it created or changed that makes
tools run code (`.envrc`, a git hook, `.vscode/tasks.json`) is kept only if the user says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mzagent_tui.agent.events import HookOutcome, Notice
from mzagent_tui.agent.hooks.config import HookSpec
from mzagent_tui.agent.hooks.runner import HookRun, hook_env, run_hook
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.git_entries import ask_about_changes, before_command
from mzagent_tui.agent.tools.paths import resolve_inside
from mzagent_tui.agent.tools.planted import ask_to_keep
from mzagent_tui.agent.tools.planted_scan import Kept, PlantedScan, ScanIncomplete, changes_between
from mzagent_tui.agent.tools.registry import ToolError, ToolRegistry, ToolResult

FILE_TOOLS = ("read_file", "write_to_file", "edit_file")
"""Tools whose first argument is a file: a hook finds it in $MZAGENT_FILE."""


class Hooks:
    def __init__(self, specs: Sequence[HookSpec], ctx: ToolContext, tools: ToolRegistry, environ: Mapping[str, str], api_key: str) -> None:
        self._specs = tuple(specs)
        self._ctx = ctx
        self._tools = tools
        self._environ = environ
        self._api_key = api_key
        self._planted = PlantedScan(ctx.root)

    def before_tool(self, tool: str, args: list[Any]) -> str | None:
        """None to go on; else the tool is not run and this is what the model is told: the
        blocking hook's error output (every matching hook runs, in config order)."""
        blocks = [run for run in self._run("before_tool", tool, args, {}) if run.status == "blocked"]
        if not blocks:
            return None
        said = "\n".join(run.stderr.strip() for run in blocks if run.stderr.strip()) or "(the hook gave no reason)"
        return self._ctx.redact.command_output(f"A hook of the user blocked this call, so it was not run:\n{said}")

    def after_tool(self, tool: str, args: list[Any], result: ToolResult) -> None:
        self._run("after_tool", tool, args, {"ok": result.ok, "observation": result.text})

    def run_end(self, reason: str, message: str, final_answer: str | None) -> None:
        self._run("run_end", "", [], {"reason": reason, "message": message, "final_answer": final_answer})

    def _run(self, event: str, tool: str, args: list[Any], extra: dict[str, Any]) -> list[HookRun]:
        """Run the matching hooks in config order, each reported as it ends."""
        ctx = self._ctx
        runs = []
        for spec in self._specs:
            if not spec.matches(event, tool):
                continue
            payload = {
                "event": event, "tool": tool, "arguments": self._named(tool, args), **extra,
                "project": str(ctx.root), "session_id": ctx.session.id,
            }
            env = {**hook_env(spec, ctx.env, self._environ, self._api_key), "MZAGENT_EVENT": event, "MZAGENT_TOOL": tool, "MZAGENT_PROJECT": str(ctx.root), "MZAGENT_SESSION": ctx.session.id}
            if (path := self._file(tool, args)) is not None:
                env["MZAGENT_FILE"] = path
            run = self._checked(spec, payload, env)
            ctx.emit(self._outcome(spec, tool, run))
            runs.append(run)
        return runs

    def _checked(self, spec: HookSpec, payload: dict[str, Any], env: dict[str, str]) -> HookRun:
        """The hook run between the checks a command gets (see the module's words). A project
        the planted scan cannot walk is said once by the command tool; here it only means the
        hook's files on the list are not asked about."""
        ctx = self._ctx
        planted_before = self._scan()
        entries = before_command(ctx.root)
        run = run_hook(
            spec, payload, ctx.root, env, ctx.sandbox, ctx.cancel, ctx.session.output_path(),
            project_read_only=ctx.plan_mode(), repository=entries.read_only,
        )
        notes = ask_about_changes(ctx, entries)
        planted_after = self._scan()
        if planted_before is not None:
            if planted_after is None:  # the hook broke what the scan reads: the sweep walks past it
                planted_after, skipped = self._planted.sweep()
                notes += f"\nNot looked into after it: {', '.join(skipped)}." if skipped else ""
            notes += ask_to_keep(ctx, changes_between(planted_before, planted_after), {})[1]
        if notes.strip():
            ctx.emit(Notice(f"After the hook `{spec.command}`:{notes}"))
        return run

    def _scan(self) -> dict[str, Kept] | None:
        try:
            return self._planted.take()
        except ScanIncomplete:
            return None

    def _named(self, tool: str, args: list[Any]) -> dict[str, Any] | list[Any]:
        """The arguments by parameter name where the tool's signature is known."""
        params = self._tools.signatures().get(tool)
        return dict(zip(params, args)) if params and len(args) <= len(params) else list(args)

    def _file(self, tool: str, args: list[Any]) -> str | None:
        if tool not in FILE_TOOLS or not args:
            return None
        try:
            return str(resolve_inside(self._ctx.root, args[0]))
        except ToolError:
            return None

    def _outcome(self, spec: HookSpec, tool: str, run: HookRun) -> HookOutcome:
        return HookOutcome(spec.event, spec.command, run.status, tool, run.exit_code, self._ctx.redact(run.stderr))
