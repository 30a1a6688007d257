"""Deterministic demo scenarios shared by the snapshot tests and `screenshots/make_screenshots.py`."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from textual.widgets import Input

from mzagent_tui.agent.config import Settings
from mzagent_tui.agent.run_config import RunConfig
from mzagent_tui.agent.safety.approval import Policy
from mzagent_tui.app import MzAgentApp
from mzagent_tui.screens.approval import ApprovalScreen
from mzagent_tui.screens.plan import PlanScreen
from mzagent_tui.screens.preview import PreviewScreen
from mzagent_tui.screens.theme import ThemeScreen
from mzagent_tui.widgets.entries import DiffEntry
from mzagent_tui.widgets.project_tree import ProjectTree
from mzagent_tui.widgets.run_status import RunStatus
from mzagent_tui.widgets.task_input import TaskInput
from tests.scripted_server import Fault, Reply, ScriptedServer

DEMO_PROJECT = Path("/tmp/mzagent-demo/project")
TASK = "Add a --shout flag to @greet.py and show me it works"

GREET = 'import sys\n\n\ndef greet(name: str) -> str:\n    return f"Hello, {name}!"\n\n\nif __name__ == "__main__":\n    print(greet(sys.argv[1] if len(sys.argv) > 1 else "world"))\n'
GREET_NEW = (
    'import argparse\n\n\ndef greet(name: str, shout: bool = False) -> str:\n    text = f"Hello, {name}!"\n'
    "    return text.upper() if shout else text\n\n\nif __name__ == \"__main__\":\n"
    "    parser = argparse.ArgumentParser()\n    parser.add_argument(\"name\", nargs=\"?\", default=\"world\")\n"
    "    parser.add_argument(\"--shout\", action=\"store_true\")\n    args = parser.parse_args()\n"
    "    print(greet(args.name, args.shout))\n"
)


def make_demo_project() -> Path:
    shutil.rmtree(DEMO_PROJECT.parent, ignore_errors=True)
    (DEMO_PROJECT / "tests").mkdir(parents=True)
    (DEMO_PROJECT / "greet.py").write_text(GREET)
    (DEMO_PROJECT / "README.md").write_text("# greet\n\nA tiny greeting tool.\n")
    (DEMO_PROJECT / "tests" / "test_greet.py").write_text("from greet import greet\n\n\ndef test_greet():\n    assert greet('a') == 'Hello, a!'\n")
    (DEMO_PROJECT / ".gitignore").write_text("__pycache__/\n")
    return DEMO_PROJECT


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def full_run_script() -> list[Reply]:
    return [
        Reply(
            f'<thought>greet.py uses sys.argv; I will switch to argparse and add --shout.</thought>\n<action>write_to_file("greet.py", "{_quote(GREET_NEW)}")</action>',
            reasoning="The user wants a flag. greet.py was read for me; it parses sys.argv by hand.",
        ),
        Reply("I think it is done now."),
        Reply('<thought>Now I run it with the new flag to check.</thought>\n<action>run_terminal_command("python3 greet.py Ada --shout && python3 greet.py Ada")</action>'),
        Reply("<thought>Both modes work.</thought>\n<final_answer>Added a `--shout` flag to **greet.py** (now using `argparse`):\n\n- `python3 greet.py Ada` prints `Hello, Ada!`\n- `python3 greet.py Ada --shout` prints `HELLO, ADA!`</final_answer>"),
    ]


PLAN = (
    "1. In **greet.py**, replace the `sys.argv` parsing with `argparse`\n"
    "2. Add a `--shout` flag that upper-cases the greeting\n"
    "3. Add a test for `--shout` to **tests/test_greet.py**\n"
    "4. Run `python3 -m pytest -q` and `python3 greet.py Ada --shout`"
)


def plan_script() -> list[Reply]:
    """A run in plan mode: greet.py is read for the model, which answers with its plan."""
    return [Reply(f"<thought>greet.py parses sys.argv by hand; argparse makes the flag easy.</thought>\n<final_answer>{PLAN}</final_answer>")]


def _steps(*statuses: str) -> list[dict[str, str]]:
    texts = ("Switch greet.py to argparse", "Add a --shout flag that upper-cases the greeting", "Run greet.py with and without --shout")
    return [{"step": text, "status": status} for text, status in zip(texts, statuses)]


def task_list_script() -> list[Reply | Fault]:
    """The model keeps a task list: planned, greet.py written, the list updated, then the next
    reply takes its time (the screen is shot while it waits)."""
    return [
        Reply(f'<thought>Three steps: argparse, the flag, then a check.</thought>\n<action>update_plan({_quote_list(_steps("in_progress", "pending", "pending"))})</action>'),
        Reply(f'<thought>greet.py parses sys.argv by hand; argparse makes the flag easy.</thought>\n<action>write_to_file("greet.py", "{_quote(GREET_NEW)}")</action>'),
        Reply(f'<thought>Both changes are in; now the check.</thought>\n<action>update_plan({_quote_list(_steps("done", "done", "in_progress"))})</action>'),
        Fault("stall", text=""),
    ]


def _quote_list(steps: list[dict[str, str]]) -> str:
    return "[" + ", ".join("{" + ", ".join(f'"{k}": "{_quote(v)}"' for k, v in step.items()) + "}" for step in steps) + "]"


def demo_app(server: ScriptedServer, writes: str = "auto", mode: str = "ask", theme: str = "textual-dark") -> MzAgentApp:
    """The demo; `writes="ask"` gates writes, so the first dialog is the write of greet.py with its diff."""
    settings = Settings(
        provider="deepseek", base_url=server.base_url, api_key="sk-demo", model="deepseek-chat", idle_timeout=5, command_timeout=10,
        price_in=0.27, price_out=1.10, context_window=65536, protocol="xml", theme=theme,
    )
    return MzAgentApp(RunConfig(settings, DEMO_PROJECT, Policy(mode, writes=writes), environ={"PATH": "/usr/bin:/bin"}), clock=lambda: 0.0)


async def _until(pilot, condition, timeout: float = 20.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the demo did not reach the expected state")
        await pilot.pause(0.05)


async def tree_loaded(pilot) -> None:  # noqa: ANN001
    pilot.app.query_one(TaskInput).cursor_blink = False  # a blinking cursor makes snapshots flaky
    tree = pilot.app.query_one(ProjectTree)
    await _until(pilot, lambda: len(tree.root.children) >= 3)
    await pilot.pause()


async def submit_task(pilot) -> None:  # noqa: ANN001
    await tree_loaded(pilot)
    box = pilot.app.query_one(TaskInput)
    box.value = TASK
    await pilot.press("enter")


async def to_approval(pilot) -> None:  # noqa: ANN001
    await submit_task(pilot)
    await _until(pilot, lambda: isinstance(screen := pilot.app.screen, ApprovalScreen) and screen.accepts_keys)
    await pilot.pause(0.3)  # the transcript behind the dialog settles (its entries mount and scroll)


async def full_run(pilot) -> None:  # noqa: ANN001
    await to_approval(pilot)
    await pilot.press("y")
    await _until(pilot, lambda: pilot.app.query_one(RunStatus).run.state == "done")
    await tree_loaded(pilot)
    pilot.app.query_one(TaskInput).focus()
    await pilot.pause(0.3)


async def diff_entry(pilot) -> None:  # noqa: ANN001
    """The finished run, scrolled to the diff of the write."""
    await full_run(pilot)
    pilot.app.query_one(DiffEntry).scroll_visible(top=True, animate=False)
    await pilot.pause(0.3)


async def preview(pilot) -> None:  # noqa: ANN001
    await tree_loaded(pilot)
    tree = pilot.app.query_one(ProjectTree)
    node = next(n for n in tree.root.children if n.data.path.name == "greet.py")
    tree.focus()
    tree.select_node(node)
    await _until(pilot, lambda: isinstance(pilot.app.screen, PreviewScreen))
    await pilot.pause(0.3)


async def undo_and_find(pilot) -> None:  # noqa: ANN001
    """After the run: ctrl+z takes back the write to greet.py, ctrl+f finds "shout"."""
    await full_run(pilot)
    await pilot.press("ctrl+z")
    await _until(pilot, lambda: "Hello, {name}" in (DEMO_PROJECT / "greet.py").read_text())
    await pilot.press("ctrl+f")
    pilot.app.query_one("#search-input", Input).cursor_blink = False
    await pilot.press(*"shout")
    await pilot.pause(0.3)
    pilot.app.clear_notifications()
    await pilot.pause()


async def completion_list(pilot) -> None:  # noqa: ANN001
    """`/re` typed in the task box: the built-ins and the project's prompt file that match."""
    commands = DEMO_PROJECT / ".mzagent" / "commands"
    commands.mkdir(parents=True, exist_ok=True)
    (commands / "release.md").write_text("---\ndescription: Bump the version and tag a release\n---\nBump the version to $1, update the changelog and tag it.\n")
    await tree_loaded(pilot)
    pilot.app.query_one(TaskInput).focus()
    await pilot.press("/", "r", "e")
    await pilot.pause(0.3)


LIGHT_THEME = "catppuccin-latte"
"""The light theme the demo shows: every transcript kind reaches 4.5:1 in it (tests/test_app_themes.py)."""


async def theme_picker(pilot) -> None:  # noqa: ANN001
    """The finished run, `/theme` open and moved up to the light theme, shown behind the list (not chosen, nothing saved)."""
    await full_run(pilot)
    box = pilot.app.query_one(TaskInput)
    box.value = "/theme"
    await pilot.press("enter")
    await _until(pilot, lambda: isinstance(pilot.app.screen, ThemeScreen))
    names = pilot.app.screen.names
    await pilot.press(*["up"] * (names.index(pilot.app.theme) - names.index(LIGHT_THEME)))
    await _until(pilot, lambda: pilot.app.theme == LIGHT_THEME)
    await pilot.pause(0.3)


async def task_list(pilot) -> None:  # noqa: ANN001
    """The task list above the task box, two steps done and the check in progress, while the model thinks."""
    await submit_task(pilot)
    await _until(pilot, lambda: pilot.app.query_one(RunStatus).run.step == 4)
    await pilot.pause(0.3)


async def plan_dialog(pilot) -> None:  # noqa: ANN001
    """A run in plan mode has answered: its plan, the mode to run it in, and the three choices."""
    await submit_task(pilot)
    await _until(pilot, lambda: isinstance(screen := pilot.app.screen, PlanScreen) and screen.accepts_keys)
    await pilot.pause(0.3)
