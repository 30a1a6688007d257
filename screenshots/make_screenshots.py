"""Regenerate the README's screenshots against the scripted server.

    python screenshots/make_screenshots.py [NAME.svg ...]   (all of them without a name)
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp())

from tests import scenarios  # noqa: E402
from tests.scripted_server import ScriptedServer  # noqa: E402

SHOTS = {
    "main-screen.svg": (scenarios.full_run, "auto", "ask", scenarios.full_run_script),
    "light-theme.svg": (scenarios.full_run, "auto", "ask", scenarios.full_run_script, scenarios.LIGHT_THEME),
    "theme-picker.svg": (scenarios.theme_picker, "auto", "ask", scenarios.full_run_script),
    "approval-dialog.svg": (scenarios.to_approval, "auto", "ask", scenarios.full_run_script),
    "write-dialog.svg": (scenarios.to_approval, "ask", "ask", scenarios.full_run_script),
    "diff-entry.svg": (scenarios.diff_entry, "auto", "ask", scenarios.full_run_script),
    "file-preview.svg": (scenarios.preview, "auto", "ask", scenarios.full_run_script),
    "undo-and-find.svg": (scenarios.undo_and_find, "auto", "ask", scenarios.full_run_script),
    "completion-list.svg": (scenarios.completion_list, "auto", "ask", scenarios.full_run_script),
    "plan-dialog.svg": (scenarios.plan_dialog, "auto", "plan", scenarios.plan_script),
    "task-list.svg": (scenarios.task_list, "auto", "ask", scenarios.task_list_script),
}
"""File name: (how to drive the demo there, writes setting, approval mode, the model's script[, theme])."""


async def shoot(name: str, drive, writes: str, mode: str, script, theme: str = "textual-dark") -> None:  # noqa: ANN001
    scenarios.make_demo_project()
    with ScriptedServer(script()) as server:
        app = scenarios.demo_app(server, writes, mode, theme)
        async with app.run_test(size=(120, 40)) as pilot:
            await drive(pilot)
            await pilot.wait_for_scheduled_animations()
            await pilot.pause()
            app.save_screenshot(name, str(HERE))
    print(f"wrote screenshots/{name}")


async def main() -> None:
    only = set(sys.argv[1:])
    for name, shot in SHOTS.items():
        if not only or name in only:
            await shoot(name, *shot)


if __name__ == "__main__":
    asyncio.run(main())
