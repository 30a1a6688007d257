"""mzagent's own git, run on the project outside the sandbox: GIT_* variables in the agent's
environment, a planted project config, a planted `commondir` and folders a repository names must
not make it run or read anything of the model's. (Rounds four and six of the outside attacks.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mzagent_tui.agent import filelist
from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.safety.committed_secrets import committed_secret_concern
from mzagent_tui.agent.safety.git_config import repository_config_concerns
from tests.attack_helpers import command, git, needs_namespaces, needs_wall, run
from tests.conftest import RecordingApprover


def test_more_git_variables_in_the_agents_environment_do_not_reach_our_git(project: Path, outside: Path, short: Path, unwalled: None, monkeypatch: pytest.MonkeyPatch) -> None:
    git(project, "init", "-q", ".")
    (project / "a.txt").write_text("a\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", "a")
    evil_global = short / "global.cfg"
    evil_global.write_text(f"[core]\n\tfsmonitor = touch {outside}/global; false\n")
    other = short / "other"
    other.mkdir()
    git(other, "init", "-q", ".")
    git(other, "config", "core.fsmonitor", f"touch {outside}/gitdir; false")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(evil_global))
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(evil_global))
    monkeypatch.setenv("GIT_CONFIG", str(evil_global))
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_TRACE", str(outside / "trace"))
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(outside / "trace2"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", f"touch {outside}/extdiff")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(short))  # short/git/config
    (short / "git").mkdir()
    (short / "git" / "config").write_text(f"[core]\n\tfsmonitor = touch {outside}/xdg; false\n")
    assert "a.txt" in filelist.project_files(project)
    committed_secret_concern(["git", "log", "-p"], project)
    repository_config_concerns(project)
    assert list(outside.iterdir()) == []


@needs_namespaces
def test_a_planted_project_config_runs_nothing_of_ours_in_a_headless_run(server, project: Path, home: Path, outside: Path, unwalled: None) -> None:
    """Keys the earlier attacks did not plant: pagers, editors, ssh/x509 signature programs with
    signatures shown, alternate refs, an include; the run only proposes read-only git commands
    and the user refuses every one."""
    git(project, "init", "-q", ".")
    (project / ".gitattributes").write_text("* filter=x diff=x\n")
    (project / "a.txt").write_text("a\n")
    git(project, "add", "a.txt", ".gitattributes")
    git(project, "commit", "-qm", "one")
    included = project.parent / "inc.cfg"
    included.write_text(
        f"[core]\n\tpager = touch {outside}/pager\n\teditor = touch {outside}/editor\n\talternateRefsCommand = touch {outside}/altrefs\n"
        f"[pager]\n\tlog = touch {outside}/pager-log\n\tls-files = touch {outside}/pager-ls\n\tstatus = touch {outside}/pager-status\n"
        f"[log]\n\tshowSignature = true\n[gpg \"ssh\"]\n\tprogram = touch {outside}/ssh-program\n[gpg \"x509\"]\n\tprogram = touch {outside}/x509-program\n"
        f"[filter \"x\"]\n\tclean = touch {outside}/clean; cat\n\tprocess = touch {outside}/process\n[diff \"x\"]\n\ttextconv = touch {outside}/textconv; cat\n"
        f"[status]\n\tsubmoduleSummary = true\n[core]\n\tfsmonitor = touch {outside}/fsmonitor; false\n"
    )
    git(project, "config", "include.path", str(included))
    os.utime(project / "a.txt", (1_000_000_000, 1_000_000_000))
    (project / "a.txt").write_text("b\n")
    user = RecordingApprover(ApprovalDecision(False))
    run(server, project, command("git log -p -1"), command("git status"), 'read_file("a.txt")', mode="auto-safe", approver=user)
    assert sorted(p.name for p in outside.iterdir()) == []


# Our own git sent into the app's state by a planted `commondir` ------------------------------


@needs_wall
def test_a_planted_commondir_does_not_open_another_projects_snapshots_to_our_git(server, project: Path, short: Path) -> None:
    """Held: a project's `.git/commondir` naming another project's private snapshots.git makes `git
    rev-parse` answer with it (git checks that folder's objects/ and refs/ with access(), which
    Landlock does not govern), and the history scan asks our git to read the folder it names; git
    dies on the unreadable config every snapshots.git has, and own_programs.git no longer grants
    a private folder a repository names (the test below)."""
    from mzagent_tui.agent.safety import git_config
    from mzagent_tui.agent.safety.committed_secrets import committed_secret_concern
    from tests.attack_helpers import git

    other = short / "other"
    other.mkdir()
    (other / ".env").write_text("OTHER_PROJECT_TOKEN=r6-77ff\n")
    run(server, other, command("echo changed > notes.txt"))  # a session of the other project: its snapshots.git
    snapshots = list(Path(os.environ["XDG_STATE_HOME"]).glob("mzagent/sessions/other-*/snapshots.git"))
    assert len(snapshots) == 1 and (snapshots[0] / "config").is_file()
    git(project, "init", "-q", ".")
    (project / "a.txt").write_text("a\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", "one")
    (project / ".git" / "commondir").write_text(f"{snapshots[0]}\n")
    git_config._found.clear()
    with pytest.raises(git_config.GitUnanswered):
        git_config.find_repository(project)
    concern = committed_secret_concern(["git", "log", "-p"], project)
    assert concern and "could not" in concern and "notes.txt" not in concern and ".env" not in concern, concern


@needs_wall
@pytest.mark.parametrize("where", ["private", "secret", "elsewhere"])
def test_our_git_reads_no_private_or_secret_folder_a_repository_names(short: Path, home: Path, where: str) -> None:
    """Held: the folders a repository's answers name (its git dir, its common dir) are granted to
    our git by name, but never one in the app's private folders or the home's secret entries (a
    planted `commondir` naming another project's snapshots). The view and the secret-entry rules
    held this before own_programs.git dropped such names too; this keeps all of them honest."""
    from mzagent_tui.agent.config import app_folders
    from mzagent_tui.agent.safety import own_programs
    from tests.attack_helpers import git

    parent = {"private": app_folders()[1], "secret": home / ".ssh", "elsewhere": short}[where]
    repository = parent / "r6-named"
    repository.mkdir(parents=True)
    git(repository, "init", "-q", ".")
    (repository / "a.txt").write_text("a\n")
    git(repository, "add", "a.txt")
    git(repository, "commit", "-qm", "r6-subject")
    work = short / "work"
    work.mkdir()
    done = own_programs.git(f"--git-dir={repository / '.git'}", "log", "--format=%s", cwd=work, timeout=30, readable=[repository / ".git"])
    if where == "elsewhere":
        assert done.returncode == 0 and b"r6-subject" in done.stdout, done.stderr
    else:
        assert done.returncode != 0 and b"r6-subject" not in done.stdout
