"""Entry points: `mzagent [PROJECT_DIR]` (the app), `mzagent run TASK`, `mzagent config`.

Textual is imported only when the app starts, so `mzagent run` never loads it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from mzagent_tui import __version__
from mzagent_tui.agent.aids.seam import CATALOGUE
from mzagent_tui.agent.config import PROTOCOLS, SANDBOX_MODES, ConfigError, Settings, check_project, describe
from mzagent_tui.agent.ground import leftovers
from mzagent_tui.agent.run_config import RunConfig
from mzagent_tui.agent.safety.approval import MODES, WRITE_MODES
from mzagent_tui.agent.sessions.history import SessionHistory, SessionNotFound, find_session

EXIT_USAGE = 2
SUBCOMMANDS = ("run", "config", "sessions", "export", "undo", "rewind", "acp")
DESCRIPTION = """A terminal front-end for a ReAct coding agent.

  mzagent [PROJECT_DIR]     open the app on a project folder (default: current folder)
  mzagent --continue        reopen the project's last session; --resume lists them to pick one
  mzagent run TASK          run one task headless and print the trace ('-' reads stdin)
  mzagent config            show the effective settings and where each came from
  mzagent sessions          list the project's sessions
  mzagent export [SESSION]  print a session as Markdown (default: the last one)
  mzagent acp               serve the Agent Client Protocol on stdin/stdout (Zed, Toad, JetBrains)
  mzagent undo [--all]      take back the agent's last step (a file write, or the files a
                            command changed) or all of its last run; --list shows the
                            writes, --to N undoes back to write N
  mzagent rewind [--to N]   take the files and the conversation back to the end of task N
                            (default: before the last task; 0: before the first); --list
                            shows the tasks, --fork makes a new session from there
"""


def _endpoint_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model endpoint")
    group.add_argument("--provider", help="preset: openai, deepseek, siliconflow, openrouter, ollama, lmstudio, llamacpp, custom")
    group.add_argument("--base-url", dest="base_url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1")
    group.add_argument("--api-key", dest="api_key", help="API key (prefer an environment variable or .env)")
    group.add_argument("--model", help="model name")
    group.add_argument("--temperature", type=float)
    group.add_argument("--seed", type=int, help="sampling seed of the first request (later ones count up), to repeat a run exactly (default: none)")
    group.add_argument("--max-tokens", dest="max_tokens", type=int, help="maximum tokens per reply")
    group.add_argument("--max-steps", dest="max_steps", type=int, help="steps before the run stops (default 30)")
    group.add_argument("--command-timeout", dest="command_timeout", type=float, help="seconds before a command is stopped (default 120)")
    group.add_argument("--lang", choices=["en", "zh"], help="prompt language")
    group.add_argument("--price-in", dest="price_in", type=float, metavar="USD", help="dollars per million prompt tokens")
    group.add_argument("--price-out", dest="price_out", type=float, metavar="USD", help="dollars per million completion tokens")
    group.add_argument("--max-cost", dest="max_cost", type=float, metavar="USD", help="stop a run once it has cost this much (needs prices)")
    group.add_argument("--context-window", dest="context_window", type=int, metavar="TOKENS", help="the model's context window, to show how full it is")
    group.add_argument("--protocol", choices=PROTOCOLS, help="xml: tool calls as text; native: the API's tool calls; auto (default): native for hosted presets, xml for local servers")
    group.add_argument("--tool", dest="tools", action="append", metavar="MODULE:FUNCTION", help="add a custom tool (repeatable)")
    group.add_argument("--profile", choices=["small", "full"], help="what the model gets (default: chosen by the model; small for the bundled one and names of 3B or less)")
    group.add_argument("--disable-aid", dest="disable_aids", action="append", metavar="NAME", help="switch an aid off (repeatable; `mzagent config` lists them)")


def _approval_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--approval", choices=MODES,
        help="ask: every command asks (default); auto-safe: read-only commands run; plan: only those run, nothing is written, the answer is a plan; yolo: nothing asks",
    )
    parser.add_argument(
        "--writes", choices=WRITE_MODES,
        help="auto: writes happen without asking and are shown as diffs (default); ask: each write shows its diff and asks",
    )
    parser.add_argument(
        "--sandbox", choices=SANDBOX_MODES,
        help="workspace: commands write only in the project and reach no network (default where Linux has Landlock); off: no sandbox",
    )


def _resume_flags(parser: argparse.ArgumentParser, continue_help: str, resume_help: str) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--continue", "-c", dest="continue_last", action="store_true", help=continue_help)
    group.add_argument("--resume", "-r", nargs="?", const="", metavar="SESSION", help=resume_help)


def _flags(args: argparse.Namespace) -> dict[str, Any]:
    names = (
        "provider", "base_url", "api_key", "model", "temperature", "seed", "max_tokens", "max_steps", "command_timeout", "lang", "tools",
        "price_in", "price_out", "max_cost", "context_window", "sandbox", "protocol", "profile", "disable_aids",
    )
    return {name: getattr(args, name, None) for name in names}


def build_parser(command: str | None) -> argparse.ArgumentParser:
    if command == "run":
        parser = argparse.ArgumentParser(prog="mzagent run", description="Run one task headless.")
        parser.add_argument("task", help="the task; '-' reads it from stdin")
        parser.add_argument("--project", default=".", help="project folder (default: current folder)")
        answer = parser.add_mutually_exclusive_group()
        answer.add_argument("--yes", "-y", action="store_true", help="approve every command")
        answer.add_argument("--no", action="store_true", help="reject every command")
        parser.add_argument("--json", action="store_true", help="print events as JSON lines")
        _approval_flag(parser)
        _resume_flags(parser, "continue the project's last session", "continue the session with this id")
    elif command == "acp":
        parser = argparse.ArgumentParser(
            prog="mzagent acp",
            description="Serve the Agent Client Protocol on stdin/stdout; the client names the project (the session's cwd).",
        )
        _approval_flag(parser)
    elif command == "config":
        parser = argparse.ArgumentParser(prog="mzagent config", description="Show the effective settings.")
        parser.add_argument("--project", default=".", help="project folder whose .env is read")
    elif command == "sessions":
        parser = argparse.ArgumentParser(prog="mzagent sessions", description="List the project's sessions, newest first.")
        parser.add_argument("--project", default=".", help="project folder (default: current folder)")
    elif command == "export":
        parser = argparse.ArgumentParser(prog="mzagent export", description="Print a session as Markdown, secrets redacted.")
        parser.add_argument("session", nargs="?", default="last", help="session id (or a unique prefix), folder, or 'last' (default)")
        parser.add_argument("--project", default=".", help="project folder (default: current folder)")
        parser.add_argument("-o", "--output", type=Path, help="write to this file instead of stdout (never overwritten)")
    elif command == "undo":
        parser = argparse.ArgumentParser(prog="mzagent undo", description="Take back the agent's writes (files written, and files its commands changed); refuses if you changed a file since.")
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--all", action="store_true", help="undo every write of the session's last run with writes")
        which.add_argument("--to", type=int, metavar="N", help="undo write N and every write after it (see --list)")
        which.add_argument("--list", action="store_true", help="list the session's writes with their numbers")
        parser.add_argument("--session", default="last", help="session id (or a unique prefix); default: the last one")
        parser.add_argument("--project", default=".", help="project folder (default: current folder)")
    elif command == "rewind":
        parser = argparse.ArgumentParser(
            prog="mzagent rewind",
            description="Take the project's files (the agent's writes and what its commands changed) and the conversation back to the end of an earlier task; asks before overwriting a file you changed since.",
        )
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--to", type=int, metavar="N", help="keep tasks 1 to N (0: before the first); default: all but the last")
        which.add_argument("--list", action="store_true", help="list the session's tasks with their numbers")
        what = parser.add_mutually_exclusive_group()
        what.add_argument("--conversation-only", dest="mode", action="store_const", const="conversation", help="cut the conversation, leave the files")
        what.add_argument("--files-only", dest="mode", action="store_const", const="files", help="take the files back, keep the conversation")
        parser.add_argument("--fork", action="store_true", help="make a new session from that point; the original stays whole")
        parser.add_argument("--overwrite", action="store_true", help="take back files you changed since without asking")
        parser.add_argument("--session", default="last", help="session id (or a unique prefix); default: the last one")
        parser.add_argument("--project", default=".", help="project folder (default: current folder)")
    else:
        parser = argparse.ArgumentParser(prog="mzagent", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("project", nargs="?", default=".", help="project folder (default: current folder)")
        parser.add_argument("--version", action="version", version=f"mzagent {__version__}")
        _approval_flag(parser)
        _resume_flags(parser, "reopen the project's last session", "pick a session to reopen (or give its id)")
    _endpoint_flags(parser)
    return parser


def entry() -> int:
    """The `mzagent` command: hide this process's own secrets from the commands it will run
    (`/proc/<pid>/environ`, `--api-key` in its cmdline), then run."""
    from mzagent_tui.agent.safety.own_secrets import hide_own_secrets

    hide_own_secrets()
    return main()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    args = build_parser(command).parse_args(argv[1:] if command else argv)
    if command in (None, "run", "acp"):
        leftovers.sweep()  # the temp files of an agent process that died (kill -9) go before ours are made
    if command == "acp":
        return _acp(args)
    project = Path(args.project).expanduser()
    try:
        check_project(project)
        config = RunConfig.load(project, _flags(args), getattr(args, "approval", None), getattr(args, "writes", None))
        if command == "config":
            return _show_config(config)
        if command in ("sessions", "export", "undo", "rewind"):
            return _session_command(command, config.settings, project, args)
        history = _history(project, args, command)
        if command == "run":
            return _run(config, args, history)
    except (ConfigError, SessionNotFound) as exc:
        print(f"mzagent: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except FileExistsError as exc:
        print(f"mzagent: {exc.filename} exists; choose another file name", file=sys.stderr)
        return EXIT_USAGE
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "mzagent: the app needs a terminal (its input and output); from a script or a pipe run a task "
            'with `mzagent run "task"` (or `mzagent acp` for an editor)',
            file=sys.stderr,
        )
        return EXIT_USAGE
    from mzagent_tui.app import run_app

    return run_app(config, history, pick_session=args.resume == "")


def _acp(args: argparse.Namespace) -> int:
    try:
        from mzagent_tui.acp_server import main as serve
    except ImportError as exc:
        print(f"mzagent acp needs the ACP package ({exc.name} is missing); install it with: pip install 'mzagent-tui[acp]'", file=sys.stderr)
        return EXIT_USAGE
    return serve(_flags(args), args.approval, args.writes)


def _history(project: Path, args: argparse.Namespace, command: str | None) -> SessionHistory | None:
    """The session named by --continue or --resume ID; None for a new one (or the app's picker)."""
    if args.continue_last:
        return find_session(project, "last")
    if args.resume == "" and command == "run":
        raise ConfigError("mzagent run --resume needs a session id (`mzagent sessions` lists them), or use --continue")
    if not args.resume:
        return None
    history = find_session(project, args.resume)
    if history.project and Path(history.project) != project.resolve():
        raise ConfigError(f"session {history.id} belongs to {history.project}, not {project.resolve()}")
    return history


def _session_command(command: str, settings: Settings, project: Path, args: argparse.Namespace) -> int:
    from mzagent_tui.agent.safety.secrets import redactor_for
    from mzagent_tui.session_commands import export_session, list_tasks, list_writes, rewind, show_sessions, undo_writes

    if command == "sessions":
        return show_sessions(project)
    redact = redactor_for(os.environ, settings.api_key)
    if command == "export":
        return export_session(project, args.session, redact, args.output)
    if command == "rewind":
        if args.list:
            return list_tasks(project, args.session)
        return rewind(project, args.session, args.to, args.mode or "all", args.fork, redact, lambda changed: args.overwrite or _overwrite_asked(changed))
    if args.list:
        return list_writes(project, args.session)
    if args.to is not None:
        return undo_writes(project, args.session, args.to, redact)
    return undo_writes(project, args.session, "run" if args.all else "last", redact)


def _overwrite_asked(changed: list[str]) -> bool:
    """Rewinding would overwrite files the user changed: ask at a terminal, else say how to force it."""
    for reason in changed:
        print(f"  {reason}", file=sys.stderr)
    if not sys.stdin.isatty():
        print("mzagent: you changed these files since; run again with --overwrite to take them back anyway", file=sys.stderr)
        return False
    print("Rewinding takes these files back and your changes to them are lost. Rewind anyway? [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _show_config(config: RunConfig) -> int:
    from mzagent_tui.agent.hooks.runner import how_it_runs
    from mzagent_tui.agent.mcp.program import how_it_runs as how_server_runs
    from mzagent_tui.agent.safety import trusted_path
    from mzagent_tui.agent.safety.sandbox import Sandbox, namespaces_state
    from mzagent_tui.agent.safety.secrets import command_env

    settings, policy, project = config.settings, config.policy, config.project
    rows = describe(settings)
    sandbox = Sandbox(project, settings.sandbox)
    for index, row in enumerate(rows):
        if row[0] == "sandbox" and settings.sandbox == "workspace":
            state = f"Landlock ABI {sandbox.abi}; {namespaces_state()}" if sandbox.available else f"unavailable: {sandbox.unavailable_reason}"
            rows[index] = (row[0], f"{row[1]} ({state})", row[2])
        if row[0] == "theme" and (problem := _theme_problem(settings.theme)):
            rows[index] = (row[0], f"{row[1]} ({problem})", row[2])
    rows.append(("approval", policy.mode, "user config [approval] or --approval"))
    rows.append(("writes", policy.writes, "user config [approval] writes or --writes"))
    for kind in ("allow", "ask", "deny"):
        prefixes = [" ".join(words) for words in getattr(policy.rules, kind)]
        if prefixes:
            rows.append((f"rules.{kind}", ", ".join(prefixes), "user config [approval]"))
    passed = ", ".join(sorted(command_env(os.environ, settings.pass_env)))
    rows.append(("command_env", passed, "names, never values: the allow-list, pass_env, mzagent's own PAGER, TERM… (and TMPDIR in the sandbox)"))
    trusted_path.note_project(project)
    for server in config.mcp_servers:
        shown = server.url or " ".join([server.command, *server.args])
        rows.append((f"mcp_servers.{server.name}", shown, f"user config [mcp_servers] ({how_server_runs(server, sandbox)})"))
    for number, hook in enumerate(config.hooks, 1):
        matched = f" {hook.tool}" if hook.tool else ""
        note = how_it_runs(hook, project, sandbox, trusted_path.trusted_path())
        rows.append((f"hooks.{number}", hook.command, f"user config [[hooks]]: {hook.event}{matched}{f' ({note})' if note else ''}"))
    rows.append(("model profile", "small" if settings.small_model() else "full", "profile, else chosen by the model"))
    width = max(len(name) for name, _, _ in rows)
    value_width = min(48, max(len(value) for _, value, _ in rows))
    for name, value, source in rows:
        print(f"{name:<{width}}  {value:<{value_width}}  {source}")
    _show_skills(project)
    print(f"\naids ({len(CATALOGUE)}; switch one off with disable_aids = [\"name\"] in the user config or --disable-aid name):")
    for aid in CATALOGUE:
        state = "off" if aid.name in settings.disable_aids else "on "
        print(f"  {state} {aid.name:<26} {aid.point:<13} {aid.does}")
    if settings.provider == "local" and not settings.base_url:
        from mzagent_tui.agent.ground.providers import local_available, setup_hint
        from mzagent_tui.agent.model.local import LocalModelError, chosen_engine, engine_version, faster_engine_hint, server_settings

        if local_available():
            try:
                chosen = server_settings().describe()
                engine = engine_version(chosen_engine())
            except LocalModelError as exc:
                print(f"\nproblem: {exc}", file=sys.stderr)
                return EXIT_USAGE
            print(f"\nthe offline model starts when a task runs ({engine}), with {chosen} (set MZAGENT_LOCAL_MODEL to use another GGUF)")
            if hint := faster_engine_hint():
                print(f"faster: {hint}")
            return 0
        print(f"\nproblem: {setup_hint()}", file=sys.stderr)
        return EXIT_USAGE
    try:
        settings.endpoint()
    except ConfigError as exc:
        print(f"\nproblem: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0


def _theme_problem(name: str) -> str:
    """Why the app will not use this theme ("" when it will): Textual's themes are the app's."""
    from textual.theme import BUILTIN_THEMES  # only `mzagent config` asks

    return "" if name in BUILTIN_THEMES else "unknown: the app uses textual-dark; /theme lists the themes"


def _show_skills(project: Path) -> None:
    from mzagent_tui.agent.skills import PROJECT_FOLDER, find_skills, user_folders

    skills = find_skills(project.resolve())
    where = ", ".join([*(str(f) for f in user_folders()), f"the project's {PROJECT_FOLDER}"])
    print(f"\nskills ({len(skills.found)}; from {where}; the model reads one when a task matches it):")
    for skill in skills.found:
        print(f"  {skill.name:<24} {skill.scope:<8} {skill.location}")
        print(f"  {'':<24} {skill.description[:100]}{'…' if len(skill.description) > 100 else ''}")
    for problem in skills.problems:
        print(f"  left out: {problem}")


def _run(config: RunConfig, args: argparse.Namespace, history: SessionHistory | None) -> int:
    from mzagent_tui.agent.model.local import faster_engine_hint, needs_local, pointed_at, start_local
    from mzagent_tui.agent.prompt_commands import PromptCommandError, resolve_task
    from mzagent_tui.agent.user_commands import USAGE, typed_command
    from mzagent_tui.headless import ProgressPrinter, choose_approver, run_headless

    task = sys.stdin.read() if args.task == "-" else args.task
    if not task.strip():
        raise ConfigError("the task is empty")
    try:
        task = resolve_task(task.strip(), config.project.resolve())
    except PromptCommandError as exc:
        raise ConfigError(str(exc)) from None
    command = typed_command(task)
    if command == "":
        raise ConfigError(USAGE)
    needs_model = command is None
    server = start_local(ProgressPrinter(sys.stderr)) if needs_model and needs_local(config.settings) else None
    if server is not None:
        config = config.with_settings(pointed_at(config.settings, server))
        print(f"\nlocal model ready ({server.model.name}: {server.describe()})", file=sys.stderr)
        if hint := faster_engine_hint():
            print(f"faster: {hint}", file=sys.stderr)
    try:
        interactive = sys.stdin.isatty() and args.task != "-"
        approver = choose_approver(args.yes, args.no, interactive, sys.stderr)
        return run_headless(config, task.strip(), approver, args.json, history, needs_model)
    finally:
        if server is not None:
            server.stop()
