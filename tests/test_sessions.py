"""Sessions that survive: resume (also after a crash), undo, export, tokens and cost.

Every test runs real tasks against the scripted server, so the logs are the ones the agent writes.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from mzagent_tui.agent.config import ConfigError, load_settings
from mzagent_tui.agent.events import (
    _KINDS,
    Action,
    FileChanged,
    ModelInfo,
    Observation,
    Stopped,
    StopReason,
    TaskStarted,
    Undone,
    Usage,
    _accepts,
    event_from_dict,
    field_types,
)
from mzagent_tui.agent.safety.secrets import Redactor
from mzagent_tui.agent.sessions.export import fenced, to_markdown
from mzagent_tui.agent.sessions.history import INTERRUPTED_AFTER_REPLY, SessionNotFound, find_session, list_sessions, load_session
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.sessions.undo import UndoRefused, undo, writes_of
from mzagent_tui.agent.usage import Meter, money
from mzagent_tui.widgets.entries import entries_for
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, read_reply, write_reply

KEY = "sk-test-secret-key-1234"
NO_REDACTION = Redactor([])




def crash_after(log: Path, kind: str) -> None:
    """Simulate kill -9: keep the log up to the first `kind` event, then half of the next line."""
    lines = log.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if json.loads(line).get("event", {}).get("type") == kind)
    log.write_bytes(b"".join(lines[: cut + 1]) + lines[cut + 1][: len(lines[cut + 1]) // 2])


# Events round-trip -----------------------------------------------------------------------


def test_every_logged_event_comes_back_equal(server, project: Path) -> None:
    server.script(write_reply("a.txt", "one\n"), Reply('<thought>x</thought><action>run_terminal_command("echo hi")</action>'), answer_reply())
    agent, rec = make_agent(server, project)
    agent.run("make a.txt")
    history = load_session(agent.session.folder)
    logged = [e for e in rec.events if type(e).__name__ not in ("TextDelta", "ThinkingDelta")]
    assert history.events == logged
    assert history.messages == agent.messages
    assert event_from_dict({"type": "no_such_event"}) is None
    assert event_from_dict({"type": "stopped", "reason": "from the future", "message": "m"}) == Stopped(StopReason.ERROR, "m")


# Resume ---------------------------------------------------------------------------------


def test_resume_continues_the_conversation(server, project: Path) -> None:
    server.script(write_reply("a.txt", "one\n"), answer_reply("wrote a.txt"), answer_reply("still there"))
    first, _ = make_agent(server, project)
    first.run("make a.txt")
    first.session.close()
    history = find_session(project, "last")
    assert (history.first_task, history.steps, history.final_state, history.interrupted) == ("make a.txt", 2, "final answer", False)
    resumed, rec = make_agent(server, project, history=history)
    resumed.run("is it there?")
    sent = server.requests[-1]["messages"]
    assert sent[1 : len(history.messages)] == history.messages[1:]
    assert "a.txt" not in history.messages[0]["content"] and "a.txt" in sent[0]["content"], "the prompt's file list is renewed"
    assert sent[len(history.messages)]["content"] == "<question>is it there?</question>"
    assert rec.of(TaskStarted)[0].follow_up
    assert resumed.session.folder == history.folder
    again = load_session(history.folder)
    assert [e.task for e in again.events if isinstance(e, TaskStarted)] == ["make a.txt", "is it there?"]
    assert again.messages == resumed.messages and [m["role"] for m in again.messages].count("system") == 1
    assert len(list_sessions(project)) == 1


def test_resume_after_a_crash_mid_command_never_reruns_it(server, project: Path) -> None:
    server.script(
        Reply('<thought>count</thought><action>run_terminal_command("echo ran >> runs.txt")</action>'),
        answer_reply("ok"),
        answer_reply("checked"),
    )
    agent, _ = make_agent(server, project)
    agent.run("append a line")
    agent.session.close()
    crash_after(agent.session.log_path, "action")
    history = load_session(agent.session.folder)
    assert history.bad_lines == 1
    assert history.interrupted and history.final_state == "interrupted"
    assert history.messages[-1]["role"] == "assistant"
    resumed, rec = make_agent(server, project, history=history)
    result = resumed.run("what happened?")
    assert result.reason is StopReason.FINAL_ANSWER
    assert (project / "runs.txt").read_text() == "ran\n"
    assert not rec.of(Action)
    sent = server.requests[-1]["messages"]
    assert sent[-2]["content"] == INTERRUPTED_AFTER_REPLY
    assert [m["role"] for m in sent[-3:]] == ["assistant", "user", "user"]
    roles = [m["role"] for m in sent[1:-1]]
    assert all(a != b for a, b in zip(roles, roles[1:])), "the repaired conversation alternates"
    reloaded = load_session(history.folder)
    assert reloaded.bad_lines == 1 and not reloaded.interrupted
    assert reloaded.messages[: len(sent)] == sent


def test_crash_before_the_reply_marks_the_missing_reply(server, project: Path) -> None:
    server.script(answer_reply("first"), answer_reply("second"))
    agent, _ = make_agent(server, project)
    agent.run("q1")
    agent.session.close()
    crash_after(agent.session.log_path, "step_started")
    history = load_session(agent.session.folder)
    assert history.interrupted and history.messages[-1]["role"] == "user"
    resumed, _ = make_agent(server, project, history=history)
    resumed.run("q2")
    sent = server.requests[-1]["messages"]
    assert sent[-2] == {"role": "assistant", "content": "[no reply: the session was interrupted]"}


def test_find_session_by_prefix_and_clear_errors(server, project: Path, tmp_path: Path) -> None:
    with pytest.raises(SessionNotFound, match="no sessions yet"):
        find_session(project, "last")
    server.script(answer_reply(), answer_reply())
    for _ in range(2):
        agent, _ = make_agent(server, project)
        agent.run("task")
        agent.session.close()
    sessions = list_sessions(project)
    assert len(sessions) == 2 and sessions[0].last_active >= sessions[1].last_active
    assert sessions[0].id == agent.session.id
    assert find_session(project, sessions[1].id[:-1]).id == sessions[1].id
    assert find_session(project, str(sessions[1].folder)).id == sessions[1].id
    with pytest.raises(SessionNotFound, match="matches several"):
        find_session(project, sessions[0].id[:8])
    with pytest.raises(SessionNotFound, match="matches no session"):
        find_session(project, "nope")


# Undo -----------------------------------------------------------------------------------


def run_writes(server, project: Path, *replies: Reply, task: str = "edit"):
    server.script(*replies, answer_reply())
    agent, rec = make_agent(server, project)
    agent.run(task)
    return agent, rec


def test_undo_restores_the_previous_content_exactly(server, project: Path) -> None:
    original = b"\xef\xbb\xbfline one\r\nline two\r\n"
    (project / "a.txt").write_bytes(original)
    (project / "a.txt").chmod(0o750)
    agent, rec = run_writes(server, project, read_reply("a.txt"), write_reply("a.txt", "new\n"))
    assert (project / "a.txt").read_bytes() != original
    [event] = undo(agent.session, load_session(agent.session.folder).events, "last")
    assert event == Undone(str(project / "a.txt"), 1, removed=False)
    assert (project / "a.txt").read_bytes() == original
    assert (project / "a.txt").stat().st_mode & 0o777 == 0o750
    with pytest.raises(UndoRefused, match="nothing left to undo"):
        undo(agent.session, load_session(agent.session.folder).events, "last")


def test_undo_removes_a_created_file(server, project: Path) -> None:
    agent, _ = run_writes(server, project, write_reply("new/b.py", "print(1)\n"))
    undo(agent.session, load_session(agent.session.folder).events, "last")
    assert not (project / "new" / "b.py").exists()


def test_undo_refuses_after_a_user_edit_and_changes_nothing(server, project: Path) -> None:
    agent, _ = run_writes(server, project, write_reply("a.txt", "agent\n"), write_reply("b.txt", "agent\n"))
    (project / "a.txt").write_text("agent\nmy own line\n")
    events = load_session(agent.session.folder).events
    with pytest.raises(UndoRefused, match="a.txt was changed after the agent wrote it"):
        undo(agent.session, events, "run")
    assert (project / "a.txt").read_text() == "agent\nmy own line\n"
    assert (project / "b.txt").exists(), "all or nothing: b.txt was not removed either"
    (project / "b.txt").unlink()
    with pytest.raises(UndoRefused, match="deleted or moved"):
        undo(agent.session, events, "last")


def test_undo_all_of_a_run_walks_back_repeated_writes(server, project: Path) -> None:
    (project / "a.txt").write_text("v0\n")
    agent, _ = run_writes(server, project, read_reply("a.txt"), write_reply("a.txt", "v1\n"), write_reply("a.txt", "v2\n"), write_reply("c.txt", "c\n"))
    server.script(write_reply("d.txt", "later run\n"), answer_reply())
    agent.run("another")
    events = load_session(agent.session.folder).events
    assert [w.run for w in writes_of(events)] == [1, 1, 1, 2]
    done = undo(agent.session, events, "run")
    assert [e.write for e in done] == [4] and not (project / "d.txt").exists()
    done = undo(agent.session, load_session(agent.session.folder).events, "run")
    assert [e.write for e in done] == [3, 2, 1]
    assert (project / "a.txt").read_text() == "v0\n" and not (project / "c.txt").exists()
    assert all(w.undone for w in writes_of(load_session(agent.session.folder).events))


def test_backups_of_a_resumed_session_never_overwrite_earlier_ones(server, project: Path) -> None:
    (project / "a.txt").write_text("v0\n")
    agent, _ = run_writes(server, project, read_reply("a.txt"), write_reply("a.txt", "v1\n"))
    agent.session.close()
    resumed, _ = make_agent(server, project, history=load_session(agent.session.folder))
    server.script(write_reply("a.txt", "v2\n"), answer_reply())  # read in the first run: no read needed after resuming
    resumed.run("again")
    assert sorted(p.name for p in (agent.session.folder / "backups").iterdir()) == ["0001-a.txt", "0002-a.txt"]
    undo(resumed.session, load_session(agent.session.folder).events, "last")
    assert (project / "a.txt").read_text() == "v1\n"
    undo(resumed.session, load_session(agent.session.folder).events, "last")
    assert (project / "a.txt").read_text() == "v0\n"


def test_undo_back_to_a_write_takes_it_and_every_later_one(server, project: Path) -> None:
    (project / "a.txt").write_text("v0\n")
    agent, _ = run_writes(server, project, read_reply("a.txt"), write_reply("a.txt", "v1\n"), write_reply("b.txt", "b\n"), write_reply("a.txt", "v2\n"))
    events = load_session(agent.session.folder).events
    with pytest.raises(UndoRefused, match="write 9 is not one that can be undone"):
        undo(agent.session, events, 9)
    done = undo(agent.session, events, 2)
    assert [e.write for e in done] == [3, 2]
    assert (project / "a.txt").read_text() == "v1\n" and not (project / "b.txt").exists()
    with pytest.raises(UndoRefused, match=r"write 2 is not one that can be undone \(writes not undone yet: 1\)"):
        undo(agent.session, load_session(agent.session.folder).events, 2)


def test_the_model_is_told_about_an_undo_with_the_next_task(server, project: Path) -> None:
    agent, _ = run_writes(server, project, write_reply("a.txt", "x\n"))
    agent.session.close()
    history = load_session(agent.session.folder)
    session = Session.reopen(history.folder, NO_REDACTION)
    undo(session, history.events, "last")
    session.close()
    resumed, _ = make_agent(server, project, history=load_session(history.folder))
    server.script(answer_reply())
    resumed.run("next")
    question = server.requests[-1]["messages"][-1]["content"]
    assert question.startswith("Note: the user undid write 1: removed a.txt, which the agent had created.\n<question>next")
    resumed.run("and then")
    assert server.requests[-1]["messages"][-1]["content"] == "<question>and then</question>"


# Export ---------------------------------------------------------------------------------


def test_export_has_every_part_of_the_session_and_no_secret(server, project: Path) -> None:
    server.script(
        write_reply("a.md", "```py\nx = 1\n```\n"),
        Reply('<thought>show the key</thought><action>run_terminal_command("echo sk-test-secret-key-1234")</action>'),
        answer_reply("All **done**."),
    )
    agent, _ = make_agent(server, project)
    agent.run("write a.md")
    undo(agent.session, load_session(agent.session.folder).events, "last")
    text = to_markdown(load_session(agent.session.folder), Redactor([KEY]))
    assert "*Undo:* undid write 1: removed a.md, which the agent had created" in text
    for part in ("## Task 1", "> write a.md", "### Step 2", "**Thought:** write a.md", "**Action:** write `a.md`",
                 "**Action:** run a command", "**Observation (exit 0):**", "**Final answer:**", "All **done**.", "tokens 300 in / 60 out",
                 "### Step 1\n\n*Tokens: 100 in / 20 out*"):
        assert part in text, part
    assert "````md\n```py\nx = 1\n```\n````" in text
    assert "*Changed:* created a.md (+3 −0)\n\n````diff\n--- /dev/null\n+++ b/a.md\n@@ -0,0 +1,3 @@\n+```py\n" in text
    assert KEY not in text


def test_fence_is_longer_than_any_backtick_run() -> None:
    assert fenced("a ````` b") == "``````\na ````` b\n``````"
    assert fenced("plain", "sh") == "```sh\nplain\n```"


# Tokens and cost ------------------------------------------------------------------------


def test_meter_arithmetic_and_summary() -> None:
    meter = Meter(price_in=0.27, price_out=1.10, window=16384)
    meter.observe(Usage(1000, 200))
    meter.observe(Usage(3000, 100, estimated=True))
    assert (meter.tokens_in, meter.tokens_out, meter.context) == (4000, 300, 3000)
    assert meter.cost == pytest.approx((4000 * 0.27 + 300 * 1.10) / 1_000_000)
    assert meter.fill == pytest.approx(3000 / 16384)
    assert meter.summary() == "tokens ~4,000 in / ~300 out · context 18% of 16k · ~$0.0014"
    assert Meter().summary() == "tokens 0 in / 0 out"
    assert money(12345.678) == "$12,345.68"


def test_max_cost_stops_the_run_before_the_next_request(server, project: Path) -> None:
    server.script(*[Reply(f'<thought>again</thought><action>run_terminal_command("echo {n}")</action>', usage=(1_000_000, 0)) for n in range(5)])
    agent, rec = make_agent(server, project, price_in=0.5, price_out=1.0, max_cost=1.2)
    result = agent.run("loop")
    assert result.reason is StopReason.MAX_COST and "$1.50" in result.message and result.steps == 3
    assert len(server.requests) == 3
    assert rec.of(Stopped)[0].reason is StopReason.MAX_COST


def test_the_context_window_comes_from_the_servers_model_list(server, project: Path) -> None:
    server.models = [{"id": "other", "object": "model", "context_length": 1}, {"id": "scripted-model", "object": "model", "context_length": 8192}]
    server.script(answer_reply(), answer_reply())
    agent, rec = make_agent(server, project, grammar="off")
    agent.run("one")
    agent.run("two")
    assert [type(e).__name__ for e in rec.events[:2]] == ["TaskStarted", "ModelInfo"]
    assert rec.of(ModelInfo) == [ModelInfo(8192)] and server.model_lookups == 1
    assert agent.meter.window == 8192 and agent.meter.summary() == "tokens 200 in / 40 out · context 1% of 8.2k"
    resumed, rec = make_agent(server, project, history=load_session(agent.session.folder), grammar="off")
    assert resumed.meter.window == 8192, "a reopened session knows the window from its log"
    server.script(answer_reply())
    resumed.run("three")
    assert not rec.of(ModelInfo) and server.model_lookups == 1


def test_vllm_names_the_window_max_model_len_and_most_servers_say_nothing(server, project: Path) -> None:
    server.models = [{"id": "scripted-model", "object": "model", "max_model_len": 32768}]
    server.script(answer_reply(), answer_reply())
    agent, _ = make_agent(server, project)
    agent.run("one")
    assert agent.meter.window == 32768
    server.models = [{"id": "scripted-model", "object": "model"}]
    silent, rec = make_agent(server, project)
    silent.run("two")
    assert not rec.of(ModelInfo) and silent.meter.window == 0
    configured, rec = make_agent(server, project, context_window=1000, grammar="off")
    server.script(answer_reply())
    lookups = server.model_lookups
    configured.run("three")
    assert server.model_lookups == lookups and configured.meter.window == 1000
    recognising, _ = make_agent(server, project, context_window=1000, grammar="auto")
    server.script(answer_reply())
    recognising.run("four")
    assert recognising.meter.window == 1000, "a configured window wins over the list, read here only to recognise llama.cpp"
    assert server.model_lookups == lookups + 1


def test_max_cost_needs_prices(project: Path) -> None:
    with pytest.raises(ConfigError, match="max_cost needs prices"):
        load_settings(project=project, flags={"max_cost": 1.0}, environ={})
    assert load_settings(project=project, flags={"provider": "local"}, environ={}).window() == 16384


def test_file_changed_records_the_digest_of_what_was_written(server, project: Path) -> None:
    import hashlib

    agent, rec = run_writes(server, project, write_reply("a.txt", "hi\n"))
    assert rec.of(FileChanged)[0].sha256 == hashlib.sha256(b"hi\n").hexdigest()
    assert rec.of(Observation)[0].ok


# Damaged logs --------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
def fitting(hint: object) -> st.SearchStrategy:
    """Values of a field's own type, so most generated events are whole and some are damaged."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return st.one_of(*(fitting(option) for option in typing.get_args(hint)))
    simple = {str: st.text(max_size=30), int: st.integers(), float: st.floats(allow_nan=False), bool: st.booleans(), type(None): st.none()}
    if hint in simple:
        return simple[hint]
    if hint is StopReason:
        return st.sampled_from([r.value for r in StopReason])
    return st.lists(JSON_VALUES, max_size=3)


def event_dicts(kind: str) -> st.SearchStrategy:
    cls = _KINDS[kind]
    values = {name: st.one_of(fitting(hint), fitting(hint), fitting(hint), JSON_VALUES) for name, hint in field_types(cls).items()}
    required = {f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    fields = st.fixed_dictionaries(
        {name: value for name, value in values.items() if name in required},
        optional={name: value for name, value in values.items() if name not in required},
    )
    return fields.map(lambda chosen: {**chosen, "type": kind})


EVENT_DICTS = st.sampled_from(sorted(_KINDS)).flatmap(event_dicts)
RECORDS = st.one_of(
    st.builds(lambda event: {"t": 1.0, "type": "event", "event": event}, EVENT_DICTS),
    st.builds(lambda role, content: {"type": "message", "role": role, "content": content}, JSON_VALUES, JSON_VALUES),
    st.dictionaries(st.sampled_from(["t", "type", "project", "event"]), JSON_VALUES, max_size=4),
)
LINES = st.one_of(RECORDS.map(json.dumps), st.binary(max_size=40).map(lambda b: b.decode("latin-1")))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINES, max_size=25))
def test_any_damaged_log_loads_exports_and_renders_without_raising(tmp_path: Path, lines: list[str]) -> None:
    folder = tmp_path / "session"
    folder.mkdir(exist_ok=True)
    (folder / "log.jsonl").write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")
    history = load_session(folder)
    note(f"{len(history.events)} events loaded")
    for event in history.events:
        for name, hint in field_types(type(event)).items():
            assert _accepts(hint, getattr(event, name)), (event, name)
        entries_for(event, tmp_path)
    assert isinstance(to_markdown(history, NO_REDACTION), str)
    assert all(m["role"] in ("system", "user", "assistant") and isinstance(m["content"], str) for m in history.messages)
    history.repairs()
    history.summary_line()


def test_a_file_system_error_part_way_reports_what_was_undone(server, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    import mzagent_tui.agent.sessions.undo as undo_module

    (project / "b.txt").write_text("old b\n")
    agent, _ = run_writes(server, project, write_reply("a.txt", "a\n"), read_reply("b.txt"), write_reply("b.txt", "new b\n"), write_reply("c.txt", "c\n"))
    real_write = undo_module.atomic_write

    def failing_disk(path: Path, data: bytes) -> None:
        if path.name == "b.txt":
            raise OSError(errno.EIO, "Input/output error")
        real_write(path, data)

    monkeypatch.setattr(undo_module, "atomic_write", failing_disk)
    with pytest.raises(UndoRefused, match=r"could not restore .*b.txt: Input/output error; 1 write\(s\) before it were undone") as refused:
        undo(agent.session, load_session(agent.session.folder).events, "run")
    assert [e.write for e in refused.value.done] == [3]
    assert not (project / "c.txt").exists() and (project / "b.txt").read_text() == "new b\n"
    assert [w.undone for w in writes_of(load_session(agent.session.folder).events)] == [False, False, True]
    monkeypatch.setattr(undo_module, "atomic_write", real_write)
    done = undo(agent.session, load_session(agent.session.folder).events, "run")
    assert [e.write for e in done] == [2, 1] and (project / "b.txt").read_text() == "old b\n"
