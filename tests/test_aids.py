"""The aids' seam: every aid has a name, a switch and a count, through the real agent and the
scripted server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mzagent_tui.agent.aids.seam import CATALOGUE, NAMES, Aids, UnknownAid
from mzagent_tui.agent.config import ConfigError, Settings, load_settings
from mzagent_tui.agent.events import AidFired, Observation
from mzagent_tui.agent.run_config import RunConfig
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, read_reply, write_reply

PACKAGE = Path(__file__).resolve().parents[1] / "mzagent_tui"
HALF = 'def half(n):\n    """Half of n.\n    >>> half(4)\n    2\n    """\n    return n * 2\n'
CHECK = f'{sys.executable} -c "from half import half; print(half(4))"'


def run_half(server, project: Path, **overrides: object) -> tuple[str, list[AidFired]]:  # noqa: ANN001
    """Write half.py with a bug, print its docstring's example, answer: the command's observation and the firings."""
    server.script(write_reply("half.py", HALF), Reply(f"<action>run_terminal_command({json.dumps(CHECK)})</action>"), answer_reply())
    agent, recorder = make_agent(server, project, **overrides)
    try:
        agent.run("Write half in half.py.")
    finally:
        agent.close()
    observations = [o.text for o in recorder.of(Observation) if o.tool == "run_terminal_command"]
    return observations[0], recorder.of(AidFired)


def test_an_aid_that_acts_says_so_with_an_event(server, project: Path) -> None:
    text, fired = run_half(server, project)
    assert "the docstring in half.py says half(4) gives 2, but this printed 8" in text
    assert ("examples", "after_command") in [(f.name, f.point) for f in fired]


def test_a_switched_off_aid_neither_acts_nor_counts(server, project: Path) -> None:
    text, fired = run_half(server, project, disable_aids=["examples"])
    assert text == "Command succeeded (exit code 0).\nOutput:\n8"
    assert "examples" not in [f.name for f in fired]


def test_a_switched_off_answer_check_lets_the_answer_stand(server, project: Path) -> None:
    """`answer.missing`: the task asks for a file that does not exist."""
    script = (answer_reply("I made notes.txt"), write_reply("notes.txt", "x\n"), answer_reply("done"))
    server.script(*script)
    agent, recorder = make_agent(server, project)
    agent.run("Create notes.txt holding x.")
    agent.close()
    assert "answer.missing" in [f.name for f in recorder.of(AidFired)] and (project / "notes.txt").exists()
    (project / "notes.txt").unlink()
    server.script(*script)
    agent, recorder = make_agent(server, project, disable_aids=["answer.missing"])
    result = agent.run("Create notes.txt holding x.")
    agent.close()
    assert result.final_answer == "I made notes.txt" and not recorder.of(AidFired)


def test_an_unknown_aid_name_is_a_clear_error_not_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """At start (the run's configuration is read), with where the name came from; again when a model
    switch reads the user config anew; and by the seam itself."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    server = {"base_url": "http://127.0.0.1:9/v1", "model": "m1"}
    with pytest.raises(ConfigError, match=r"^disable_aids names no aid called dropped_parametres \(`mzagent config` lists them\) \(from command line\)$"):
        RunConfig.load(tmp_path, {**server, "disable_aids": ["dropped_parametres", "stuck"]}, environ={}, cwd=tmp_path)
    assert RunConfig.load(tmp_path, {**server, "disable_aids": ["stuck"]}, environ={}, cwd=tmp_path).settings.disable_aids == ["stuck"]
    started = RunConfig.load(tmp_path, server, environ={}, cwd=tmp_path)
    assert started.with_model(started.settings.provider, "other").settings.model == "other"
    user_config = tmp_path / "cfg" / "mzagent" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text('[aids]\ndisable = ["answer.idle", "nope"]\n')
    with pytest.raises(ConfigError, match=rf"^disable_aids names no aid called nope .*\(from {re.escape(str(user_config))}\)$"):
        started.with_model(started.settings.provider, "other")
    with pytest.raises(UnknownAid):
        Aids(["nope"])


def test_the_user_config_switches_aids_off_with_an_aids_table(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "cfg" / "mzagent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[aids]\ndisable = ["stuck", "answer.idle"]\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert load_settings(tmp_path, environ={}).disable_aids == ["stuck", "answer.idle"]


def test_every_aid_in_the_catalogue_has_a_firing_site_and_every_site_a_catalogue_entry() -> None:
    """A name only in the catalogue would be a switch that does nothing; a name only in the code
    would raise KeyError when it first fires."""
    source = "\n".join(path.read_text() for path in PACKAGE.rglob("*.py"))
    used = set(re.findall(r"aids\.(?:on|fired|note)\(\s*\"([\w. ]+)\"", source))
    checks = set(re.findall(r"^\s+\(\"([\w ]+)\", (?:lambda|self\._)", (PACKAGE / "agent" / "aids" / "completion.py").read_text(), re.M))
    assert used | {f"answer.{kind}" for kind in checks} == NAMES
    assert len(NAMES) == len(CATALOGUE)


@pytest.mark.parametrize(
    ("provider", "model", "profile", "small"),
    [
        ("ollama", "qwen2.5-coder:1.5b", "", True),
        ("llamacpp", "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf", "", True),
        ("ollama", "qwen2.5-coder:32b", "", False),
        ("openai", "gpt-4o-mini", "", False),
        ("deepseek", "deepseek-chat", "", False),
        ("ollama", "qwen2.5-coder:1.5b", "full", False),
        ("openai", "my-finetune", "small", True),
    ],
)
def test_the_profile_follows_the_model_not_the_provider(provider: str, model: str, profile: str, small: bool) -> None:
    settings = Settings(provider=provider, model=model, profile=profile)
    assert settings.small_model() is small
    assert settings.offers_edit_file() is not small and settings.offers_update_plan() is not small


def test_the_same_small_model_served_elsewhere_gets_no_edit_file(server, project: Path) -> None:
    server.script(answer_reply())
    agent, _ = make_agent(server, project, model="qwen2.5-coder:1.5b")
    agent.run("hi")
    agent.close()
    assert "edit_file" not in agent.tools.signatures()
    system = server.requests[0]["messages"][0]["content"]
    assert "edit_file(" not in system


def test_headless_json_reports_each_aid_firing(server, project: Path, tmp_path: Path) -> None:
    """Three reads of one file with the same result: `stuck` acts, and the run's closing answer ends it."""
    (project / "notes.txt").write_text("tea\n")
    server.script(*[read_reply("notes.txt")] * 3, answer_reply())
    done = subprocess.run(
        [sys.executable, "-m", "mzagent_tui", "run", "--base-url", server.base_url, "--api-key", "k", "--model", "m", "--json",
         "--approval", "yolo", "--project", str(project), "What do the notes say?"],
        capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(PACKAGE.parent)},
        stdin=subprocess.DEVNULL,
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert {"type": "aid", "name": "stuck", "point": "after_tool"} in events, done.stderr[-2000:]


def test_mzagent_config_lists_every_aid_with_its_state(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mzagent_tui", "config", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--api-key", "k",
         "--disable-aid", "stuck", "--project", str(tmp_path)],
        capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(PACKAGE.parent)},
    )
    lines = done.stdout.splitlines()
    assert any(re.match(r"\s+off stuck\s", line) for line in lines), done.stdout + done.stderr
    assert sum(1 for line in lines if re.match(r"\s+(on |off) \S", line)) == len(CATALOGUE)




# An aid's own bug --------------------------------------------------------------------------------


def test_an_aid_that_fails_is_skipped_and_the_task_goes_on(server, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Aids only advise: one that raises is recorded and said as a notice, and the run ends as it
    would without it (it used to end the run with an internal error)."""
    from mzagent_tui.agent.aids.after_command import AfterCommand
    from mzagent_tui.agent.aids.completion import CompletionCheck
    from mzagent_tui.agent.events import FinalAnswer, Notice
    from mzagent_tui.agent.sessions.history import read_records

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("planted bug")

    monkeypatch.setattr(AfterCommand, "notes", broken)
    monkeypatch.setattr(CompletionCheck, "reminder", broken)
    server.script(Reply('<thought>t</thought><action>run_terminal_command("echo hi")</action>'), answer_reply("done"))
    agent, rec = make_agent(server, project)
    result = agent.run("say hi")
    assert result.final_answer == "done" and [e.text for e in rec.of(FinalAnswer)] == ["done"]
    (observation,) = rec.of(Observation)
    assert "hi" in observation.text and observation.ok
    notices = [n.text for n in rec.of(Notice) if "planted bug" in n.text]
    assert notices == [
        "the after-command aids failed (RuntimeError: planted bug) and were skipped for this step",
        "the answer checks failed (RuntimeError: planted bug) and were skipped for this step",
    ]
    crashes = [r for r in read_records(agent.session.folder / "log.jsonl")[0] if r["type"] == "crash"]
    assert len(crashes) == 2 and all("planted bug" in c["traceback"] for c in crashes)
