"""The words for each core event, in one place: what every front-end says about it.

`describe(event, root)` gives the event's kind (which picks its colour: question, thought,
action, observation, change, tasks, final, notice, error), a label ("Rejected", "Retry 2/4") and its
text, or None for bookkeeping events no front-end shows (steps, usage, deltas). The app's
entries, the terminal's lines, the Markdown export, the ACP updates and the transcript's search
format around it, so a new event, or new words for one, is written here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.events import (
    Action,
    ApprovalAnswered,
    BackgroundEnded,
    BackgroundStarted,
    Compacted,
    Error,
    Event,
    FileChanged,
    FinalAnswer,
    FormatError,
    HookOutcome,
    Notice,
    Observation,
    RetryWait,
    Rewound,
    Stopped,
    StopReason,
    TaskListUpdated,
    TaskStarted,
    Thought,
    Undone,
    UserCommand,
    UserCommandOutput,
    call_text,
)
from mzagent_tui.agent.ground.textfiles import lines_label


@dataclass(frozen=True)
class EventText:
    kind: str
    label: str
    text: str


def action_text(tool: str, args: list[object]) -> str:
    """One line for a tool call: the path and size for a write, the command for a shell call."""
    if tool == "write_to_file" and len(args) == 2 and isinstance(args[1], str):
        return f"write_to_file {args[0]!r} ({lines_label(args[1])})"
    if tool == "edit_file" and len(args) == 3 and isinstance(args[1], str) and isinstance(args[2], str):
        return f"edit_file {args[0]!r} ({edit_label(args[1], args[2])})"
    if tool == "run_terminal_command" and args:
        return f"$ {args[0]}"
    if tool == "start_background_command" and args:
        return f"$ {args[0]}  (in the background)"
    if tool == "update_plan" and len(args) == 1 and isinstance(args[0], list):
        return f"update_plan ({len(args[0])} step{'s' if len(args[0]) != 1 else ''})"
    return call_text(tool, args)


TASK_MARKS = {"pending": "☐", "in_progress": "◐", "done": "☑"}
"""A task-list step's mark by its status, in the app's checklist and every text of the list."""


def task_list_text(steps: list[dict[str, str]]) -> str:
    """The task list as lines of text, `☑ Find where options are parsed`, or a note that it was cleared."""
    if not steps:
        return "(cleared)"
    return "\n".join(f"{TASK_MARKS.get(step.get('status', ''), '?')} {step.get('step', '')}" for step in steps)


def edit_label(old_text: str, new_text: str) -> str:
    """What an edit_file call asks for, in a few words: "replace 1 line with 2 lines"."""
    if not old_text:
        return f"add {lines_label(new_text)} at the end"
    return f"replace {lines_label(old_text)} with {lines_label(new_text)}"


def describe(event: Event, root: Path) -> EventText | None:
    match event:
        case TaskStarted(task=task):
            return EventText("question", "Task", task)
        case Thought(text=text):
            return EventText("thought", "Thought", text)
        case Action(tool=tool, args=args):
            return EventText("action", "Action", action_text(tool, args))
        case ApprovalAnswered(approved=False):
            return EventText("notice", "Rejected", event.rejection())
        case ApprovalAnswered(note=note) if note:
            return EventText("notice", "Approved", note)
        case Observation(text=text):
            return EventText("observation", "Observation", text)
        case FileChanged():
            return EventText("change", "Changed", event.summary(root))
        case Compacted(summary=summary):
            return EventText("notice", event.title(), summary)
        case TaskListUpdated(steps=steps):
            return EventText("tasks", "Task list", task_list_text(steps))
        case FinalAnswer(text=text, plan=plan):
            return EventText("final", "Plan" if plan else "Final answer", text)
        case FormatError(message=message, count=count, limit=limit):
            return EventText("notice", f"Format error {count}/{limit}, the model was told", message)
        case RetryWait(seconds=seconds, attempt=attempt, max_attempts=limit, reason=reason):
            return EventText("notice", f"Retry {attempt}/{limit}", f"{reason}; retrying in {seconds:.1f} s")
        case Undone():
            return EventText("notice", "Undo", event.describe(root))
        case Rewound():
            return EventText("notice", "Rewind", event.describe())
        case Notice(text=text):
            return EventText("notice", "Notice", text)
        case Error(message=message):
            return EventText("error", "Error", message)
        case UserCommand(command=command):
            return EventText("action", "You ran", f"$ {command}")
        case UserCommandOutput(text=text):
            return EventText("observation", "Output", text)
        case BackgroundStarted(id=process_id, command=command, by_user=by_user):
            return EventText("action", "You started in the background" if by_user else "Background", f"{process_id} $ {command}")
        case BackgroundEnded():
            return EventText("notice", "Background", event.describe())
        case HookOutcome(status="ok"):
            return None
        case HookOutcome():
            return EventText("notice", f"Hook {event.status.replace('_', ' ')}", hook_text(event))
        case Stopped(reason=reason, message=message) if reason not in (StopReason.FINAL_ANSWER, StopReason.USER_COMMAND):
            return EventText("notice" if reason is StopReason.CANCELLED else "error", "Run stopped", message)
    return None


def hook_text(event: HookOutcome) -> str:
    """What a hook that blocked, failed or timed out did, and what it said on stderr."""
    where = f"{event.hook_event} {event.tool}" if event.tool else event.hook_event
    code = "" if event.exit_code is None else f", exit code {event.exit_code}"
    said = f"\n{event.stderr.rstrip()}" if event.stderr.strip() else ""
    return f"{where}: `{event.command}`{code}{said}"


def searchable_text(event: Event, root: Path) -> str:
    """Everything a search may match in an event, as its entry shows it: a write with its content, a
    read with its path, a command as typed, a change with its diff."""
    described = describe(event, root)
    if described is None:
        return ""
    match event:
        case Action(tool="write_to_file", args=[str() as path, str() as content]):
            return f"write {path}\n{content}"
        case Action(tool="edit_file", args=[str() as path, str() as old_text, str() as new_text]):
            return f"edit {path}\n{old_text}\n{new_text}"
        case Action(tool="read_file", args=[str() as path, *_]):
            return f"read {path}"
        case Action(tool="run_terminal_command", args=[str() as command, *_]):
            return command
        case FileChanged(diff=diff):
            return f"{described.text}\n{diff}"
        case Compacted() | FormatError() | RetryWait():
            return f"{described.label}\n{described.text}"
    return described.text
