"""Pilot tests: the whole app against the scripted server, as a user drives it."""

from __future__ import annotations

import asyncio
import html
import os
import re
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import Input, Log

from mzagent_tui.agent.config import Settings
from mzagent_tui.agent.events import FinalAnswer, Stopped, StopReason
from mzagent_tui.agent.run_config import RunConfig
from mzagent_tui.agent.sessions.history import SessionHistory
from mzagent_tui.app import MzAgentApp
from mzagent_tui.messages import AgentEvent
from mzagent_tui.screens.approval import GRACE_SECONDS, ApprovalScreen
from mzagent_tui.screens.preview import PreviewScreen
from mzagent_tui.widgets.conversation import Conversation
from mzagent_tui.widgets.entries import Entry, ObservationEntry
from mzagent_tui.widgets.project_tree import ProjectTree
from mzagent_tui.widgets.run_status import RunState, RunStatus
from mzagent_tui.widgets.task_input import MAX_TASK_CHARS, TaskInput
from mzagent_tui.widgets.transcript import Transcript
from tests.conftest import config_for
from tests.scripted_server import Reply, answer_reply

SIZE = (120, 40)
SLEEP = f"299.{os.getpid():07d}"
"""A duration no other process on the machine uses: the test counts only its own sleeps."""


def make_app(server, project: Path, history: SessionHistory | None = None, pick_session: bool = False, **overrides: object) -> MzAgentApp:  # noqa: ANN001
    return MzAgentApp(config_for(server, project, **overrides), clock=lambda: 0.0, history=history, pick_session=pick_session)


async def wait_for(pilot, condition: Callable[[], bool], timeout: float = 40.0) -> None:  # noqa: ANN001
    """Until `condition` holds; the deadline only bounds a failure (a loaded CI machine took over
    15 s for a run that takes 3 s when quiet)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.05)


async def submit(pilot, task: str) -> None:  # noqa: ANN001
    box = pilot.app.query_one(TaskInput)
    box.focus()
    box.value = task
    await pilot.press("enter")


def entries(app: MzAgentApp, kind: str | None = None) -> list[Entry]:
    return [e for e in app.query_one(Transcript).entries() if kind is None or e.kind == kind]


def shown(widget) -> str:  # noqa: ANN001
    """The plain text a Static holds, whatever renderable it is."""
    content = widget.content
    if isinstance(content, Syntax):
        return content.code
    if isinstance(content, Text):
        return content.plain
    return str(content)


def entry_texts(app: MzAgentApp, kind: str) -> list[str]:
    texts = []
    for entry in entries(app, kind):
        parts = [shown(w) for w in entry.query("Static")] if entry.children else [entry.render().plain]
        if isinstance(entry, ObservationEntry):
            parts.extend(entry.lines)
        texts.append("\n".join(parts))
    return texts


def state(app: MzAgentApp) -> str:
    return app.query_one(RunStatus).run.state


async def approval(pilot, after: ApprovalScreen | None = None) -> ApprovalScreen:  # noqa: ANN001
    """The approval dialog once its keys work (its grace is over, however late it mounted on a busy
    machine); `after`: a dialog just answered, which may still be on screen for a moment."""
    await wait_for(pilot, lambda: isinstance(screen := pilot.app.screen, ApprovalScreen) and screen is not after and screen.accepts_keys)
    return pilot.app.screen


COMMAND_THEN_ANSWER = [
    Reply('<thought>list files</thought><action>run_terminal_command("echo listed > out.txt")</action>'),
    Reply("<thought>done</thought><final_answer>Listed.</final_answer>"),
]


async def test_full_run_streams_approves_and_answers(server, project: Path) -> None:
    server.script(
        Reply('<thought>write a file</thought><action>write_to_file("hello.py", "print(1)\\n")</action>', reasoning="hmm, a file"),
        *COMMAND_THEN_ANSWER,
    )
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "make hello")
        screen = await approval(pilot)
        assert "echo listed > out.txt" in shown(screen.query_one("#approval-command Static"))
        assert "list files" in shown(screen.query_one("#approval-reason"))
        await pilot.press("y")
        await wait_for(pilot, lambda: state(app) == "done")
        kinds = [e.kind for e in entries(app)]
        assert kinds[0] == "question" and "thinking" in kinds and kinds[-1] == "final"
        assert kinds.count("action") == 2 and kinds.count("observation") == 2
        assert "streaming" not in kinds
        assert (project / "out.txt").read_text() == "listed\n"
        assert entries(app, "final")[0].plain == "Listed."
        assert app.query_one(RunStatus).run.usage.startswith("tokens 300 in / 60 out")


async def test_the_app_hears_of_changed_files_and_the_runs_end_through_messages(server, project: Path) -> None:
    """The conversation tells the app what its run changed and when it ended only by messages:
    a write names its file, so does a file a command changed, a command asks for a rescan, and
    the end of the run comes once."""
    server.script(Reply('<thought>w</thought><action>write_to_file("hello.py", "print(1)\\n")</action>'), *COMMAND_THEN_ANSWER)
    seen: list[object] = []
    app = make_app(server, project)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "make hello")
        await approval(pilot)
        await pilot.press("y")
        await wait_for(pilot, lambda: state(app) == "done")
        assert project / "hello.py" in app.query_one(ProjectTree).changed
    posted = list({id(m): m for m in seen}.values())  # the hook sees a message at each node it bubbles through
    changes = [m for m in posted if isinstance(m, Conversation.FilesChanged)]
    written, command_wrote, command_ran = ((project / "hello.py",), False), ((project / "out.txt",), False), ((), True)
    assert [(m.written, m.rescan) for m in changes] == [written, command_wrote, command_ran]
    assert [m.message for m in posted if isinstance(m, Conversation.RunEnded)] == ["final answer"]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_keys_in_the_grace_period_are_ignored() -> None:
    from textual.app import App

    from mzagent_tui.agent.safety.approval_requests import CommandApproval

    clock = FakeClock()
    results = []
    app = App()
    async with app.run_test(size=SIZE) as pilot:
        request = CommandApproval(command="rm -rf build", cwd="/p", reason="clean", sandbox="sandbox: writes in the project, no network")
        app.push_screen(ApprovalScreen(request, clock=clock), callback=results.append)
        await pilot.pause()
        assert app.screen.focused is app.screen.query_one("#reject")
        await pilot.press("y", "a", "e", "r", "enter", "n", "escape", "o", "w")
        assert isinstance(app.screen, ApprovalScreen) and results == []
        clock.now += GRACE_SECONDS
        await pilot.press("y")
        assert results and results[0].approved and results[0].command is None


async def test_enter_on_the_focused_default_rejects(server, project: Path) -> None:
    server.script(*COMMAND_THEN_ANSWER)
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        await approval(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: state(app) == "done")
        assert not (project / "out.txt").exists()


async def test_reject_with_reason_reaches_the_model(server, project: Path) -> None:
    server.script(*COMMAND_THEN_ANSWER)
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        await approval(pilot)
        await pilot.press("r")
        await pilot.press(*"use python instead")
        await pilot.press("enter")
        await wait_for(pilot, lambda: state(app) == "done")
        assert not (project / "out.txt").exists()
        observation = server.requests[1]["messages"][-1]["content"]
        assert "rejected" in observation and "use python instead" in observation


async def test_escape_rejects(server, project: Path) -> None:
    server.script(*COMMAND_THEN_ANSWER)
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        await approval(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: state(app) == "done")
        assert not (project / "out.txt").exists()
        assert any("rejected" in t for t in entry_texts(app, "notice"))


async def test_edit_then_run(server, project: Path) -> None:
    server.script(*COMMAND_THEN_ANSWER)
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        screen = await approval(pilot)
        await pilot.press("e")
        box = screen.query_one("#approval-input", Input)
        assert box.value == "echo listed > out.txt"
        box.value = "echo edited > out.txt"
        await pilot.press("enter")
        await wait_for(pilot, lambda: state(app) == "done")
        assert (project / "out.txt").read_text() == "edited\n"


async def test_always_allow_saves_a_prefix_that_fails_closed(server, project: Path) -> None:
    server.script(
        Reply('<action>run_terminal_command("touch a.txt")</action>'),
        Reply('<action>run_terminal_command("touch b.txt")</action>'),
        Reply('<action>run_terminal_command("touch c.txt; rm a.txt")</action>'),
        Reply("<final_answer>ok</final_answer>"),
    )
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        screen = await approval(pilot)
        await pilot.press("a")
        assert screen.query_one("#approval-input", Input).value == "touch"
        await pilot.press("enter")
        second = await approval(pilot, after=screen)
        assert shown(second.query_one("#approval-command Static")) == "touch c.txt; rm a.txt"
        assert (project / "a.txt").exists() and (project / "b.txt").exists()
        await pilot.press("n")
        await wait_for(pilot, lambda: state(app) == "done")
        assert (project / "a.txt").exists() and not (project / "c.txt").exists()
        assert any("allowed by the rule 'touch'" in t for t in entry_texts(app, "notice"))


async def test_always_allow_can_be_saved_for_every_session(server, project: Path) -> None:
    from mzagent_tui.agent.config import user_config_path
    from mzagent_tui.agent.safety.approval import load_policy

    server.script(Reply('<action>run_terminal_command("touch a.txt")</action>'), Reply("<final_answer>ok</final_answer>"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        screen = await approval(pilot)
        await pilot.press("a")
        box = screen.query_one("#approval-input", Input)
        assert "ctrl+s: every session" in str(box.border_subtitle)
        box.value = "touch a.txt"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: state(app) == "done")
        assert (project / "a.txt").exists()
        assert load_policy().rules.allow == [["touch", "a.txt"]]
        assert any("now allowed in every session" in t and str(user_config_path()) in t for t in entry_texts(app, "notice"))


async def test_cancel_during_a_command_kills_it_and_allows_a_follow_up(server, project: Path) -> None:
    server.script(
        Reply(f'<action>run_terminal_command("sleep {SLEEP}")</action>'),
        Reply("<final_answer>follow-up answered</final_answer>"),
    )
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await start_the_sleep(pilot)
        app.query_one(TaskInput).focus()
        await pilot.press("escape")
        await wait_for(pilot, lambda: state(app) == "cancelled", timeout=8)
        assert _sleepers() == 0
        assert any("cancelled" in t for t in entry_texts(app, "observation"))
        await submit(pilot, "and now?")
        await wait_for(pilot, lambda: len(entries(app, "final")) == 1)
        messages = server.requests[-1]["messages"]
        assert messages[-1]["content"] == "<question>and now?</question>"


async def start_the_sleep(pilot) -> None:  # noqa: ANN001
    """Submit a task, approve the scripted `sleep SLEEP`, wait until it runs."""
    await submit(pilot, "t")
    await approval(pilot)
    await pilot.press("y")
    await wait_for(pilot, lambda: _sleepers() > 0)


async def _sleepers_gone(within: float) -> bool:
    deadline = time.monotonic() + within
    while _sleepers() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return _sleepers() == 0


def _sleepers() -> int:
    count = 0
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["cmdline"] == ["sleep", SLEEP] and proc.info["status"] != psutil.STATUS_ZOMBIE:
                count += 1
        except psutil.NoSuchProcess:
            continue
    return count


async def test_quit_mid_command_exits_promptly(server, project: Path) -> None:
    server.script(Reply(f'<action>run_terminal_command("sleep {SLEEP}")</action>'))
    app = make_app(server, project)
    started = None
    async with app.run_test(size=SIZE) as pilot:
        await start_the_sleep(pilot)
        started = time.monotonic()
        await pilot.press("ctrl+q")
    worker_threads = [w for w in app.workers if w.group == "agent"]
    assert await _sleepers_gone(within=30)
    assert time.monotonic() - started < 30
    assert all(w.is_finished or w.is_cancelled for w in worker_threads) or not worker_threads


async def test_worker_messages_left_at_shutdown_are_dropped(server, project: Path) -> None:
    """The app may close while a handler awaits a mount; what the worker posted meanwhile is dropped."""
    app = make_app(server, project)
    async with app.run_test(size=SIZE):
        conversation = app.conversation
        conversation.post_message(AgentEvent(FinalAnswer("done"), conversation.number))
        conversation.post_message(AgentEvent(Stopped(StopReason.FINAL_ANSWER, "final answer", 1), conversation.number))
    # leaving run_test closes the app at once and re-raises what any handler raised meanwhile


async def test_queued_task_starts_when_the_run_ends(server, project: Path) -> None:
    server.script(
        Reply("<thought>slow</thought><final_answer>first</final_answer>", chunk_size=1, delay=0.05),
        Reply("<final_answer>second</final_answer>"),
    )
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "one")
        await submit(pilot, "two")
        assert app.query_one(RunStatus).run.queued == 1
        await wait_for(pilot, lambda: len(entries(app, "final")) == 2)
        assert [t.split("\n")[-1] for t in entry_texts(app, "question")] == ["one", "two"]
        assert app.query_one(RunStatus).run.queued == 0


async def test_history_recall(server, project: Path) -> None:
    server.default = Reply("<final_answer>ok</final_answer>")
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        for task in ("first task", "second task"):
            await submit(pilot, task)
            await wait_for(pilot, lambda: state(app) == "done")
        box = app.query_one(TaskInput)
        await pilot.press("up")
        assert box.value == "second task"
        await pilot.press("up")
        assert box.value == "first task"
        await pilot.press("down", "down")
        assert box.value == ""


async def test_new_conversation_starts_clean(server, project: Path) -> None:
    server.default = Reply("<final_answer>ok</final_answer>")
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "first")
        await wait_for(pilot, lambda: state(app) == "done")
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert entries(app) == []
        assert app.query_one(RunStatus).run == RunState()  # idle, no step, no tokens, no time
        await submit(pilot, "second")
        await wait_for(pilot, lambda: len(entries(app, "final")) == 1)
        assert [m["role"] for m in server.requests[-1]["messages"]] == ["system", "user"]


async def test_new_conversation_mid_run_shows_nothing_of_the_old_run(server, project: Path) -> None:
    server.script(
        Reply("<thought>slow old thought</thought><final_answer>old answer</final_answer>", chunk_size=2, delay=0.05),
        Reply("<final_answer>new answer</final_answer>"),
    )
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "old task")
        await wait_for(pilot, lambda: bool(entries(app, "streaming")))
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: not app.conversation.run_active)
        await pilot.pause(0.2)
        assert entries(app) == [], "nothing of the cancelled run arrived in the new conversation"
        await submit(pilot, "new task")
        await wait_for(pilot, lambda: len(entries(app, "final")) == 1)
        assert [e.plain for e in entries(app)] == ["new task", "new answer"]
        assert [m["role"] for m in server.requests[-1]["messages"]] == ["system", "user"]


async def test_tree_refreshes_and_marks_written_files(server, project: Path) -> None:
    (project / "existing.txt").write_text("x")
    server.script(
        Reply('<action>write_to_file("fresh.py", "x = 1\\n")</action>'),
        Reply("<final_answer>ok</final_answer>"),
    )
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(ProjectTree)
        await wait_for(pilot, lambda: len(tree.root.children) == 1)
        await submit(pilot, "t")
        await wait_for(pilot, lambda: state(app) == "done")
        await wait_for(pilot, lambda: any(n.data.path.name == "fresh.py" for n in tree.root.children))
        assert project / "fresh.py" in tree.changed


async def test_tree_hides_noise_and_gitignored(server, project: Path) -> None:
    (project / ".gitignore").write_text("*.log\n")
    for name in ("keep.py", "drop.log"):
        (project / name).write_text("")
    for folder in (".git", "node_modules", "__pycache__", "src"):
        (project / folder).mkdir()
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(ProjectTree)
        await wait_for(pilot, lambda: len(tree.root.children) > 0)
        assert sorted(n.data.path.name for n in tree.root.children) == [".gitignore", "keep.py", "src"]


async def _preview_the_only_file(pilot, app) -> None:  # noqa: ANN001
    """Select the tree's one entry, as a click would, and wait for its preview."""
    tree = app.query_one(ProjectTree)
    await wait_for(pilot, lambda: len(tree.root.children) == 1)
    tree.focus()
    tree.select_node(tree.root.children[0])
    await wait_for(pilot, lambda: isinstance(app.screen, PreviewScreen))
    await pilot.pause()


async def test_preview_highlights_a_selected_file(server, project: Path) -> None:
    (project / "code.py").write_text("def f():\n    return 42\n")
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await _preview_the_only_file(pilot, app)
        assert "code.py" in shown(app.screen.query_one("#preview-title"))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PreviewScreen))


async def test_binary_preview_is_guarded(server, project: Path) -> None:
    (project / "blob.bin").write_bytes(b"\x00\x01" * 1000)
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(PreviewScreen(project / "blob.bin", "blob.bin"))
        await pilot.pause()
        assert "binary file" in shown(app.screen.query_one("#preview-code"))


async def test_a_fifo_selected_in_the_tree_is_not_opened_and_the_ui_stays_live(server, project: Path) -> None:
    """Opening a FIFO for reading waits for a writer: the preview must not freeze the event loop."""
    os.mkfifo(project / "pipe")
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await _preview_the_only_file(pilot, app)
        assert "not a regular file" in shown(app.screen.query_one("#preview-code"))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PreviewScreen))


async def test_untrusted_markup_and_escapes_are_shown_literally(server, project: Path) -> None:
    server.script(
        Reply('<thought>[/x] [link=http://evil]click[/link] [bold]\x1b]52;c;ZXZpbA==\x07</thought><action>run_terminal_command("printf \'[/y] \\\\033]0;title\\\\007done\'")</action>'),
        Reply("<final_answer>[/z] **bold** [red]x[/red]</final_answer>"),
    )
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "[/task]")
        await approval(pilot)
        await pilot.press("y")
        await wait_for(pilot, lambda: state(app) == "done")
        thought = entry_texts(app, "thought")[0]
        assert "[/x] [link=http://evil]click[/link] [bold]" in thought and "\x1b" not in thought
        observation = entry_texts(app, "observation")[0]
        assert "[/y]" in observation and "\x1b" not in observation and "title" not in observation
        assert "[/task]" in entry_texts(app, "question")[0]


async def test_observation_expands_and_opens_the_full_output(server, project: Path) -> None:
    server.script(
        Reply('<action>run_terminal_command("seq 1 30000")</action>'),
        Reply("<final_answer>ok</final_answer>"),
    )
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        await approval(pilot)
        await pilot.press("y")
        await wait_for(pilot, lambda: state(app) == "done")
        entry = app.query_one(ObservationEntry)
        assert entry.size.height <= 1 + 12 and not entry.query(Log), "collapsed: the first lines, no log yet"
        entry.focus()
        await pilot.press("enter")
        await pilot.pause()
        log = entry.query_one(Log)
        assert entry.has_class("-expanded") and log.line_count == len(entry.lines) > 1000 and 12 < log.size.height <= 200
        assert not entry.query_one(".observation-text").display
        await pilot.press("enter")
        await pilot.pause()
        assert not log.display and entry.query_one(".observation-text").display and entry.size.height <= 1 + 12
        await pilot.press("enter")
        await pilot.pause()
        assert log.display and len(entry.query(Log)) == 1, "the log is made once"
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, PreviewScreen))
        assert "full output" in shown(app.screen.query_one("#preview-title"))


async def test_without_an_endpoint_the_app_explains_and_the_tree_works(project: Path) -> None:
    (project / "a.py").write_text("")
    app = MzAgentApp(RunConfig(Settings(), project, environ={}))
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(ProjectTree)
        await wait_for(pilot, lambda: len(tree.root.children) == 1)
        text = entry_texts(app, "error")[0]
        assert "no model endpoint configured" in text and "DEEPSEEK_API_KEY" in text
        await submit(pilot, "try anyway")
        await wait_for(pilot, lambda: state(app) == "stopped")
        assert len(entry_texts(app, "error")) == 2


async def test_retry_waits_and_endpoint_errors_show_as_notices_not_tracebacks(server, project: Path) -> None:
    from tests.scripted_server import Fault

    server.script(Fault("status", 503), Fault("status", 401))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        await wait_for(pilot, lambda: state(app) == "stopped")
        assert any("HTTP 503" in t for t in entry_texts(app, "notice"))
        errors = " ".join(entry_texts(app, "error"))
        assert "refused the API key" in errors and "Traceback" not in errors and "sk-test-secret-key-1234" not in errors


async def test_huge_paste_is_cut_without_freezing(server, project: Path) -> None:
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        from textual import events

        box = app.query_one(TaskInput)
        box.focus()
        box.post_message(events.Paste("x" * 10_000_000))
        await pilot.pause()
        assert len(box.value) == MAX_TASK_CHARS


async def test_tiny_terminal_does_not_crash(server, project: Path) -> None:
    server.script(Reply("<final_answer>ok</final_answer>"))
    app = make_app(server, project)
    async with app.run_test(size=(20, 5)) as pilot:
        await submit(pilot, "t")
        await wait_for(pilot, lambda: state(app) == "done")


async def test_many_entries_are_pruned(server, project: Path) -> None:
    from mzagent_tui.widgets.entries import text_entry
    from mzagent_tui.widgets.transcript import HIGH_WATER

    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.query_one(Transcript)
        for i in range(HIGH_WATER + 50):
            transcript.add(text_entry("notice", f"n{i}"))
        await pilot.pause()
        assert len(transcript.children) <= HIGH_WATER


@pytest.mark.parametrize("key", ["ctrl+b"])
async def test_tree_toggles(server, project: Path, key: str) -> None:
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(key)
        assert not app.query_one(ProjectTree).display
        await pilot.press(key)
        assert app.query_one(ProjectTree).display


async def test_dialog_lists_each_part_with_its_verdict(server, project: Path) -> None:
    from mzagent_tui.agent.safety.approval import Policy, Rules

    rules = Rules()
    rules.add("allow", "ls")
    server.script(Reply('<action>run_terminal_command("ls && rm -rf build")</action>'), Reply("<final_answer>ok</final_answer>"))
    app = MzAgentApp(config_for(server, project, policy=Policy("ask", rules)))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        screen = await approval(pilot)
        table = shown(screen.query_one("#approval-parts"))
        assert "allowed ls" in table and "allowed by the rule 'ls'" in table
        assert "asks    rm -rf build" in table and "deletes files" in table
        await pilot.press("n")
        await wait_for(pilot, lambda: state(app) == "done")


async def test_auto_safe_runs_read_only_commands_without_asking(server, project: Path) -> None:
    from mzagent_tui.agent.safety.approval import Policy

    (project / "a.txt").write_text("hello\n")
    server.script(Reply('<action>run_terminal_command("wc -l a.txt")</action>'), Reply("<final_answer>ok</final_answer>"))
    app = MzAgentApp(config_for(server, project, policy=Policy("auto-safe")))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        await wait_for(pilot, lambda: state(app) == "done")
        assert any("1 a.txt" in t for t in entry_texts(app, "observation"))
        assert any("safe list" in t for t in entry_texts(app, "notice"))


async def test_yolo_needs_a_confirmation_and_shows_a_marker(server, project: Path) -> None:
    from mzagent_tui.screens.confirm import ConfirmScreen

    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        app.action_approval_mode("yolo")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")
        await pilot.pause()
        assert app.policy.mode == "ask"
        app.action_approval_mode("yolo")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await pilot.pause()
        assert app.policy.mode == "yolo"
        assert "YOLO" in app.query_one(RunStatus).render().plain


async def test_long_retry_after_is_reported_at_once(server, project: Path) -> None:
    from tests.scripted_server import Fault

    server.script(Fault("status", 429, headers={"retry-after": "300"}))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        started = time.monotonic()
        await submit(pilot, "t")
        await wait_for(pilot, lambda: state(app) == "stopped")
        assert time.monotonic() - started < 60
        assert any("wait 300 s" in t for t in entry_texts(app, "error"))


async def test_stalled_stream_is_marked_incomplete_and_retried(server, project: Path) -> None:
    from tests.scripted_server import Fault

    server.script(Fault("stall", text='<action>run_terminal_command("rm -rf x'), Reply("<final_answer>recovered</final_answer>"))
    app = make_app(server, project, idle_timeout=0.5)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        await wait_for(pilot, lambda: state(app) == "done")
        incomplete = [e for e in entries(app, "streaming") if e.has_class("-incomplete")]
        assert incomplete and "nothing was run" in shown(incomplete[0].query(".entry-body").first())
        assert not isinstance(app.screen, ApprovalScreen)
        assert any("stalled" in t for t in entry_texts(app, "notice"))


async def test_file_names_with_markup_and_newlines(server, project: Path) -> None:
    odd = "[bold]x[red] [link=e]\nname.txt"
    (project / odd).write_text("odd")
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(ProjectTree)
        await wait_for(pilot, lambda: len(tree.root.children) == 1)
        assert tree.root.children[0].data.path.name == odd
        tree.select_node(tree.root.children[0])
        await wait_for(pilot, lambda: isinstance(app.screen, PreviewScreen))


async def test_a_project_with_100k_files_stays_responsive(server, project: Path) -> None:
    big = project / "data"
    big.mkdir()
    for i in range(100_000):
        (big / f"f{i:06d}.txt").touch()
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(ProjectTree)
        await wait_for(pilot, lambda: len(tree.root.children) == 1)
        node = tree.root.children[0]
        node.expand()
        await wait_for(pilot, lambda: len(node.children) > 0, timeout=30)
        from mzagent_tui.widgets.project_tree import MAX_ENTRIES_PER_FOLDER

        assert len(node.children) == MAX_ENTRIES_PER_FOLDER + 1
        names = [child.data.path.name for child in node.children]
        assert names[0] == "f000000.txt" and names[-2] == "f000499.txt", "the first entries by name, not a random sample"
        assert names[-1] == "… 99,500 more entries not listed"
        tree.select_node(node.children[-1])
        await pilot.pause()
        assert not isinstance(app.screen, PreviewScreen)
        box = app.query_one(TaskInput)
        box.focus()
        await pilot.press("o", "k")
        assert box.value == "ok"


async def test_cancel_during_streaming_keeps_the_conversation_valid(server, project: Path) -> None:
    server.script(Reply("<thought>" + "slow " * 400, chunk_size=2, delay=0.02), Reply("<final_answer>after</final_answer>"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        await wait_for(pilot, lambda: len(entries(app, "streaming")) == 1)
        await pilot.press("escape")
        await wait_for(pilot, lambda: state(app) == "cancelled", timeout=8)
        assert entries(app, "streaming")[0].has_class("-incomplete")
        await submit(pilot, "again")
        await wait_for(pilot, lambda: app.conversation.last_answer == "after")
        roles = [m["role"] for m in server.requests[-1]["messages"]]
        assert roles == ["system", "user", "assistant", "user"]


async def test_switch_provider_and_model_from_the_palette(server, project: Path) -> None:
    from mzagent_tui.screens.ask_text import AskTextScreen

    server.default = Reply("<final_answer>ok</final_answer>")
    app = MzAgentApp(config_for(server, project, environ={"PATH": "/usr/bin:/bin", "MZAGENT_BASE_URL": server.base_url}), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        app.action_switch_model()
        await wait_for(pilot, lambda: isinstance(app.screen, AskTextScreen) and bool(app.screen.query(Input)))
        app.screen.query_one(Input).value = "openai gpt-4o"
        await pilot.press("enter")
        await pilot.pause()
        assert app.settings.model == "scripted-model"  # no OPENAI_API_KEY: refused, nothing changed
        app.action_switch_model()
        await wait_for(pilot, lambda: isinstance(app.screen, AskTextScreen) and bool(app.screen.query(Input)))
        app.screen.query_one(Input).value = "custom other-model"
        await pilot.press("enter")
        await pilot.pause()
        assert (app.settings.provider, app.settings.model) == ("custom", "other-model")
        assert "custom/other-model" in app.sub_title
        await submit(pilot, "t")
        await wait_for(pilot, lambda: state(app) == "done")
        assert server.requests[-1]["model"] == "other-model"


async def test_the_final_answer_streams_as_markdown(server, project: Path) -> None:
    from mzagent_tui.agent.model.parsing import partial_tag_length
    from mzagent_tui.widgets.entries import StreamingEntry

    answer = "Here is **the plan**:\n\n- first item\n- second item with `code`\n\nAnd a closing line that goes on for a while."
    server.script(Reply(f"<thought>writing</thought><final_answer>{answer}</final_answer>", chunk_size=3, delay=0.03))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "plan")
        await wait_for(pilot, lambda: bool(entries(app, "streaming")) and "first item" in entries(app, "streaming")[0].answer.source)
        streaming = entries(app, "streaming")[0]
        assert isinstance(streaming, StreamingEntry) and streaming.answer_shown
        assert "<final_answer>" not in streaming.answer.source and "<" not in "".join(shown(s) for s in streaming.query("Static.entry-body"))
        assert answer.startswith(streaming.answer.source), "the answer so far, nothing of the closing tag"
        await wait_for(pilot, lambda: state(app) == "done")
        assert not entries(app, "streaming") and entries(app, "final")[0].plain == answer
    assert [partial_tag_length(t, "</final_answer>") for t in ("abc", "abc<", "abc</FINAL_ans", "abc</final_answer", "a<b")] == [0, 1, 11, 14, 0]


@pytest.mark.parametrize(("key", "confined"), [("y", True), ("o", False), ("w", True)])
async def test_the_dialog_says_how_the_command_is_confined_and_o_lifts_it_once(server, project: Path, tmp_path: Path, key: str, confined: bool) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    server.script(
        Reply(f'<thought>t</thought><action>run_terminal_command("touch {outside}/x")</action>'),
        Reply(f'<thought>t</thought><action>run_terminal_command("touch {outside}/y")</action>'),
        Reply("<final_answer>done</final_answer>"),
    )
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        first = await approval(pilot)
        assert "sandbox: writes in the project, no network" in shown(first.query_one("#approval-sandbox"))
        await pilot.press(key)
        await approval(pilot, after=first)
        await pilot.press("y")
        await wait_for(pilot, lambda: state(app) == "done")
        assert "sandbox" in app.sub_title
    assert (outside / "x").exists() is not confined
    assert not (outside / "y").exists()


@pytest.mark.parametrize(("number", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
async def test_a_stop_signal_ends_the_app_like_quit_with_its_exit_code(server, project: Path, number: int, code: int) -> None:
    server.script(Reply(f'<action>run_terminal_command("sleep {SLEEP}")</action>'))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await start_the_sleep(pilot)
        os.kill(os.getpid(), number)
        await wait_for(pilot, lambda: app.return_code is not None)
    assert app.return_code == code
    assert await _sleepers_gone(within=5)


async def test_the_empty_transcript_shows_a_hint_until_the_first_task(server, project: Path) -> None:
    server.script(answer_reply("hi"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        [hint] = app.query(".first-hint")
        text = str(hint.render())
        assert "Type a task below and press Enter" in text and "asks you first" in text and "ctrl+p commands" in text
        await submit(pilot, "say hi")
        await wait_for(pilot, lambda: state(app) == "done")
        assert not app.query(".first-hint")


async def test_compacting_from_the_palette_shows_the_summary_as_an_entry(server, project: Path) -> None:
    for name in "abc":
        (project / f"{name}.txt").write_text("alpha\n")
    server.script(
        *[Reply(f'<thought>read</thought><action>read_file("{name}.txt")</action>') for name in "abc"],
        Reply("<thought>done</thought><final_answer>alpha</final_answer>"),
        Reply("The user asked what a.txt says; it says alpha."),
    )
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "what does a.txt say?")
        await wait_for(pilot, lambda: state(app) == "done")
        app.action_compact()
        await wait_for(pilot, lambda: any("context compacted" in e.title_text for e in entries(app, "notice")))
        [entry] = [e for e in entries(app, "notice") if "context compacted" in e.title_text]
        assert entry.plain == "The user asked what a.txt says; it says alpha."
        assert server.requests[-1]["messages"][-1]["content"].endswith("no <final_answer>.")


async def test_tasks_typed_while_the_offline_model_starts_wait_for_it(server, project: Path, monkeypatch) -> None:  # noqa: ANN001
    """With no endpoint the app starts the bundled model (here a stand-in that points at the
    scripted server): its progress shows, a task typed meanwhile queues, and runs once it is ready."""
    from mzagent_tui.agent.model.local import MODEL_ALIAS

    loaded = threading.Event()

    class StandIn:
        base_url = server.base_url
        model = Path("bundled.gguf")
        stopped = False

        def describe(self) -> str:
            return "prebuilt engine, 16k context"

        def launch(self) -> None:
            pass

        def stop(self) -> None:
            StandIn.stopped = True

    def start_local(progress, cancelled, launch):  # noqa: ANN001, ANN202 - the signature of local.start_local
        stand_in = StandIn()
        launch(stand_in)
        progress("loading the model", 3, 0)
        assert loaded.wait(10) and not cancelled()
        return stand_in

    monkeypatch.setattr("mzagent_tui.app.start_local", start_local)
    monkeypatch.setattr("mzagent_tui.app.local_available", lambda: True)
    server.script(Reply("<final_answer>ran on the bundled model</final_answer>"))
    app = MzAgentApp(config_for(server, project, provider="local", base_url="", model="", api_key=""), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any("loading the model… 3 s" in text for text in entry_texts(app, "notice")))
        assert state(app) == "starting the local model"
        await submit(pilot, "go")
        await wait_for(pilot, lambda: app.query_one(RunStatus).run.queued == 1)
        assert server.requests == []
        loaded.set()
        await wait_for(pilot, lambda: state(app) == "done")
        assert entries(app, "final")[0].plain == "ran on the bundled model"
        assert any("ready: bundled.gguf (prebuilt engine, 16k context)" in text for text in entry_texts(app, "notice"))
        assert app.settings.base_url == server.base_url and app.settings.model == MODEL_ALIAS
        assert f"local/{MODEL_ALIAS}" in app.sub_title
    assert StandIn.stopped, "the app stops the server it launched"


async def test_a_streaming_reply_shows_its_thought_and_action_as_entries_and_never_a_tag(server, project: Path) -> None:
    """A small model writes for tens of seconds: the screen, captured at many points of a slowly
    streamed reply (3 characters every 80 ms, so tags arrive cut in two), shows the thought in a
    Thought entry and the action in an Action entry as they are written, and no `<` at all (the
    reply has none outside its tags)."""
    (project / "notes.txt").write_text("x\n")
    server.script(
        Reply('<thought>The notes file holds the list I need to read first.</thought>\n<action>read_file("notes.txt")</action>', chunk_size=3, delay=0.08),
        Reply("<thought>Done reading it.</thought><final_answer>It holds one line, the letter x, and nothing else at all.</final_answer>", chunk_size=3, delay=0.08),
    )
    app = make_app(server, project)
    screens: list[str] = []
    seen_parts: set[str] = set()
    actions: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "what is in notes.txt?")
        deadline = time.monotonic() + 30
        polls = 0
        while state(app) != "done" and time.monotonic() < deadline:
            polls += 1
            if polls % 3 == 1:  # a screenshot costs far more than a look at the widgets
                screens.append(screen_text(app.export_screenshot()))
            for stream in entries(app, "streaming"):
                parts = [child for child in stream.query(Entry) if child is not stream and not child.has_class("-hidden")]
                seen_parts |= {part.kind for part in parts}
                actions += [shown(part.query_one(".entry-body")) for part in parts if part.kind == "action"]
            await pilot.pause(0.02)
        assert state(app) == "done"
    assert len(screens) >= 5 and {"thought", "action", "final"} <= seen_parts
    assert not [screen for screen in screens if "<" in screen]
    assert any("The notes file holds" in screen and "Thought" in screen for screen in screens)
    assert actions and all('read_file("notes.txt")'.startswith(text) for text in actions), actions


def screen_text(svg: str) -> str:
    """What a screenshot shows, as text: the SVG's elements dropped, its entities read."""
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")
