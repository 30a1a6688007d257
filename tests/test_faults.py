"""The endpoint fault matrix, end to end, for the headless CLI and for the app.

Expected per docs/safety-cases.md: bounded retries that are visible, a long Retry-After
reported at once, a stall ended by the watchdog, partial text kept and marked, no tool run
from a half reply, context overflow shrunk and retried once, clear errors without the key.
"""

from __future__ import annotations

import email.utils
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mzagent_tui.agent.config import Settings
from mzagent_tui.agent.run_config import RunConfig
from mzagent_tui.app import MzAgentApp
from mzagent_tui.widgets.run_status import RunStatus
from tests.scripted_server import Fault, Reply

KEY = "sk-fault-secret-key-4242"
FINAL = Reply("<final_answer>recovered</final_answer>")
HALF_ACTION = '<action>run_terminal_command("touch half'


def overflow(message: str) -> Fault:
    return Fault("status", 400, body={"error": {"message": message}})


# name, script, expected outcome ("final" or an error fragment), a fragment every retry notice has
MATRIX = [
    ("429 retry-after 0.2 s", [Fault("status", 429, headers={"retry-after": "0.2"}), FINAL], "final", "HTTP 429"),
    ("429 retry-after 5 s", [Fault("status", 429, headers={"retry-after": "5"}), FINAL], "wait 5 s", None),
    ("429 retry-after 300 s", [Fault("status", 429, headers={"retry-after": "300"}), FINAL], "wait 300 s", None),
    ("429 retry-after http date", [Fault("status", 429, headers={"retry-after": "DATE"}), FINAL], "final", "HTTP 429"),
    ("500", [Fault("status", 500), FINAL], "final", "HTTP 500"),
    ("502", [Fault("status", 502), FINAL], "final", "HTTP 502"),
    ("503 until give up", [Fault("status", 503)] * 3, "gave up after 3 attempts", "HTTP 503"),
    ("reset before headers", [Fault("reset"), FINAL], "final", "cannot connect"),
    ("stall after 3 chunks", [Fault("stall", text=HALF_ACTION), FINAL], "final", "stalled"),
    ("cut mid-reply", [Fault("cut", text=HALF_ACTION), FINAL], "final", "ended before the reply was complete"),
    ("no [DONE]", [Reply("<final_answer>recovered</final_answer>", send_done=False)], "final", None),
    ("html with 200", [Fault("html")], "HTML page", None),
    ("html sent as json", [Fault("html_as_json")], "HTML page", None),
    ("html sent as an event stream", [Fault("html_as_sse")], "HTML page", None),
    ("401", [Fault("status", 401, body={"error": {"message": f"Incorrect API key provided: {KEY}"}})], "refused the API key", None),
    ("404 model", [Fault("status", 404, body={"error": {"message": "model not found"}})], "has no model", None),
    ("400 context openai", [overflow("This model's maximum context length is 8192 tokens"), FINAL], "final", None),
    ("400 context llama.cpp", [overflow("the request exceeds the available context size, try increasing it"), FINAL], "final", None),
    ("400 context vllm", [overflow("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens"), FINAL], "final", None),
    ("400 context openrouter", [overflow("This endpoint's maximum context length is 16384 tokens. However, you requested about 20000 tokens"), FINAL], "final", None),
]
IDS = [row[0] for row in MATRIX]


def script(server, steps: list) -> None:  # noqa: ANN001
    for step in steps:
        if isinstance(step, Fault) and step.headers.get("retry-after") == "DATE":
            step = Fault("status", 429, headers={"retry-after": email.utils.formatdate(time.time() + 1, usegmt=True)})
        server.script(step)


def prepare_context(project: Path, steps: list) -> list:
    """Context-overflow cases need old observations to shrink: two reads come first."""
    if "context" not in json.dumps([getattr(s, "body", None) for s in steps]):
        return steps
    (project / "big.txt").write_text("data " * 200)
    reads = [Reply('<action>read_file("big.txt", %d)</action>' % i) for i in (1, 2, 3)]
    return reads + steps


@pytest.mark.parametrize(("name", "steps", "outcome", "notice"), MATRIX, ids=IDS)
def test_headless(server, project: Path, name: str, steps: list, outcome: str, notice: str | None) -> None:
    script(server, prepare_context(project, steps))
    env = {**os.environ, "MZAGENT_MAX_RETRIES": "2", "MZAGENT_IDLE_TIMEOUT": "1", "MZAGENT_MAX_RETRY_WAIT": "3"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mzagent_tui", "run", "--base-url", server.base_url, "--api-key", KEY, "--model", "m", "--yes", "--project", str(project), "t"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert time.monotonic() - started < 30
    output = done.stdout + done.stderr
    assert KEY not in output and "Traceback" not in output
    if outcome == "final":
        assert done.returncode == 0 and done.stdout.rstrip().endswith("recovered")
    else:
        assert done.returncode == 1 and outcome in done.stderr
    if notice:
        assert notice in done.stderr
    assert not (project / "half").exists()


@pytest.mark.parametrize(("name", "steps", "outcome", "notice"), MATRIX, ids=IDS)
async def test_app(server, project: Path, name: str, steps: list, outcome: str, notice: str | None) -> None:
    from tests.test_app import entry_texts, wait_for

    script(server, prepare_context(project, steps))
    settings = Settings(provider="custom", base_url=server.base_url, api_key=KEY, model="m", max_retries=2, idle_timeout=1.0, max_retry_wait=3.0, retry_base_delay=0.05)
    app = MzAgentApp(RunConfig(settings, project, environ={"PATH": "/usr/bin:/bin"}), clock=lambda: 0.0)
    async with app.run_test(size=(120, 40)) as pilot:
        box = app.query_one("#task")
        box.value = "t"
        box.focus()
        await pilot.press("enter")
        ended = ("done",) if outcome == "final" else ("stopped",)
        # The run's state and its error entry come in separate messages: under load the state was
        # read before the entry was on screen.
        await wait_for(pilot, lambda: app.query_one(RunStatus).run.state in ended and (outcome == "final" or outcome in "\n".join(entry_texts(app, "error"))), timeout=30)
        texts = {kind: "\n".join(entry_texts(app, kind)) for kind in ("notice", "error", "streaming")}
        everything = "\n".join(texts.values())
        assert KEY not in everything and "Traceback" not in everything
        if outcome == "final":
            assert app.query_one(RunStatus).run.state == "done" and app.conversation.last_answer == "recovered"
        else:
            assert app.query_one(RunStatus).run.state == "stopped" and outcome in texts["error"]
        if notice:
            assert notice in texts["notice"]
    assert not (project / "half").exists()


def test_a_lone_surrogate_in_a_reply_becomes_a_replacement_character_not_a_crash(server, project: Path, isolated_home: Path) -> None:
    """JSON may carry `\\ud800` alone: the SDK hands it on as a lone surrogate, which no UTF-8
    writer takes. The session log failed on it and the run ended in an internal error. A pair cut
    in two within one chunk is still joined into its character."""
    server.script(
        Reply('<thought>odd \ud800 text</thought><action>write_to_file("s.txt", "a\ud800b \ud83d\ude00")</action>'),
        Reply('<action>run_terminal_command("echo x\udcffy")</action>'),
        Reply("<final_answer>done \ud83d</final_answer>"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "mzagent_tui", "run", "--base-url", server.base_url, "--api-key", KEY, "--model", "m", "--yes", "--project", str(project), "t"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0 and "internal error" not in done.stderr.lower(), done.stderr
    assert done.stdout.rstrip().endswith("done \ufffd"), done.stdout
    assert (project / "s.txt").read_text(encoding="utf-8") == "a\ufffdb \U0001f600"
    assert "x\ufffdy" in server.requests[2]["messages"][-1]["content"]
    logs = list((isolated_home / "state").rglob("log.jsonl"))
    assert len(logs) == 1 and "odd \ufffd text" in logs[0].read_text(encoding="utf-8")


def test_the_session_log_escapes_what_is_not_valid_unicode(tmp_path: Path) -> None:
    """A file name read with surrogateescape reaches an event as a lone surrogate."""
    from mzagent_tui.agent.events import Notice
    from mzagent_tui.agent.safety.secrets import Redactor
    from mzagent_tui.agent.sessions.session import Session

    session = Session(tmp_path, Redactor([]))
    session.record_event(Notice("name b\udcff.txt, and é"))
    session.record_event(Notice("plain é"))
    lines = (tmp_path / "log.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["event"]["text"] for line in lines[-2:]] == ["name b\udcff.txt, and é", "plain é"]
    assert "plain é" in lines[-1], "valid text stays readable"
