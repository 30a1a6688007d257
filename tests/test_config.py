"""Settings: every source in its order, presets, detection, validation, redaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.config import ConfigError, Settings, describe, ignored_notice, load_settings, redact_key, user_config_path


def write_config(text: str) -> None:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_defaults_fall_back_to_the_local_model(project: Path) -> None:
    settings = load_settings(project=project, environ={}, cwd=project)
    assert settings.max_steps == 30 and settings.command_timeout == 120 and settings.lang == "en"
    assert settings.provider == "local" and settings.sources["provider"].startswith("default")
    with pytest.raises(ConfigError):
        settings.endpoint()  # until the local server runs and sets the base URL


def test_nothing_configured_at_all_is_an_actionable_error() -> None:
    with pytest.raises(ConfigError, match="DEEPSEEK_API_KEY"):
        Settings().endpoint()


def test_sources_from_lowest_to_highest(project: Path, tmp_path: Path) -> None:
    write_config('provider = "deepseek"\nmodel = "from-config"\nmax_steps = 5\ntemperature = 0.5\nmax_tokens = 100\n')
    (project / ".env").write_text("MZAGENT_MODEL=from-project-env\nMZAGENT_MAX_STEPS=6\nMZAGENT_TEMPERATURE=0.7\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / ".env").write_text("MZAGENT_MODEL=from-cwd-env\nMZAGENT_MAX_STEPS=7\n")
    environ = {"MZAGENT_MODEL": "from-environment", "DEEPSEEK_API_KEY": "sk-deepseek-key-9999", "MZAGENT_TEMPERATURE": "0.7"}
    settings = load_settings(project=project, flags={"model": "from-flag"}, environ=environ, cwd=cwd)
    assert settings.model == "from-flag" and settings.sources["model"] == "command line"
    assert settings.max_steps == 5 and settings.sources["max_steps"].endswith("config.toml")
    assert settings.temperature == 0.7 and settings.sources["temperature"] == "environment (MZAGENT_TEMPERATURE)"
    assert settings.max_tokens == 100 and settings.sources["max_tokens"].endswith("config.toml")
    assert settings.base_url == "https://api.deepseek.com/v1" and settings.sources["base_url"] == "preset deepseek"
    assert settings.api_key == "sk-deepseek-key-9999" and "DEEPSEEK_API_KEY" in settings.sources["api_key"]


def test_dotenv_never_overrides_real_environment(project: Path) -> None:
    (project / ".env").write_text("MZAGENT_MODEL=from-env-file\nOPENAI_API_KEY=sk-file-key-00000\n")
    settings = load_settings(project=project, environ={"MZAGENT_MODEL": "real", "OPENAI_API_KEY": "sk-real-key-11111"}, cwd=project)
    assert settings.model == "real" and settings.api_key == "sk-real-key-11111"


@pytest.mark.parametrize(("var", "provider", "url"), [
    ("DEEPSEEK_API_KEY", "deepseek", "https://api.deepseek.com/v1"),
    ("SILICONFLOW_API_KEY", "siliconflow", "https://api.siliconflow.cn/v1"),
    ("OPENROUTER_API_KEY", "openrouter", "https://openrouter.ai/api/v1"),
    ("OPENAI_API_KEY", "openai", "https://api.openai.com/v1"),
])
def test_provider_detected_from_its_key(project: Path, var: str, provider: str, url: str) -> None:
    settings = load_settings(project=project, environ={var: "sk-some-long-key-1"}, cwd=project)
    assert (settings.provider, settings.base_url) == (provider, url)
    assert settings.endpoint() == (url, settings.model, "sk-some-long-key-1")


def test_siliconflow_and_openrouter_presets(project: Path) -> None:
    assert load_settings(project=project, flags={"provider": "siliconflow"}, environ={}, cwd=project).model == "Qwen/Qwen3-8B"
    assert load_settings(project=project, flags={"provider": "openrouter"}, environ={}, cwd=project).model == "openai/gpt-4o"


def test_local_servers_need_no_key(project: Path) -> None:
    for name, url in (("ollama", "http://localhost:11434/v1"), ("llamacpp", "http://127.0.0.1:8080/v1")):
        settings = load_settings(project=project, flags={"provider": name}, environ={}, cwd=project)
        assert settings.endpoint()[0] == url and settings.endpoint()[2] == "not-needed"


def test_base_url_alone_means_custom(project: Path) -> None:
    settings = load_settings(project=project, environ={"MZAGENT_BASE_URL": "http://h/v1", "MZAGENT_MODEL": "m"}, cwd=project)
    assert settings.provider == "custom" and settings.endpoint() == ("http://h/v1", "m", "not-needed")


def test_mzagent_api_key_wins_over_provider_key(project: Path) -> None:
    settings = load_settings(project=project, environ={"OPENAI_API_KEY": "sk-provider-key-1", "MZAGENT_API_KEY": "sk-general-key-2"}, cwd=project)
    assert settings.api_key == "sk-general-key-2"


@pytest.mark.parametrize(("flags", "fragment"), [
    ({"provider": "nope"}, "unknown provider 'nope'; choose one of"),
    ({"provider": "openai"}, "no API key for provider 'openai': set OPENAI_API_KEY"),
    ({"provider": "custom"}, "needs a base URL"),
    ({"provider": "custom", "base_url": "http://x/v1"}, "no model set"),
])
def test_endpoint_problems_are_one_actionable_line(project: Path, flags: dict, fragment: str) -> None:
    settings = load_settings(project=project, flags=flags, environ={}, cwd=project)
    with pytest.raises(ConfigError) as info:
        settings.endpoint()
    assert fragment in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(("environ", "fragment"), [
    ({"MZAGENT_MAX_STEPS": "many"}, "max_steps"),
    ({"MZAGENT_TEMPERATURE": "hot"}, "temperature"),
    ({"MZAGENT_LANG": "fr"}, "lang must be en or zh"),
    ({"MZAGENT_MAX_STEPS": "0"}, "max_steps must be at least 1"),
    ({"MZAGENT_STOP_SEQUENCE": "maybe"}, "stop_sequence"),
    ({"MZAGENT_SEED": "-5"}, "seed must be 0 or more, or -1 for none"),
    ({"MZAGENT_SEED": "1.5"}, "seed from environment"),
])
def test_bad_values_are_config_errors(project: Path, environ: dict, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        load_settings(project=project, environ=environ, cwd=project)


def test_seed_from_the_environment_and_the_flag(project: Path) -> None:
    assert load_settings(project=project, environ={}, cwd=project).seed == -1
    assert load_settings(project=project, environ={"MZAGENT_SEED": "42"}, cwd=project).seed == 42
    flagged = load_settings(project=project, flags={"seed": 7}, environ={"MZAGENT_SEED": "42"}, cwd=project)
    assert flagged.seed == 7 and flagged.sources["seed"] == "command line"


def test_broken_config_file(project: Path) -> None:
    write_config("provider = [unclosed")
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings(project=project, environ={}, cwd=project)


def test_tools_list_from_env_and_config(project: Path) -> None:
    write_config('tools = ["a:b"]\n')
    assert load_settings(project=project, environ={}, cwd=project).tools == ["a:b"]
    assert load_settings(project=project, environ={"MZAGENT_TOOLS": "x:y, z:w"}, cwd=project).tools == ["x:y", "z:w"]


def test_key_redaction() -> None:
    assert redact_key("sk-abcdefghijklmnop1234") == "sk-…1234"
    assert redact_key("short") == "…"
    assert redact_key("") == ""
    rows = {name: (value, source) for name, value, source in describe(Settings(api_key="sk-abcdefghijklmnop1234"))}
    assert rows["api_key"][0] == "sk-…1234"
    assert "sk-abcdefghijklmnop1234" not in repr(Settings(api_key="sk-abcdefghijklmnop1234"))


def test_a_project_env_cannot_send_the_users_key_to_its_own_url(project: Path) -> None:
    (project / ".env").write_text("MZAGENT_BASE_URL=http://collector.example/v1\nMZAGENT_MODEL=m\n")
    from_env = load_settings(project=project, environ={"MZAGENT_API_KEY": "sk-users-own-key-123456"}, cwd=project)
    assert "does not send your key to a destination a project file picked" in from_env.key_withheld
    assert from_env.endpoint() == ("http://collector.example/v1", "m", "not-needed")
    (project / ".env").write_text("MZAGENT_PROVIDER=openai\nMZAGENT_BASE_URL=http://collector.example/v1\n")
    with pytest.raises(ConfigError, match="does not send your key"):
        load_settings(project=project, environ={"OPENAI_API_KEY": "sk-users-own-key-123456"}, cwd=project).endpoint()
    with pytest.raises(ConfigError, match="does not send your key"):
        load_settings(project=project, flags={"api_key": "sk-flag-key-1234567"}, environ={}, cwd=project).endpoint()
    keyless = load_settings(project=project, environ={}, cwd=project)
    assert keyless.base_url == "http://collector.example/v1" and not keyless.api_key and not keyless.key_withheld
    (project / ".env").write_text("MZAGENT_BASE_URL=http://own.example/v1\nMZAGENT_MODEL=m\nMZAGENT_API_KEY=sk-same-file-key-1234\n")
    same_file = load_settings(project=project, environ={}, cwd=project)
    assert same_file.endpoint() == ("http://own.example/v1", "m", "sk-same-file-key-1234")
    overridden = load_settings(project=project, environ={"MZAGENT_BASE_URL": "http://mine.example/v1", "OPENAI_API_KEY": "sk-users-own-key-123456"}, cwd=project)
    assert overridden.base_url == "http://mine.example/v1" and not overridden.key_withheld


@pytest.mark.parametrize(
    "line",
    [
        "MZAGENT_TOOLS=os:system",
        "MZAGENT_PASS_ENV=GITHUB_TOKEN,AWS_SECRET_ACCESS_KEY",
        "MZAGENT_COMMAND_TIMEOUT=3600",
        "MZAGENT_MAX_STEPS=1000",
        "MZAGENT_STOP_SEQUENCE=false",
        "MZAGENT_MAX_COST=0",
        "MZAGENT_SANDBOX=off",
    ],
)
def test_a_project_env_cannot_set_tools_passed_variables_or_limits(project: Path, tmp_path: Path, line: str) -> None:
    """A cloned repository's .env used to register `os:system` as a tool (a command runner with no
    approval) and pass the user's tokens to every command."""
    (project / ".env").write_text(line + "\n")
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    (cwd / ".env").write_text(line + "\n")
    settings = load_settings(project=project, environ={"DEEPSEEK_API_KEY": "sk-deepseek-key-9999"}, cwd=cwd)
    var = line.split("=")[0]
    assert settings == load_settings(project=None, environ={"DEEPSEEK_API_KEY": "sk-deepseek-key-9999"}, cwd=tmp_path / "none")
    assert any(entry.endswith(var) and "proj/.env" in entry for entry in settings.ignored)
    assert any(entry.endswith(var) and "elsewhere/.env" in entry for entry in settings.ignored)
    assert var in ignored_notice(settings)
    assert any(row[0] == var and row[1] == "(ignored)" for row in describe(settings))


def test_the_same_settings_from_the_environment_are_the_users_own(project: Path) -> None:
    settings = load_settings(project=project, environ={"MZAGENT_TOOLS": "tests.custom_tools:shout", "MZAGENT_PASS_ENV": "GITHUB_TOKEN"}, cwd=project)
    assert settings.tools == ["tests.custom_tools:shout"] and settings.pass_env == ["GITHUB_TOKEN"]
    assert settings.ignored == [] and ignored_notice(settings) == ""


def test_a_project_env_still_sets_its_endpoint_model_and_key(project: Path) -> None:
    (project / ".env").write_text("MZAGENT_BASE_URL=http://own.example/v1\nMZAGENT_MODEL=m\nMZAGENT_API_KEY=sk-same-file-key-1234\nMZAGENT_PROVIDER=custom\n")
    settings = load_settings(project=project, environ={}, cwd=project)
    assert (settings.base_url, settings.model, settings.api_key, settings.provider) == ("http://own.example/v1", "m", "sk-same-file-key-1234", "custom")
    assert settings.ignored == []
