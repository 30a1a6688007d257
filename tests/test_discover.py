"""With no key, a coding model on an Ollama or LM Studio server already running on this machine
comes before the bundled one: found by asking the servers (a scripted server that speaks
Ollama's API beside the OpenAI-compatible one), said where it is used, never chosen by a
project's files, and never sent a key."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from mzagent_tui.agent.config import user_config_path
from mzagent_tui.agent.model.discover import Candidate, candidates, discover
from mzagent_tui.agent.run_config import RunConfig
from tests.scripted_server import ScriptedServer, answer_reply, write_reply

OLLAMA_MODELS = [
    {"name": "llama3.2:3b", "details": {"parameter_size": "3.2B"}},
    {"name": "qwen2.5-coder:1.5b", "details": {"parameter_size": "1.5B"}},
    {"name": "qwen2.5-coder:7b", "details": {"parameter_size": "7.6B"}},
    {"name": "nomic-embed-text:latest", "details": {"parameter_size": "137M"}},
]


@pytest.fixture
def ollama() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        running.ollama_models = [dict(m) for m in OLLAMA_MODELS]
        yield running


def host_of(server: ScriptedServer) -> str:
    parts = urlsplit(server.base_url)
    return f"{parts.hostname}:{parts.port}"


def root_of(server: ScriptedServer) -> str:
    return server.base_url.removesuffix("/v1")


def nothing_listening() -> str:
    """An address on this machine where nothing answers (the port was just free)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def load(project: Path, environ: dict[str, str], **flags: object) -> RunConfig:
    return RunConfig.load(project, flags, environ={"MZAGENT_DISCOVER": "auto", **environ})


# Which model, and why ------------------------------------------------------------------------


def test_the_largest_coding_model_of_a_running_ollama_is_chosen(ollama: ScriptedServer, project: Path) -> None:
    settings = load(project, {"OLLAMA_HOST": host_of(ollama)}).settings
    assert (settings.provider, settings.base_url, settings.model) == ("ollama", ollama.base_url, "qwen2.5-coder:7b")
    assert settings.sources["provider"] == f"detected: qwen2.5-coder:7b on Ollama at {root_of(ollama)} (the largest coding model there)"
    assert not settings.small_model(), "a 7B model gets the full profile"
    assert "/api/tags" in ollama.paths


def test_a_loaded_coding_model_comes_first_and_its_size_sets_the_profile(ollama: ScriptedServer, project: Path) -> None:
    ollama.loaded = ["qwen2.5-coder:1.5b"]
    settings = load(project, {"OLLAMA_HOST": host_of(ollama)}).settings
    assert settings.model == "qwen2.5-coder:1.5b" and "(loaded)" in settings.sources["provider"]
    assert settings.small_model() and not settings.offers_edit_file()


def test_a_server_with_no_coding_model_leaves_the_bundled_model_and_says_why(ollama: ScriptedServer, project: Path) -> None:
    ollama.ollama_models = [{"name": "llama3.2:3b"}, {"name": "nomic-embed-text:latest"}]
    settings = load(project, {"OLLAMA_HOST": host_of(ollama)}).settings
    assert settings.provider == "local" and not settings.base_url
    assert "has no coding model (models: llama3.2:3b, nomic-embed-text:latest)" in settings.sources["provider"]


def test_lm_studio_is_found_through_its_openai_model_list(project: Path) -> None:
    with ScriptedServer() as lmstudio:
        lmstudio.models = [{"id": "text-embedding-nomic-embed-text-v1.5"}, {"id": "qwen2.5-coder-14b-instruct"}, {"id": "qwen2.5-coder-3b-instruct"}]
        found = discover([Candidate("lmstudio", "LM Studio", root_of(lmstudio))])
    assert found.found is not None
    assert (found.found.provider, found.found.model) == ("lmstudio", "qwen2.5-coder-14b-instruct")
    assert found.found.base_url == lmstudio.base_url
    assert lmstudio.paths == ["/api/v0/models", "/v1/models"], "the richer list first, the OpenAI one when it is missing"


def test_what_is_not_an_ollama_is_not_taken_for_one(server: ScriptedServer) -> None:
    """An OpenAI-compatible server on Ollama's port that does not speak Ollama's API is not
    Ollama (its /api/tags is a 404), so its coding model is not used as Ollama's."""
    server.models = [{"id": "qwen2.5-coder:7b"}]
    assert discover([Candidate("ollama", "Ollama", root_of(server))]).found is None
    assert discover([Candidate("lmstudio", "LM Studio", root_of(server))]).found is not None, "control: the same server as LM Studio"


def test_nothing_listening_and_a_silent_port_find_nothing() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()  # accepts the connection, never answers
        quiet = f"http://127.0.0.1:{silent.getsockname()[1]}"
        found = discover([Candidate("ollama", "Ollama", nothing_listening()), Candidate("lmstudio", "LM Studio", quiet)], timeout=0.3)
    assert found.found is None and found.notes == []


def test_garbage_answers_are_not_a_server() -> None:
    with ScriptedServer() as odd:
        odd.ollama_models = [{"name": 7}, "qwen2.5-coder:7b", {"details": "x"}]  # type: ignore[list-item]
        found = discover([Candidate("ollama", "Ollama", root_of(odd))])
    assert found.found is None and "has no coding model (models: none)" in found.notes[0]


# Only this machine, only the user's choice --------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", "http://127.0.0.1:11434"),
        ("127.0.0.1:9999", "http://127.0.0.1:9999"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:4321", "http://127.0.0.1:4321"),
        ("http://localhost:5555", "http://localhost:5555"),
        ("[::1]:7777", "http://[::1]:7777"),
        ("10.0.0.7:11434", None),
        ("ollama.example.com", None),
        ("https://127.0.0.1:11434", None),
        ("127.0.0.1:notaport", None),
    ],
)
def test_ollama_host_is_read_as_ollama_reads_it_and_only_this_machine_is_asked(value: str, expected: str | None) -> None:
    found = candidates({"OLLAMA_HOST": value} if value else {})
    roots = {c.provider: c.root for c in found}
    assert roots.get("ollama") == expected
    assert roots["lmstudio"] == "http://127.0.0.1:1234"


def test_a_project_env_cannot_point_discovery_at_a_server(ollama: ScriptedServer, project: Path) -> None:
    (project / ".env").write_text(f"OLLAMA_HOST={host_of(ollama)}\nMZAGENT_DISCOVER=auto\n")
    settings = RunConfig.load(project, {}, environ={"MZAGENT_DISCOVER": "auto", "OLLAMA_HOST": nothing_listening().removeprefix("http://")}).settings
    assert settings.provider == "local" and ollama.paths == []
    control = RunConfig.load(project, {}, environ={"MZAGENT_DISCOVER": "auto", "OLLAMA_HOST": host_of(ollama)}).settings
    assert control.provider == "ollama", "control: the same server named by the user's environment is used"


def test_a_project_env_cannot_switch_discovery_on(ollama: ScriptedServer, project: Path) -> None:
    user_config_path().parent.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text('discover = "off"\n')
    (project / ".env").write_text("MZAGENT_DISCOVER=auto\n")
    settings = RunConfig.load(project, {}, environ={"OLLAMA_HOST": host_of(ollama)}).settings
    assert settings.provider == "local" and ollama.paths == []
    assert "MZAGENT_DISCOVER" in " ".join(settings.ignored)


@pytest.mark.parametrize(
    ("environ", "flags"),
    [
        ({"MZAGENT_DISCOVER": "off"}, {}),
        ({}, {"provider": "local"}),
        ({"MZAGENT_BASE_URL": "http://127.0.0.1:9/v1"}, {}),
        ({"DEEPSEEK_API_KEY": "sk-user-key-123456789"}, {}),
    ],
    ids=["switched-off", "bundled-named", "base-url-set", "key-set"],
)
def test_discovery_only_replaces_the_default(ollama: ScriptedServer, project: Path, environ: dict[str, str], flags: dict[str, object]) -> None:
    settings = RunConfig.load(project, flags, environ={"MZAGENT_DISCOVER": "auto", "OLLAMA_HOST": host_of(ollama), **environ}).settings
    assert settings.provider != "ollama" and ollama.paths == []


def test_a_bad_discover_value_is_a_clear_error(project: Path) -> None:
    from mzagent_tui.agent.config import ConfigError

    with pytest.raises(ConfigError, match="discover must be auto or off"):
        RunConfig.load(project, {}, environ={"MZAGENT_DISCOVER": "maybe"})


# As a user gets it ---------------------------------------------------------------------------------


def mzagent(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MZAGENT_")}
    return subprocess.run(
        [sys.executable, "-m", "mzagent_tui", *args], input="", capture_output=True, text=True, timeout=60,
        env={**environ, "MZAGENT_SANDBOX": "off", **env},
    )


def test_mzagent_run_with_no_key_uses_the_running_ollama_and_sends_no_key(ollama: ScriptedServer, project: Path) -> None:
    ollama.script(write_reply("hello.py", "print('hi')\n"), answer_reply("hello.py written"))
    done = mzagent("run", "--project", str(project), "--yes", "write hello.py", env={"OLLAMA_HOST": host_of(ollama), "MZAGENT_DISCOVER": "auto"})
    assert done.returncode == 0, done.stderr
    assert "hello.py written" in done.stdout and (project / "hello.py").read_text() == "print('hi')\n"
    assert f"Using qwen2.5-coder:7b on Ollama at {root_of(ollama)} (the largest coding model there): with no key set" in done.stderr
    assert "local model" not in done.stderr, "the bundled model was not started"
    assert [r["model"] for r in ollama.requests] == ["qwen2.5-coder:7b"] * 2
    assert {r["_headers"].get("authorization") for r in ollama.requests} == {"Bearer not-needed"}


def test_mzagent_config_says_which_server_and_why(ollama: ScriptedServer, project: Path) -> None:
    done = mzagent("config", "--project", str(project), env={"OLLAMA_HOST": host_of(ollama), "MZAGENT_DISCOVER": "auto"})
    assert done.returncode == 0, done.stderr
    provider_row = next(line for line in done.stdout.splitlines() if line.startswith("provider "))
    assert "ollama" in provider_row and f"detected: qwen2.5-coder:7b on Ollama at {root_of(ollama)}" in provider_row
    assert "qwen2.5-coder:7b" in done.stdout
    assert json.dumps(ollama.requests) == "[]", "mzagent config asks which models there are, nothing else"
    assert next(line for line in done.stdout.splitlines() if line.startswith("model profile")).split()[2] == "full"


def test_run_falls_back_to_the_bundled_model_message_when_nothing_runs(project: Path) -> None:
    """No server answers: the bundled model stays the default, as before (its setup line)."""
    done = mzagent("config", "--project", str(project), env={"OLLAMA_HOST": nothing_listening().removeprefix("http://"), "MZAGENT_DISCOVER": "auto"})
    provider_row = next(line for line in done.stdout.splitlines() if line.startswith("provider "))
    assert "local" in provider_row and "default (no key or base URL set)" in provider_row
