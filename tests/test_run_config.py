"""RunConfig: read once, and a model switch that keeps everything but the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.config import ConfigError
from mzagent_tui.agent.run_config import RunConfig


def test_a_switch_keeps_the_flags_the_policy_and_the_hooks(project: Path) -> None:
    config = RunConfig.load(project, {"base_url": "http://127.0.0.1:9/v1", "model": "m1", "max_steps": 7, "disable_aids": ["stuck"]}, "auto-safe", "ask", environ={}, cwd=project)
    switched = config.with_model("custom", "m2")
    assert (switched.settings.model, switched.settings.base_url, switched.settings.max_steps) == ("m2", "http://127.0.0.1:9/v1", 7)
    assert switched.settings.disable_aids == ["stuck"] and switched.policy is config.policy and switched.hooks == config.hooks
    assert config.settings.model == "m1", "the old configuration is not changed: a running worker keeps reading it"


def test_a_switch_to_another_provider_drops_the_key_and_url_given_for_the_first(project: Path) -> None:
    """A key given with --api-key for one endpoint must not go to another provider's."""
    config = RunConfig.load(project, {"base_url": "http://127.0.0.1:9/v1", "api_key": "sk-for-the-custom-server", "model": "m1"}, environ={}, cwd=project)
    with pytest.raises(ConfigError, match="no API key for provider 'openai'"):
        config.with_model("openai", "gpt-4o").settings.endpoint()
    switched = config.with_model("openai", "gpt-4o")
    assert switched.settings.base_url == "https://api.openai.com/v1" and switched.settings.api_key == ""
    assert config.with_model("custom", "m2").settings.api_key == "sk-for-the-custom-server"


def test_a_bad_model_switch_is_a_config_error(project: Path) -> None:
    config = RunConfig.load(project, {"base_url": "http://127.0.0.1:9/v1", "model": "m1"}, environ={}, cwd=project)
    with pytest.raises(ConfigError, match="unknown provider"):
        config.with_model("nosuch", "m").settings.endpoint()
