"""Input nested past Python's recursion limit (a model's JSON, a file it wrote, a session log
line): a clear error or "not checked", never a crash and never a lost write."""

from __future__ import annotations

from pathlib import Path

from mzagent_tui.agent.events import Observation
from mzagent_tui.agent.model.native import NativeCall, parse_native
from mzagent_tui.agent.sessions.history import read_records
from mzagent_tui.agent.tools.syntax_check import syntax_problem
from tests.conftest import make_agent
from tests.scripted_server import answer_reply, write_reply

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_file_nested_too_deep_to_parse_is_not_reported_broken() -> None:
    assert syntax_problem("data.json", DEEP.encode()) is None
    assert syntax_problem("data.toml", f"a = {DEEP}".encode()) is None
    assert syntax_problem("deep.py", ("x = " + "-" * 200_000 + "1").encode()) is None


def test_reading_past_a_trailing_comma_into_deep_nesting_stops_there() -> None:
    text = f"[[1,],{DEEP}]"
    assert syntax_problem("data.json", text.encode()) == (
        "invalid JSON: a comma after the last item of a list or object (line 1, column 4): JSON allows none there, remove it"
    )


def test_native_arguments_nested_too_deep_are_a_format_error() -> None:
    for arguments in (f'{{"file_path": {DEEP}}}', DEEP):
        parsed = parse_native("", "", [NativeCall("c1", "read_file", arguments)], {"read_file": ["file_path"]})
        assert parsed.error == "the arguments of read_file are nested too deeply to read; send the call again"


def test_a_deep_session_log_line_is_counted_bad(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"type": "message", "role": "user", "content": "hi"}\n' + DEEP + "\n")
    records, bad = read_records(log)
    assert len(records) == 1 and bad == 1


def test_a_deep_json_file_is_written_and_the_run_ends_normally(server, project: Path) -> None:  # noqa: ANN001
    """A JSON file nested too deep to read is written, not checked, and the run goes on."""
    deep = "[" * 50_000 + "]" * 50_000
    (project / "a.csv").write_text("n\n1\n")
    server.script(write_reply("b.json", deep), answer_reply("Converted a.csv to b.json."))
    agent, rec = make_agent(server, project)
    result = agent.run("Convert a.csv to b.json.")
    assert result.final_answer == "Converted a.csv to b.json."
    [written] = [o for o in rec.of(Observation) if o.tool == "write_to_file"]
    assert written.text.startswith("File written: b.json (created")
    assert (project / "b.json").read_text() == deep


def test_a_python_file_nested_too_deep_to_compile_is_written_as_it_came(server, project: Path) -> None:  # noqa: ANN001
    """Compiling it raises MemoryError: the write is not checked, and not lost."""
    deep = "x = " + "-" * 200_000 + "1\n"
    server.script(write_reply("deep.py", deep), answer_reply("Written."))
    agent, _ = make_agent(server, project)
    assert agent.run("Write deep.py.").final_answer == "Written."
    assert (project / "deep.py").read_text() == deep
