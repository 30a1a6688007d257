"""The `.git` wall, round 8 (issue 54, rule 2): the user's next plain `git status` / `git commit`
must run nothing a command planted.

Git finds a repository in a folder with no `.git` entry at all: a folder that holds `HEAD`,
`objects/` and `refs/` is taken for a git directory itself (a bare layout, `safe.bareRepository`
is `all` unless the user says otherwise), and its `config` may say `core.bare = false` and
`core.worktree = ..`, after which `git status` there is an ordinary work-tree status, fsmonitor,
hooks and all. And the repository's own config may name a work-tree file as a program git runs
(`core.fsmonitor = tools/fsmon.sh`, a filter's `clean`), as `core.hooksPath` names a folder.

Each test asserts the safe outcome through the real agent (yolo: only the walls stand) and the
user's own git afterwards; an attack that gets through is an `xfail(strict=True)` marked HOLE.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mzagent_tui.agent.safety.approval import ApprovalDecision
from tests.attack_helpers import KeepAnswers, command, git, needs_namespaces, repository, run, users_git

RUNS = "touch {marker}; false"


def user() -> KeepAnswers:
    """Runs every command (yolo would too) and keeps nothing it is asked about afterwards."""
    return KeepAnswers(ApprovalDecision(False))


def bare_layout_by_git(folder: str, worktree: str, marker: Path) -> str:
    """`git init --bare` in a folder, then made a work-tree repository with an fsmonitor."""
    config = f"git -C {folder} config"
    return (f"git init -q --bare {folder} && {config} core.bare false && {config} core.worktree {worktree} "
            f"&& {config} core.fsmonitor '{RUNS.format(marker=marker)}'; echo ran")


def bare_layout_by_hand(folder: str, marker: Path) -> str:
    """The same without git: the four things git looks for, written with printf and mkdir."""
    return (f"mkdir -p {folder}/objects {folder}/refs/heads && printf 'ref: refs/heads/main\\n' > {folder}/HEAD && "
            f"printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ..\\n"
            f"\\tfsmonitor = \"{RUNS.format(marker=marker)}\"\\n' > {folder}/config; echo ran")


@needs_namespaces
@pytest.mark.xfail(strict=True, reason=(
    "HOLE: a command turns a project folder into a git directory with no `.git` entry (HEAD, objects/, refs/ and a "
    "config with core.bare=false, core.worktree=.., core.fsmonitor): git_entry looks only for entries named `.git`, "
    "the after-command scan does not count HEAD/config, and the user's git status in that folder runs the fsmonitor"))
def test_a_bare_layout_made_in_a_source_folder_runs_nothing_in_the_users_git(server, project: Path, short: Path) -> None:
    repository(project)
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")
    marker = short / "fsmonitor-ran"
    texts, _ = run(server, project, command(bare_layout_by_git("src", "..", marker)), approver=user())
    assert "ran" in texts[0], texts[0]
    users_git(project / "src", "status")
    assert not marker.exists(), texts[0]


@needs_namespaces
@pytest.mark.xfail(strict=True, reason=(
    "HOLE: the same git directory written by hand (mkdir and printf, no git at all) in a new folder: nothing "
    "named `.git` is made, so nothing is shown or put back, and git status in it runs the planted fsmonitor"))
def test_a_bare_layout_written_by_hand_runs_nothing_in_the_users_git(server, project: Path, short: Path) -> None:
    repository(project)
    marker = short / "fsmonitor-ran"
    texts, _ = run(server, project, command(bare_layout_by_hand("tools", marker)), approver=user())
    assert "ran" in texts[0], texts[0]
    users_git(project / "tools", "status")
    assert not marker.exists(), texts[0]


@needs_namespaces
@pytest.mark.xfail(strict=True, reason=(
    "HOLE: in a project that is not (yet) a repository, a command makes the project root itself a git directory "
    "(HEAD, objects/, refs/, config with core.worktree=. and core.fsmonitor): the user's next git status at the "
    "project root (a shell prompt runs one) runs it; no `.git` entry was made, so nothing is asked"))
def test_a_bare_layout_made_at_the_root_of_a_project_without_a_repository_runs_nothing(server, project: Path, short: Path) -> None:
    (project / "app.py").write_text("x = 1\n")
    marker = short / "fsmonitor-ran"
    texts, _ = run(server, project, command(bare_layout_by_git(".", ".", marker)), approver=user())
    assert "ran" in texts[0], texts[0]
    users_git(project, "status")
    assert not marker.exists(), texts[0]


@needs_namespaces
def test_control_a_dot_git_made_in_a_folder_the_same_way_is_put_back(server, project: Path, short: Path) -> None:
    """The same fsmonitor in a repository made with `git init` (a `.git` entry) is shown and put back."""
    repository(project)
    (project / "src").mkdir()
    marker = short / "fsmonitor-ran"
    script = f"git init -q src && git -C src config core.fsmonitor '{RUNS.format(marker=marker)}'; echo ran"
    texts, _ = run(server, project, command(script), approver=user())
    users_git(project / "src", "status")
    assert not marker.exists() and not (project / "src" / ".git").exists(), texts[0]


def test_control_the_users_git_does_take_a_bare_layout_for_a_repository(project: Path, short: Path) -> None:
    """Outside mzagent: git status in a folder holding HEAD, objects, refs and that config runs its fsmonitor."""
    repository(project)
    (project / "src").mkdir()
    marker = short / "fsmonitor-ran"
    git(project, "init", "-q", "--bare", "src")
    for key, value in (("core.bare", "false"), ("core.worktree", ".."), ("core.fsmonitor", RUNS.format(marker=marker))):
        git(project / "src", "config", key, value)
    users_git(project / "src", "status")
    assert marker.exists()


# A program the repository's config names in the work tree -------------------------------------


WORK_TREE_PROGRAMS = {
    # id: (config key, value, what the user then runs)
    "fsmonitor": ("core.fsmonitor", "tools/fsmon.sh", ("status",)),
    "clean-filter": ("filter.strip.clean", "sh tools/fsmon.sh", ("commit", "-qam", "two")),
}


def repository_running_a_work_tree_script(project: Path, key: str, value: str) -> None:
    repository(project)
    (project / "tools").mkdir()
    (project / "tools" / "fsmon.sh").write_text("#!/bin/sh\ncat\n")
    (project / "tools" / "fsmon.sh").chmod(0o755)
    (project / ".gitattributes").write_text("*.txt filter=strip\n")
    git(project, "add", ".")
    git(project, "commit", "-qm", "tools")
    git(project, "config", key, value)


@needs_namespaces
@pytest.mark.parametrize(("key", "value", "users_command"), list(WORK_TREE_PROGRAMS.values()), ids=list(WORK_TREE_PROGRAMS))
@pytest.mark.xfail(strict=True, reason=(
    "HOLE: the repository's config (the user's, unchanged) names a work-tree script as a program git runs "
    "(core.fsmonitor = tools/fsmon.sh, a filter's clean = sh tools/fsmon.sh); hooks_path follows only "
    "core.hooksPath and includes, so a command rewrites the script unasked and the user's next git status / "
    "git commit -a runs it"))
def test_a_work_tree_program_the_repository_config_names_is_not_rewritten_unasked(
    server, project: Path, short: Path, key: str, value: str, users_command: tuple[str, ...],
) -> None:
    repository_running_a_work_tree_script(project, key, value)
    marker = short / "script-ran"
    script = f"printf '#!/bin/sh\\ntouch {marker}\\ncat\\n' > tools/fsmon.sh; echo more >> a.txt; echo ran"
    texts, _ = run(server, project, command(script), approver=user())
    assert "ran" in texts[0], texts[0]
    users_git(project, *users_command)
    assert not marker.exists(), texts[0]


@pytest.mark.parametrize(("key", "value", "users_command"), list(WORK_TREE_PROGRAMS.values()), ids=list(WORK_TREE_PROGRAMS))
def test_control_the_users_git_runs_that_work_tree_script(project: Path, short: Path, key: str, value: str, users_command: tuple[str, ...]) -> None:
    repository_running_a_work_tree_script(project, key, value)
    marker = short / "script-ran"
    (project / "tools" / "fsmon.sh").write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    with (project / "a.txt").open("a") as file:
        file.write("more\n")
    users_git(project, *users_command)
    assert marker.exists()


# Links into the repository -------------------------------------------------------------------


@needs_namespaces
@pytest.mark.parametrize("how", ["hard-link-config", "hard-link-hook-sample", "symlink-config"])
def test_a_link_into_the_repository_does_not_write_it(server, project: Path, short: Path, how: str) -> None:
    """A hard link made in the work tree to `.git/config` (or a hook sample), then written
    through: the link cannot be made across the read-only bind, and a symbolic one writes
    nothing either."""
    repository(project)
    marker = short / "fsmonitor-ran"
    line = f"[core]\\n\\tfsmonitor = \"{RUNS.format(marker=marker)}\"\\n"
    script = {
        "hard-link-config": f"ln .git/config cfg && printf '{line}' >> cfg",
        "hard-link-hook-sample": "ln .git/hooks/pre-commit.sample h && chmod +x h && printf 'touch {m}\\n' >> h && ln h .git/hooks/pre-commit",
        "symlink-config": f"ln -s .git/config cfg && printf '{line}' >> cfg",
    }[how].replace("{m}", str(marker))
    texts, _ = run(server, project, command(script + "; echo ran"), approver=user())
    users_git(project, "status")
    users_git(project, "commit", "-q", "--allow-empty", "-m", "x")
    assert not marker.exists(), texts[0]
    assert "fsmonitor" not in (project / ".git" / "config").read_text()
    assert not os.path.exists(project / ".git" / "hooks" / "pre-commit")
