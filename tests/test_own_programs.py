"""The agent's own programs: one module starts them, hardened and confined.

A planted repository (fsmonitor, hooks, a partial clone's upload-pack, a textconv driver, a
nested repository with its own fsmonitor, a bare layout) is opened the ways mzagent opens
repositories: the file list, snapshots before and after a command, the secrets scan of a
proposed git command, and the whole of `mzagent run`. Each planted program would touch a marker
outside the project; the first test proves each plant does run under plain git, so the others
can fail. The hardening is tested with the Landlock wall taken away (so only the git settings
stand in the way), and the wall with a program that does run.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mzagent_tui.agent import filelist
from mzagent_tui.agent.safety import own_programs
from mzagent_tui.agent.safety.committed_secrets import committed_secret_concern
from mzagent_tui.agent.sessions.snapshots import Snapshots
from mzagent_tui.agent.tools.syntax_check import _shell_problem
from tests.conftest import requires_sandbox
from tests.scripted_server import Reply, answer_reply

PACKAGE = Path(__file__).resolve().parents[1] / "mzagent_tui"
STARTERS = {
    "subprocess": {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"},
    "os": {"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp", "execvpe",
           "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "pty": {"spawn", "fork"},
    "mcp.client.stdio": {"stdio_client"},
}
ALLOWED = {
    "agent/safety/own_programs.py": "the one way for the agent's own programs",
    "agent/tools/process.py": "the command runner: the model's commands, confined by the sandbox",
    "agent/model/local.py": "the bundled model's server",
    "agent/mcp/hub.py": "the user's MCP servers, started in the home (not the project) under a guard that confines one running the project's code",
    "agent/safety/sandbox.py": "a forked child that runs nothing: whether namespaces can be entered here",
    "agent/safety/pid_namespace.py": "a command's child forking once more, between fork and exec, to be its PID namespace's first process",
}
GIT_ENV = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"}


def starters_in(source: str) -> list[str]:
    """Each `module.name(...)`, `from module import name` and `import module as x; x.name` that starts a process."""
    found: list[str] = []
    aliases: dict[str, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            aliases.update({alias.asname or alias.name: alias.name for alias in node.names})
        elif isinstance(node, ast.ImportFrom) and node.module in STARTERS:
            found.extend(f"{node.module}.{a.name}" for a in node.names if a.name in STARTERS[node.module])
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = aliases.get(node.value.id, node.value.id)
            if node.attr in STARTERS.get(module, ()):
                found.append(f"{module}.{node.attr}")
    return found


def test_the_scan_finds_every_way_to_start_a_process() -> None:
    source = (
        "import subprocess as sp\nimport os\nfrom asyncio import create_subprocess_exec\nsp.run(['x'])\nos.execvp('x', [])\n"
        "os.path.join('a')\nfrom mcp.client.stdio import stdio_client\n"
    )
    assert starters_in(source) == ["asyncio.create_subprocess_exec", "mcp.client.stdio.stdio_client", "subprocess.run", "os.execvp"]


def test_no_module_but_the_named_ones_starts_a_process() -> None:
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        found = starters_in(path.read_text())
        if found and relative not in ALLOWED:
            offenders[relative] = found
    assert offenders == {}
    for relative in ALLOWED:
        assert starters_in((PACKAGE / relative).read_text()), f"{relative} is named as an exception but starts nothing"


# A planted repository ----------------------------------------------------------------------------


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV, "GIT_CONFIG_NOSYSTEM": "1"})


def planted_program(markers: Path, name: str) -> str:
    return f"touch {markers}/{name}; false"


def plant(project: Path, markers: Path) -> None:
    """A repository whose config runs a program at every turn, with a nested one and a bare layout."""
    markers.mkdir(exist_ok=True)
    git(project, "init", "-q", ".")
    (project / "a.txt").write_text("hello\n")
    (project / ".gitattributes").write_text("*.txt diff=conv\n")
    git(project, "add", "a.txt", ".gitattributes")
    git(project, "commit", "-qm", "one")
    hooks = project / "planted-hooks"
    hooks.mkdir()
    for name in ("post-index-change", "reference-transaction", "post-checkout", "pre-auto-gc"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {markers}/hook-{name}\n")
        (hooks / name).chmod(0o755)
        (project / ".git" / "hooks" / name).write_text((hooks / name).read_text())
        (project / ".git" / "hooks" / name).chmod(0o755)
    settings = {
        "core.fsmonitor": planted_program(markers, "fsmonitor"),
        "core.repositoryformatversion": "1",
        "extensions.partialClone": "origin",
        "remote.origin.url": str(project),
        "remote.origin.promisor": "true",
        "remote.origin.uploadpack": planted_program(markers, "uploadpack"),
        "diff.conv.textconv": planted_program(markers, "textconv"),
        "credential.helper": planted_program(markers, "credential"),
    }
    for key, value in settings.items():
        git(project, "config", key, value)
    tree = subprocess.run(["git", "rev-parse", "HEAD^{tree}"], cwd=project, capture_output=True, text=True, check=True).stdout.strip()
    (project / ".git" / "objects" / tree[:2] / tree[2:]).unlink()  # a missing object: a partial clone fetches it lazily
    nested = project / "nested"
    nested.mkdir()
    git(nested, "init", "-q", ".")
    (nested / "n.txt").write_text("n\n")
    git(nested, "add", "n.txt")
    git(nested, "commit", "-qm", "n")
    git(nested, "config", "core.fsmonitor", planted_program(markers, "nested-fsmonitor"))
    bare = project / "bare"
    git(project, "init", "-q", "--bare", "bare")
    git(bare, "config", "core.fsmonitor", planted_program(markers, "bare-fsmonitor"))
    git(bare, "config", "core.repositoryformatversion", "1")
    git(bare, "config", "extensions.partialClone", "origin")
    git(bare, "config", "remote.origin.url", str(project))
    git(bare, "config", "remote.origin.uploadpack", planted_program(markers, "bare-uploadpack"))
    (bare / "refs" / "heads" / "main").write_text(subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True).stdout)
    (bare / "HEAD").write_text("ref: refs/heads/main\n")


@pytest.fixture
def planted(project: Path, tmp_path: Path) -> tuple[Path, Path]:
    markers = tmp_path / "markers"
    plant(project, markers)
    return project, markers


@pytest.fixture
def unwalled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the hardening stands in the way: the Landlock and namespace wall is taken away."""
    monkeypatch.setattr(own_programs, "_confine", lambda readable, writable, seen=(): None)


def plain_git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, capture_output=True, input=b"", env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}, timeout=30)


def test_each_plant_runs_under_plain_git(planted: tuple[Path, Path], tmp_path: Path) -> None:
    project, markers = planted
    plain_git(project, "ls-files")
    plain_git(project, "log", "--all", "--name-only")
    plain_git(project / "bare", "log", "--all", "--name-only")
    plain_git(project, "-c", "core.fsmonitor=false", "diff", "HEAD", "--", "a.txt")
    (project / "a.txt").write_text("changed\n")
    plain_git(project, "-c", "core.fsmonitor=false", "diff", "--", "a.txt")
    plain_git(project, "-c", "core.fsmonitor=false", "-c", f"core.hooksPath={project}/planted-hooks", "add", "a.txt")
    index = tmp_path / "snap-index"
    subprocess.run(["git", "--git-dir", str(tmp_path / "snap.git"), "init", "-q", "--bare"], check=True)
    for _ in range(2):  # the second `git add` runs `git status` in the nested repository it recorded
        subprocess.run(["git", "add", "--all"], cwd=project, capture_output=True,
                       env={**os.environ, "GIT_DIR": str(tmp_path / "snap.git"), "GIT_WORK_TREE": str(project), "GIT_INDEX_FILE": str(index)})
    ran = {p.name for p in markers.iterdir()}
    assert {"fsmonitor", "uploadpack", "textconv", "nested-fsmonitor", "bare-uploadpack", "hook-post-index-change"} <= ran


def test_the_file_list_runs_nothing_planted(planted: tuple[Path, Path], unwalled: None) -> None:
    project, markers = planted
    files = filelist.project_files(project)
    assert "a.txt" in files and list(markers.iterdir()) == []


def test_snapshots_run_nothing_planted_even_in_a_nested_repository(planted: tuple[Path, Path], tmp_path: Path, unwalled: None) -> None:
    project, markers = planted
    snapshots = Snapshots(project, tmp_path / "state" / "session")
    before = snapshots.take()
    (project / "a.txt").write_text("changed\n")
    (project / "nested" / "n.txt").write_text("changed\n")
    changes = snapshots.changes(before, snapshots.take())
    assert [c.path for c in changes] == ["a.txt"]
    assert list(markers.iterdir()) == []


@pytest.mark.parametrize("words", [["git", "log", "-p"], ["git", "show", "HEAD"], ["git", "show", "0123456789abcdef0123456789abcdef01234567"], ["git", "diff", "HEAD"]])
def test_the_secrets_scan_of_a_proposed_command_runs_nothing_planted(planted: tuple[Path, Path], unwalled: None, words: list[str]) -> None:
    project, markers = planted
    committed_secret_concern(words, project)
    committed_secret_concern(words, project / "bare")
    assert list(markers.iterdir()) == []


@requires_sandbox(4)
def test_a_program_of_ours_that_runs_anyway_is_walled_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second wall: were a planted program to run, it could not write, reach the network or read keys."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-own-programs-secret-123456")
    outside = tmp_path / "outside"
    outside.mkdir()
    script = f"touch {outside}/written; echo x > /dev/udp/127.0.0.1/9 && echo udp-sent; env; ls /run"
    done = own_programs.run(["bash", "-c", script], tmp_path, timeout=10)
    out = done.stdout.decode() + done.stderr.decode()
    assert not (outside / "written").exists() and "Permission denied" in out
    assert "udp-sent" not in out and "sk-own-programs" not in out
    assert sorted(line.split("=")[0] for line in done.stdout.decode().splitlines() if "=" in line) == ["HOME", "LC_ALL", "PATH", "PWD", "SHLVL", "_"]


def test_a_folder_kept_under_a_hidden_home_entry_is_seen_whole(tmp_path: Path) -> None:
    """The view splits `~/.local` around a folder a program needs; the folder itself must not be
    split too (it was: a program saw its entries as blanks)."""
    from mzagent_tui.agent.safety.sandbox import hidden_home_entries

    home = tmp_path / "home"
    repo = home / ".local" / "state" / "mzagent" / "sessions" / "p-1" / "snapshots.git"
    (repo / "objects").mkdir(parents=True)
    (repo / "HEAD").write_text("ref: refs/heads/main\n")
    (home / ".local" / "state" / "other-app").mkdir()
    (home / ".aws").mkdir()
    hidden = hidden_home_entries(home, [".gitconfig"], [repo])
    assert not [path for path in hidden if path.is_relative_to(repo)]
    assert home / ".aws" in hidden and home / ".local" / "state" / "other-app" in hidden
    assert repo.parent.parent / "p-1" not in hidden and home / ".local" not in hidden, "split around the repository, not hidden"


@requires_sandbox(4)
def test_snapshots_under_the_home_record_changes_in_a_later_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the state folder where it is by default (~/.local/state), the second session of a
    project found its snapshot repository blanked ("not a git repository") and recorded nothing:
    the first only worked because its view was made before the repository existed."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    sessions = home / ".local" / "state" / "mzagent" / "sessions" / "project-1"
    first = Snapshots(project, sessions / "first")
    first.take()
    second = Snapshots(project, sessions / "second")
    before = second.take()
    (project / "a.txt").write_text("two\n")
    after = second.take()
    assert [(change.status, change.path) for change in second.changes(before, after)] == [("M", "a.txt")]


def test_bash_syntax_check_reads_a_script_without_running_it(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    assert _shell_problem(f"touch {marker}\nif then\n".encode()) is not None
    assert _shell_problem(f"touch {marker}\n".encode()) is None
    assert not marker.exists()


def test_mzagent_run_on_a_planted_project_runs_nothing_planted(server, planted: tuple[Path, Path], tmp_path: Path) -> None:
    """The whole app, headless, with the wall taken away: it opens the project (file list), judges
    a git command the user rejects (secrets scan), runs an approved `ls` (two snapshots) and a
    proposed `git log -p` in the bare layout."""
    project, markers = planted

    def run_reply(command: str) -> Reply:
        return Reply(f"<thought>run</thought><action>run_terminal_command({json.dumps(command)})</action>")

    server.script(run_reply("git log -p"), run_reply("ls"), run_reply("cd bare && git log -p"), answer_reply())
    code = (
        "import sys; from mzagent_tui.agent.safety import own_programs; own_programs._confine = lambda readable, writable, seen=(): None; "
        "from mzagent_tui.cli import main; main(sys.argv[1:])"
    )
    args = ["run", "--base-url", server.base_url, "--api-key", "sk-planted-key-1234567", "--model", "m", "--json", "--approval", "auto-safe", "--project", str(project), "look around"]
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    observations = [e["text"] for e in events if e["type"] == "observation"]
    assert len(observations) == 3 and "a.txt" in observations[1]
    assert list(markers.iterdir()) == []


async def test_the_app_on_a_planted_project_runs_nothing_planted(server, planted: tuple[Path, Path], unwalled: None) -> None:
    """The full-screen app opens the planted project, the user asks a question and approves an
    `ls`: the file list, both snapshots and the judgement of a git command run nothing planted."""
    from tests.test_app import approval, make_app, state, submit, wait_for

    project, markers = planted
    server.script(
        Reply('<thought>look</thought><action>run_terminal_command("git log -p")</action>'),
        Reply('<thought>list</thought><action>run_terminal_command("ls")</action>'),
        answer_reply(),
    )
    app = make_app(server, project)
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, "what is here?")
        first = await approval(pilot)
        await pilot.press("n")
        await approval(pilot, after=first)
        await pilot.press("y")
        await wait_for(pilot, lambda: state(app) == "done", timeout=60)
    assert list(markers.iterdir()) == []


@requires_sandbox(abi=1)
def test_the_rulesets_kept_open_are_bounded_and_the_oldest_is_closed(tmp_path: Path) -> None:
    """A ruleset per set of folders was kept for the process: an ACP server (a session per folder)
    or a test worker opened one per project until descriptors ran past 1,024."""

    def open_rulesets() -> int:
        return sum(os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[landlock-ruleset]" for fd in os.listdir("/proc/self/fd") if _link(fd))

    before = open_rulesets()
    home = Path.home()
    for index in range(own_programs.MAX_RULESETS + 5):
        own_programs._ruleset(home, (), (), (tmp_path / f"p{index}",), (), ())
    assert len(own_programs._rulesets) == own_programs.MAX_RULESETS
    assert not any(key[3] == (tmp_path / "p0",) for key in own_programs._rulesets), "the oldest went first"
    assert open_rulesets() <= before + own_programs.MAX_RULESETS, "and its descriptor was closed"
    kept = own_programs._rulesets[(home, (), (), (tmp_path / "p68",), (), ())]
    assert own_programs._ruleset(home, (), (), (tmp_path / "p68",), (), ()) == kept, "a recent one is reused, not made again"


def _link(fd: str) -> bool:
    try:
        os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return False
    return True
