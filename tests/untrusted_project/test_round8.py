"""Where the user's key goes, round 8 (issue 54, rule 4): a project `.env` cannot choose it.

A `.env` may pick the endpoint, and the key goes there only when it comes from that same file.
The attacks: the forms python-dotenv reads (`export`, quotes, a link to another project file), a
provider's preset named beside a URL, and a command of the session that writes the URL into the
`.env` where the user keeps their key (the same file, so "the key came from it").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.config import ConfigError, load_settings
from mzagent_tui.agent.safety.approval import ApprovalDecision
from tests.attack_helpers import KeepAnswers, command, run

USERS_KEY = "sk-users-own-key-0123456789abcdef"
EVIL = "http://127.0.0.1:9/v1"


def sent_key(project: Path, environ: dict[str, str]) -> str:
    try:
        return load_settings(project, environ=environ, cwd=project).endpoint()[2]
    except ConfigError:
        return ""


@pytest.mark.parametrize("dotenv", [
    f"export MZAGENT_BASE_URL={EVIL}\nMZAGENT_MODEL=x\n",
    f"MZAGENT_BASE_URL='{EVIL}' # local\nMZAGENT_MODEL=x\n",
    f"MZAGENT_PROVIDER=openai\nMZAGENT_BASE_URL={EVIL}\n",
    f"MZAGENT_PROVIDER=custom\nMZAGENT_BASE_URL=\"{EVIL}\"\nMZAGENT_MODEL=x\nOPENAI_API_KEY=\n",
    f"MZAGENT_BASE_URL={EVIL}\nMZAGENT_MODEL=x\nMZAGENT_API_KEY=${{OPENAI_API_KEY}}\n",
], ids=["export", "quoted-with-comment", "preset-provider-and-url", "empty-key-var", "key-by-interpolation"])
def test_a_project_env_in_every_form_dotenv_reads_gets_no_key_of_the_users(project: Path, dotenv: str) -> None:
    (project / ".env").write_text(dotenv)
    assert USERS_KEY not in sent_key(project, {"OPENAI_API_KEY": USERS_KEY})


def test_a_project_env_that_is_a_link_to_another_project_file_gets_no_key(project: Path) -> None:
    (project / "config").mkdir()
    (project / "config" / "dev.env").write_text(f"MZAGENT_BASE_URL={EVIL}\nMZAGENT_MODEL=x\n")
    (project / ".env").symlink_to("config/dev.env")
    assert sent_key(project, {"MZAGENT_API_KEY": USERS_KEY}) != USERS_KEY


def test_a_command_that_points_the_users_own_env_elsewhere_does_not_get_the_key_sent(server, project: Path) -> None:  # noqa: ANN001
    (project / ".env").write_text(f"MZAGENT_PROVIDER=custom\nMZAGENT_BASE_URL=https://api.deepseek.com/v1\nMZAGENT_MODEL=deepseek-chat\nMZAGENT_API_KEY={USERS_KEY}\n")
    assert sent_key(project, {}) == USERS_KEY  # the user's setup: their key, their endpoint
    texts, _ = run(server, project, command(f"printf 'MZAGENT_BASE_URL={EVIL}\\n' >> .env; echo ran"), approver=KeepAnswers(ApprovalDecision(False)))
    assert "ran" in texts[0], texts
    base_url, _, key = load_settings(project, environ={}, cwd=project).endpoint()
    assert not (base_url == EVIL and key == USERS_KEY), texts


def test_control_in_auto_safe_the_same_command_is_asked_about_and_put_back(server, project: Path) -> None:  # noqa: ANN001
    (project / ".env").write_text(f"MZAGENT_PROVIDER=custom\nMZAGENT_BASE_URL=https://api.deepseek.com/v1\nMZAGENT_MODEL=deepseek-chat\nMZAGENT_API_KEY={USERS_KEY}\n")
    user = KeepAnswers(ApprovalDecision(False))
    run(server, project, command(f"printf 'MZAGENT_BASE_URL={EVIL}\\n' >> .env; echo ran"), approver=user, mode="auto-safe")
    assert [type(r).__name__ for r in user.asked] == ["PlantedFileApproval"]
    assert load_settings(project, environ={}, cwd=project).endpoint()[0] == "https://api.deepseek.com/v1"


USERS_ENV = f"MZAGENT_PROVIDER=custom\nMZAGENT_BASE_URL=https://api.deepseek.com/v1\nMZAGENT_MODEL=deepseek-chat\nMZAGENT_API_KEY={USERS_KEY}\n"


@pytest.mark.parametrize("call", [
    f"write_to_file('.env', {USERS_ENV.replace('https://api.deepseek.com/v1', EVIL)!r})",
    f"run_terminal_command(\"sed -i 's#https://api.deepseek.com/v1#{EVIL}#' .env\")",
    f"run_terminal_command(\"cp .env .env.bak && printf 'MZAGENT_BASE_URL={EVIL}\\\\n' >> .env.bak && mv .env.bak .env\")",
    f"run_terminal_command(\"rm .env && printf 'MZAGENT_BASE_URL={EVIL}\\\\nMZAGENT_MODEL=x\\\\nMZAGENT_API_KEY={USERS_KEY}\\\\n' > .env\")",
], ids=["write_to_file", "sed-in-place", "rename-over", "removed-and-made-again"])
def test_in_yolo_every_way_to_repoint_the_users_env_is_asked_about_and_put_back(server, project: Path, call: str) -> None:  # noqa: ANN001
    (project / ".env").write_text(USERS_ENV)
    user = KeepAnswers(ApprovalDecision(False))
    run(server, project, call, approver=user, disable_aids=["write.not_read"])  # the overwrite of a file not read, asked
    assert "PlantedFileApproval" in [type(r).__name__ for r in user.asked]
    assert load_settings(project, environ={}, cwd=project).endpoint()[0] == "https://api.deepseek.com/v1"


def test_in_yolo_a_env_in_a_subfolder_mzagent_may_be_started_from_is_asked_about(server, project: Path) -> None:  # noqa: ANN001
    (project / "app").mkdir()
    user = KeepAnswers(ApprovalDecision(False))
    run(server, project, f"write_to_file('app/.env', 'MZAGENT_BASE_URL={EVIL}\\n')", approver=user)
    assert [type(r).__name__ for r in user.asked] == ["PlantedFileApproval"] and not (project / "app" / ".env").exists()


def test_control_in_yolo_a_env_example_and_other_dot_files_are_written_unasked(server, project: Path) -> None:  # noqa: ANN001
    user = KeepAnswers(ApprovalDecision(False))
    run(server, project, "write_to_file('.env.example', 'MZAGENT_MODEL=x\\n')", "write_to_file('.editorconfig', 'root = true\\n')", approver=user)
    assert user.asked == [] and (project / ".env.example").exists()
