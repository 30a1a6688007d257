"""A project is untrusted: its files cannot add tools, get imported, or plant code without asking."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mzagent_tui.agent.events import Observation
from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy, PolicyApprover, StaticApprover
from mzagent_tui.agent.safety.approval_requests import PlantedFileApproval
from mzagent_tui.agent.safety.planting import plants_code
from mzagent_tui.agent.tools.registry import load_custom_tool
from tests.conftest import RecordingApprover, make_agent
from tests.scripted_server import answer_reply, read_reply, write_reply

PLANTING = [
    ".git/config", ".git/hooks/pre-commit", "sub/.git/config", "./.GIT/config", ".env", "api/.env.local", ".envrc",
    ".vscode/tasks.json", ".vscode/settings.json", ".idea/workspace.xml", ".devcontainer/devcontainer.json",
    ".husky/pre-commit", ".pre-commit-config.yaml", ".github/workflows/ci.yml", ".gitlab-ci.yml",
    ".venv/lib/python3.11/site-packages/evil.pth", "sitecustomize.py", "lib/usercustomize.py",
    ".mise.toml", "mise.toml", ".mise/config.toml", ".claude/settings.json", ".Claude/settings.local.json", ".cursor/mcp.json",
    ".mcp.json", "app.code-workspace", ".zed/settings.json", ".helix/languages.toml", ".nvim.lua", ".exrc",
]
ORDINARY = [
    "src/main.py", "README.md", ".gitignore", "gitconfig", "docs/env.md", "tests/test_git.py", "pth.txt", "config/.gitkeep",
    "docs/claude.md", "mise.md", "mcp.json.md", "src/zed.py", "exrc.txt",
]


@pytest.mark.parametrize("path", PLANTING)
def test_files_that_make_tools_run_code_are_recognised(path: str) -> None:
    assert plants_code(path)


@pytest.mark.parametrize("path", ORDINARY)
def test_ordinary_files_are_not(path: str) -> None:
    assert plants_code(path) is None


def _run_write(server, project: Path, approver, path: str = ".git/config", mode: str = "ask"):  # noqa: ANN001, ANN202
    read_first = [read_reply(path)] if (project / path).exists() else []  # an existing file is read before it is overwritten
    server.script(*read_first, write_reply(path, "[core]\n\tfsmonitor = touch PWNED\n"), answer_reply())
    agent, recorder = make_agent(server, project, approver=approver)
    agent.policy.mode = mode
    agent.run("set up git")
    return recorder


def test_writing_git_config_asks_and_a_no_leaves_it_untouched(server, project: Path) -> None:
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text("[core]\n\tbare = false\n")
    asking = RecordingApprover(ApprovalDecision(False, note="not in my repo"))
    recorder = _run_write(server, project, asking)
    assert [type(r) for r in asking.requests] == [PlantedFileApproval]
    assert "hooks run programs" in asking.requests[0].reason
    assert (project / ".git" / "config").read_text() == "[core]\n\tbare = false\n"
    observation = recorder.of(Observation)[-1].text
    assert "did not allow writing .git/config" in observation and "not in my repo" in observation


def test_headless_without_an_approver_refuses_the_write_and_tells_the_model(server, project: Path) -> None:
    recorder = _run_write(server, project, StaticApprover(False, note="no terminal to ask"), path=".envrc")
    assert not (project / ".envrc").exists()
    assert "a hidden name is, by convention, configuration" in recorder.of(Observation)[0].text


def test_an_approved_write_goes_through(server, project: Path) -> None:
    _run_write(server, project, RecordingApprover(ApprovalDecision(True)), path=".vscode/tasks.json")
    assert "fsmonitor" in (project / ".vscode" / "tasks.json").read_text()


def test_yolo_writes_without_asking(server, project: Path) -> None:
    asking = RecordingApprover(ApprovalDecision(False, note="not in my repo"))
    _run_write(server, project, asking, path=".github/workflows/ci.yml", mode="yolo")
    assert asking.requests == [] and (project / ".github" / "workflows" / "ci.yml").is_file()


def test_auto_safe_still_asks_for_planting_writes(project: Path) -> None:
    asking = RecordingApprover(ApprovalDecision(False, note="not in my repo"))
    decision = PolicyApprover(asking, Policy("auto-safe")).approve(PlantedFileApproval(cwd=str(project), path=".git/config"))
    assert not decision.approved and len(asking.requests) == 1


def test_ordinary_writes_do_not_ask(server, project: Path) -> None:
    asking = RecordingApprover(ApprovalDecision(False, note="not in my repo"))
    _run_write(server, project, asking, path="src/app.py")
    assert asking.requests == [] and (project / "src" / "app.py").is_file()


def test_custom_tools_are_not_imported_from_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "planted_tool.py").write_text("import pathlib\npathlib.Path('IMPORTED').touch()\ndef run(c): return c\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="not imported from the current folder"):
        load_custom_tool("planted_tool:run")
    assert not (tmp_path / "IMPORTED").exists()


def test_a_custom_tool_file_named_by_the_user_loads(tmp_path: Path) -> None:
    (tmp_path / "mytools.py").write_text('def word_count(text: str) -> str:\n    """Count words."""\n    return str(len(text.split()))\n')
    func = load_custom_tool(f"{tmp_path / 'mytools.py'}:word_count")
    assert func("a b c") == "3"
    with pytest.raises(ValueError, match="is not a file"):
        load_custom_tool(f"{tmp_path / 'missing.py'}:word_count")
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom')\n")
    with pytest.raises(ValueError, match="RuntimeError: boom"):
        load_custom_tool(f"{tmp_path / 'broken.py'}:f")


def test_python_dash_m_does_not_import_the_projects_modules(tmp_path: Path) -> None:
    """`python -m mzagent_tui` in a project that has its own `openai.py` or `textual.py`."""
    for name in ("openai", "textual", "platformdirs", "dotenv"):
        (tmp_path / f"{name}.py").write_text("import pathlib\npathlib.Path('SHADOWED').touch()\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MZAGENT_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    done = subprocess.run([sys.executable, "-m", "mzagent_tui", "config"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "SHADOWED").exists()
