"""The outside red team on the gate (issue 54): a command that runs without the question it
needed — through an "always allow" rule broader than what the user approved, a deny rule's
effect reached by another program, or a read-only command that shows a secret.

Each test asserts the safe outcome through the gate functions the agent calls (the analysis,
the policy, the rule "always allow" offers); an attack that still gets through is an
`xfail(strict=True)`. The controls show the same rule or mode lets the ordinary case through.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mzagent_tui.agent.safety.approval import Policy, Rules, offered_rule
from mzagent_tui.agent.safety.approval_requests import CommandApproval
from mzagent_tui.agent.safety.commands import analyse


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    folder = (tmp_path / "proj").resolve()
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", "https://me:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x/y.git"], check=True)
    (folder / "a.txt").write_text("hi\n")
    (folder / ".env").write_text("KEY=1\n")
    return folder


def after_always_allow(approved: str, root: Path) -> Rules:
    """The rules once the user answered "always allow" to `approved` with the offered prefix."""
    rules = Rules()
    offered = offered_rule(CommandApproval(command=approved, cwd=str(root)))
    if offered:
        rules.add("allow", offered)
    return rules


def verdict(command: str, root: Path, rules: Rules, mode: str = "ask") -> str:
    return Policy(mode, rules).evaluate(command, root)[0]


# "Always allow" offers no more than was approved ---------------------------------------------


@pytest.mark.parametrize(("approved", "other"), [
    ("uv run pytest -q", "uv run python evil.py"),
    ("poetry run pytest", "poetry run python evil.py"),
    ("npx tsc --noEmit", "npx evil"),
    ("bash build.sh", "bash evil.sh"),
    ("sh ./build.sh", "sh evil.sh"),
    ("node build.js", "node evil.js"),
    ("python3 -u manage.py test", "python3 evil.py"),
    ("bundle exec rspec", "bundle exec ruby evil.rb"),
], ids=["uv-run", "poetry-run", "npx", "bash", "sh", "node", "python-with-an-option", "bundle-exec"])
def test_always_allow_covers_what_was_approved_not_what_the_runner_runs(root: Path, approved: str, other: str) -> None:
    rules = after_always_allow(approved, root)
    assert verdict(approved, root, rules) == "allow"  # control: the approved command itself runs
    assert verdict(other, root, rules) == "ask"


def test_control_always_allow_of_a_subcommand_still_covers_its_options(root: Path) -> None:
    rules = after_always_allow("uv run pytest -q", root)
    assert verdict("uv run pytest -x tests", root, rules) == "allow"


# Deny rules by effect --------------------------------------------------------------------------


def deny(*prefixes: str) -> Rules:
    rules = Rules()
    for prefix in prefixes:
        rules.add("deny", prefix)
    return rules


@pytest.mark.parametrize("command", [
    "env -S 'rm a.txt'", "chrt 5 rm a.txt", "taskset 1 rm a.txt", "prlimit rm a.txt", "watch -n1 rm a.txt",
    "setpriv rm a.txt", "unshare rm a.txt", "busybox rm a.txt", "find . -okdir rm {} ;", "perl -e unlink",
])
def test_a_denied_delete_reached_through_another_program_is_not_allowed_in_yolo(root: Path, command: str) -> None:
    assert verdict(command, root, deny("rm"), mode="yolo") in ("ask", "deny")


def test_a_denied_push_run_by_submodule_foreach_is_denied(root: Path) -> None:
    assert verdict("git submodule foreach 'git push'", root, deny("git push"), mode="yolo") == "deny"


def test_control_yolo_runs_what_no_deny_rule_names(root: Path) -> None:
    assert verdict("touch b.txt", root, deny("rm"), mode="yolo") == "allow"


GITS_DELETES = [
    "git worktree remove --force ../wt", "git worktree remove ../wt", "git submodule deinit -f vendor/lib",
    "git submodule --quiet deinit --all", "git sparse-checkout set src", "git sparse-checkout init", "git sparse-checkout reapply",
    "git stash -u", "git stash --all", "git stash push --include-untracked", "git stash save -a", "git stash --incl",
    "git stash push -qu", "git stash -m wip -a",
]
"""git's commands whose work is to take files out of the work tree, besides `git rm` and `git clean`."""


@pytest.mark.parametrize("command", GITS_DELETES)
def test_gits_other_deleting_subcommands_are_denied_with_rm(root: Path, command: str) -> None:
    assert verdict(command, root, deny("rm"), mode="yolo") == "deny"


@pytest.mark.parametrize("command", [
    "git -C . worktree remove ../wt", "git -c core.pager=cat submodule deinit x", "GIT_DIR=.git GIT_WORK_TREE=. git worktree remove x",
    "git 'worktree' re''move x", '"git" submodule "deinit" x', "/usr/lib/git-core/git-worktree remove x", "env git worktree remove x",
    "command git submodule deinit x", "nice git stash -u", "timeout 5 git sparse-checkout set a", "sh -c 'git worktree remove x'",
    "git status; git worktree remove x", "git submodule foreach 'git worktree remove x'",
], ids=[
    "dash-C", "dash-c", "env-git-dir", "quoted", "double-quoted", "git-core-program", "env", "command", "nice", "timeout", "sh-c",
    "second-part", "submodule-foreach",
])
def test_a_deleting_git_subcommand_in_another_form_is_denied_with_rm(root: Path, command: str) -> None:
    assert verdict(command, root, deny("rm"), mode="yolo") == "deny"


@pytest.mark.parametrize("command", ["flock f git worktree remove x", "xvfb-run git submodule deinit x", "xargs git worktree remove < list"])
def test_a_program_that_may_run_a_deleting_git_subcommand_asks(root: Path, command: str) -> None:
    assert verdict(command, root, deny("rm"), mode="yolo") == "ask"


@pytest.mark.parametrize("command", ["git x", "git wtr ../wt", "git clen -fdx"], ids=["alias", "alias-with-arguments", "autocorrected-typo"])
def test_a_git_alias_asks_under_a_deny_for_rm(root: Path, command: str) -> None:
    """An alias (`wtr = worktree remove`, the user's, kept in the commands' copy of their
    config) or a typo `help.autocorrect` runs as `git clean` cannot be checked against the rule."""
    assert verdict(command, root, deny("rm"), mode="yolo") == "ask"


@pytest.mark.parametrize("rule", ["rmdir", "unlink", "shred"])
def test_every_rule_naming_the_effect_denies_them(root: Path, rule: str) -> None:
    assert verdict("git worktree remove ../wt", root, deny(rule), mode="yolo") == "deny"


def test_a_deleting_git_subcommand_is_denied_in_ask_mode_too(root: Path) -> None:
    assert verdict("git submodule deinit -f vendor/lib", root, deny("rm"), mode="ask") == "deny"


@pytest.mark.parametrize("command", [
    "git worktree list", "git worktree add ../wt2", "git worktree prune", "git worktree move ../wt ../wt3", "git submodule update --init",
    "git submodule status", "git sparse-checkout list", "git sparse-checkout disable", "git stash", "git stash pop", "git stash list --all",
    'git stash push -m "all -u"', "git stash push -- -u", "git stash show -u", "git reset --hard", "git restore .", "git checkout -f main",
    "git status", "flock f git worktree list",
])
def test_control_gits_commands_that_delete_no_files_run_in_yolo_under_a_deny_for_rm(root: Path, command: str) -> None:
    """Switching the work tree to a recorded state (`reset --hard`, `restore`, `checkout -f`)
    overwrites, and is not deleting (docs/approval-and-sandbox.md): deny those by name."""
    assert verdict(command, root, deny("rm"), mode="yolo") == "allow"


def test_control_the_deleting_git_subcommands_run_in_yolo_without_a_deny_rule(root: Path) -> None:
    assert all(verdict(command, root, deny("git push"), mode="yolo") == "allow" for command in GITS_DELETES)


# Read-only commands that would show a secret ------------------------------------------------------


@pytest.mark.parametrize("command", [
    "date -f .env", "git blame .env", "git show HEAD:.env", "cat /proc/thread-self/environ", "cat /proc/self/cwd/.env",
    "ls ~/.ssh", "git remote -v | rev", "git remote get-url origin | rev", "git ls-remote --get-url | rev",
    "grep -r url .git | rev", "rg --hidden url | rev", "grep -r url --include=config . | rev", "cat .git/c?nfig",
    "git diff --no-index .git/config a.txt | rev", "git --git-dir=.evil log", "git --exec-path=.evil log",
    "jq -n --rawfile a .env '$a'", "xxd a.txt out.txt", "find . -fls out", "sort --outp=x a.txt",
])
def test_read_only_forms_that_reach_a_secret_or_write_ask_in_auto_safe(root: Path, command: str) -> None:
    assert verdict(command, root, Rules(), mode="auto-safe") == "ask"


def test_control_auto_safe_runs_a_plain_read(root: Path) -> None:
    assert verdict("cat a.txt | rev", root, Rules(), mode="auto-safe") == "allow"


def test_analysis_reads_quoted_program_names_as_bash_does(root: Path) -> None:
    """`'r''m'` is rm to bash and to the deny rule."""
    assert analyse("'r''m' a.txt", root).parts[0].rule_words[0] == "rm"
    assert verdict("'r''m' a.txt", root, deny("rm"), mode="yolo") == "deny"
