"""The agent's task list: update_plan's checks, both call forms, the profile gate, and the list
reaching the session log, the export, `--json`, ACP and the app's checklist."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from mzagent_tui.agent.events import Observation, TaskListUpdated, event_from_dict
from mzagent_tui.agent.model.prompt import render_system_prompt
from mzagent_tui.agent.sessions.export import to_markdown
from mzagent_tui.agent.sessions.history import load_session
from mzagent_tui.agent.tools.registry import Tool, ToolRegistry
from mzagent_tui.agent.tools.task_list import TaskList
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, last_user
from tests.test_acp_wire import new_session, prompt, text, updates, wire_agent
from tests.test_app import SIZE, make_app, state, submit, wait_for
from tests.test_cli import endpoint as cli_endpoint
from tests.test_cli import mzagent

FIRST = [{"step": "Read cli.py", "status": "done"}, {"step": "Add the --verbose flag", "status": "in_progress"}, {"step": "Run the tests", "status": "pending"}]
SECOND = [{"step": "Read cli.py", "status": "done"}, {"step": "Add the --verbose flag", "status": "done"}, {"step": "Run the tests", "status": "in_progress"}]


def plan_reply(steps: object) -> Reply:
    """The ReAct text form, with the list written as JSON (which is a Python literal too)."""
    return Reply(f"<thought>plan</thought><action>update_plan({json.dumps(steps)})</action>")


def registry() -> tuple[ToolRegistry, TaskList, list[object]]:
    events: list[object] = []
    tasks = TaskList(events.append)
    tools = ToolRegistry()
    tools.add_tool(tasks.tool())
    return tools, tasks, events


def test_a_good_list_replaces_the_whole_list_and_is_confirmed_briefly() -> None:
    tools, tasks, events = registry()
    tools.call("update_plan", [[{"step": "old", "status": "pending"}]])
    result = tools.call("update_plan", [[{**FIRST[0], "step": "  Read\n cli.py "}, *FIRST[1:]]])
    assert result.ok and result.text == "Task list updated: 3 steps (1 done, 1 in progress, 1 pending)."
    assert tasks.steps == FIRST, "replaced, not merged; a step's text is one line"
    assert events[-1] == TaskListUpdated(FIRST)
    assert tools.call("update_plan", [[]]).text == "Task list cleared." and events[-1] == TaskListUpdated([])


@pytest.mark.parametrize(
    ("steps", "error"),
    [
        ([{"step": "a", "status": "in_progress"}, {"step": "b", "status": "done"}, {"step": "c", "status": "in_progress"}],
         "Error: steps 1 and 3 are in_progress; only one step is in_progress at a time (mark the others pending or done)"),
        ([{"step": "a", "status": "done"}, {"step": "b", "status": "completed"}],
         """Error: step 2 has status 'completed'; use "pending", "in_progress" or "done\""""),
        ("Read cli.py, then add the flag", "Error: update_plan takes a list of steps, not a string ('Read cli.py, then add the flag')"),
        ({"step": "a", "status": "done"}, "Error: update_plan takes a list of steps, not an object"),
        (["Read cli.py"], 'Error: step 1 is a string (\'Read cli.py\'); each step is an object such as {"step": "Run the tests", "status": "pending"}'),
        ([{"step": "", "status": "done"}], 'Error: step 1 needs "step": the text of the step, a non-empty string'),
        ([{"step": "a", "status": "done", "owner": "me"}], "Error: step 1 has 'owner'; a step has only \"step\" and \"status\""),
    ],
)
def test_a_wrong_list_changes_nothing_and_the_model_is_told_what_is_wrong(steps: object, error: str) -> None:
    tools, tasks, events = registry()
    tools.call("update_plan", [FIRST])
    result = tools.call("update_plan", [steps])
    assert not result.ok and result.text.startswith(error)
    assert tasks.steps == FIRST and len(events) == 1


def test_the_react_text_form_updates_the_list_and_the_model_reads_the_confirmation(server, project: Path) -> None:
    server.script(plan_reply(FIRST), Reply(f"<thought>plan</thought><action>update_plan(steps={json.dumps(SECOND)})</action>"), answer_reply())
    agent, rec = make_agent(server, project)
    agent.run("add a --verbose flag")
    assert rec.of(TaskListUpdated) == [TaskListUpdated(FIRST), TaskListUpdated(SECOND)]
    assert agent.task_list.steps == SECOND
    assert last_user(server.requests[1]) == "<observation>Task list updated: 3 steps (1 done, 1 in progress, 1 pending).</observation>"


def test_a_native_call_updates_the_list_and_the_schema_says_what_a_step_holds(server, project: Path) -> None:
    server.script(Reply("I plan first.", tool_calls=[("c1", "update_plan", json.dumps({"steps": FIRST}))], finish_reason="tool_calls"), Reply("Planned."))
    agent, rec = make_agent(server, project, protocol="native")
    agent.run("add a --verbose flag")
    assert rec.of(TaskListUpdated) == [TaskListUpdated(FIRST)]
    [tool] = [t["function"] for t in server.requests[0]["tools"] if t["function"]["name"] == "update_plan"]
    steps = tool["parameters"]["properties"]["steps"]
    assert steps["type"] == "array" and steps["items"]["properties"]["status"]["enum"] == ["pending", "in_progress", "done"]
    answered = server.requests[1]["messages"][-1]
    assert answered["role"] == "tool" and answered["tool_call_id"] == "c1" and answered["content"].startswith("Task list updated")


def test_the_small_profile_is_not_offered_the_tool_and_a_call_gets_the_unknown_tool_answer(server, project: Path) -> None:
    server.script(plan_reply(FIRST), answer_reply())
    agent, rec = make_agent(server, project, profile="small")
    agent.run("add a --verbose flag")
    system = server.requests[0]["messages"][0]["content"]
    assert "update_plan" not in system and "task list" not in system
    assert rec.of(TaskListUpdated) == []
    assert rec.of(Observation)[0].text.startswith("Error: there is no tool named 'update_plan'. Available tools: read_file, write_to_file, run_terminal_command.")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_full_profile_prompt_describes_the_tool_in_both_protocols(server, project: Path, lang: str) -> None:
    agent, _ = make_agent(server, project)
    for native in (False, True):
        prompt_text = render_system_prompt(project, agent.tools, lang, files=[], native=native)
        assert "update_plan" in prompt_text
    assert '- update_plan(steps: list[dict[str, str]]): Keep a task list' in render_system_prompt(project, agent.tools, lang, files=[])


def test_the_list_is_logged_and_a_continued_session_keeps_it(server, project: Path) -> None:
    server.script(plan_reply(FIRST), plan_reply(SECOND), answer_reply())
    agent, _ = make_agent(server, project)
    agent.run("add a --verbose flag")
    history = load_session(agent.session.folder)
    assert [e for e in history.events if isinstance(e, TaskListUpdated)] == [TaskListUpdated(FIRST), TaskListUpdated(SECOND)]
    resumed, _ = make_agent(server, project, history=history)
    assert resumed.task_list.steps == SECOND


def test_a_damaged_record_of_the_list_is_dropped() -> None:
    assert event_from_dict({"type": "task_list", "steps": FIRST}) == TaskListUpdated(FIRST)
    assert event_from_dict({"type": "task_list", "steps": ["Read cli.py"]}) is None
    assert event_from_dict({"type": "task_list", "steps": [{"step": 3, "status": "done"}]}) is None


def test_the_export_shows_each_list_as_a_markdown_task_list(server, project: Path) -> None:
    server.script(plan_reply(FIRST), plan_reply([*SECOND[:2], {"step": "Run `pytest` on *all*", "status": "in_progress"}]), answer_reply())
    agent, _ = make_agent(server, project)
    agent.run("add a --verbose flag")
    markdown = to_markdown(load_session(agent.session.folder), lambda s: s)
    assert "**Action:** update_plan (3 steps)\n\n**Task list:**" in markdown
    assert "**Task list:**\n\n- [x] Read cli.py\n- [ ] Add the --verbose flag *(in progress)*\n- [ ] Run the tests\n" in markdown
    assert "- [x] Add the --verbose flag\n- [ ] Run \\`pytest\\` on \\*all\\* *(in progress)*\n" in markdown


def test_run_json_carries_the_list_and_the_console_prints_it(server, project: Path) -> None:
    server.script(plan_reply(FIRST), answer_reply(), plan_reply(SECOND), answer_reply())
    done = mzagent("run", *cli_endpoint(server), "--json", "--project", str(project), "plan it")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e for e in events if e["type"] == "task_list"] == [{"type": "task_list", "steps": FIRST}]
    console = mzagent("run", *cli_endpoint(server), "--project", str(project), "plan it")
    assert "Action: update_plan (3 steps)\n" in console.stdout
    assert "Task list:\n☑ Read cli.py\n☑ Add the --verbose flag\n◐ Run the tests\n" in console.stdout


async def test_acp_sends_each_list_as_a_plan_update(endpoint, project: Path) -> None:  # noqa: ANN001
    endpoint.script(plan_reply(FIRST), plan_reply(SECOND), answer_reply())
    async with wire_agent() as wire:
        session = await new_session(wire, project)
        assert (await prompt(wire, session, text("add a --verbose flag")))["result"]["stopReason"] == "end_turn"
    plans = [u for u in updates(wire.received) if u["sessionUpdate"] == "plan"]
    assert plans[1] == {
        "sessionUpdate": "plan",
        "entries": [
            {"content": "Read cli.py", "priority": "medium", "status": "completed"},
            {"content": "Add the --verbose flag", "priority": "medium", "status": "completed"},
            {"content": "Run the tests", "priority": "medium", "status": "in_progress"},
        ],
    }
    assert [e["status"] for e in plans[0]["entries"]] == ["completed", "in_progress", "pending"]
    calls = [u for u in updates(wire.received) if u["sessionUpdate"] == "tool_call"]
    assert [(c["title"], c["kind"]) for c in calls] == [("Update the task list", "think")] * 2


async def test_the_checklist_shows_the_latest_list_and_is_hidden_without_one(server, project: Path) -> None:
    from mzagent_tui.widgets.task_list import TaskListView

    server.script(plan_reply(FIRST), plan_reply(SECOND), answer_reply())
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        checklist = app.query_one(TaskListView)
        assert not checklist.display and checklist.region.height == 0
        await submit(pilot, "add a --verbose flag")
        await wait_for(pilot, lambda: state(app) == "done")
        await pilot.pause()
        assert checklist.display and checklist.region.height == 4
        lines = checklist.render().plain.splitlines()
        assert lines == ["Task list · 2 of 3 done", "☑ Read cli.py", "☑ Add the --verbose flag", "◐ Run the tests"]
        assert [span.style for span in checklist.render().spans] == ["dim", "dim", "bold"]
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert not checklist.display


async def test_a_reopened_session_shows_its_last_list(server, project: Path) -> None:
    from mzagent_tui.widgets.task_list import TaskListView

    server.script(plan_reply(FIRST), plan_reply(SECOND), answer_reply())
    agent, _ = make_agent(server, project)
    agent.run("add a --verbose flag")
    app = make_app(server, project, history=load_session(agent.session.folder))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        checklist = app.query_one(TaskListView)
        assert checklist.display and checklist.render().plain.splitlines()[-1] == "◐ Run the tests"




def test_the_checklist_shows_model_text_as_plain_text_and_keeps_the_current_step_on_screen() -> None:
    from mzagent_tui.widgets.task_list import TaskListView

    done = [{"step": f"step {n}", "status": "done"} for n in range(1, 10)]
    current = {"step": "[/x] \x1b]52;c;aGk=\x07 [bold]fix[/bold]", "status": "in_progress"}
    view = TaskListView()
    view.show([*done, current, *({"step": f"later {n}", "status": "pending"} for n in range(1, 7))])
    assert view.render().plain.splitlines() == [
        "Task list · 9 of 16 done",
        "  … 8 more above",
        "☑ step 9",
        "◐ [/x]  [bold]fix[/bold]",  # markup stays text, the escape sequence is removed
        *(f"☐ later {n}" for n in range(1, 7)),
    ]
    view.show([*done, current, *({"step": f"later {n}", "status": "pending"} for n in range(1, 9))])
    assert view.render().plain.splitlines()[-1] == "  … 2 more"


def test_only_tools_that_take_a_list_or_a_dict_may_be_given_one_in_the_grammar() -> None:
    tools, _, _ = registry()

    def plain(path: str, count: int = 1) -> str:
        return path

    def listed(paths: list[str]) -> str:
        return ""

    tools.add(plain)
    tools.add(listed)
    tools.add_tool(Tool("mcp__x__y", plain, inspect.signature(plain), "", {"type": "object", "properties": {"ids": {"type": "array"}}}))
    assert tools.structured() == {"update_plan", "listed", "mcp__x__y"}
