"""What a command's environment holds: an allow-list plus the user's pass_env, URL passwords removed.

Most checks run `env` as a real command through run_terminal_command and read what the model
would read. Output redaction would also hide `user:pw@` (as `user:[redacted]@`), so the checks
look for the stripped form `user@host`, which only the environment itself can produce.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mzagent_tui.agent.events import Observation
from mzagent_tui.agent.safety.approval import StaticApprover
from mzagent_tui.agent.safety.secrets import INHERITED_NAMES, LC_NAMES, command_env, redactor_for, without_url_passwords
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.shell import ShellTool
from tests.conftest import Recorder, make_agent
from tests.scripted_server import Reply, answer_reply

ATTACKER = {
    "MAIL_PASS": "mail-hunter2",
    "DB_PASS": "db-hunter2",
    "SMTP_PASSPHRASE": "smtp correct horse",
    "MONGO_URI": "mongodb://u:mongo-pw@h",
    "REDIS_URL": "redis://:redis-pw@h",
    "NPM_CONFIG__AUTH": "dXNlcjpucG0tcHc=",
    "DOCKER_AUTH_CONFIG": '{"auths":{"r":{"auth":"dXNlcjpkb2NrZXI="}}}',
    "KEYSTORE_PASSPHRASE": "keystore-pw",
    "WALLET_MNEMONIC": "abandon ability able about above absent",
    "SEED_PHRASE": "zoo zebra zone zero",
    "CI_JOB_JWT": "eyJhbGciOiJSUzI1NiJ9.ci.jwt",
    "CI_JOB_TOKEN": "ci-job-token-value",
    "BUILDKITE_AGENT_ACCESS_TOKEN": "buildkite-value",
    "CIRCLE_TOKEN": "circle-value",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "actions-value",
    "ARTIFACT_URL": "https://:empty-user-pw@artifacts.example/x",
}
"""Secrets under names a deny-list did not know, each shown to reach the model before the allow-list."""
RUNS_CODE = {
    "BASH_ENV": "/tmp/planted-bash-env",
    "ENV": "/tmp/planted-env",
    "PROMPT_COMMAND": "touch /tmp/planted-prompt",
    "LD_PRELOAD": "/tmp/planted.so",
    "LD_LIBRARY_PATH": "/tmp/planted-libs",
    "PYTHONSTARTUP": "/tmp/planted.py",
    "PYTHONPATH": "/tmp/planted-site",
    "PERL5OPT": "-Mplanted",
    "NODE_OPTIONS": "--require /tmp/planted.js",
    "JAVA_TOOL_OPTIONS": "-javaagent:/tmp/planted.jar",
    "GIT_SSH_COMMAND": "ssh -i /tmp/planted-key",
    "GIT_CONFIG_GLOBAL": "/tmp/planted-gitconfig",
    "GIT_ASKPASS": "/tmp/planted-askpass",
    "GIT_DIR": "/tmp/planted-git",
    "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
    "XDG_RUNTIME_DIR": "/run/user/1000",
}
"""Variables that make programs run code, change where git looks, or reach an agent's socket."""
LOOKALIKES = {
    "path": "/lower/case/path",
    "Path": "/mixed/case/path",
    "home": "/lower/home",
    "Lang": "xx_XX",
    "LC_ALL_TOKEN": "lc-all-token-value",
    "LC_SECRET": "lc-secret-value",
    "LC_": "lc-bare-value",
    "PATH_SECRET": "path-secret-value",
    "HOME_PASSWORD": "home-password-value",
    "VIRTUAL_ENV_TOKEN": "venv-token-value",
    " PATH": "space-path-value",
}
"""Names that differ from an allowed one only by case, or merely start like one."""
EVERYDAY = {
    "HOME": "/home/u",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "LC_TIME": "C",
    "TZ": "UTC",
    "USER": "u",
    "VIRTUAL_ENV": "/w/.venv",
    "CARGO_HOME": "/home/u/.cargo",
    "GOPATH": "/home/u/go",
    "JAVA_HOME": "/usr/lib/jvm/default",
    "NVM_DIR": "/home/u/.nvm",
}


def run_env(project: Path, tmp_path: Path, environ: dict[str, str], pass_env: list[str] | None = None) -> str:
    """`env` run by the command tool as the model runs it; what the model reads back."""
    session = Session(tmp_path / "session", redactor_for({}, ""))
    env = command_env({"PATH": os.environ["PATH"], **environ}, pass_env or [])
    tool = ShellTool(ToolContext(project, session, Recorder(), StaticApprover(True), session.redact, env=env, command_timeout=10))
    result = tool.run_terminal_command("env")
    assert result.ok, result.text
    return result.text


def names_in(text: str) -> set[str]:
    return {line.partition("=")[0] for line in text.splitlines() if "=" in line}


def test_no_attacker_variable_reaches_a_command(project: Path, tmp_path: Path) -> None:
    text = run_env(project, tmp_path, {**ATTACKER, **EVERYDAY})
    assert not names_in(text) & set(ATTACKER)
    for value in ATTACKER.values():
        assert value not in text
    for name, value in EVERYDAY.items():
        assert f"{name}={value}" in text.splitlines()
    assert f"PATH={os.environ['PATH']}" in text.splitlines()


def test_what_runs_code_or_reaches_an_agent_does_not_pass_by_default(project: Path, tmp_path: Path) -> None:
    assert not names_in(run_env(project, tmp_path, RUNS_CODE)) & set(RUNS_CODE)


def test_bash_env_runs_nothing_unless_the_user_passes_it(project: Path, tmp_path: Path) -> None:
    """The effect, not just the name: bash sources BASH_ENV before every non-interactive script."""
    marker = tmp_path / "sourced"
    script = tmp_path / "bash_env.sh"
    script.write_text(f"touch {marker}\n")
    run_env(project, tmp_path, {"BASH_ENV": str(script)})
    assert not marker.exists()
    text = run_env(project, tmp_path, {"BASH_ENV": str(script)}, pass_env=["BASH_ENV"])
    assert marker.exists() and f"BASH_ENV={script}" in text.splitlines()


def test_pass_env_is_the_users_choice_even_for_ld_preload_and_git() -> None:
    chosen = ["LD_PRELOAD", "BASH_ENV", "GIT_SSH_COMMAND", "SSH_AUTH_SOCK"]
    env = command_env(RUNS_CODE, chosen)
    assert {name: env[name] for name in chosen} == {name: RUNS_CODE[name] for name in chosen}
    assert not (set(env) & set(RUNS_CODE)) - set(chosen)


def test_names_that_only_look_allowed_do_not_pass(project: Path, tmp_path: Path) -> None:
    names = names_in(run_env(project, tmp_path, {k: v for k, v in LOOKALIKES.items() if k != " PATH"}))
    assert not names & set(LOOKALIKES)
    assert not set(command_env(LOOKALIKES)) & set(LOOKALIKES)


def test_only_the_real_locale_variables_pass() -> None:
    env = command_env({name: "C" for name in (*LC_NAMES, "LC_SECRET", "LC_ALL_TOKEN", "LC_TOKEN", "lc_all")})
    assert {name for name in env if name.lower().startswith("lc_")} == set(LC_NAMES)


def test_a_pass_env_variable_passes_without_its_url_password(project: Path, tmp_path: Path) -> None:
    environ = {
        "DEPLOY_DB": "postgres://app:s3cret-db@db:5432/main",
        "CACHE": "redis://:s3cret-cache@cache:6379/0",
        "MIRROR": "https://:s3cret-mirror@mirror.example/simple",
        "AT_IN_PW": "postgres://app:p@ss-s3cret@db/main",
    }
    text = run_env(project, tmp_path, environ, pass_env=list(environ))
    lines = text.splitlines()
    assert "DEPLOY_DB=postgres://app@db:5432/main" in lines
    assert "CACHE=redis://cache:6379/0" in lines
    assert "MIRROR=https://mirror.example/simple" in lines
    assert "AT_IN_PW=postgres://app@db/main" in lines
    assert "s3cret" not in text and "[redacted]" not in text


def test_a_path_holding_a_url_with_a_password_loses_the_password(project: Path, tmp_path: Path) -> None:
    path = f"{os.environ['PATH']}:https://deploy:path-s3cret@mirror.example/bin"
    text = run_env(project, tmp_path, {"PATH": path})
    assert f"PATH={os.environ['PATH']}:https://deploy@mirror.example/bin" in text.splitlines()
    assert "path-s3cret" not in text


def test_a_key_shaped_value_passes_through_pass_env_only() -> None:
    """pass_env names a variable on purpose; an allowed name holding a key is dropped as before."""
    token = "ghp_abcdefghijklmnopqrstuvwxyz012345"
    assert command_env({"GITHUB_TOKEN": token}, ["GITHUB_TOKEN"])["GITHUB_TOKEN"] == token
    assert command_env({"GH_URL": f"https://x:{token}@github.com/o/r"}, ["GH_URL"])["GH_URL"] == "https://x@github.com/o/r"
    assert "NODE_PATH" not in command_env({"NODE_PATH": token})
    assert "NODE_PATH" in command_env({"NODE_PATH": "/usr/lib/node_modules"})


def test_mzagents_own_settings_win_over_the_users() -> None:
    env = command_env({"TERM": "xterm-256color", "PAGER": "less", "EDITOR": "vim"}, ["PAGER", "EDITOR"])
    assert (env["TERM"], env["PAGER"], env["EDITOR"], env["GIT_TERMINAL_PROMPT"], env["NO_COLOR"]) == ("dumb", "cat", "false", "0", "1")


@pytest.mark.parametrize(
    ("value", "stripped"),
    [
        ("scheme://user:pw@host", "scheme://user@host"),
        ("scheme://:pw@host", "scheme://host"),
        ("scheme://user:@host", "scheme://user@host"),
        ("scheme://user@host", "scheme://user@host"),
        ("a https://u:p1@h1/x and redis://:p2@h2", "a https://u@h1/x and redis://h2"),
        ("https://registry.example:443/@scope%2fpkg", "https://registry.example:443/@scope%2fpkg"),
        ("/usr/bin:/bin", "/usr/bin:/bin"),
        ("ssh://git@host:22/r", "ssh://git@host:22/r"),
    ],
)
def test_url_passwords_leave_and_nothing_else_changes(value: str, stripped: str) -> None:
    assert without_url_passwords(value) == stripped


def test_redaction_still_hides_the_secret_values_commands_no_longer_get() -> None:
    """Logs and exports hide what they hid before: the allow-list does not change redaction."""
    redact = redactor_for({"DB_PASSWORD": "db-password-value", "OPENAI_API_KEY": "sk-proj-abcdefghijklmnopqrstuv"}, "sk-the-api-key-1234")
    text = redact("db-password-value sk-proj-abcdefghijklmnopqrstuv sk-the-api-key-1234")
    assert "db-password-value" not in text and "sk-proj" not in text and "sk-the-api-key" not in text


def test_every_allowed_name_is_exact_and_upper_case() -> None:
    """Exact names only: no prefix, no lower-case twin that a case-insensitive match would let in."""
    assert all(name.isupper() and name.replace("_", "").isalnum() for name in INHERITED_NAMES)
    assert {"PATH", "HOME", "LANG", "VIRTUAL_ENV", "TMPDIR", "TERM", "TZ"} <= INHERITED_NAMES
    assert not INHERITED_NAMES & {"NODE_OPTIONS", "PYTHONPATH", "LD_PRELOAD", "BASH_ENV", "SSH_AUTH_SOCK", "HTTPS_PROXY"}


def test_the_agent_gives_its_commands_the_allow_list_and_the_users_pass_env(server, project: Path) -> None:
    """Through the loop as it runs: the settings' pass_env reaches the command tool's environment."""
    server.script(Reply('<thought>look</thought><action>run_terminal_command("env")</action>'), answer_reply())
    environ = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", **ATTACKER, "DEPLOY_DB": "postgres://app:agent-s3cret@db/main"}
    agent, recorder = make_agent(server, project, env=environ, pass_env=["DEPLOY_DB"])
    agent.run("show the environment")
    agent.close()
    [observation] = recorder.of(Observation)
    assert not names_in(observation.text) & set(ATTACKER)
    assert "LANG=C.UTF-8" in observation.text.splitlines()
    assert "DEPLOY_DB=postgres://app@db/main" in observation.text.splitlines()


def test_mzagent_config_lists_the_names_commands_get_never_values(project: Path) -> None:
    env = {
        **os.environ,
        "MZAGENT_BASE_URL": "http://127.0.0.1:9/v1",
        "MZAGENT_MODEL": "m",
        "MZAGENT_PASS_ENV": "DEPLOY_DB",
        "DEPLOY_DB": "postgres://app:config-s3cret@db/main",
        "MAIL_PASS": "config-mail-pass",
        "LANG": "C.UTF-8",
    }
    done = subprocess.run(
        [sys.executable, "-m", "mzagent_tui", "config", "--project", str(project)], capture_output=True, text=True, timeout=60, env=env,
    )
    assert done.returncode == 0, done.stderr
    [row] = [line for line in done.stdout.splitlines() if line.startswith("command_env ")]
    _, value, _ = re.split(r"\s{2,}", row)
    names = set(value.split(", "))
    assert {"PATH", "HOME", "LANG", "DEPLOY_DB", "PAGER", "TERM"} <= names and "MAIL_PASS" not in names
    [passed] = [line for line in done.stdout.splitlines() if line.startswith("pass_env ")]
    assert "DEPLOY_DB" in passed
    assert "config-s3cret" not in done.stdout and "config-mail-pass" not in done.stdout and "postgres://" not in done.stdout
