"""The read-only parts of the project's repository (`.git/config`, `hooks`, `info`): a command
(under an allow rule, or reaching them another way: a `commondir`, a folder moved away, a new or
nested repository, a submodule, hooks kept in the work tree, a lock file) plants nothing the
user's own git runs later. Markers live in /tmp under `short`, which a confined command does not
see, so a marker there can only come from a program run outside the sandbox. (Rounds six and
seven of the outside attacks.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.safety.approval_requests import GitEntryApproval
from tests.attack_helpers import command, git, needs_namespaces, repository, run, users_git
from tests.attack_helpers import run_keeping as run_asked

# A command under an allow rule plants what runs later, outside mzagent ---------------------


@needs_namespaces
@pytest.mark.parametrize(
    "planted",
    [
        ".git/hooks/pre-commit",
        ".git/config",
        ".envrc",
    ],
)
def test_a_test_run_under_an_allow_rule_cannot_plant_code_that_runs_outside_later(server, project: Path, home: Path, planted: str) -> None:
    from mzagent_tui.agent.safety.approval import ApprovalDecision, Rules
    from mzagent_tui.agent.safety.approval_requests import PlantedFileApproval
    from tests.attack_helpers import git
    from tests.conftest import RecordingApprover

    git(project, "init", "-q", ".")
    before = (project / planted).read_bytes() if (project / planted).exists() else None
    (project / "test_ok.py").write_text(
        "import pathlib\n\n\ndef test_ok():\n"
        f"    p = pathlib.Path({planted!r})\n"
        "    with p.open('a') as f:\n"
        "        f.write('\\n[core]\\n\\tfsmonitor = touch /tmp/r6-planted\\n' if p.name == 'config' else '#!/bin/sh\\ntouch /tmp/r6-planted\\n')\n"
        "    p.chmod(0o755)\n"
    )
    user = RecordingApprover(ApprovalDecision(False))
    rules = Rules()
    rules.add("allow", "python3 -m pytest")
    texts, _ = run(server, project, command("python3 -m pytest -q -p no:cacheprovider test_ok.py"), mode="ask", approver=user, rules=rules)
    assert "passed" in texts[0] or "failed" in texts[0], texts[0]  # it ran, unasked
    after = (project / planted).read_bytes() if (project / planted).exists() else None
    assert after == before
    if planted.startswith(".git/"):  # refused by the sandbox: a read-only part of the repository
        assert user.requests == []
    else:  # Landlock cannot refuse one new file at the root: the user is asked after the command
        assert [(type(r), r.path) for r in user.requests] == [(PlantedFileApproval, planted)]
        assert f"The user did not keep {planted}" in texts[0], texts[0]


@needs_namespaces
def test_the_repository_is_read_only_to_a_command_while_the_root_stays_writable(server, project: Path) -> None:
    """The whole `.git` is read-only, as Codex keeps it: its config, hooks, `commondir` and
    `modules/` all run programs in the user's git (round seven got through each part left
    writable). A `git commit` is refused like any write the sandbox blocks, so it asks the user
    the next time; new files at the project's root are still made."""
    from tests.attack_helpers import git

    git(project, "init", "-q", ".")
    before = sorted(p.relative_to(project).as_posix() for p in (project / ".git").rglob("*"))
    texts, _ = run(
        server, project,
        command("echo new > new.txt && git add new.txt; echo '[core]' >> .git/config; touch .git/hooks/pre-commit; echo c > .git/commondir; echo tried"),
    )
    assert "tried" in texts[0] and "Read-only file system" in texts[0], texts[0]
    assert (project / "new.txt").read_text() == "new\n"
    assert sorted(p.relative_to(project).as_posix() for p in (project / ".git").rglob("*")) == before


@needs_namespaces
def test_a_repository_made_during_the_session_is_protected_from_the_next_command_on(server, project: Path) -> None:
    """The read-only parts are found when each command starts, not when the session began."""
    texts, _ = run(
        server, project,
        command("git init -q . && echo made"),
        command("touch .git/hooks/post-checkout; echo tried"),
    )
    assert "made" in texts[0] and (project / ".git" / "config").is_file(), texts[0]
    assert "tried" in texts[1] and not (project / ".git" / "hooks" / "post-checkout").exists(), texts[1]


# The read-only parts of the repository, reached some other way -------------------------------


@needs_namespaces
def test_a_planted_commondir_does_not_give_the_users_git_a_config_of_the_models(server, project: Path, short: Path) -> None:
    repository(project)
    marker = short / "r7-commondir-ran"
    script = (
        "mkdir .git/c; cp -r .git/objects .git/refs .git/c/; "
        f"printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \"touch {marker}; false\"\\n' > .git/c/config; "
        "echo c > .git/commondir; git log --oneline; echo ran"
    )
    texts, _ = run(server, project, command(script))
    assert "ran" in texts[0] and "one" in texts[0], texts[0]
    users_git(project, "status")
    assert not marker.exists()


@needs_namespaces
def test_a_repository_folder_moved_away_and_replaced_keeps_no_config_of_the_models(server, project: Path, short: Path) -> None:
    repository(project)
    marker = short / "r7-moved-ran"
    script = (
        "mv .git .git-old && mkdir .git && cp -a .git-old/objects .git-old/refs .git-old/HEAD .git-old/index .git/ && "
        f"printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \"touch {marker}; false\"\\n' > .git/config; "
        "git log --oneline; echo ran"
    )
    texts, _ = run(server, project, command(script))
    assert "ran" in texts[0], texts[0]
    done = users_git(project, "log", "--format=%s")
    users_git(project, "status")
    assert done.stdout.strip() == "one", done  # the history is still there for the user
    assert not marker.exists()


@needs_namespaces
def test_a_repository_made_and_configured_in_one_command_runs_nothing_of_the_models_later(server, project: Path, short: Path) -> None:
    (project / "main.py").write_text("print('hi')\n")
    marker = short / "r7-init-ran"
    _, _, user, text = run_asked(server, project, f"git init -q . && git config core.fsmonitor 'touch {marker}; false' && echo made", ApprovalDecision(False))
    assert "made" in text and [(type(r), r.path) for r in user.asked] == [(GitEntryApproval, ".git")], text
    assert "did not keep the git repository" in text and not (project / ".git").exists()
    users_git(project, "status")
    assert not marker.exists()


@needs_namespaces
def test_a_nested_repository_added_as_a_gitlink_runs_nothing_in_the_users_git_status(server, project: Path, short: Path) -> None:
    repository(project)
    marker = short / "r7-nested-ran"
    script = (
        "mkdir sub && cd sub && git init -q && echo b > b && git add b && git -c user.name=a -c user.email=a@b commit -qm s && "
        f"git config core.fsmonitor 'touch {marker}; false' && cd .. && git add sub 2>/dev/null; git ls-files -s sub; echo ran"
    )
    texts, _ = run(server, project, command(script))
    assert "ran" in texts[0] and "160000" not in texts[0], texts[0]  # the root's index is read-only: no gitlink
    users_git(project, "status")
    assert not marker.exists()


@needs_namespaces
def test_a_repository_without_a_hooks_folder_gets_no_hook_from_a_command(server, project: Path, short: Path) -> None:
    import shutil

    repository(project)
    shutil.rmtree(project / ".git" / "hooks")
    marker = short / "r7-hook-ran"
    texts, _ = run(server, project, command(f"mkdir .git/hooks && printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit; echo ran"))
    assert "ran" in texts[0], texts[0]
    (project / "b.txt").write_text("b\n")
    users_git(project, "add", "b.txt")
    users_git(project, "commit", "-qm", "two")
    assert not marker.exists()


@needs_namespaces
def test_a_submodules_repository_gets_no_config_of_the_models(server, project: Path, short: Path) -> None:
    source = short / "lib"
    source.mkdir()
    repository(source)
    repository(project)
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
    git(project, "commit", "-qm", "sub")
    marker = short / "r7-submodule-ran"
    texts, _ = run(server, project, command(f"git -C sub config core.fsmonitor 'touch {marker}; false'; echo ran"))
    assert "ran" in texts[0], texts[0]
    users_git(project, "status")
    assert not marker.exists()


@needs_namespaces
@pytest.mark.parametrize("hooks", [".husky/_", "tools/hooks"])
def test_hooks_kept_in_the_work_tree_get_nothing_of_the_models(server, project: Path, short: Path, hooks: str) -> None:
    from tests.attack_helpers import KeepAnswers

    repository(project)
    folder = project / hooks
    folder.mkdir(parents=True)
    if hooks == ".husky/_":
        (folder / ".gitignore").write_text("*\n")
    (folder / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (folder / "pre-commit").chmod(0o755)
    git(project, "config", "core.hooksPath", hooks)
    marker = short / "r7-hookspath-ran"
    user = KeepAnswers(ApprovalDecision(False))
    texts, _ = run(server, project, command(f"printf '#!/bin/sh\\ntouch {marker}\\n' > {hooks}/pre-commit; echo ran"), mode="ask", approver=user)
    assert "ran" in texts[0], texts[0]
    (project / "b.txt").write_text("b\n")
    users_git(project, "add", "b.txt")
    users_git(project, "commit", "-qm", "two")
    assert not marker.exists()


@needs_namespaces
def test_the_read_only_parts_cannot_be_renamed_away_or_replaced_through_a_lock_file(server, project: Path, short: Path) -> None:
    """Held: `config`, `hooks` and `info` are mount points: rename onto or away from them is EBUSY,
    and `git config` writing config.lock then renaming it over config is refused."""
    repository(project)
    config = (project / ".git" / "config").read_bytes()
    marker = short / "r7-lock-ran"
    script = "; ".join([
        f"printf '[core]\\n\\tfsmonitor = \"touch {marker}\"\\n' > .git/config.lock",
        "mv -f .git/config.lock .git/config",
        "mv .git/hooks .git/hooks-old",
        "mkdir -p h && printf '#!/bin/sh\\ntouch /x\\n' > h/pre-commit && chmod +x h/pre-commit",
        "rm -rf .git/hooks; ln -s ../h .git/hooks",
        f"git config core.fsmonitor 'touch {marker}'",
        "git config core.hooksPath h",
        "echo ran",
    ])
    texts, _ = run(server, project, command(script))
    assert "ran" in texts[0], texts[0]
    assert (project / ".git" / "config").read_bytes() == config
    assert (project / ".git" / "hooks").is_dir() and not (project / ".git" / "hooks").is_symlink()
    users_git(project, "status")
    assert not marker.exists()
