"""The one place an agent is built: its parts wired from the run's configuration.

The app, `mzagent run` and `mzagent acp` each hand over their `RunConfig`, their approver (the
dialog, the terminal, the client's permission request) and their event sink; what an agent is
made of is decided here and nowhere else.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Callable
from typing import Any

from mzagent_tui.agent.aids.seam import Aids
from mzagent_tui.agent.config import ConfigError, app_folders, check_project
from mzagent_tui.agent.events import EventSink, TaskListUpdated
from mzagent_tui.agent.hooks.dispatch import Hooks
from mzagent_tui.agent.loop import Agent, AgentParts
from mzagent_tui.agent.mcp.attach import McpTools
from mzagent_tui.agent.report import Report
from mzagent_tui.agent.run_config import RunConfig
from mzagent_tui.agent.safety import git_user_settings, trusted_path
from mzagent_tui.agent.safety.approval import Approver, PolicyApprover
from mzagent_tui.agent.safety.sandbox import Sandbox
from mzagent_tui.agent.safety.secrets import command_env, redactor_for
from mzagent_tui.agent.sessions.history import SessionHistory
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.skills import find_skills
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.files import FileTools
from mzagent_tui.agent.tools.registry import ToolRegistry, load_custom_tool
from mzagent_tui.agent.tools.shell import ShellTool
from mzagent_tui.agent.tools.task_list import TaskList
from mzagent_tui.agent.tools.web import WebTool
from mzagent_tui.agent.usage import Meter


def assemble(
    config: RunConfig, approver: Approver, sink: EventSink, history: SessionHistory | None = None, needs_model: bool = True
) -> Agent:
    """An agent for `config.project`. `history` continues a logged session (same log, same
    conversation, nothing re-run). `needs_model=False`: only `!commands` will run (headless), so
    no endpoint is needed; otherwise a missing one is said now, not at the first request. The
    tool servers start at once, in the background; their tools join at the first task."""
    settings, root = config.settings, config.project.resolve()
    environ = os.environ if config.environ is None else config.environ
    check_project(config.project)
    trusted_path.note_project(root)  # before anything of ours runs in it
    if needs_model:
        settings.endpoint()
    custom = [_custom_tool(spec) for spec in settings.tools]  # a bad one is said before a session is made
    redact = redactor_for(environ, settings.api_key)
    session = Session.create(root, redact) if history is None else Session.reopen(history.folder, redact)
    report = Report(session, Meter(settings.price_in, settings.price_out, settings.window()), sink)
    gate = PolicyApprover(approver, config.policy, emit=report)
    sandbox = Sandbox(root, settings.sandbox, private_folders=app_folders(), home_allow=tuple(settings.home_allow), git_settings=git_user_settings.kept_settings)
    atexit.register(sandbox.close)  # whatever was not closed (a benchmark of a hundred agents in one process kept a hundred)
    ctx = ToolContext(
        root=root, session=session, emit=report, approver=gate, redact=redact, env=command_env(environ, settings.pass_env),
        command_timeout=settings.command_timeout, sandbox=sandbox, plan_mode=lambda: gate.policy.mode == "plan",
        skills=find_skills(root),
    )
    files, shell = FileTools(ctx), ShellTool(ctx, settings.allowed_domains)
    tools = ToolRegistry([files.read_file, files.write_to_file, *([files.edit_file] if settings.offers_edit_file() else []), shell.run_terminal_command])
    lists = [e for e in history.events if isinstance(e, TaskListUpdated)] if history is not None else []
    task_list = TaskList(report, lists[-1].steps if lists else ())
    if settings.offers_update_plan():
        tools.add_tool(task_list.tool())
    if settings.offers_background():
        for tool in (shell.start_background_command, shell.background_output, shell.stop_background):
            tools.add(tool)
    if settings.offers_web_fetch():
        tools.add(WebTool(ctx, settings.allowed_domains).web_fetch)
    for tool in custom:
        tools.add(tool)
    hooks = Hooks(config.hooks, ctx, tools, environ, settings.api_key)
    mcp = McpTools(config.mcp_servers, session.folder, sandbox)
    agent = Agent(AgentParts(settings, root, session, report, config.policy, gate, Aids(settings.disable_aids, report), ctx, shell, tools, task_list, mcp, hooks))
    if history is not None:
        agent.resume(history)
    return agent


def _custom_tool(spec: str) -> Callable[..., Any]:
    try:
        return load_custom_tool(spec)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
