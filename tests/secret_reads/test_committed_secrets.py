"""Git commands that print what a repository holds, attacked with a secrets file that git tracks,
once tracked, holds only in a reflog or a stash, or as a blob named by its id. Each attack asks;
the same commands in a repository that never held a secret run without asking, so the rule
cannot be passed by asking for everything. Real repositories, real git."""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.safety import committed_secrets
from mzagent_tui.agent.safety.approval import ALLOW, Policy, Rules
from mzagent_tui.agent.safety.git_config import Repository
from tests.attack_helpers import git


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print(1)\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    return root


def verdict(command: str, root: Path) -> tuple[str, str]:
    overall, parts = Policy("auto-safe", Rules()).evaluate(command, root)
    return overall, " ".join(p.reason for p in parts)


CLEAN_COMMANDS = ["git diff", "git log -p", "git show", "git show HEAD", "git grep print", "git log -p -- src", "git diff HEAD",
                  "git cat-file -p HEAD"]


@pytest.mark.parametrize("command", CLEAN_COMMANDS)
def test_a_repository_without_secrets_runs_them_without_asking(command: str, repo: Path) -> None:
    (repo / ".env").write_text("KEY=untracked-so-never-printed\n")
    assert verdict(command, repo)[0] == ALLOW


@pytest.mark.parametrize("command", ["git diff", "git diff HEAD", "git diff -p --stat", "git grep KEY", "git grep -e KEY -- .",
                                     "git show HEAD", "git log -p", "git log -U1", "git log --word-diff", "git whatchanged -p",
                                     "git log --patch-with-stat", "git log --binary", "git diff --check", "git diff --stat --check",
                                     "git log --word-diff-regex=.", "git log --unified=0", "git diff --name-only -p", "git log --cc",
                                     "git log --oneline -G KEY=a", "git log --oneline -SKEY", "git log --format=%H -S KEY --pickaxe-regex"])
def test_a_tracked_secrets_file_makes_commands_that_print_contents_ask(command: str, repo: Path) -> None:
    (repo / ".env").write_text("KEY=one\n")
    git(repo, "add", ".env")
    git(repo, "commit", "-qm", "oops")
    (repo / ".env").write_text("KEY=two\n")
    overall, reason = verdict(command, repo)
    assert overall != ALLOW and "tracks .env (secrets)" in reason


@pytest.mark.parametrize("command", ["git diff --stat", "git diff --name-only", "git log --oneline", "git log --stat", "git status",
                                     "git cat-file -t HEAD"])
def test_commands_that_print_only_names_still_run(command: str, repo: Path) -> None:
    (repo / ".env").write_text("KEY=one\n")
    git(repo, "add", ".env")
    git(repo, "commit", "-qm", "oops")
    assert verdict(command, repo)[0] == ALLOW


@pytest.mark.parametrize("command", ["git log -p", "git show HEAD~1", "git log -p -- src", "git log --all -p", "git diff HEAD~2 HEAD"])
def test_a_secrets_file_removed_from_the_tree_is_still_found_in_history(command: str, repo: Path) -> None:
    (repo / "config").mkdir()
    (repo / "config" / "prod.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "add key")
    git(repo, "rm", "-q", "config/prod.pem")
    git(repo, "commit", "-qm", "remove key")
    overall, reason = verdict(command, repo)
    assert overall != ALLOW and "history holds config/prod.pem (secrets)" in reason


def test_a_commit_left_only_in_the_reflog_is_found(repo: Path) -> None:
    (repo / ".env").write_text("KEY=one\n")
    git(repo, "add", ".env")
    git(repo, "commit", "-qm", "oops")
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    assert not (repo / ".env").exists()
    overall, reason = verdict("git log -g -p", repo)
    assert overall != ALLOW and "history holds .env" in reason


def test_a_stashed_untracked_secrets_file_is_found(repo: Path) -> None:
    (repo / ".env").write_text("KEY=one\n")
    git(repo, "stash", "-q", "-u")
    assert not (repo / ".env").exists()
    overall, reason = verdict("git show 'stash@{0}^3'", repo)
    assert overall != ALLOW and ".env" in reason


def test_a_secrets_file_only_staged_is_found(repo: Path) -> None:
    (repo / ".env").write_text("KEY=one\n")
    git(repo, "add", ".env")
    overall, reason = verdict("git diff --cached", repo)
    assert overall != ALLOW and "tracks .env" in reason


@pytest.mark.parametrize("form", ["git show {sha}", "git cat-file -p {sha}", "git cat-file blob {sha}", "git show {short}", "git show leak"])
def test_a_blob_named_by_its_id_or_a_tag_asks(form: str, repo: Path) -> None:
    """A blob that no commit holds any more (a history rewritten, the objects not yet pruned)."""
    (repo.parent / "blob").write_text("KEY=scrubbed\n")
    sha = git(repo, "hash-object", "-w", str(repo.parent / "blob"))
    git(repo, "tag", "leak", sha)
    overall, reason = verdict(form.format(sha=sha, short=sha[:8]), repo)
    assert overall != ALLOW and "by its object id" in reason


def test_a_commit_named_by_its_id_still_runs(repo: Path) -> None:
    assert verdict(f"git show {git(repo, 'rev-parse', 'HEAD')}", repo)[0] == ALLOW


def test_a_new_commit_is_seen_after_an_earlier_verdict(repo: Path) -> None:
    assert verdict("git log -p", repo)[0] == ALLOW
    (repo / "id_ed25519").write_text("key\n")
    git(repo, "add", "id_ed25519")
    git(repo, "commit", "-qm", "oops")
    overall, reason = verdict("git log -p", repo)
    assert overall != ALLOW and "id_ed25519" in reason


def test_a_commit_made_from_the_main_checkout_is_seen_in_a_linked_worktree(repo: Path, tmp_path: Path) -> None:
    """A linked worktree's `.git` is a file naming its own git dir, whose refs live in the main
    repository's common dir: the kept answer must be dropped when those refs change too."""
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(worktree))
    assert (worktree / ".git").is_file()
    assert verdict("git log --all -p", worktree)[0] == ALLOW
    (repo / ".env").write_text("KEY=secret\n")
    git(repo, "add", "-f", ".env")
    git(repo, "commit", "-qm", "oops")
    overall, reason = verdict("git log --all -p", worktree)
    assert overall != ALLOW and ".env" in reason


def test_a_repository_above_the_project_is_the_one_checked(repo: Path) -> None:
    """`git log -p` in a subfolder prints the whole repository's history."""
    (repo / ".netrc").write_text("machine x password y\n")
    git(repo, "add", ".netrc")
    git(repo, "commit", "-qm", "oops")
    overall, reason = verdict("git log -p", repo / "src")
    assert overall != ALLOW and ".netrc" in reason


def test_git_C_names_the_repository_checked(repo: Path, tmp_path: Path) -> None:
    (repo / ".env").write_text("KEY=one\n")
    git(repo, "add", ".env")
    git(repo, "commit", "-qm", "oops")
    (repo / "clean").mkdir()
    git(repo / "clean", "init", "-q")
    assert verdict("git -C clean log -p", repo)[0] == ALLOW
    assert verdict("git -C clean/.. log -p", repo)[0] != ALLOW


def test_submodule_contents_ask(repo: Path) -> None:
    (repo / ".gitmodules").write_text('[submodule "lib"]\n\tpath = lib\n\turl = ../lib\n')
    for command in ("git grep --recurse-submodules KEY", "git diff --submodule=diff"):
        overall, reason = verdict(command, repo)
        assert overall != ALLOW and "submodules" in reason, command


def test_the_scan_never_runs_where_the_config_runs_programs(repo: Path) -> None:
    marker = repo.parent / "ran"
    with (repo / ".git" / "config").open("a") as config:
        config.write(f'[core]\n\tfsmonitor = "touch {marker}"\n[diff "x"]\n\ttextconv = touch {marker}\n')
    (repo / ".gitattributes").write_text("* diff=x\n")
    overall, reason = verdict("git log -p", repo)
    assert overall != ALLOW and "fsmonitor" in reason
    assert not marker.exists()


def test_a_scan_that_takes_too_long_asks(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(committed_secrets, "SCAN_TIMEOUT", 0.0)
    overall, reason = verdict("git log -p", repo)
    assert overall != ALLOW and "could not be checked" in reason


def test_refs_linked_to_a_large_folder_are_not_walked_through(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted `.git/refs -> /` would make every verdict walk the disk to see if refs changed."""
    monkeypatch.setattr(committed_secrets, "SIGNATURE_FILES", 10)
    big = tmp_path / "big"
    big.mkdir()
    for n in range(30):
        (big / str(n)).write_text("x")
    repository = Repository(repo / ".git", repo / ".git", repo)
    assert committed_secrets._signature(repository) is not None
    (repo / ".git" / "logs").rename(tmp_path / "old-logs")
    (repo / ".git" / "logs").symlink_to(big, target_is_directory=True)
    assert committed_secrets._signature(repository) is None


@pytest.mark.parametrize("operand", [":0:.netrc", ":2:.netrc", "HEAD:.netrc", ":.netrc", "main:./.netrc"])
def test_a_secrets_file_named_in_the_index_or_a_tree_asks_even_untracked(operand: str, repo: Path) -> None:
    """The path inside a revision operand is read like any path, whatever the repository holds."""
    (repo / ".netrc").write_text("machine x password y\n")
    overall, reason = verdict(f"git show {operand}", repo)
    assert overall != ALLOW and "may hold secrets" in reason


def test_a_ref_to_a_blob_asks_when_its_raw_content_is_printed(repo: Path) -> None:
    assert verdict("git for-each-ref --format='%(raw)'", repo)[0] == ALLOW
    (repo.parent / "blob").write_text("KEY=scrubbed\n")
    git(repo, "tag", "-a", "-m", "note", "leak", git(repo, "hash-object", "-w", str(repo.parent / "blob")))
    assert verdict("git for-each-ref --format='%(refname)'", repo)[0] == ALLOW
    for form in ("%(raw)", "%(contents)", "%(*raw)", "%(contents:body)"):
        overall, reason = verdict(f"git for-each-ref --format='{form}'", repo)
        assert overall != ALLOW and "refs/tags/leak names a file's content" in reason, form


@pytest.mark.parametrize("form", ["git show {sha}^3", "git log -p {sha}^3", "git diff HEAD {sha}^3", "git log -p HEAD..{sha}",
                                  "git diff HEAD...{short}^3"])
def test_a_dropped_stash_that_no_ref_reaches_is_found_through_its_id(form: str, repo: Path) -> None:
    """`git stash -u` then `git stash drop` leaves the stash commit (its third parent holds the
    untracked `.env`) dangling: `git cat-file --batch-all-objects --batch-check` lists its id."""
    (repo / ".env").write_text("KEY=one\n")
    git(repo, "stash", "-q", "-u")
    sha = git(repo, "rev-parse", "stash@{0}")
    git(repo, "stash", "drop", "-q")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    assert verdict("git log -p", repo)[0] == ALLOW  # nothing a ref reaches holds it
    overall, reason = verdict(form.format(sha=sha, short=sha[:10]), repo)
    assert overall != ALLOW and "which no branch, tag or reflog reaches" in reason


def test_an_operand_over_several_lines_asks(repo: Path) -> None:
    overall, reason = verdict('git show "HEAD\nHEAD"', repo)
    assert overall != ALLOW and "could not be listed" in reason
