"""The system prompt and the project file list."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from mzagent_tui.agent.filelist import format_file_list, project_files
from mzagent_tui.agent.model.parsing import parse_reply
from mzagent_tui.agent.model.prompt import TEMPLATES, render_system_prompt
from mzagent_tui.agent.tools.registry import ToolRegistry
from tests.custom_tools import word_count


def read_file(file_path: str) -> str:
    """Read a file."""
    return ""


def write_to_file(file_path: str, content: str) -> str:
    """Write a file."""
    return ""


def edit_file(file_path: str, old_text: str, new_text: str) -> str:
    """Edit a file."""
    return ""


def run_terminal_command(command: str) -> str:
    """Run a command."""
    return ""


TOOLS = ToolRegistry([read_file, write_to_file, edit_file, run_terminal_command, word_count])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_prompt_has_rules_tools_and_environment(project: Path, lang: str) -> None:
    (project / "main.py").write_text("")
    prompt = render_system_prompt(project, TOOLS, lang)
    assert "\\n" in prompt and "\\\\" in prompt
    assert "- write_to_file(file_path: str, content: str): Write a file." in prompt
    assert "- word_count(text: str): Count the words in a text." in prompt
    assert project.name in prompt and "main.py" in prompt and "Linux" in prompt and "bash" in prompt
    assert str(project) not in prompt, "a small model copied the full path into the scripts it wrote"
    assert "$" not in prompt.replace("$ ", "")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_example_in_the_prompt_parses(project: Path, lang: str) -> None:
    prompt = render_system_prompt(project, TOOLS, lang)
    actions = re.findall(r"^<action>.*?</action>$", prompt, re.MULTILINE | re.DOTALL)
    examples = [a for a in actions if "tool_name" not in a]
    assert len(examples) == 7
    for action in examples:
        parsed = parse_reply(action, TOOLS.signatures())
        assert parsed.error is None and parsed.tool in TOOLS
    written = parse_reply(examples[0], TOOLS.signatures())
    assert written.args == ["hello.py", 'print("Hello")\n']
    fixed = parse_reply(examples[5], TOOLS.signatures())
    assert fixed.args[0] == "totals.py" and "for line in f if line.strip())" in fixed.args[1]
    assert fixed.args[1].endswith('if __name__ == "__main__":\n    print(total(sys.argv[1]))\n'), "the example keeps the main block"
    checked = parse_reply(examples[6], TOOLS.signatures())
    assert checked.args == ["python3 totals.py scores.txt"], "the example checks with the command from the report"


def test_templates_share_placeholders() -> None:
    names = [set(re.findall(r"\$(\w+)", t.template)) for t in TEMPLATES.values()]
    assert names[0] == names[1] == {"tool_list", "instructions", "skills", "operating_system", "shell", "project_name", "file_list", "edit_rule", "plan_rule"}


def test_walk_honours_gitignore_and_skips_noise(project: Path) -> None:
    (project / ".gitignore").write_text("*.log\nsecret/\n")
    for rel in ("a.py", "b/c.py", "x.log", "secret/k.txt", "node_modules/m.js", ".venv/v.py", "__pycache__/p.pyc", "b/__pycache__/q.pyc"):
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    assert project_files(project) == [".gitignore", "a.py", "b/c.py"]


def test_a_fifo_named_gitignore_does_not_stall_the_file_list(project: Path) -> None:
    """A cloned project may hold a FIFO; reading it plainly would wait for a writer forever."""
    os.mkfifo(project / ".gitignore")
    (project / "a.py").write_text("")
    assert project_files(project) == [".gitignore", "a.py"]


def test_git_ls_files_is_used_in_a_repo(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text("ignored.txt\n")
    (project / "ignored.txt").write_text("")
    (project / "kept.txt").write_text("")
    (project / "node_modules").mkdir()
    (project / "node_modules" / "x.js").write_text("")
    assert project_files(project) == [".gitignore", "kept.txt"]
    for rel in ("z.txt", "b/build", "a/node_modules/y.js", "a/dist/d.js", "a/distant.py"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("")
    subprocess.run(["git", "add", "z.txt", "b/build", "a"], cwd=project, check=True)
    (project / "m.txt").write_text("")
    assert project_files(project) == [".gitignore", "a/distant.py", "b/build", "kept.txt", "m.txt", "z.txt"]


def test_file_list_is_capped() -> None:
    files = [f"f{i:04d}.py" for i in range(450)]
    text = format_file_list(files)
    assert text.count("\n") == 200 and text.endswith("+250 more")
    assert format_file_list([]) == "(the project folder is empty)"


@pytest.mark.parametrize("lines", [["*.log", "build/", "/top.txt", "docs/**/*.tmp"], ["*.log", "!keep.log", "build/"]])
def test_fast_ignore_matcher_agrees_with_pathspec(lines: list[str]) -> None:
    import pathspec

    from mzagent_tui.agent.filelist import IgnoreMatcher

    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    matcher = IgnoreMatcher(spec)
    for path in ["a.log", "x/b.log", "keep.log", "build/", "src/build/", "top.txt", "x/top.txt", "docs/a/b.tmp", "docs/b.tmp", "main.py", "build"]:
        assert matcher.match_file(path) == spec.match_file(path), path
