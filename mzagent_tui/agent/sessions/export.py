"""A session as Markdown: each task with its thoughts, actions, observations and final answer.

Built from the logged events (what the user saw), not from the raw messages. Tool output and
written files go into fenced blocks whose fence is longer than any backtick run inside, so no
content can close its block early. Secrets are redacted again with the keys known now.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path, PurePath

from mzagent_tui.agent.event_text import action_text, describe
from mzagent_tui.agent.events import (
    Action,
    ApprovalAnswered,
    Compacted,
    FileChanged,
    FinalAnswer,
    Observation,
    StepStarted,
    TaskListUpdated,
    TaskStarted,
    Thought,
    Usage,
    UserCommand,
    UserCommandOutput,
)
from mzagent_tui.agent.sessions.history import SessionHistory
from mzagent_tui.agent.usage import Meter

_BACKTICKS = re.compile(r"`+")


def fenced(text: str, lang: str = "") -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}{lang}\n{body}{fence}"


def to_markdown(history: SessionHistory, redact: Callable[[str], str]) -> str:
    """The whole session as one Markdown document."""
    meter = Meter()
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(history.started)) if history.started else "unknown"
    lines = [
        f"# mzagent session {history.id}",
        "",
        f"Project `{history.project}` · started {started} · {history.steps} steps · {history.final_state}",
    ]
    task_number = 0
    for event in history.events:
        match event:
            case TaskStarted(task=task, follow_up=follow_up):
                task_number += 1
                heading = "Follow-up" if follow_up else "Task"
                lines += ["", f"## {heading} {task_number}", "", _quote(task)]
            case StepStarted(step=step):
                lines += ["", f"### Step {step}"]
            case Thought(text=text):
                lines += ["", f"**Thought:** {text}"]
            case Action(tool="run_terminal_command", args=[str() as command, *_]):
                lines += ["", "**Action:** run a command", "", fenced(command, "sh")]
            case Action(tool="write_to_file", args=[str() as path, str() as content]):
                lines += ["", f"**Action:** write `{path}`", "", fenced(content, PurePath(path).suffix.lstrip("."))]
            case Action(tool="edit_file", args=[str() as path, str() as old_text, str() as new_text]):
                suffix = PurePath(path).suffix.lstrip(".")
                lines += ["", f"**Action:** edit `{path}`, replacing", "", fenced(old_text, suffix), "", "with", "", fenced(new_text, suffix)]
            case Action(tool="update_plan", args=[list()]):
                lines += ["", f"**Action:** {action_text(event.tool, event.args)}"]
            case Action(tool=tool, args=args):
                shown = ", ".join(repr(a) for a in args)
                lines += ["", f"**Action:** `{tool}({shown})`"]
            case Compacted(summary=summary):
                lines += ["", f"*The {event.title()}:*", "", _quote(summary)]
            case FileChanged(diff=diff):
                lines += ["", f"*Changed:* {event.summary(Path(history.project))}"]
                if diff:
                    lines += ["", fenced(diff, "diff")]
            case Observation(text=text, exit_code=code, ok=ok):
                badge = f" (exit {code})" if code is not None else "" if ok else " (failed)"
                lines += ["", f"**Observation{badge}:**", "", fenced(text, "text")]
            case UserCommand(command=command):
                lines += ["", "## You ran a command", "", fenced(command, "sh")]
            case UserCommandOutput(text=text, exit_code=code):
                badge = f" (exit {code})" if code is not None else " (stopped)"
                lines += ["", f"**Its output{badge}:**", "", fenced(text, "text")]
            case TaskListUpdated(steps=steps):
                lines += ["", "**Task list:**", "", *_checklist(steps)]
            case FinalAnswer(text=text, plan=plan):
                lines += ["", "**Plan:**" if plan else "**Final answer:**", "", text]
            case Usage(prompt_tokens=tokens_in, completion_tokens=tokens_out, estimated=estimated):
                meter.observe(event)
                mark = " (estimated)" if estimated else ""
                lines += ["", f"*Tokens: {tokens_in:,} in / {tokens_out:,} out{mark}*"]
            case _:
                described = describe(event, Path(history.project))
                if described is not None:
                    mark = "**" if described.kind == "error" or isinstance(event, ApprovalAnswered) else "*"
                    lines += ["", f"{mark}{described.label}:{mark} {described.text}"]
    if history.interrupted:
        lines += ["", "*The session was interrupted here (the process ended during a run).*"]
    if meter.tokens_in or meter.tokens_out:
        lines += ["", "---", "", meter.summary(context=False)]
    return redact("\n".join(lines) + "\n")


def _checklist(steps: list[dict[str, str]]) -> list[str]:
    """The task list as a Markdown task list (`- [x] Find where options are parsed`), the step in progress marked."""
    if not steps:
        return ["*(cleared)*"]
    lines = []
    for step in steps:
        status = step.get("status", "")
        text = _inline(step.get("step", ""))
        lines.append(f"- [x] {text}" if status == "done" else f"- [ ] {text} *(in progress)*" if status == "in_progress" else f"- [ ] {text}")
    return lines


def _inline(text: str) -> str:
    """A step's text as plain Markdown text: characters that would start markup are escaped."""
    return re.sub(r"([\\`*_\[\]<>#|~])", r"\\\1", text)


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines() or [""])


def export_to_file(history: SessionHistory, redact: Callable[[str], str], target: Path) -> None:
    """Write the session as Markdown to a new file; FileExistsError if it exists (never overwritten)."""
    text = to_markdown(history, redact)
    with target.open("x", encoding="utf-8") as handle:
        handle.write(text)
