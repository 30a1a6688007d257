"""Plan mode in the app, as a user drives it: Shift+Tab to plan, the plan dialog, running the plan."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Markdown, RadioSet

from mzagent_tui.agent.planning import plan_task
from mzagent_tui.screens.approval import GRACE_SECONDS
from mzagent_tui.screens.confirm import ConfirmScreen
from mzagent_tui.screens.plan import PlanChoice, PlanScreen
from mzagent_tui.widgets.run_status import RunStatus
from mzagent_tui.widgets.task_input import TaskInput
from tests.scripted_server import Reply, answer_reply, write_reply
from tests.test_app import SIZE, FakeClock, entries, make_app, state, submit, wait_for

PLAN = "1. Write notes.txt\n2. Check it"
PLANNING_RUN = [write_reply("notes.txt", "early\n"), answer_reply(PLAN)]


async def plan_dialog(pilot) -> PlanScreen:  # noqa: ANN001
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, PlanScreen) and pilot.app.screen.accepts_keys)
    return pilot.app.screen


async def to_plan_mode(pilot) -> None:  # noqa: ANN001
    pilot.app.query_one(TaskInput).focus()
    await pilot.press("shift+tab", "shift+tab")
    assert pilot.app.policy.mode == "plan"


async def test_shift_tab_cycles_ask_auto_safe_plan_and_moves_focus_in_a_dialog(server, project: Path) -> None:
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(TaskInput).focus()
        seen = []
        for _ in range(4):
            await pilot.press("shift+tab")
            seen.append(app.policy.mode)
        assert seen == ["auto-safe", "plan", "ask", "auto-safe"]
        await pilot.press("shift+tab")
        assert "PLAN: NOTHING IS CHANGED" in app.query_one(RunStatus).render().plain
        assert isinstance(app.focused, TaskInput)
        app.action_approval_mode("yolo")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        focused = app.focused
        await pilot.press("shift+tab")
        assert app.policy.mode == "plan" and app.focused is not focused
        await pilot.press("y")
        await wait_for(pilot, lambda: app.policy.mode == "yolo")
        await pilot.press("shift+tab")
        assert app.policy.mode == "ask"


async def test_a_plan_is_shown_and_run_in_the_chosen_mode_as_the_next_task(server, project: Path) -> None:
    server.script(*PLANNING_RUN, write_reply("notes.txt", "planned\n"), answer_reply("written"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await to_plan_mode(pilot)
        await submit(pilot, "write some notes")
        dialog = await plan_dialog(pilot)
        assert not (project / "notes.txt").exists()
        assert dialog.query_one(Markdown).source == PLAN
        [shown_plan] = entries(app, "final")
        assert shown_plan.title_text.endswith("a plan: nothing was changed") and shown_plan.plain == PLAN
        radios = dialog.query_one(RadioSet)
        assert radios.pressed_button is not None and radios.pressed_button.name == "auto-safe"  # the mode before plan
        radios.focus()
        await pilot.press("up", "enter")
        assert dialog.mode == "ask"
        await pilot.press("r")
        await wait_for(pilot, lambda: state(app) == "done" and len(server.requests) == 4)
        assert app.policy.mode == "ask"
        assert (project / "notes.txt").read_text() == "planned\n"
        questions = [e.plain for e in entries(app, "question")]
        assert questions[-1] == plan_task(PLAN)
        assert server.requests[2]["messages"][-1]["content"].endswith(f"<question>{plan_task(PLAN)}</question>")
        assert not isinstance(app.screen, PlanScreen)


async def test_keep_planning_and_cancel_run_nothing_and_stay_in_plan_mode(server, project: Path) -> None:
    server.script(*PLANNING_RUN, *PLANNING_RUN)
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await to_plan_mode(pilot)
        for key in ("k", "escape"):
            await submit(pilot, "write some notes")
            await plan_dialog(pilot)
            await pilot.press(key)
            await wait_for(pilot, lambda: not isinstance(app.screen, PlanScreen))
            await wait_for(pilot, lambda: not app.conversation.run_active)
            assert app.policy.mode == "plan" and isinstance(app.focused, TaskInput)
        await pilot.pause(0.2)
        assert len(server.requests) == 4 and not (project / "notes.txt").exists()


async def test_running_a_plan_in_yolo_asks_first_and_a_no_runs_nothing(server, project: Path) -> None:
    server.script(*PLANNING_RUN)
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await to_plan_mode(pilot)
        await submit(pilot, "write some notes")
        dialog = await plan_dialog(pilot)
        dialog.query_one(RadioSet).focus()
        await pilot.press("down", "enter", "r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await pilot.pause(0.2)
        assert app.policy.mode == "plan" and len(server.requests) == 2


async def test_keys_typed_as_the_plan_opens_do_nothing() -> None:
    from textual.app import App

    clock = FakeClock()
    results: list[PlanChoice] = []
    app = App()
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(PlanScreen(PLAN, "auto-safe", clock=clock), callback=results.append)
        await pilot.pause()
        await pilot.press("r", "k", "enter", "escape")
        assert isinstance(app.screen, PlanScreen) and results == []
        clock.now += GRACE_SECONDS
        await pilot.press("r")
        assert results == [PlanChoice("run", "auto-safe")]


async def test_the_plans_text_is_never_markup(server, project: Path) -> None:
    hostile = "1. Close [/x] and [bold]this\n2. \x1b]52;c;aGk=\x07 copy"
    server.script(Reply(f"<final_answer>{hostile}</final_answer>"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await to_plan_mode(pilot)
        await submit(pilot, "plan")
        dialog = await plan_dialog(pilot)
        source = dialog.query_one(Markdown).source
        assert "[/x]" in source and "\x1b" not in source
        await pilot.press("k")
        await wait_for(pilot, lambda: not isinstance(app.screen, PlanScreen))
