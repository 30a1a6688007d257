"""Where the key goes is the user's choice: attacks by a project `.env` on the destination of the
user's key, each checked against a real server on 127.0.0.1 (the Authorization header it gets),
with the same destination chosen by the user as the positive control."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.config import ConfigError, Settings, describe, load_settings, user_config_path
from mzagent_tui.agent.events import Notice
from mzagent_tui.agent.ground.providers import PROVIDERS
from mzagent_tui.agent.model.llm import ChatClient, LLMError
from tests.conftest import Recorder
from tests.scripted_server import Fault, Reply, ScriptedServer

USER_KEY = "sk-users-own-key-0123456789"
PROJECT_KEY = "sk-projects-key-9876543210"
MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "<question>q</question>"}]
USER_ENV = {"MZAGENT_API_KEY": USER_KEY, "MZAGENT_MODEL": "m"}
OK = Reply("<final_answer>fine</final_answer>")
LOCAL_PRESETS = [name for name, preset in PROVIDERS.items() if preset.base_url.startswith(("http://localhost", "http://127.0.0.1"))]


def write_config(text: str) -> None:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def bearer_sent(settings: Settings, server: ScriptedServer) -> str:
    """Send one request as the agent would and return the Authorization header the server got."""
    server.script(OK)
    ChatClient(settings, Recorder()).complete(MESSAGES, CancelToken())
    return server.requests[-1]["_headers"]["authorization"]


def preset_port(name: str) -> int:
    return int(PROVIDERS[name].base_url.rsplit(":", 1)[1].split("/")[0])


@pytest.fixture
def preset_server(request: pytest.FixtureRequest) -> Iterator[tuple[str, ScriptedServer]]:
    """A local preset's name and a scripted server on the port its URL names (8080, 1234, 11434)."""
    try:
        running = ScriptedServer(port=preset_port(request.param))
    except OSError as exc:
        pytest.skip(f"port {preset_port(request.param)} is taken on this machine: {exc}")
    with running:
        yield request.param, running


@pytest.mark.parametrize("preset_server", LOCAL_PRESETS, indirect=True)
@pytest.mark.parametrize("key_from", ["environment", "user config", "command line"])
def test_a_project_env_cannot_send_the_users_key_to_a_local_preset(project: Path, preset_server: tuple[str, ScriptedServer], key_from: str) -> None:
    """The reported hole: `MZAGENT_PROVIDER=lmstudio` in a project's .env sent the user's key to
    127.0.0.1:1234, whoever listens there."""
    name, server = preset_server
    environ, flags = {}, {}
    if key_from == "environment":
        environ["MZAGENT_API_KEY"] = USER_KEY
    elif key_from == "user config":
        write_config(f'api_key = "{USER_KEY}"\n')
    else:
        flags["api_key"] = USER_KEY
    (project / ".env").write_text(f"MZAGENT_PROVIDER={name}\n")
    settings = load_settings(project=project, flags=flags, environ=environ, cwd=project)
    assert settings.base_url == PROVIDERS[name].base_url and settings.key_withheld
    assert bearer_sent(settings, server) == "Bearer not-needed"
    assert all(USER_KEY not in str(request) for request in server.requests)


@pytest.mark.parametrize("preset_server", LOCAL_PRESETS, indirect=True)
def test_the_same_preset_chosen_by_the_user_gets_the_key(project: Path, preset_server: tuple[str, ScriptedServer]) -> None:
    """The positive control: the server above can receive the key, when the user picked it."""
    name, server = preset_server
    write_config(f'provider = "{name}"\n')
    settings = load_settings(project=project, environ={"MZAGENT_API_KEY": USER_KEY}, cwd=project)
    assert not settings.key_withheld
    assert bearer_sent(settings, server) == f"Bearer {USER_KEY}"


@pytest.mark.parametrize(
    "dotenv",
    [
        "MZAGENT_BASE_URL={url}\n",
        "MZAGENT_PROVIDER=custom\nMZAGENT_BASE_URL={url}\n",
        "export MZAGENT_BASE_URL={url}\n",
        "MZAGENT_BASE_URL='{url}'\n",
        "MZAGENT_BASE_URL=  {url}  \n",
        "MZAGENT_BASE_URL={url}\nMZAGENT_MODEL=gpt-4o\n",
        "MZAGENT_BASE_URL={url}\nOPENAI_API_KEY=\n",
    ],
)
def test_a_project_base_url_gets_no_user_key_however_it_is_written(project: Path, server: ScriptedServer, dotenv: str) -> None:
    (project / ".env").write_text(dotenv.format(url=server.base_url))
    settings = load_settings(project=project, environ=USER_ENV, cwd=project)
    assert settings.base_url == server.base_url
    assert bearer_sent(settings, server) == "Bearer not-needed"


def test_the_users_own_base_url_gets_the_key(project: Path, server: ScriptedServer) -> None:
    write_config(f'base_url = "{server.base_url}"\nmodel = "m"\n')
    settings = load_settings(project=project, environ={"MZAGENT_API_KEY": USER_KEY}, cwd=project)
    assert bearer_sent(settings, server) == f"Bearer {USER_KEY}"


def test_a_project_key_goes_to_the_project_url_of_the_same_file(project: Path, server: ScriptedServer) -> None:
    (project / ".env").write_text(f"MZAGENT_BASE_URL={server.base_url}\nMZAGENT_MODEL=m\nMZAGENT_API_KEY={PROJECT_KEY}\n")
    settings = load_settings(project=project, environ={}, cwd=project)
    assert bearer_sent(settings, server) == f"Bearer {PROJECT_KEY}"


def test_a_key_from_another_env_file_is_not_that_files(project: Path, tmp_path: Path, server: ScriptedServer) -> None:
    """The project's .env picks the URL, the current folder's .env brings a key: two files, two
    projects, neither may send the other's key."""
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    (project / ".env").write_text(f"MZAGENT_BASE_URL={server.base_url}\n")
    (cwd / ".env").write_text(f"MZAGENT_API_KEY={PROJECT_KEY}\n")
    settings = load_settings(project=project, environ={"MZAGENT_MODEL": "m"}, cwd=cwd)
    assert bearer_sent(settings, server) == "Bearer not-needed"


@pytest.mark.parametrize(
    "variable",
    ["OPENAI_BASE_URL", "OPENAI_API_BASE", "DEEPSEEK_BASE_URL", "OLLAMA_HOST", "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy",
     "http_proxy", "MZAGENT_MODEL", "MZAGENT_PROFILE", "MZAGENT_PROTOCOL", "MZAGENT_GRAMMAR"],
)
def test_other_url_variables_in_a_project_env_move_nothing(project: Path, variable: str) -> None:
    """The SDK and httpx read these from the process environment; a project's .env never gets there."""
    with ScriptedServer() as mine, ScriptedServer() as theirs:
        theirs.default = OK
        write_config(f'base_url = "{mine.base_url}"\nmodel = "m"\n')
        value = theirs.base_url if "PROXY" in variable.upper() or "BASE" in variable else theirs.base_url.removesuffix("/v1")
        (project / ".env").write_text(f"{variable}={value}\n")
        settings = load_settings(project=project, environ={"MZAGENT_API_KEY": USER_KEY}, cwd=project)
        assert variable not in os.environ and settings.base_url == mine.base_url
        assert bearer_sent(settings, mine) == f"Bearer {USER_KEY}"
        assert theirs.requests == []


def test_a_project_provider_key_variable_cannot_pick_the_provider_for_the_users_key(project: Path) -> None:
    """With no provider set, a key variable picks one: a project's OPENROUTER_API_KEY must not
    send the user's general key to OpenRouter."""
    (project / ".env").write_text(f"OPENROUTER_API_KEY={PROJECT_KEY}\n")
    settings = load_settings(project=project, environ={"MZAGENT_API_KEY": USER_KEY}, cwd=project)
    assert settings.provider == "openrouter" and settings.api_key == USER_KEY
    with pytest.raises(ConfigError, match="chose where requests go"):
        settings.endpoint()


@pytest.mark.parametrize("provider", ["openai", "deepseek", "openrouter", "siliconflow"])
def test_a_project_provider_cannot_take_the_users_general_key_to_a_hosted_preset(project: Path, provider: str) -> None:
    write_config(f'api_key = "{USER_KEY}"\nprovider = "custom"\n')
    (project / ".env").write_text(f"MZAGENT_PROVIDER={provider}\n")
    settings = load_settings(project=project, environ={}, cwd=project)
    assert settings.base_url == PROVIDERS[provider].base_url
    with pytest.raises(ConfigError, match=f"no API key for provider '{provider}'.*not sent"):
        settings.endpoint()


def test_a_providers_own_key_still_goes_to_that_providers_url(project: Path) -> None:
    """OPENAI_API_KEY names its destination: a project choosing the provider openai sends it to
    api.openai.com, the one place the user's naming already sends it, and nowhere else."""
    (project / ".env").write_text("MZAGENT_PROVIDER=openai\n")
    settings = load_settings(project=project, environ={"OPENAI_API_KEY": USER_KEY}, cwd=project)
    assert settings.endpoint() == ("https://api.openai.com/v1", "gpt-4o-mini", USER_KEY)
    (project / ".env").write_text("MZAGENT_PROVIDER=openai\nMZAGENT_BASE_URL=http://127.0.0.1:9/v1\n")
    moved = load_settings(project=project, environ={"OPENAI_API_KEY": USER_KEY}, cwd=project)
    with pytest.raises(ConfigError, match="not sent"):
        moved.endpoint()


@pytest.mark.parametrize("spelling", ["LLAMACPP", "LlamaCpp", "llama.cpp", "llamacpp\u200b"])
def test_a_preset_name_in_another_spelling_is_no_preset(project: Path, spelling: str) -> None:
    (project / ".env").write_text(f"MZAGENT_PROVIDER={spelling}\n")
    settings = load_settings(project=project, environ={"MZAGENT_API_KEY": USER_KEY}, cwd=project)
    with pytest.raises(ConfigError, match="unknown provider"):
        settings.endpoint()


def test_a_provider_switched_in_the_app_keeps_the_rule(project: Path, server: ScriptedServer) -> None:
    """The palette's switch passes the provider as a flag; the project's base URL still picks the
    destination, so the key still stays home."""
    (project / ".env").write_text(f"MZAGENT_BASE_URL={server.base_url}\n")
    settings = load_settings(project=project, flags={"provider": "custom", "model": "m"}, environ={"MZAGENT_API_KEY": USER_KEY}, cwd=project)
    assert bearer_sent(settings, server) == "Bearer not-needed"


def test_a_server_asking_for_the_withheld_key_gets_an_error_that_says_why(project: Path, server: ScriptedServer) -> None:
    (project / ".env").write_text(f"MZAGENT_BASE_URL={server.base_url}\n")
    settings = load_settings(project=project, environ=USER_ENV, cwd=project)
    server.script(Fault("status", 401, {"error": {"message": "missing key"}}))
    with pytest.raises(LLMError, match="yours was withheld"):
        ChatClient(settings, Recorder()).complete(MESSAGES, CancelToken())


def test_config_and_a_run_say_the_key_was_withheld(project: Path, server: ScriptedServer) -> None:
    """`mzagent config` shows it, and a whole `mzagent run` from the command line sends no key."""
    (project / ".env").write_text(f"MZAGENT_BASE_URL={server.base_url}\nMZAGENT_MODEL=m\n")
    settings = load_settings(project=project, environ={"MZAGENT_API_KEY": USER_KEY}, cwd=project)
    row = next(row for row in describe(settings) if row[0] == "api_key")
    assert row[1].endswith("(withheld)") and ".env (MZAGENT_BASE_URL)" in row[2] and USER_KEY not in row[1]
    server.script(Reply("<thought>done</thought><final_answer>ok</final_answer>"))
    env = {**os.environ, "MZAGENT_API_KEY": USER_KEY, "MZAGENT_SANDBOX": "off"}
    done = subprocess.run(
        [sys.executable, "-m", "mzagent_tui", "run", "--project", str(project), "--yes", "say ok"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "API key withheld" in done.stdout + done.stderr
    assert server.requests and all(r["_headers"]["authorization"] == "Bearer not-needed" for r in server.requests)
    shown = subprocess.run(
        [sys.executable, "-m", "mzagent_tui", "config", "--project", str(project)],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert "(withheld)" in shown.stdout and USER_KEY not in shown.stdout


def test_a_run_emits_the_withheld_notice_once(project: Path, server: ScriptedServer) -> None:
    from mzagent_tui.agent.assembly import assemble
    from mzagent_tui.agent.run_config import RunConfig
    from mzagent_tui.agent.safety.approval import Policy, StaticApprover

    (project / ".env").write_text(f"MZAGENT_BASE_URL={server.base_url}\nMZAGENT_MODEL=m\n")
    settings = load_settings(project=project, flags={"sandbox": "off"}, environ={"MZAGENT_API_KEY": USER_KEY}, cwd=project)
    server.script(Reply("<thought>done</thought><final_answer>ok</final_answer>"))
    recorder = Recorder()
    assemble(RunConfig(settings, project, Policy(), ()), StaticApprover(True), recorder).run("say ok", CancelToken())
    notices = [event.text for event in recorder.of(Notice) if "withheld" in event.text]
    assert len(notices) == 1 and ".env (MZAGENT_BASE_URL)" in notices[0]
