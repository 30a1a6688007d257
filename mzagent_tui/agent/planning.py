"""What the model is told in plan mode, and the task that carries out an approved plan.

Kept apart from the loop so the app can build that task without importing the model client.
"""

from __future__ import annotations

PLAN_MODE_NOTE = (
    "plan mode is on for this task: find out what you need (read files, run read-only commands) but change nothing, "
    "since writes and other commands are refused, and the commands that run see the project read-only. Your final answer is the plan: the numbered steps you would take, "
    "naming the files and commands; the user reads it and may run it"
)
"""Told with each task in plan mode, so the model plans instead of trying writes one by one."""


def plan_task(plan: str) -> str:
    """The task that carries out a plan the user approved (the next run, in another mode)."""
    return f"Carry out this plan, which the user approved:\n\n{plan}"
