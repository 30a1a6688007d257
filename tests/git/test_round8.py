"""Round 8 of the outside attacks on the `.git` wall (issue 54, rule 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.attack_helpers import command, git, needs_namespaces, repository, run, users_git

FSMONITOR = "touch {marker}; false"


def bare_worktree(folder: str, marker: Path) -> str:
    return (f"git init -q --bare {folder} && git -C {folder} config core.bare false && git -C {folder} config core.worktree .. "
            f"&& git -C {folder} config core.fsmonitor '{FSMONITOR.format(marker=marker)}'; echo ran")


@needs_namespaces
def test_a_bare_layout_made_in_a_project_folder_runs_nothing_in_the_users_git(server, project: Path, short: Path) -> None:
    repository(project)
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")
    marker = short / "fsmonitor-ran"
    texts, rec = run(server, project, command(bare_worktree("src", marker)))
    users_git(project / "src", "status")
    assert not marker.exists(), texts[0]
