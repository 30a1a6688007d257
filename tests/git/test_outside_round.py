"""The `.git` wall, attacked from outside (issue 54, rule 2): `.git` is whatever git says it is,
bound read-only with every folder it leads to, so no command can make the user's next git run a
program; a `.git` a command makes is shown afterwards.

The attacks read a `.git` file as git reads it, not as a first line stripped of spaces: git
takes the whole file after `gitdir: `, less its trailing line ends, so a space, a second line or
a byte that is not UTF-8 is part of the folder's name. Each asserts the safe outcome through the
real agent (the user's git afterwards runs nothing the command planted), with a control showing
the same git does run what that folder holds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mzagent_tui.agent.safety import git_entry
from tests.attack_helpers import command, git, needs_namespaces, run, users_git

FSMONITOR = '[core]\n\tfsmonitor = "touch {marker}; false"\n'
POINTERS = {
    # id: (the git folder's name in bytes, the `.git` file's content, a glob naming the folder)
    "trailing-space": (b"gd ", b"gitdir: gd \n", "gd?"),
    "leading-space": (b" gd", b"gitdir:  gd\n", "?gd"),
    "second-line": (b"gd\nx", b"gitdir: gd\nx\n", "gd?x"),
    "not-utf8": (b"gd\xff", b"gitdir: gd\xff\n", "gd?"),
    "carriage-return-kept-inside": (b"g\rd", b"gitdir: g\rd\r\n", "g?d"),
}


def nested_repository(project: Path, folder: bytes, pointer: bytes) -> Path:
    """`vendor/lib`, whose `.git` file says `pointer` and whose repository is `folder` beside it."""
    work = project / "vendor" / "lib"
    work.mkdir(parents=True)
    git(work, "init", "-q", ".")
    target = os.path.join(os.fsencode(work), folder)
    os.rename(os.fsencode(work / ".git"), target)
    (work / ".git").write_bytes(pointer)
    said = subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=work, capture_output=True, check=True).stdout
    assert os.path.samefile(said.removesuffix(b"\n"), target)  # git reads it so
    return work


@needs_namespaces
@pytest.mark.parametrize(("folder", "pointer", "glob"), list(POINTERS.values()), ids=list(POINTERS))
def test_a_nested_git_file_read_as_git_reads_it_keeps_its_repository_read_only(
    server, project: Path, short: Path, folder: bytes, pointer: bytes, glob: str,
) -> None:
    work = nested_repository(project, folder, pointer)
    marker = short / "fsmonitor-ran"
    script = f"printf '{FSMONITOR.format(marker=marker)}' >> vendor/lib/{glob}/config"
    texts, _ = run(server, project, command(script))
    users_git(work, "status")
    assert not marker.exists(), texts[0]


@pytest.mark.parametrize(("folder", "pointer", "glob"), list(POINTERS.values()), ids=list(POINTERS))
def test_control_the_users_git_runs_the_fsmonitor_of_that_folder(project: Path, short: Path, folder: bytes, pointer: bytes, glob: str) -> None:
    work = nested_repository(project, folder, pointer)
    marker = short / "fsmonitor-ran"
    config = Path(os.fsdecode(os.path.join(os.fsencode(work), folder))) / "config"
    config.write_text(config.read_text() + FSMONITOR.format(marker=marker))
    users_git(work, "status")
    assert marker.exists()


@needs_namespaces
def test_the_roots_git_file_with_a_trailing_space_keeps_its_repository_read_only(server, project: Path, short: Path) -> None:
    """The root's repository is asked of git itself: held before the nested ones were."""
    git(project, "init", "-q", ".")
    shutil.move(project / ".git", project / "gd ")
    (project / ".git").write_text("gitdir: gd \n")
    marker = short / "fsmonitor-ran"
    texts, _ = run(server, project, command(f"printf '{FSMONITOR.format(marker=marker)}' >> gd?/config"))
    users_git(project, "status")
    assert not marker.exists(), texts[0]


# A nested repository past the walk's bound -----------------------------------------------------


def repository_walked_last(project: Path, heavy_folders: int) -> Path:
    """`vendor/lib` with a repository, beside `heavy_folders` folders in ten others, named so that
    the walk for `.git` entries (depth first, the last listed first) reaches `vendor` last."""
    for n in range(heavy_folders):
        (project / f"h{n % 10}" / f"leaf{n}").mkdir(parents=True)
    name = next(f"vendor{n}" for n in range(500) if _listed_first(project, f"vendor{n}"))
    work = project / name / "lib"
    work.mkdir(parents=True)
    git(work, "init", "-q", ".")
    return work


def _listed_first(project: Path, name: str) -> bool:
    (project / name).mkdir()
    if next(os.scandir(project)).name == name:
        return True
    (project / name).rmdir()
    return False


@needs_namespaces
@pytest.mark.xfail(strict=True, reason=(
    "HOLE: the walk that finds nested `.git` entries stops after 20,000 folders (WALK_LIMIT; only node_modules and "
    "__pycache__ are left out, so a .venv of large packages or a monorepo's folders count): a repository past it is not "
    "bound read-only, its config is no git path the after-command scan keeps, and a command's core.fsmonitor there runs "
    "in the user's next git status in that folder"))
def test_a_nested_repository_past_the_walks_bound_stays_read_only(server, project: Path, short: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_entry, "WALK_LIMIT", 50)  # 20,000 in use: the same walk, cheaper to outgrow
    work = repository_walked_last(project, 60)
    marker = short / "fsmonitor-ran"
    relative = work.relative_to(project)
    texts, _ = run(server, project, command(f"printf '{FSMONITOR.format(marker=marker)}' >> {relative}/.git/config"))
    users_git(work, "status")
    assert not marker.exists(), texts[0]


@needs_namespaces
def test_control_the_same_repository_in_a_small_project_stays_read_only(server, project: Path, short: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_entry, "WALK_LIMIT", 50)
    work = repository_walked_last(project, 20)
    marker = short / "fsmonitor-ran"
    relative = work.relative_to(project)
    texts, _ = run(server, project, command(f"printf '{FSMONITOR.format(marker=marker)}' >> {relative}/.git/config"))
    users_git(work, "status")
    assert not marker.exists(), texts[0]
    assert "Read-only file system" in texts[0] or "Permission denied" in texts[0]
