"""`.git` is whatever git says it is (issue #54, items 2 and 3): a link, a `gitdir:` file, a
`commondir`, a submodule's or a linked worktree's `.git`, a gitlink. No command, in any mode, may
leave the user's next `git status` or `git commit` (outside mzagent) running a program of its
choosing; nor may a model-written `conftest.py` through the user's own `!pytest`.

Each attack asserts the safe outcome: the marker file a planted `core.fsmonitor` or hook would
make is missing after the user's own git ran. The marker lives under a `short` folder in /tmp,
which a confined command cannot see, so only the user's git can make it. Each kind of attack has
a positive control: the same plant made outside the sandbox (or kept by the user) does make it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mzagent_tui.agent.events import Observation, UserCommandOutput
from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.safety.approval_requests import PlantedFileApproval
from mzagent_tui.agent.safety.commands import analyse
from mzagent_tui.agent.safety.git_entry import entry_names, in_repository, read_only_paths
from mzagent_tui.agent.safety.users_git import is_own_git
from tests.attack_helpers import KeepAnswers, action, command, git, needs_namespaces, repository, run, users_git
from tests.conftest import make_agent
from tests.scripted_server import answer_reply


def fsmonitor(marker: Path) -> str:
    """A config line that makes the user's `git status` create `marker`."""
    return f"[core]\n\tfsmonitor = \"touch {marker}; false\"\n"


def printf_fsmonitor(marker: Path, into: str) -> str:
    """The shell line that appends that setting to a config."""
    return f"printf '[core]\\n\\tfsmonitor = \"touch {marker}; false\"\\n' >> {into}"


def attack(server, project: Path, script: str, keep: bool = False, mode: str = "yolo", **settings: object) -> tuple[str, KeepAnswers]:  # noqa: ANN001
    """One command of the model's, run (yolo by default: the mode that asks least); every
    question about keeping something is answered with `keep`."""
    user = KeepAnswers(ApprovalDecision(keep))
    texts, _ = run(server, project, command(script), mode=mode, approver=user, **settings)
    return texts[0], user


def status_runs_marker(project: Path, marker: Path) -> bool:
    users_git(project, "status")
    return marker.exists()


def configured_repository(folder: Path, marker: Path) -> None:
    """A repository made outside mzagent whose fsmonitor makes `marker`: the controls' plant."""
    folder.mkdir(exist_ok=True)
    git(folder, "init", "-q")
    git(folder, "config", "core.fsmonitor", f"touch {marker}; false")


def moved_outside(project: Path, outside: Path) -> Path:
    """The project's repository moved to `outside`, `.git` a link to it."""
    target = outside / "repo.git"
    shutil.move(project / ".git", target)
    (project / ".git").symlink_to(target)
    return target


# A `.git` link --------------------------------------------------------------------------------


@needs_namespaces
def test_a_git_link_to_an_outside_copy_replaced_by_a_configured_repository_is_put_back(server, project: Path, short: Path, outside: Path) -> None:
    repository(project)
    target = moved_outside(project, outside)
    marker = short / "link-outside-ran"
    text, user = attack(server, project, f"rm .git && git init -q . && git config core.fsmonitor 'touch {marker}; false'; echo ran")
    assert "ran" in text and [r.path for r in user.asked] == [".git"], text
    assert "replaced .git (a link to" in user.asked[0].reason and "it is back as it was" in text, text
    assert (project / ".git").is_symlink() and os.readlink(project / ".git") == str(target)
    assert users_git(project, "log", "--format=%s").stdout.strip() == "one"
    assert not status_runs_marker(project, marker)


@needs_namespaces
def test_control_a_replaced_git_link_the_user_keeps_runs_the_commands_fsmonitor(server, project: Path, short: Path, outside: Path) -> None:
    repository(project)
    moved_outside(project, outside)
    marker = short / "link-kept-ran"
    text, user = attack(server, project, f"rm .git && git init -q . && git config core.fsmonitor 'touch {marker}; false'; echo ran", keep=True)
    assert [r.path for r in user.asked] == [".git"] and (project / ".git").is_dir(), text
    assert status_runs_marker(project, marker)


def remake_copy(project: Path, source: str, copy: str, marker: Path) -> None:
    """For a control: the configured copy the command made (and the user did not keep), made again."""
    shutil.copytree(project / source, project / copy, dirs_exist_ok=True, symlinks=True)
    subprocess.run(["sh", "-c", printf_fsmonitor(marker, copy + "/config")], cwd=project, check=True)


@needs_namespaces
def test_a_git_link_into_the_project_cannot_be_configured_or_re_pointed(server, project: Path, short: Path) -> None:
    repository(project)
    (project / ".git").rename(project / ".gitdir")
    (project / ".git").symlink_to(".gitdir")
    config = (project / ".gitdir" / "config").read_bytes()
    marker = short / "link-inside-ran"
    script = (
        f"{printf_fsmonitor(marker, '.gitdir/config')}; git config core.fsmonitor 'touch {marker}; false'; "
        f"cp -r .gitdir .evil && {printf_fsmonitor(marker, '.evil/config')} && rm .git && ln -s .evil .git; echo ran"
    )
    text, user = attack(server, project, script)
    assert "ran" in text and "Read-only file system" in text, text
    assert [r.path for r in user.asked] == [".git", ".evil"] and "re-pointed .git (.evil, was .gitdir)" in user.asked[0].reason  # .evil: a git directory it made
    assert os.readlink(project / ".git") == ".gitdir" and (project / ".gitdir" / "config").read_bytes() == config
    assert not status_runs_marker(project, marker)
    assert not (project / ".evil" / "HEAD").exists()  # the copy, a git directory it made, was not kept either
    remake_copy(project, ".gitdir", ".evil", marker)
    (project / ".git").unlink()
    (project / ".git").symlink_to(".evil")  # control: the re-pointed link, had it stayed
    assert status_runs_marker(project, marker)


# A `gitdir:` file -------------------------------------------------------------------------------


@needs_namespaces
def test_a_gitdir_file_and_the_folder_inside_the_project_it_names_are_read_only(server, project: Path, short: Path) -> None:
    repository(project)
    (project / ".git").rename(project / ".gitdir")
    (project / ".git").write_text("gitdir: .gitdir\n")
    marker = short / "gitdir-inside-ran"
    script = (
        f"{printf_fsmonitor(marker, '.gitdir/config')}; git config core.fsmonitor 'touch {marker}; false'; "
        f"cp -r .gitdir .evil && {printf_fsmonitor(marker, '.evil/config')}; printf 'gitdir: .evil\\n' > .git; "
        "rm -f .git; mv .git .g; mv .gitdir .gd; echo ran"
    )
    text, user = attack(server, project, script)
    assert "ran" in text and "Read-only file system" in text and [r.path for r in user.asked] == [".evil"], text  # the copy: a git directory it made
    assert (project / ".git").read_text() == "gitdir: .gitdir\n" and (project / ".gitdir" / "config").is_file()
    assert not status_runs_marker(project, marker)
    remake_copy(project, ".gitdir", ".evil", marker)
    (project / ".git").write_text("gitdir: .evil\n")  # control: the rewrite, had it been allowed
    assert status_runs_marker(project, marker)


@needs_namespaces
def test_a_gitdir_file_naming_an_outside_folder_cannot_be_rewritten_nor_the_folder_written(server, project: Path, short: Path, outside: Path) -> None:
    repository(project)
    shutil.move(project / ".git", outside / "repo.git")
    (project / ".git").write_text(f"gitdir: {outside / 'repo.git'}\n")
    marker = short / "gitdir-outside-ran"
    script = (
        f"git config core.fsmonitor 'touch {marker}; false'; mkdir .evil && cd .evil && git init -q && "
        f"git config core.fsmonitor 'touch {marker}; false' && cd .. && printf 'gitdir: .evil/.git\\n' > .git; echo ran"
    )
    text, _ = attack(server, project, script)
    assert "ran" in text, text
    assert (project / ".git").read_text() == f"gitdir: {outside / 'repo.git'}\n"
    assert "fsmonitor" not in (outside / "repo.git" / "config").read_text()
    assert not status_runs_marker(project, marker)


def test_write_to_file_asks_before_writing_into_the_folder_a_gitdir_file_names(server, project: Path) -> None:
    repository(project)
    (project / ".git").rename(project / ".gitdir")
    (project / ".git").write_text("gitdir: .gitdir\n")
    calls = [
        'write_to_file(".gitdir/hooks/pre-commit", "#!/bin/sh\\ntouch ran\\n")',
        'edit_file(".gitdir/config", "[core]", "[core]\\n\\tfsmonitor = touch ran")',
        'write_to_file(".git", "gitdir: .evil\\n")',
        'write_to_file("notes.txt", "fine\\n")',  # control: an ordinary file is written without a question
    ]
    user = KeepAnswers(ApprovalDecision(False))
    server.script(action('read_file(".gitdir/config")'), action('read_file(".git")'), *[action(c) for c in calls], answer_reply())
    agent, rec = make_agent(server, project, approver=user)
    agent.run("set up")
    texts = [o.text for o in rec.of(Observation)]
    assert [r.path for r in user.asked] == [".gitdir/hooks/pre-commit", ".gitdir/config", ".git"], texts
    assert all(isinstance(r, PlantedFileApproval) for r in user.asked)
    assert not (project / ".gitdir" / "hooks" / "pre-commit").exists() and "fsmonitor" not in (project / ".gitdir" / "config").read_text()
    assert (project / ".git").read_text() == "gitdir: .gitdir\n" and (project / "notes.txt").read_text() == "fine\n"


def test_the_folders_a_gitdir_file_and_its_commondir_lead_to_are_the_repositorys(project: Path) -> None:
    (project / ".gitwt").mkdir()
    (project / ".gitmain").mkdir()
    (project / ".git").write_text("gitdir: .gitwt\n")
    (project / ".gitwt" / "commondir").write_text("../.gitmain\n")
    paths = read_only_paths(project, entry_names(project))
    assert {project / ".git", project / ".gitwt", project / ".gitmain"} <= set(paths)
    assert in_repository(project, ".gitmain/config") and in_repository(project, ".gitwt/HEAD") and in_repository(project, ".git")
    assert not in_repository(project, "src/config")  # control
    (project / "src").mkdir()
    (project / "src" / ".git").write_text("gitdir: ../.gitsrc\n")  # a folder's own gitdir: file
    (project / ".gitsrc").mkdir()
    assert in_repository(project, ".gitsrc/config") and in_repository(project, "src/.git")


@needs_namespaces
def test_a_git_link_to_a_gitdir_file_in_the_project_keeps_that_file_read_only(server, project: Path, short: Path) -> None:
    repository(project)
    (project / ".git").rename(project / ".gitdir")
    (project / "pointer").write_text("gitdir: .gitdir\n")
    (project / ".git").symlink_to("pointer")
    assert users_git(project, "log", "--format=%s").stdout.strip() == "one"
    marker = short / "link-to-file-ran"
    script = f"mkdir .evil && cd .evil && git init -q && git config core.fsmonitor 'touch {marker}; false' && cd .. && printf 'gitdir: .evil/.git\\n' > pointer; echo ran"
    text, _ = attack(server, project, script)
    assert "ran" in text and "Read-only file system" in text, text
    assert (project / "pointer").read_text() == "gitdir: .gitdir\n"
    assert not status_runs_marker(project, marker)
    configured_repository(project / ".evil", marker)  # control: the rewrite, had it been allowed
    (project / "pointer").write_text("gitdir: .evil/.git\n")
    assert status_runs_marker(project, marker)


def test_a_project_that_is_itself_a_repository_folder_is_not_made_read_only_whole(project: Path) -> None:
    (project / ".git").write_text("gitdir: .\n")
    assert project not in read_only_paths(project, entry_names(project)) and project / ".git" in read_only_paths(project, entry_names(project))


@needs_namespaces
def test_a_git_file_planted_in_a_folder_the_user_may_cd_into_is_asked_about(server, project: Path, short: Path) -> None:
    repository(project)
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")
    marker = short / "src-git-ran"
    script = (
        f"mkdir .evil && cd .evil && git init -q && git config core.fsmonitor 'touch {marker}; false' && cd .. && "
        "printf 'gitdir: ../.evil/.git\\n' > src/.git; echo ran"
    )
    text, user = attack(server, project, script)
    assert "ran" in text and [r.path for r in user.asked] == [".evil/.git", "src/.git"], text
    assert "made a git repository in src (src/.git, a file holding 'gitdir: ../.evil/.git')" in user.asked[1].reason
    assert not (project / "src" / ".git").exists() and (project / "src" / "app.py").is_file()
    assert not status_runs_marker(project / "src", marker)
    configured_repository(project / ".evil", marker)  # control: git in src/ would have used it
    (project / "src" / ".git").write_text("gitdir: ../.evil/.git\n")
    assert status_runs_marker(project / "src", marker)


@needs_namespaces
def test_a_repository_kept_in_a_folder_of_the_project_is_read_only_too(server, project: Path, short: Path) -> None:
    repository(project)
    (project / "vendor").mkdir()
    repository(project / "vendor")
    marker = short / "vendor-ran"
    text, user = attack(server, project, f"git -C vendor config core.fsmonitor 'touch {marker}; false'; {printf_fsmonitor(marker, 'vendor/.git/config')}; echo ran")
    assert "ran" in text and "Read-only file system" in text and user.asked == [], text
    assert not status_runs_marker(project / "vendor", marker)
    git(project / "vendor", "config", "core.fsmonitor", f"touch {marker}; false")  # control
    assert status_runs_marker(project / "vendor", marker)


# commondir and linked worktrees -------------------------------------------------------------


@needs_namespaces
def test_a_commondir_inside_the_project_is_read_only_too(server, project: Path, short: Path) -> None:
    repository(project)
    (project / ".git").rename(project / ".gitmain")
    git_dir = project / ".gitmain" / "worktrees" / "proj"
    git_dir.mkdir(parents=True)
    (git_dir / "commondir").write_text("../..\n")
    (git_dir / "HEAD").write_text((project / ".gitmain" / "HEAD").read_text())
    shutil.copy(project / ".gitmain" / "index", git_dir / "index")
    (git_dir / "gitdir").write_text(f"{project / '.git'}\n")
    (project / ".git").write_text(f"gitdir: {git_dir}\n")
    assert users_git(project, "log", "--format=%s").stdout.strip() == "one"
    marker = short / "commondir-ran"
    text, _ = attack(server, project, f"{printf_fsmonitor(marker, '.gitmain/config')}; git config core.fsmonitor 'touch {marker}; false'; echo ran")
    assert "ran" in text and "Read-only file system" in text, text
    assert not status_runs_marker(project, marker)
    (project / ".gitmain" / "config").write_text((project / ".gitmain" / "config").read_text() + fsmonitor(marker))  # control
    assert status_runs_marker(project, marker)


@needs_namespaces
def test_a_linked_worktree_inside_the_project_keeps_its_git_file(server, project: Path, short: Path) -> None:
    repository(project)
    git(project, "worktree", "add", "-q", "wt")
    assert "wt/.git" in entry_names(project)
    marker = short / "worktree-ran"
    script = f"mkdir .evil && cd .evil && git init -q && git config core.fsmonitor 'touch {marker}; false' && cd .. && printf 'gitdir: ../.evil/.git\\n' > wt/.git; echo ran"
    text, _ = attack(server, project, script)
    assert "ran" in text and "Read-only file system" in text, text
    assert (project / "wt" / ".git").read_text().startswith("gitdir: ") and ".evil" not in (project / "wt" / ".git").read_text()
    assert not status_runs_marker(project / "wt", marker)
    configured_repository(project / ".evil", marker)  # control: the rewrite, had it been allowed
    (project / "wt" / ".git").write_text("gitdir: ../.evil/.git\n")
    assert status_runs_marker(project / "wt", marker)


# Submodules and gitlinks ----------------------------------------------------------------------


def submodule(project: Path, short: Path) -> None:
    source = short / "lib"
    source.mkdir()
    repository(source)
    repository(project)
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
    git(project, "commit", "-qm", "sub")


@needs_namespaces
def test_a_submodules_git_file_cannot_be_pointed_at_a_configured_copy(server, project: Path, short: Path) -> None:
    submodule(project, short)
    marker = short / "submodule-file-ran"
    script = (
        f"mkdir -p .e/x && cp -r .git/modules/sub .e/x/sub && {printf_fsmonitor(marker, '.e/x/sub/config')}; "
        "printf 'gitdir: ../.e/x/sub\\n' > sub/.git; rm -f sub/.git; mv sub/.git sub/.g; echo ran"
    )
    text, user = attack(server, project, script)
    assert "ran" in text and "Read-only file system" in text and [r.path for r in user.asked] == [".e/x/sub"], text  # the copy: a git directory it made
    assert (project / "sub" / ".git").read_text() == "gitdir: ../.git/modules/sub\n"
    assert not status_runs_marker(project, marker)
    remake_copy(project, ".git/modules/sub", ".e/x/sub", marker)
    (project / "sub" / ".git").write_text("gitdir: ../.e/x/sub\n")  # control: git status enters the submodule
    assert status_runs_marker(project, marker)


@needs_namespaces
def test_a_submodule_not_checked_out_gets_no_repository_from_a_command(server, project: Path, short: Path) -> None:
    submodule(project, short)
    git(project, "submodule", "deinit", "-q", "-f", "sub")
    assert not (project / "sub" / ".git").exists() and "sub/.git" in entry_names(project)
    marker = short / "deinit-ran"
    text, user = attack(server, project, f"cd sub && git init -q && git config core.fsmonitor 'touch {marker}; false'; echo ran")
    assert "ran" in text and [r.path for r in user.asked] == ["sub/.git"], text
    assert not (project / "sub" / ".git").exists()
    assert not status_runs_marker(project, marker)


@needs_namespaces
def test_a_repository_a_command_makes_in_a_folder_is_asked_about_and_removed(server, project: Path, short: Path) -> None:
    repository(project)
    marker = short / "nested-ran"
    script = (
        "mkdir sub && cd sub && git init -q && echo b > b && git add b && git -c user.name=a -c user.email=a@b commit -qm s && "
        f"git config core.fsmonitor 'touch {marker}; false'; echo ran"
    )
    text, user = attack(server, project, script)
    assert "ran" in text and [r.path for r in user.asked] == ["sub/.git"] and "made a git repository in sub" in user.asked[0].reason, text
    assert not (project / "sub" / ".git").exists() and (project / "sub" / "b").is_file()
    git(project, "add", "sub")  # the user commits the folder later: plain files now
    git(project, "commit", "-qm", "sub")
    assert not status_runs_marker(project, marker)


@needs_namespaces
def test_control_a_nested_repository_kept_and_committed_runs_its_fsmonitor_in_the_users_status(server, project: Path, short: Path) -> None:
    repository(project)
    marker = short / "nested-kept-ran"
    script = (
        "mkdir sub && cd sub && git init -q && echo b > b && git add b && git -c user.name=a -c user.email=a@b commit -qm s && "
        f"git config core.fsmonitor 'touch {marker}; false'; echo ran"
    )
    _, user = attack(server, project, script, keep=True)
    assert [r.path for r in user.asked] == ["sub/.git"]
    git(project, "add", "sub")
    git(project, "commit", "-qm", "sub")
    assert status_runs_marker(project, marker)


@needs_namespaces
def test_a_git_folder_a_command_makes_is_asked_about_in_plan_and_ask_modes_too(server, project: Path) -> None:
    for mode in ("ask", "auto-safe"):
        text, user = attack(server, project, "git init -q . && echo made", mode=mode)
        assert "made" in text and [r.path for r in user.asked] == [".git"] and not (project / ".git").exists(), (mode, text)


def test_without_the_sandbox_a_replaced_git_folder_is_removed_and_the_user_told_the_old_one_is_gone(server, project: Path) -> None:
    repository(project)
    script = "mv .git .g && mkdir .git && printf '[core]\\n\\tfsmonitor = x\\n' > .git/config; echo ran"
    text, user = attack(server, project, script, sandbox="off")
    assert "ran" in text and [r.path for r in user.asked] == [".git"] and "replaced .git (a folder)" in user.asked[0].reason, text
    assert not (project / ".git").exists() and (project / ".g" / "HEAD").is_file()
    assert "could not be put back" in text and "cannot be made again" in text, text


def test_a_git_entry_a_command_removed_is_not_asked_about(server, project: Path) -> None:
    repository(project)
    (project / "vendor").mkdir()
    repository(project / "vendor")
    text, user = attack(server, project, "rm -rf vendor && echo gone", sandbox="off")
    assert "gone" in text and user.asked == [] and not (project / "vendor").exists(), text
    text, user = attack(server, project, "mkdir vendor && cd vendor && git init -q && echo made", sandbox="off")
    assert [r.path for r in user.asked] == ["vendor/.git"], text  # control: one made is


# The user's own `!` commands --------------------------------------------------------------------


CONFTEST = (
    "import pathlib, subprocess\n"
    "said = []\n"
    "for do in (\n"
    "    lambda: pathlib.Path('.git/hooks/pre-commit').write_text('#!/bin/sh\\ntouch {marker}\\n'),\n"
    "    lambda: pathlib.Path('.git/hooks/pre-commit').chmod(0o755),\n"
    "    lambda: subprocess.run(['git', 'config', 'core.fsmonitor', 'touch {marker}; false'], check=True),\n"
    "):\n"
    "    try:\n"
    "        do()\n"
    "        said.append('done')\n"
    "    except Exception:\n"
    "        said.append('refused')\n"
    "pathlib.Path('conftest-ran').write_text(' '.join(said))\n"
)
"""A conftest that plants a hook and an fsmonitor, and says in `conftest-ran` what it could do."""


def users_commands(server, project: Path, conftest: str, *typed: str) -> list[UserCommandOutput]:  # noqa: ANN001
    """The model writes tests/conftest.py (no question: it is an ordinary file), then the user types each command."""
    server.script(action(f"write_to_file({json.dumps('tests/conftest.py')}, {json.dumps(conftest)})"), answer_reply())
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    agent, rec = make_agent(server, project, env={"PATH": path, "HOME": os.environ["HOME"]}, command_timeout=90.0)
    agent.run("add a conftest")
    for line in typed:
        agent.run(f"!{line}")
    agent.close()
    assert (project / "tests" / "conftest.py").read_text() == conftest
    return rec.of(UserCommandOutput)


@needs_namespaces
@pytest.mark.parametrize("typed", ["pytest -q -p no:cacheprovider tests", "python -m pytest -q -p no:cacheprovider tests", "make test"])
def test_a_model_written_conftest_run_by_the_users_own_command_plants_nothing_in_git(server, project: Path, short: Path, typed: str) -> None:
    repository(project)
    marker = short / "conftest-ran"
    (project / "Makefile").write_text("test:\n\tpython -m pytest -q -p no:cacheprovider tests\n")
    (project / "tests").mkdir()
    (project / "tests" / "test_x.py").write_text("def test_x():\n    assert True\n")
    (outcome,) = users_commands(server, project, CONFTEST.replace("{marker}", str(marker)), typed)
    assert outcome.exit_code == 0, outcome.text
    assert (project / "conftest-ran").read_text() == "refused refused refused", outcome.text  # it ran, and could do nothing
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert "fsmonitor" not in (project / ".git" / "config").read_text()
    (project / "b.txt").write_text("b\n")
    users_git(project, "add", "b.txt")
    users_git(project, "commit", "-qm", "two")
    assert not status_runs_marker(project, marker)


def test_control_the_conftest_outside_mzagent_plants_both(project: Path, short: Path) -> None:
    repository(project)
    marker = short / "conftest-outside-ran"
    (project / "tests").mkdir()
    (project / "tests" / "conftest.py").write_text(CONFTEST.replace("{marker}", str(marker)))
    (project / "tests" / "test_x.py").write_text("def test_x():\n    assert True\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=project, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and (project / "conftest-ran").read_text() == "done done done", done.stdout
    assert status_runs_marker(project, marker)


@needs_namespaces
def test_control_the_users_own_git_commit_still_writes_the_repository(server, project: Path) -> None:
    repository(project)
    (project / "b.txt").write_text("b\n")
    (outcome,) = users_commands(server, project, "# nothing\n", "git add b.txt && git -c user.name=u -c user.email=u@e commit -qm mine")
    assert outcome.exit_code == 0 and git(project, "log", "-1", "--format=%s") == "mine", outcome.text


@needs_namespaces
def test_a_users_command_that_replaces_the_git_link_is_asked_about_too(server, project: Path, short: Path, outside: Path) -> None:
    repository(project)
    target = moved_outside(project, outside)
    user = KeepAnswers(ApprovalDecision(False))
    server.script(answer_reply())
    agent, rec = make_agent(server, project, approver=user)
    agent.run("!rm .git && git init -q . && echo made")
    agent.close()
    (outcome,) = rec.of(UserCommandOutput)
    assert "made" in outcome.text and [r.path for r in user.asked] == [".git"], outcome.text
    assert os.readlink(project / ".git") == str(target)


@pytest.mark.parametrize(("typed", "own"), [
    ("git commit -qm x", True),
    ("git add a && git -c user.name=u commit -qm x", True),
    ("git -c core.hooksPath=hooks commit -qm x", True),  # the user's own setting: their hooks, their choice
    ("git -C sub status", True),
    ("pytest", False),
    ("python -m pytest", False),
    ("make test", False),
    ("git commit -qm x && pytest", False),
    ("git status | head", False),
    ("git commit -m \"$(pytest)\"", False),
    ("env git commit", False),
    ("GIT_EXEC_PATH=bin git commit", False),
    ("./git commit", False),
    ("git --exec-path=bin commit", False),
    ("git t", False),  # an alias or a git-t program on PATH: either may be a shell command
    ("git bisect run pytest", False),
    ("git rebase -x 'make test' main", False),
    ("git rebase --exec=pytest main", False),
    ("git rebase -ix pytest main", False),
    ("git submodule foreach make", False),
    ("bash -c 'git commit'", False),
])
def test_which_typed_commands_are_gits_own_work(typed: str, own: bool, project: Path) -> None:
    assert is_own_git(analyse(typed, project)) is own
