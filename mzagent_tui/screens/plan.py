"""The plan a run in plan mode ended with: run it in a mode the user picks, keep planning, or drop it.

Keys: r runs the plan, k keeps planning (the focused default), Esc cancels; the mode to run in is
picked in the list above the buttons. Keys in the first moments are ignored, as in the approval
dialog, so that typing ahead in the task box can never start a run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Markdown, RadioButton, RadioSet

from mzagent_tui.agent.safety.approval import MODE_DESCRIPTIONS
from mzagent_tui.agent.safety.textsafe import for_display
from mzagent_tui.screens.approval import GRACE_SECONDS

RUN_MODES = ("ask", "auto-safe", "yolo")
"""The modes a plan can be run in (yolo still asks to be confirmed)."""


@dataclass(frozen=True)
class PlanChoice:
    """What the user did with a plan; `mode` is the one to run it in (for "run")."""

    action: Literal["run", "keep", "cancel"]
    mode: str = "ask"


class PlanScreen(ModalScreen[PlanChoice]):
    AUTO_FOCUS = "#plan-keep"
    BINDINGS = [
        Binding("r", "choose('run')", "Run this plan", id="plan.run"),
        Binding("k", "choose('keep')", "Keep planning", id="plan.keep"),
        Binding("escape", "choose('cancel')", "Cancel", id="plan.cancel"),
    ]

    def __init__(self, plan: str, mode: str = "ask", clock: Callable[[], float] = time.monotonic) -> None:
        """`plan` is the model's text (untrusted: shown as Markdown, never as markup); `mode` is picked first."""
        super().__init__()
        self.plan = plan
        self.mode = mode if mode in RUN_MODES else "ask"
        self._clock = clock
        self._opened_at = clock()

    def compose(self) -> ComposeResult:
        with Vertical(id="plan-dialog"):
            yield Label("The agent's plan (nothing has been changed)", id="plan-title")
            with VerticalScroll(id="plan-body"):
                yield Markdown(for_display(self.plan))
            yield Label("Run it in the mode:", id="plan-mode-label")
            with RadioSet(id="plan-mode"):
                for mode in RUN_MODES:
                    yield RadioButton(Text(f"{mode} — {MODE_DESCRIPTIONS[mode]}"), value=mode == self.mode, name=mode)
            with Horizontal(id="plan-buttons"):
                yield Button(Text("Run this plan [r]"), id="plan-run", variant="warning")
                yield Button(Text("Keep planning [k]"), id="plan-keep", variant="primary")
                yield Button(Text("Cancel [esc]"), id="plan-cancel")

    def on_mount(self) -> None:
        """The list's highlight starts on the picked mode (a RadioSet starts on its first button)."""
        self._opened_at = self._clock()
        radios = self.query_one(RadioSet)
        for _ in range(RUN_MODES.index(self.mode)):
            radios.action_next_button()

    @property
    def accepts_keys(self) -> bool:
        """The grace after opening is over: a key typed now was meant for this dialog."""
        return self.is_mounted and self._clock() - self._opened_at >= GRACE_SECONDS

    @on(RadioSet.Changed, "#plan-mode")
    def _mode_picked(self, event: RadioSet.Changed) -> None:
        self.mode = event.pressed.name or "ask"

    def action_choose(self, action: Literal["run", "keep", "cancel"]) -> None:
        if self.accepts_keys:
            self.dismiss(PlanChoice(action, self.mode))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        actions: dict[str | None, Literal["run", "keep", "cancel"]] = {"plan-run": "run", "plan-keep": "keep", "plan-cancel": "cancel"}
        self.action_choose(actions.get(event.button.id, "cancel"))
