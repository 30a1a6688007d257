"""Regenerate the README's screenshots against the scripted server.

    python screenshots/make_screenshots.py
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
    "main-screen.svg": (scenarios.full_run, "auto", "ask"),
    "approval-dialog.svg": (scenarios.to_approval, "auto", "ask"),
    "write-dialog.svg": (scenarios.to_approval, "ask", "ask"),
    "diff-entry.svg": (scenarios.diff_entry, "auto", "ask"),
    "file-preview.svg": (scenarios.preview, "auto", "ask"),
    "undo-and-find.svg": (scenarios.undo_and_find, "auto", "ask"),
    "completion-list.svg": (scenarios.completion_list, "auto", "ask"),
    "plan-dialog.svg": (scenarios.plan_dialog, "auto", "plan"),
}
"""File name: (how to drive the demo there, writes setting, approval mode)."""


async def shoot(name: str, drive, writes: str, mode: str) -> None:  # noqa: ANN001
    scenarios.make_demo_project()
    script = scenarios.plan_script() if mode == "plan" else scenarios.full_run_script()
    with ScriptedServer(script) as server:
        app = scenarios.demo_app(server, writes, mode)
        async with app.run_test(size=(120, 40)) as pilot:
            await drive(pilot)
            await pilot.wait_for_scheduled_animations()
            await pilot.pause()
            app.save_screenshot(name, str(HERE))
    print(f"wrote screenshots/{name}")


async def main() -> None:
    for name, (drive, writes, mode) in SHOTS.items():
        await shoot(name, drive, writes, mode)


if __name__ == "__main__":
    asyncio.run(main())
