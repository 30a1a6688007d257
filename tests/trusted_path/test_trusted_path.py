"""#54: nothing mzagent starts outside the sandbox is found in, or run from, the project.

Each attack plants programs in a project outside /tmp (so the rule that holds is "the project",
not "the temp folders") and puts them first on PATH the ways real setups do: an activated
`.venv/bin`, `.`, an empty entry, `./bin`, `node_modules/.bin`, a linked folder. A planted
program leaves a marker named for the test; a program of the "system" (`sysbin`, a folder of the
user's outside the project) leaves another, the positive control that the lookup happened.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from mzagent_tui.agent.assembly import assemble
from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.config import user_config_path
from mzagent_tui.agent.events import HookOutcome
from mzagent_tui.agent.hooks.config import HookSpec
from mzagent_tui.agent.hooks.runner import confined_because, run_hook
from mzagent_tui.agent.mcp.config import McpServerConfig
from mzagent_tui.agent.mcp.hub import McpHub
from mzagent_tui.agent.mcp.program import server_program
from mzagent_tui.agent.safety import own_programs, trusted_path
from mzagent_tui.agent.safety.approval import ALLOW, ASK, ApprovalDecision, Policy
from mzagent_tui.agent.safety.commands import analyse
from mzagent_tui.agent.safety.sandbox import Sandbox, landlock_abi
from mzagent_tui.agent.tools.process import run_command, shell_path
from mzagent_tui.agent.tools.syntax_check import syntax_problem
from tests.conftest import Recorder, RecordingApprover, config_for, make_agent
from tests.scripted_server import Reply, answer_reply, write_reply

SYSTEM_PATH = os.environ.get("PATH", "/usr/bin:/bin")
MCP_SERVER = str(Path(__file__).parents[1] / "mcp_server.py")


@dataclass
class Planted:
    root: Path
    """Outside /tmp: the project (`proj`), the user's own `sysbin`, and `traces` the markers go to."""
    project: Path
    sysbin: Path
    traces: Path
    marker: str

    def plant(self, folder: str, name: str, body: str = "") -> Path:
        """A program in the project that leaves `<traces>/planted-<name>`, then does `body`."""
        path = self.project / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#!/bin/sh\necho {self.marker} >> {self.traces}/planted-{name}\n{body}\n")
        path.chmod(0o755)
        return path

    def system(self, name: str) -> Path:
        """The user's own `name`: leaves `<traces>/system-<name>` with its arguments."""
        path = self.sysbin / name
        path.write_text(f'#!/bin/sh\necho "$@" >> {self.traces}/system-{name}\nenv > {self.traces}/system-{name}.env\n')
        path.chmod(0o755)
        return path

    def planted_ran(self) -> list[str]:
        return sorted(p.name for p in self.traces.glob("planted-*"))

    def system_ran(self, name: str) -> str | None:
        trace = self.traces / f"system-{name}"
        return trace.read_text() if trace.exists() else None


@pytest.fixture
def planted(outside_home: Path) -> Planted:
    project, sysbin, traces = outside_home / "proj", outside_home / "sysbin", outside_home / "traces"
    for folder in (project, sysbin, traces):
        folder.mkdir()
    trusted_path.note_project(project)
    return Planted(outside_home, project, sysbin, traces, f"mzagent-planted-{uuid.uuid4().hex}")


def poisoned(planted: Planted, *first: str) -> str:
    """PATH with `first` before the user's `sysbin` and the system's folders."""
    return os.pathsep.join((*first, str(planted.sysbin), SYSTEM_PATH))


# The trusted PATH ----------------------------------------------------------------------------


@pytest.mark.parametrize("entry", [".", "", "./bin", "bin", "node_modules/.bin", "{project}/.venv/bin", "{project}/node_modules/.bin", "{project}"])
def test_every_project_entry_of_path_is_left_out(planted: Planted, entry: str) -> None:
    planted.plant(".venv/bin", "ruff")
    planted.plant("bin", "ruff")
    planted.plant("node_modules/.bin", "ruff")
    planted.plant(".", "ruff")
    planted.system("ruff")
    value = poisoned(planted, entry.format(project=planted.project))
    assert trusted_path.lookup("ruff", value, planted.project) != str(planted.sysbin / "ruff")  # PATH alone finds the planted one
    assert trusted_path.which("ruff", value) == str(planted.sysbin / "ruff")
    assert trusted_path.trusted_entries(value)[0] == str(planted.sysbin)


def test_a_linked_folder_into_the_project_counts_as_the_project(planted: Planted) -> None:
    planted.plant(".venv/bin", "ruff")
    planted.system("ruff")
    link = planted.root / "venv-link"
    link.symlink_to(planted.project / ".venv" / "bin")
    value = poisoned(planted, str(link))
    assert trusted_path.lookup("ruff", value, Path("/")) == str(link / "ruff")
    assert trusted_path.which("ruff", value) == str(planted.sysbin / "ruff")
    assert str(link) not in trusted_path.trusted_path(value)


def test_a_linked_program_in_a_trusted_folder_that_leads_into_the_project_is_refused(planted: Planted) -> None:
    target = planted.plant(".venv/bin", "ruff")
    mine = planted.root / "mybin"
    mine.mkdir()
    (mine / "ruff").symlink_to(target)
    planted.system("ruff")
    value = os.pathsep.join((str(mine), str(planted.sysbin)))
    assert trusted_path.trusted_entries(value) == (str(mine), str(planted.sysbin))  # the folder itself is the user's
    assert trusted_path.which("ruff", value) == str(planted.sysbin / "ruff")


def test_a_project_at_the_home_keeps_the_toolchain_folders_the_sandbox_keeps_read_only(planted: Planted, monkeypatch: pytest.MonkeyPatch) -> None:
    home = planted.root / "home"
    for folder in (".local/bin", ".cargo/bin", "bin", ".venv/bin"):
        (home / folder).mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    trusted_path.note_project(home)
    entries = [str(home / folder) for folder in ("bin", ".venv/bin", ".local/bin", ".cargo/bin")]
    # ~/.local/bin is allowed program by program, not as a folder, so commands may add to it: not trusted
    assert trusted_path.trusted_entries(os.pathsep.join(entries)) == (str(home / ".cargo/bin"),)


def test_temp_folders_are_left_out_the_session_s_own_included(planted: Planted) -> None:
    session_temp = Path(tempfile.mkdtemp(prefix="mzagent-tmp-"))
    try:
        for folder in (session_temp, Path("/dev/shm")):
            assert trusted_path.trusted_entries(poisoned(planted, str(folder)))[0] == str(planted.sysbin)
    finally:
        session_temp.rmdir()


def test_nothing_trusted_left_falls_back_to_the_system_folders(planted: Planted) -> None:
    assert trusted_path.trusted_path(f".:{planted.project}/.venv/bin") == trusted_path.FALLBACK_PATH
    assert trusted_path.which("sh", f".:{planted.project}") in ("/usr/bin/sh", "/bin/sh")


# The supervisor and mzagent's own programs -----------------------------------------------


def test_a_planted_bash_never_supervises_or_runs_a_command(planted: Planted, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's `.venv/bin/bash` made by an allowed test run: first on PATH for the agent and
    for the command, it is neither the supervisor nor the shell nor the `env` before the command."""
    for name in ("bash", "env", "sh"):
        planted.plant(".venv/bin", name, 'exec /bin/sh "$@"')
    value = poisoned(planted, f"{planted.project}/.venv/bin")
    subprocess.run(["bash", "-c", "true"], env={"PATH": value}, check=True)
    assert planted.planted_ran() == ["planted-bash"]  # the control: a lookup on this PATH finds it
    (planted.traces / "planted-bash").unlink()
    monkeypatch.setenv("PATH", value)
    assert not shell_path().startswith(str(planted.project)) and os.path.isabs(shell_path())
    assert own_programs.signal_reset_prefix().split()[:1] in ([], ["/usr/bin/env"], ["/bin/env"])
    result = run_command("echo ran", planted.project, {"PATH": value}, 20, CancelToken(), planted.traces / "out.txt")
    assert result.exit_code == 0 and b"ran" in result.output.head
    assert planted.planted_ran() == []


def test_own_git_and_bash_n_are_never_the_project_s(planted: Planted, monkeypatch: pytest.MonkeyPatch) -> None:
    """Our programs run confined, so a planted one could not even leave a trace: it shows itself
    by what it answers (a planted git's version, a planted bash that finds no syntax error)."""
    planted.plant(".venv/bin", "git", "echo planted git; exit 0")
    planted.plant(".venv/bin", "bash", "exit 0")
    value = poisoned(planted, f"{planted.project}/.venv/bin")
    assert subprocess.run(["git", "--version"], env={"PATH": value}, capture_output=True, text=True).stdout == "planted git\n"
    monkeypatch.setenv("PATH", value)
    assert own_programs.base_env()["PATH"].split(os.pathsep)[0] == str(planted.sysbin)
    assert own_programs.have_git()
    assert own_programs.git("--version", cwd=planted.project, timeout=20).stdout.startswith(b"git version")
    assert syntax_problem("broken.sh", b"if then fi\n") is not None


# Hooks --------------------------------------------------------------------------------------


def hook_config(command: str, **more: object) -> None:
    lines = ["[[hooks]]", 'event = "after_tool"', 'tool = "write_to_file"', f"command = {json.dumps(command)}"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in more.items()]
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def test_the_issue_s_hook_runs_the_user_s_ruff_not_the_venv_s(server, planted: Planted) -> None:
    """The docs' own hook with an activated `.venv` whose `ruff` the model rewrote."""
    planted.plant(".venv/bin", "ruff")
    planted.system("ruff")
    hook_config("ruff format $MZAGENT_FILE", sandbox=False)  # run as the user: what the trusted PATH is for
    env = {"PATH": poisoned(planted, f"{planted.project}/.venv/bin"), "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "HOME": str(Path.home())}
    server.script(write_reply("a.py", "x = 1\n"), answer_reply())
    agent, rec = make_agent(server, planted.project, env=env)
    agent.run("write it")
    agent.close()
    assert [o.status for o in rec.of(HookOutcome)] == ["ok"]
    assert planted.system_ran("ruff") == f"format {planted.project / 'a.py'}\n"
    assert planted.planted_ran() == []
    seen = (planted.traces / "system-ruff.env").read_text()
    assert "AWS_SECRET_ACCESS_KEY" not in seen and f"{planted.project}/.venv/bin" not in seen


@pytest.mark.parametrize("command", [
    "env ruff x", "sh -c 'ruff x'", "timeout 5 ruff x", "command ruff x", "bash -c 'ruff x'", "nice ruff x",
    "xargs ruff < /dev/null; ruff x", "cd .venv/bin && ruff x", "cd .venv/bin; ruff x",
])
def test_a_hook_finds_every_program_on_the_trusted_path(planted: Planted, command: str) -> None:
    for name in ("ruff", "env", "sh", "timeout", "bash", "nice", "xargs"):
        planted.plant(".venv/bin", name, 'exec /bin/sh "$@"' if name != "ruff" else "")
    planted.system("ruff")
    spec = HookSpec("after_tool", command, sandbox=False)
    env = {"PATH": poisoned(planted, "", ".", f"{planted.project}/.venv/bin")}
    run = run_hook(spec, {}, planted.project, env, Sandbox(planted.project, "off"), CancelToken(), planted.traces / "out.txt")
    assert run.status == "ok", run.stderr
    assert planted.system_ran("ruff") is not None
    assert planted.planted_ran() == []


@pytest.mark.parametrize("command", [
    "{project}/.venv/bin/ruff x", ".venv/bin/ruff x", "./bin/fmt x", "env {project}/.venv/bin/ruff x",
    "sh -c '{project}/.venv/bin/ruff x'", "$VIRTUAL_ENV/bin/ruff x", "{project}/.venv/bin/env ruff x",
    "timeout 5 ./bin/fmt", "cd bin && ./fmt", "{link}/ruff x", "cd .venv/bin && ../../../{name}/.venv/bin/ruff x",
])
def test_a_hook_whose_program_is_in_the_project_is_confined(planted: Planted, command: str) -> None:
    planted.plant(".venv/bin", "ruff")
    planted.plant("bin", "fmt")
    link = planted.root / "link"
    link.symlink_to(planted.project / ".venv" / "bin")
    spec = HookSpec("after_tool", command.format(project=planted.project, link=link, name=planted.project.name), sandbox=False)
    assert confined_because(spec, planted.project, trusted_path.trusted_path(SYSTEM_PATH)) != ""
    run = run_hook(spec, {}, planted.project, {"PATH": SYSTEM_PATH}, Sandbox(planted.project, "off"), CancelToken(), planted.traces / "out.txt")
    assert run.status == "failed" and "the hook was not run" in run.stderr and "the sandbox is off" in run.stderr
    assert planted.planted_ran() == []


def test_a_hook_whose_program_is_a_link_into_the_project_is_confined(planted: Planted) -> None:
    mine = planted.root / "mybin"
    mine.mkdir()
    (mine / "ruff").symlink_to(planted.plant(".venv/bin", "ruff"))
    why = confined_because(HookSpec("after_tool", "env ruff x", sandbox=False), planted.project, str(mine))
    assert why == f"its program ruff is {mine / 'ruff'}, in the project or a folder commands can write"


@pytest.mark.parametrize("command", ["ruff format x", "env ruff x", "sh -c 'ruff x'", "ruff x > /dev/null", 'ruff format "$MZAGENT_FILE"'])
def test_a_hook_of_the_user_s_programs_runs_as_the_user(planted: Planted, command: str) -> None:
    planted.plant(".venv/bin", "ruff")
    assert confined_because(HookSpec("after_tool", command, sandbox=False), planted.project, trusted_path.trusted_path(poisoned(planted, ".venv/bin"))) == ""


@pytest.mark.skipif(landlock_abi() < 6, reason="needs Linux with Landlock ABI 6+")
def test_a_hook_run_from_the_project_runs_confined_with_the_sandbox(planted: Planted) -> None:
    planted.plant(".venv/bin", "ruff", f"touch {planted.project}/inside; touch {planted.root}/stolen")
    sandbox = Sandbox(planted.project, "workspace")
    try:
        spec = HookSpec("after_tool", f"{planted.project}/.venv/bin/ruff x", sandbox=False)
        run_hook(spec, {}, planted.project, {"PATH": SYSTEM_PATH}, sandbox, CancelToken(), planted.traces / "out.txt")
    finally:
        sandbox.close()
    assert (planted.project / "inside").exists()  # it ran
    assert not (planted.root / "stolen").exists()  # confined: nothing outside the project


def test_mzagent_config_says_which_hooks_and_servers_are_confined_or_refused(planted: Planted) -> None:
    planted.plant(".venv/bin", "ruff")
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'[[hooks]]\nevent = "run_end"\ncommand = "{planted.project}/.venv/bin/ruff x"\nsandbox = false\n'
        '[[hooks]]\nevent = "run_end"\ncommand = "ruff format x"\nsandbox = false\n'
        '[[hooks]]\nevent = "run_end"\ncommand = "ruff format y"\n'
        f'[mcp_servers.planted]\ncommand = "{planted.project}/.venv/bin/ruff"\n'
    )
    def config_lines(sandbox: str) -> dict[str, str]:
        done = subprocess.run(
            [sys.executable, "-m", "mzagent_tui", "config", "--project", str(planted.project), "--base-url", "http://127.0.0.1:9/v1"],
            capture_output=True, text=True, timeout=60,
            env={**os.environ, "PATH": poisoned(planted, f"{planted.project}/.venv/bin"), "MZAGENT_SANDBOX": sandbox},
        )
        return {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}

    lines = config_lines("off")
    assert "(not run: its program" in lines["hooks.1"] and "and the sandbox is off" in lines["hooks.1"]
    assert str(planted.project / ".venv/bin/ruff") in lines["hooks.1"]
    assert "sandbox" not in lines["hooks.2"]
    assert "(runs as you: the sandbox is off)" in lines["hooks.3"]  # the default, where there is no sandbox
    assert "is not started: its program" in lines["mcp_servers.planted"]
    if landlock_abi() > 0:
        confined = config_lines("workspace")
        assert "(sandboxed: its program" in confined["hooks.1"]
        assert "(sandboxed: hooks run confined unless marked sandbox = false)" in confined["hooks.3"]


def test_a_hook_s_pass_env_must_name_variables() -> None:
    from mzagent_tui.agent.config import ConfigError
    from mzagent_tui.agent.hooks.config import hook_from

    assert hook_from({"event": "run_end", "command": "x", "pass_env": ["AWS_PROFILE"]}, "hook").pass_env == ("AWS_PROFILE",)
    for bad in ("AWS_PROFILE", ["A=B"], [1], ["$X"]):
        with pytest.raises(ConfigError, match="pass_env must be a list of environment variable names"):
            hook_from({"event": "run_end", "command": "x", "pass_env": bad}, "hook")


# MCP servers --------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["uvx", "npx"])
def test_an_mcp_launcher_is_the_user_s_not_the_project_s(planted: Planted, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    planted.plant(".venv/bin", command)
    planted.plant("node_modules/.bin", command)
    planted.system(command)
    monkeypatch.setenv("PATH", poisoned(planted, f"{planted.project}/.venv/bin", "node_modules/.bin", "."))
    found = server_program(McpServerConfig("s", command, cwd=str(planted.project)))
    assert found.program == str(planted.sysbin / command) and not found.refused
    assert str(planted.project) not in found.path


def test_an_mcp_server_found_only_in_the_project_or_named_there_runs_confined_or_not_at_all(planted: Planted, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without a sandbox it is not started (tests/test_mcp_confined.py runs them confined)."""
    planted.plant(".venv/bin", "uvx")
    monkeypatch.setenv("PATH", poisoned(planted, f"{planted.project}/.venv/bin"))
    only_there = server_program(McpServerConfig("s", "uvx"))
    assert only_there.program == str(planted.project / ".venv/bin/uvx") and ".venv/bin/uvx" in only_there.confined
    named = McpServerConfig("named", str(planted.project / ".venv/bin/uvx"))
    relative = McpServerConfig("relative", ".venv/bin/uvx", cwd=str(planted.project))
    hub = McpHub([McpServerConfig("uvx", "uvx"), named, relative], tmp_path)
    try:
        tools, failures = hub.wait_started()
    finally:
        hub.close()
    assert tools == [] and len(failures) == 3 and all("is not started" in failure and "runs only confined" in failure for failure in failures)
    assert planted.planted_ran() == []


def test_a_planted_bash_does_not_start_an_mcp_server(planted: Planted, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The guard execs bash, which starts the server: both by absolute path, not by PATH."""
    planted.plant(".venv/bin", "bash", 'exec /bin/sh "$@"')
    monkeypatch.setenv("PATH", poisoned(planted, f"{planted.project}/.venv/bin"))
    hub = McpHub([McpServerConfig("t", sys.executable, (MCP_SERVER,), env={"PATH": f"{planted.project}/.venv/bin:{SYSTEM_PATH}"}, startup_timeout=60)], tmp_path)
    try:
        tools, failures = hub.wait_started()
    finally:
        hub.close()
    assert failures == [] and "add" in {tool.name for tool in tools}
    assert planted.planted_ran() == []


# The safe list ------------------------------------------------------------------------------


def verdict(command: str, root: Path, path: str) -> str:
    return Policy("auto-safe").judge(analyse(command, root, path))[0]


@pytest.mark.parametrize("entry", ["{project}/.venv/bin", ".", "", "./bin", "bin", "node_modules/.bin", "{link}"])
def test_a_safe_list_name_found_in_the_project_is_not_safe(planted: Planted, entry: str) -> None:
    for folder in (".venv/bin", "bin", "node_modules/.bin", "."):
        planted.plant(folder, "ls")
    link = planted.root / "link"
    link.symlink_to(planted.project / ".venv" / "bin")
    value = poisoned(planted, entry.format(project=planted.project, link=link))
    assert verdict("ls", planted.project, SYSTEM_PATH) == ALLOW  # the control: the system's ls is safe
    assert verdict("ls", planted.project, value) == ASK
    (part,) = analyse("ls", planted.project, value).parts
    assert "a program in a folder commands can write" in part.not_safe


@pytest.mark.parametrize("command", ["env ls", "timeout 5 ls", "nice ls", "bash -c ls", "command ls", "./bin/env ls", "{project}/bin/env ls"])
def test_a_wrapper_found_in_the_project_asks(planted: Planted, command: str) -> None:
    for name in ("env", "timeout", "nice", "bash", "command"):
        planted.plant("bin", name)
    command = command.format(project=planted.project)
    assert verdict(command, planted.project, SYSTEM_PATH) == (ALLOW if "bin/" not in command else ASK)
    assert verdict(command, planted.project, poisoned(planted, "bin")) == ASK
    assert verdict(command.replace("./bin/env", "env").replace(f"{planted.project}/bin/env", "env"), planted.project, SYSTEM_PATH) == ALLOW


def test_after_cd_the_safe_list_looks_where_the_command_runs(planted: Planted) -> None:
    planted.plant("sub", "ls")
    (planted.project / "other").mkdir()
    assert verdict("ls", planted.project, poisoned(planted, ".")) == ALLOW  # no ./ls at the root
    assert verdict("cd sub && ls", planted.project, poisoned(planted, ".")) == ASK
    assert verdict("cd other && ls", planted.project, poisoned(planted, ".")) == ALLOW


def test_the_tool_judges_with_the_command_s_path(server, planted: Planted) -> None:
    """End to end in auto-safe: `ls` with an activated `.venv` holding an `ls` asks the user."""
    planted.plant(".venv/bin", "ls")
    user = RecordingApprover(ApprovalDecision(False))
    server.script(Reply('<thought>list</thought><action>run_terminal_command("ls")</action>'), answer_reply())
    env = {"PATH": poisoned(planted, f"{planted.project}/.venv/bin")}
    agent = assemble(config_for(server, planted.project, Policy("auto-safe"), environ=env), user, Recorder())
    agent.run("list")
    agent.close()
    assert [request.summary for request in user.requests] == ["ls"]
    assert planted.planted_ran() == []


def test_mzagent_s_own_installation_in_a_temp_folder_is_trusted_but_not_in_a_project(planted: Planted, monkeypatch: pytest.MonkeyPatch) -> None:
    """CI makes its virtual environment with mktemp: the interpreter running mzagent (and the MCP
    servers users start with it) stays usable; the same installation inside a project does not."""
    venv = Path(tempfile.mkdtemp(prefix="mzagent-own-venv-"))
    try:
        (venv / "bin").mkdir()
        python = venv / "bin" / "python"
        python.write_text("#!/bin/sh\n")
        python.chmod(0o755)
        assert trusted_path.is_untrusted(str(python))  # control: a temp folder, not ours
        monkeypatch.setattr(sys, "prefix", str(venv))
        assert not trusted_path.is_untrusted(str(python))
        assert trusted_path.which(str(python)) == str(python)
        assert trusted_path.is_untrusted(str(planted.project / ".venv/bin/python"))  # other temp-folder programs stay out
    finally:
        shutil.rmtree(venv)
    inside = planted.project / ".venv"
    (inside / "bin").mkdir(parents=True)
    monkeypatch.setattr(sys, "prefix", str(inside))
    assert trusted_path.is_untrusted(str(inside / "bin" / "python"))  # mzagent installed in the project: the model writes there
