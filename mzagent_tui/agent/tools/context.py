"""What the built-in tools share with the loop for one session."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.events import EventSink
from mzagent_tui.agent.safety.approval import Approver
from mzagent_tui.agent.safety.sandbox import Sandbox
from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.skills import Skills
from mzagent_tui.agent.task_facts import TaskFacts


@dataclass
class ToolContext:
    root: Path
    """The project folder, already resolved."""
    session: Session
    emit: EventSink
    approver: Approver
    redact: Redactor
    env: Mapping[str, str]
    """Environment for commands, secrets already removed."""
    command_timeout: float = 120.0
    cancel: CancelToken = field(default_factory=CancelToken)
    """Replaced by the loop for each run."""
    thought: str = ""
    """The model's latest thought, shown as the reason in approval requests."""
    plan_mode: Callable[[], bool] = lambda: False
    """Whether the approval mode is plan now: commands then run with the project read-only."""
    read_only_task: str = ""
    """Why the current task may change no file ("": it may), set by the loop when a task says to
    change nothing (the `task.no_change` aid): the file tools refuse to write, and commands run
    with the project read-only, as in plan mode."""
    sandbox: Sandbox = field(default_factory=lambda: Sandbox(Path("/"), mode="off"))
    """How commands are confined; the agent passes the session's (tests may leave it off)."""
    skills: Skills = field(default_factory=Skills)
    """The skills the prompt lists: read_file reads a user skill's files from its folder."""
    facts: TaskFacts = field(default_factory=TaskFacts)
    """What the current task's words name and ask, read once when it started."""
