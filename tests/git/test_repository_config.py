"""A repository's own config that makes read-only git commands run programs, read by git itself.

Real repositories, real git. Each spelling a hand parser could read differently from git (a
BOM, a continued line, a form feed, odd case, old-style subsections) is first shown to be obeyed
by git, then shown to make the command ask. The plain repository's commands still run without
asking, so the rule cannot pass by asking for everything.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from mzagent_tui.agent.safety import git_config
from mzagent_tui.agent.safety.approval import ALLOW, Policy, Rules

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, env=ENV).stdout.strip()


def verdict(command: str, root: Path, mode: str = "auto-safe") -> tuple[str, str]:
    overall, parts = Policy(mode, Rules()).evaluate(command, root)
    return overall, " ".join(p.reason for p in parts)


@pytest.fixture
def repo(project: Path) -> Path:
    (project / "a.txt").write_text("a\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", "one")
    return project


def test_a_plain_repository_runs_read_only_commands_without_asking(repo: Path) -> None:
    for command in ("git status", "git log --oneline", "git diff", "git log -p"):
        assert verdict(command, repo)[0] == ALLOW, command


@pytest.mark.parametrize(("key", "value", "shown"), [
    ("core.fsmonitor", "touch X", "core.fsmonitor"),
    ("diff.x.textconv", "./evil", "diff.….textconv"),
    ("filter.lfs.clean", "./evil", "filter.….clean"),
    ("extensions.partialClone", "origin", "extensions.partialclone"),
    ("remote.origin.promisor", "true", "remote.….promisor"),
    ("remote.origin.uploadpack", "./evil", "remote.….uploadpack"),
    ("core.hooksPath", "planted", "core.hookspath"),
    ("include.path", "../other.cfg", "include.path"),
    ("includeIf.gitdir:/.path", "../other.cfg", "includeif.….path"),
    ("pager.log", "./evil", "pager.log"),
    ("core.alternateRefsCommand", "./evil", "core.alternaterefscommand"),
    ("merge.ours.driver", "./evil", "merge.….driver"),
])
def test_each_setting_that_runs_a_program_asks(repo: Path, key: str, value: str, shown: str) -> None:
    git(repo, "config", key, value)
    overall, reason = verdict("git status", repo)
    assert overall != ALLOW and f"sets {shown}" in reason, reason


def test_settings_that_turn_a_program_off_do_not_ask(repo: Path) -> None:
    git(repo, "config", "core.fsmonitor", "false")
    git(repo, "config", "remote.origin.promisor", "false")
    git(repo, "config", "submodule.lib.update", "checkout")
    assert verdict("git status", repo)[0] == ALLOW


SPELLINGS = {
    "a byte-order mark": "\ufeff",
    "a continued value": "[core]\n\tfsmonitor = tou\\\nch X\n",
    "a form feed after the equals sign (a line break to Python)": "[core]\n\tfsmonitor =\ftouch X\n",
    "upper case": "[CORE]\n\tFSMONITOR = touch X\n",
    "a section on the key's line": "[core] fsmonitor = touch X\n",
    "an old-style subsection": "[diff.x]\n\ttextconv = touch X\n",
    "a quoted comment sign": '[core]\n\tfsmonitor = "touch X # not a comment"\n',
    "a key with no section header repeated": "[core]\n\tbare = false\n[core]\n\tfsmonitor = touch X\n",
}


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_spellings_git_obeys_are_read_as_git_reads_them(repo: Path, spelling: str) -> None:
    config = repo / ".git" / "config"
    added = SPELLINGS[spelling]
    if added == "\ufeff":  # git skips a byte-order mark only at the very start
        config.write_text(added + config.read_text() + "[core]\n\tfsmonitor = touch X\n")
    else:
        config.write_text(config.read_text() + added)
    listed = subprocess.run(["git", "config", "--file", str(config), "--list"], capture_output=True, text=True, env=ENV)
    assert "touch X" in listed.stdout  # git obeys it
    overall, reason = verdict("git log -p", repo)
    assert overall != ALLOW and "sets" in reason, reason


def test_a_config_git_cannot_read_asks(repo: Path) -> None:
    (repo / ".git" / "config").write_text("[core\n\tfsmonitor = touch X\n")
    overall, reason = verdict("git status", repo)
    assert overall != ALLOW and "could not" in reason


def test_a_hook_that_git_status_runs_asks(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text("#!/bin/sh\ntouch X\n")
    assert verdict("git status", repo)[0] == ALLOW  # not executable: git does not run it
    hook.chmod(0o755)
    overall, reason = verdict("git status", repo)
    assert overall != ALLOW and "post-index-change is a hook" in reason


def test_a_submodules_own_config_asks_in_the_superproject(repo: Path, tmp_path: Path) -> None:
    """`git status` runs git in every submodule, with the submodule's own config."""
    library = tmp_path / "library"
    library.mkdir()
    (library / "l.txt").write_text("l\n")
    git(library, "init", "-q", "-b", "main")
    git(library, "add", "l.txt")
    git(library, "commit", "-qm", "l")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "libs/lib")
    git(repo, "commit", "-qm", "sub")
    assert verdict("git status", repo)[0] == ALLOW  # git's own core.worktree for the submodule, inside the project
    git(repo / "libs" / "lib", "config", "core.fsmonitor", "touch X")
    overall, reason = verdict("git status", repo)
    assert overall != ALLOW and "modules/libs/lib/config sets core.fsmonitor" in reason, reason


def test_a_gitlink_whose_git_file_points_elsewhere_is_followed(repo: Path, tmp_path: Path) -> None:
    nested = repo / "vendor"
    nested.mkdir()
    git(nested, "init", "-q", "--separate-git-dir", str(tmp_path / "elsewhere.git"))
    (nested / "v.txt").write_text("v\n")
    git(nested, "add", "v.txt")
    git(nested, "commit", "-qm", "v")
    git(repo, "add", "vendor")
    git(tmp_path / "elsewhere.git", "config", "diff.external", "./evil")
    overall, reason = verdict("git diff", repo)
    assert overall != ALLOW and "elsewhere.git/config sets diff.external" in reason, reason


def test_a_work_tree_outside_the_repository_asks(repo: Path) -> None:
    git(repo, "config", "core.worktree", "/home")
    overall, reason = verdict("git log", repo)
    assert overall != ALLOW and "sets core.worktree" in reason


def test_a_linked_worktree_is_judged_by_the_config_it_shares(repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert verdict("git status", tmp_path / "wt")[0] == ALLOW
    git(repo, "config", "core.fsmonitor", "touch X")
    overall, reason = verdict("git status", tmp_path / "wt")
    assert overall != ALLOW and "core.fsmonitor" in reason


def test_a_bare_layout_the_model_wrote_is_found_as_git_finds_it(repo: Path) -> None:
    """No `.git` anywhere: git takes a folder holding HEAD, objects and refs for a repository."""
    bare = repo / "store"
    git(repo, "init", "-q", "--bare", "store")
    git(bare, "config", "extensions.partialClone", "origin")
    git(bare, "config", "core.repositoryformatversion", "1")
    git(bare, "config", "remote.origin.uploadpack", "touch X")
    for command in ("cd store && git log -p", "git -C store log -p", "git -C store cat-file -p HEAD"):
        overall, reason = verdict(command, repo)
        assert overall != ALLOW and "store/config sets" in reason, (command, reason)


def test_git_dash_C_into_a_planted_repository_asks(repo: Path) -> None:
    inner = repo / "inner"
    inner.mkdir()
    git(inner, "init", "-q")
    git(inner, "config", "core.fsmonitor", "touch X")
    assert verdict("git status", repo)[0] == ALLOW  # an untracked nested repository: git status does not enter it
    overall, reason = verdict("git -C inner status", repo)
    assert overall != ALLOW and "inner/.git/config sets core.fsmonitor" in reason


def test_a_planted_fifo_config_asks_without_hanging(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_config, "ASK_TIMEOUT", 1.0)
    (repo / ".git" / "config").unlink()
    os.mkfifo(repo / ".git" / "config")
    result: list[tuple[str, str]] = []
    judge = threading.Thread(target=lambda: result.append(verdict("git status", repo)), daemon=True)
    judge.start()
    judge.join(20)
    assert result and result[0][0] != ALLOW


def test_a_config_too_large_to_read_asks(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_config, "CONFIG_LIMIT", 64)
    (repo / ".git" / "config").write_text("# padding\n" * 20 + "[core]\n\tbare = false\n")
    overall, reason = verdict("git status", repo)
    assert overall != ALLOW and "too large to check" in reason
