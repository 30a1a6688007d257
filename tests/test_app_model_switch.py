"""`/model` in the app keeps what the user chose at start: every flag, the approval mode and
`--writes` stay in force after the switch. Each test starts the app as `mzagent` would (the
configuration read from flags and environment), switches to `custom fake2`, runs a task against
the scripted server and looks at what the run did or sent."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from mzagent_tui.agent.run_config import RunConfig
from mzagent_tui.app import MzAgentApp
from mzagent_tui.screens.approval import ApprovalScreen
from mzagent_tui.screens.ask_text import AskTextScreen
from mzagent_tui.widgets.run_status import RunStatus
from tests.scripted_server import Reply, ScriptedServer, answer_reply, last_user, write_reply
from tests.test_app import SIZE, approval, entry_texts, state, submit, wait_for


def start(server: ScriptedServer, project: Path, flags: dict[str, Any], approval: str | None = None, writes: str | None = None) -> MzAgentApp:
    environ = {
        "PATH": "/usr/bin:/bin", "MZAGENT_PROVIDER": "custom", "MZAGENT_BASE_URL": server.base_url, "MZAGENT_MODEL": "fake1",
        "MZAGENT_API_KEY": "sk-test-1234567890", "MZAGENT_SANDBOX": "off",
    }
    return MzAgentApp(RunConfig.load(project, flags, approval, writes, environ=environ, cwd=project), clock=lambda: 0.0)


async def switch(pilot, app: MzAgentApp) -> None:  # noqa: ANN001
    await submit(pilot, "/model custom fake2")
    await wait_for(pilot, lambda: app.settings.model == "fake2")


def offered(request: dict[str, Any]) -> str:
    """The system prompt the model got: the tools offered are described there."""
    return request["messages"][0]["content"]


async def test_max_steps_survive_a_model_switch(server, project: Path) -> None:
    server.script(answer_reply())
    app = start(server, project, {"max_steps": 7})
    async with app.run_test(size=SIZE) as pilot:
        await switch(pilot, app)
        await submit(pilot, "t")
        await wait_for(pilot, lambda: state(app) == "done")
        assert "step 1/7" in app.query_one(RunStatus).render().plain
    assert server.requests[-1]["model"] == "fake2"


async def test_a_custom_tool_is_still_offered_after_a_model_switch(server, project: Path) -> None:
    server.script(Reply('<thought>count</thought><action>word_count("two words")</action>'), answer_reply())
    app = start(server, project, {"tools": ["tests.custom_tools:word_count"]})
    async with app.run_test(size=SIZE) as pilot:
        await switch(pilot, app)
        await submit(pilot, "count")
        await wait_for(pilot, lambda: state(app) == "done")
    assert "word_count" in offered(server.requests[0]) and server.requests[0]["model"] == "fake2"
    assert "2 words" in last_user(server.requests[1])


async def test_the_profile_survives_a_model_switch(server, project: Path) -> None:
    server.script(answer_reply())
    app = start(server, project, {"profile": "small"})
    async with app.run_test(size=SIZE) as pilot:
        await switch(pilot, app)
        await submit(pilot, "t")
        await wait_for(pilot, lambda: state(app) == "done")
    assert "edit_file" not in offered(server.requests[0]) and "update_plan" not in offered(server.requests[0])


async def test_a_disabled_aid_stays_off_after_a_model_switch(server, project: Path) -> None:
    server.script(answer_reply("I made notes.txt"))
    app = start(server, project, {"disable_aids": ["answer.missing"]})
    async with app.run_test(size=SIZE) as pilot:
        await switch(pilot, app)
        await submit(pilot, "Create notes.txt holding x.")
        await wait_for(pilot, lambda: state(app) == "done")
        assert not [text for text in entry_texts(app, "notice") if "reminded" in text]
    assert len(server.requests) == 1, "the answer was accepted, not sent back by answer.missing"


async def test_the_command_timeout_and_the_approval_mode_survive_a_model_switch(server, project: Path) -> None:
    server.script(Reply('<thought>wait</thought><action>run_terminal_command("sleep 5")</action>'), answer_reply())
    app = start(server, project, {"command_timeout": 1.0}, approval="yolo")
    async with app.run_test(size=SIZE) as pilot:
        await switch(pilot, app)
        await submit(pilot, "wait")
        await wait_for(pilot, lambda: state(app) == "done")
        assert app.policy.mode == "yolo"
    assert "timed out after 1 s" in last_user(server.requests[1])


async def test_the_temperature_survives_a_model_switch(server, project: Path) -> None:
    server.script(answer_reply())
    app = start(server, project, {"temperature": 0.7})
    async with app.run_test(size=SIZE) as pilot:
        await switch(pilot, app)
        await submit(pilot, "t")
        await wait_for(pilot, lambda: state(app) == "done")
    assert server.requests[-1]["temperature"] == 0.7


async def test_gated_writes_still_ask_after_a_model_switch(server, project: Path) -> None:
    server.script(write_reply("notes.txt", "x\n"), answer_reply())
    app = start(server, project, {}, writes="ask")
    async with app.run_test(size=SIZE) as pilot:
        await switch(pilot, app)
        await submit(pilot, "write notes")
        await approval(pilot)
        await pilot.press("n")
        await wait_for(pilot, lambda: state(app) == "done")
    assert not (project / "notes.txt").exists()


async def test_without_flags_a_switch_gives_the_defaults(server, project: Path) -> None:
    """The control: the same checks see the defaults when no flag was given, so each test above
    would fail if its flag were lost."""
    server.script(Reply('<thought>wait</thought><action>run_terminal_command("true")</action>'), answer_reply("I made notes.txt"), answer_reply())
    app = start(server, project, {}, approval="yolo")
    async with app.run_test(size=SIZE) as pilot:
        await switch(pilot, app)
        await submit(pilot, "Create notes.txt holding x.")
        await wait_for(pilot, lambda: state(app) == "done")
        assert "step 3/30" in app.query_one(RunStatus).render().plain
        assert [text for text in entry_texts(app, "notice") if "reminded" in text]
    first = server.requests[0]
    assert "edit_file" in offered(first) and "word_count" not in offered(first) and first["temperature"] == 0.0
    assert len(server.requests) == 3, "answer.missing sent the first answer back"


def agent_runs(app: MzAgentApp) -> list[Worker]:
    return [w for w in app.workers if w.group == "agent" and w.state in (WorkerState.PENDING, WorkerState.RUNNING)]


async def test_a_switch_withdraws_the_pending_question_and_the_app_then_exits(server, project: Path) -> None:
    server.script(write_reply("notes.txt", "x\n"), answer_reply())
    app = start(server, project, {}, writes="ask")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write notes")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        app.action_switch_model()
        await wait_for(pilot, lambda: isinstance(app.screen, AskTextScreen) and bool(app.screen.query(Input)))
        app.screen.query_one(Input).value = "custom fake2"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.settings.model == "fake2" and not agent_runs(app), timeout=5)
        assert not any(isinstance(screen, ApprovalScreen) for screen in app.screen_stack)
        started = time.monotonic()
    assert time.monotonic() - started < 5
    assert not (project / "notes.txt").exists()


async def test_a_question_of_a_replaced_run_never_opens_in_the_new_conversation(server, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race: the switch is handled on the UI thread before the replaced run's question gets
    there. The question used to open in the new conversation and wait on the new conversation's
    cancel token (a "yes" would have written for a conversation that was gone)."""
    server.script(write_reply("notes.txt", "x\n"), answer_reply())
    app = start(server, project, {}, writes="ask")
    push_screen = app.push_screen

    def switch_first(screen, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if isinstance(screen, ApprovalScreen) and app.settings.model != "fake2":
            app._switch_model("custom fake2")
        return push_screen(screen, *args, **kwargs)

    monkeypatch.setattr(app, "push_screen", switch_first)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write notes")
        await wait_for(pilot, lambda: app.settings.model == "fake2")
        await wait_for(pilot, lambda: not agent_runs(app), timeout=20)  # bounded: the replaced run ends instead of waiting on a question
        # the run withdraws the question through the UI thread, which may get there after the run ended
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen), timeout=5)
    assert not (project / "notes.txt").exists()
