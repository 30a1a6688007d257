"""What the model is told in plan mode, and the task that carries out an approved plan.

Kept apart from the loop so the app can build that task without importing the model client.
"""

from __future__ import annotations

from mzagent_tui.agent.ground.words import say

PLAN_MODE_NOTE = say("plan_mode.note")
"""Told with each task in plan mode, so the model plans instead of trying writes one by one."""


def plan_task(plan: str) -> str:
    """The task that carries out a plan the user approved (the next run, in another mode)."""
    return say("plan_mode.carry_out", plan=plan)
