"""A deny rule names an effect, not a program: attacks on `deny = ["rm", "git push"]` in yolo by
other programs and options with the same effect, and by programs that read code no rule can see.
Each is judged by the policy; a sample is run through the real tool with a user who says no (and,
for the positive control, with no deny rule: bash really deletes). Commands that only look alike
stay allowed, so the gate is not simply asking for everything."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mzagent_tui.agent.safety.approval import ALLOW, ASK, DENY, Policy, PolicyApprover, Rules, StaticApprover
from mzagent_tui.agent.safety.secrets import Redactor, command_env
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.shell import ShellTool
from tests.conftest import Recorder
from tests.gate.test_gate_attacks import attack_project


def rules(*deny: str) -> Rules:
    found = Rules()
    for prefix in deny:
        found.add("deny", prefix)
    return found


def judged(command: str, root: Path, *deny: str, mode: str = "yolo") -> tuple[str, list[str]]:
    overall, parts = Policy(mode, rules(*deny)).evaluate(command, root)
    return overall, [f"{p.verdict}: {p.text} ({p.reason})" for p in parts]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root, home = attack_project(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    return root


DELETES = [
    "unlink f",
    "rmdir d",
    "shred -u f",
    "/usr/bin/shred f",
    "srm f",
    "wipe f",
    "trash-put f",
    "gio remove f",
    "gio trash f",
    "timeout 5 unlink f",
    "sudo unlink f",
    "env -i shred f",
    "bash -c 'unlink f'",
    "find . -delete",
    "find . -name '*.py' -delete",
    "find -L . -type f -delete",
    "git clean -fdx",
    "git -C . clean -f",
    "git --no-pager clean -n",
    "git rm f",
    "/usr/lib/git-core/git-clean -fdx",
    "/usr/lib/git-core/git-rm f",
    "rsync -a --delete src/ dst/",
    "rsync -a --delete-after src/ dst/",
    "rsync -a --del src/ dst/",
    "rsync -a --remove-source-files src/ dst/",
    "tar --remove-files -cf a.tar src",
    "tar --remove -cf a.tar src",
    "tar -cUf a.tar src",
    "tar cUf a.tar src",
    "tar --recursive-unlink -xf a.tar",
    "tar --unlink-first -xf a.tar",
    "zip -m a.zip README.md",
    "zip -rm a.zip src",
    "zip --move a.zip README.md",
    "zip --mov a.zip README.md",
]


@pytest.mark.parametrize("mode", ["yolo", "ask"])
@pytest.mark.parametrize("command", DELETES)
def test_a_deny_for_rm_denies_what_else_deletes_files(command: str, mode: str, project: Path) -> None:
    overall, parts = judged(command, project, "rm", mode=mode)
    assert overall == DENY, parts
    assert "rm" in " ".join(parts) and "deletes files" in " ".join(parts)


@pytest.mark.parametrize("rule", ["rmdir", "unlink", "shred"])
def test_each_deleting_program_names_the_effect(rule: str, project: Path) -> None:
    for command in ("rm -rf src", "find . -delete", "git clean -fdx"):
        overall, parts = judged(command, project, rule)
        assert overall == DENY, (rule, parts)


PUBLISHES = [
    "git send-pack origin main",
    "git -C . send-pack origin main",
    "git http-push https://example.com/x.git main",
    "git subtree push --prefix=src origin main",
    "git lfs push origin main",
    "git svn dcommit",
    "git p4 submit",
    "timeout 9 git send-pack origin main",
    "bash -c 'git send-pack origin main'",
    "/usr/lib/git-core/git-send-pack origin main",
    "git-http-push https://example.com/x.git main",
    "git remote-https origin https://example.com/x.git",
    "git-remote-https origin https://example.com/x.git",
    "git remote-ext origin 'sh -c x'",
]


@pytest.mark.parametrize("command", ["/usr/lib/git-core/git-push origin main", "git-push origin main", "env /usr/lib/git-core/git-push"])
def test_gits_own_programs_are_the_git_commands_they_are(command: str, project: Path) -> None:
    """git's exec-path holds `git-push`, a link to git that pushes: the rule `git push` denies it."""
    overall, parts = judged(command, project, "git push")
    assert overall == DENY and "denied by the rule 'git push'" in " ".join(parts), parts


@pytest.mark.parametrize("command", PUBLISHES)
def test_a_deny_for_git_push_denies_what_else_publishes(command: str, project: Path) -> None:
    overall, parts = judged(command, project, "git push")
    assert overall == DENY, parts
    assert "publishes to a remote" in " ".join(parts)


HIDDEN = [
    ("git p origin main", "git push"),
    ("git pushall", "git push"),
    ("git -C . sync", "git push"),
    ("make --eval 'x: ; r\\m f' x", "rm"),
    ("make -E 'X=r' -E 'x: ; $(X)m f' x", "rm"),
    ("make --ev='x:;true' x", "rm"),
    ("make -j -E 'x:;true' x", "rm"),
    ("vim -es x", "rm"),
    ("vim -Es x", "rm"),
    ("vim -e -s x", "rm"),
    ("vim -es < cmds.vim", "rm"),
    ("printf '!r\\x6d f\\n' | vim -es", "rm"),
    ("ex -s x", "rm"),
    ("ex x < cmds.vim", "rm"),
    ("nvim -es x", "rm"),
    ("zip -T --unzip-command 'r$X f' a.zip README.md", "rm"),
    ("printf 'r\\x6d f' | sh", "rm"),
    ("printf 'r\\x6d f' | bash -s", "rm"),
    ("printf 'r\\x6d f' | bash -o posix", "rm"),
    ("printf 'import os' | python3", "rm"),
    ("printf 'import os' | python3 -W ignore", "rm"),
    ("printf 'x:;r\\x6d f\\n' | make -f -", "rm"),
    ("printf 'x:;r\\x6d f\\n' | make -f /dev/stdin", "rm"),
    ("printf 'git s\\x65nd-pack' | sh", "git push"),
]


@pytest.mark.parametrize(("command", "deny"), HIDDEN)
def test_code_no_rule_can_see_asks_in_yolo_when_deny_rules_exist(command: str, deny: str, project: Path) -> None:
    """make's `--eval`, vim's Ex mode (`!cmd`), a shell or interpreter reading its program from a
    pipe, a git alias: the program may do what the rule denies, and no rule can tell."""
    overall, parts = judged(command, project, deny)
    assert overall != ALLOW, parts
    without, _ = judged(command, project)
    assert without == ALLOW, "yolo without deny rules runs it: the rule, not the command, made it ask"


DENIED_CARRIED = [
    "zip -T --unzip-command 'rm f' a.zip README.md",
    "zip -TT 'rm f' a.zip README.md",
    "zip -TT'rm f' a.zip README.md",
    "zip -T --unzip-c='rm f' a.zip README.md",
    "zip -T --unzip-command 'unlink f' a.zip README.md",
    "tar --to-command='shred f' -xf a.tar",
    "find . -exec unlink {} ';'",
    "chrt 1 unlink f",
    "flock /tmp/l shred f",
    "xargs unlink < list",
]


@pytest.mark.parametrize("command", DENIED_CARRIED)
def test_a_deleting_program_carried_by_another_never_runs_unasked(command: str, project: Path) -> None:
    overall, parts = judged(command, project, "rm")
    assert overall != ALLOW, parts


STILL_ALLOWED = [
    "zip -r a.zip src",
    "zip -b/tmp/m a.zip README.md",
    "tar -cf a.tar src",
    "tar -cfUNDO.tar src",
    "tar -xf a.tar",
    "rsync -a src/ dst/",
    "find . -name '*.py'",
    "git status",
    "git commit -m 'push it'",
    "git log --oneline",
    "/usr/lib/git-core/git-status",
    "make -j4 test",
    "make test",
    "vim README.md",
    "echo rmdir",
    "ls s*",
    "cd s* && ls",
    "cat README.md | grep hello",
    "python3 -m pytest -q",
]


@pytest.mark.parametrize("command", STILL_ALLOWED)
def test_look_alikes_stay_allowed_in_yolo(command: str, project: Path) -> None:
    overall, parts = judged(command, project, "rm", "git push")
    assert overall == ALLOW, parts


@pytest.mark.parametrize("command", ["find . -delete", "git clean -fdx", "unlink f", "rsync -a --delete src/ dst/"])
def test_a_narrower_rule_names_a_use_not_the_effect(command: str, project: Path) -> None:
    """`rm -rf` denies that use of rm; it does not claim every deletion."""
    overall, parts = judged(command, project, "rm -rf")
    assert overall == ALLOW, parts


def test_a_real_git_alias_for_push_asks(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "config", "alias.p", "push"], cwd=project, check=True)
    overall, parts = judged("git p origin main", project, "git push")
    assert overall == ASK and "alias" in " ".join(parts), parts
    assert judged("git status", project, "git push")[0] == ALLOW


def _tool(root: Path, tmp_path: Path, *deny: str) -> ShellTool:
    approver = PolicyApprover(StaticApprover(False, note="the test says no"), Policy("yolo", rules(*deny)))
    session = Session(tmp_path / "session", Redactor([]))
    ctx = ToolContext(root, session, Recorder(), approver, session.redact, env=command_env({"PATH": "/usr/bin:/bin"}), command_timeout=10)
    return ShellTool(ctx)


RUN_AND_CHECK = [
    "find src -delete",
    "unlink src/main.py",
    "find src -exec unlink {} ';'",
    "printf 'r\\x6d -rf src' | sh",
    "zip -qm a.zip src/main.py",
    "tar --remove-files -cf a.tar src",
]


@pytest.mark.parametrize("command", RUN_AND_CHECK)
def test_denied_effects_change_nothing_and_really_delete_without_the_rule(command: str, project: Path, tmp_path: Path) -> None:
    """Under `deny = ["rm"]` in yolo the tool refuses, and src/main.py is still there; the
    positive control runs the same command with no deny rule, and it is gone."""
    if command.startswith("zip") and shutil.which("zip") is None:
        pytest.skip("zip is not installed")
    result = _tool(project, tmp_path / "denied", "rm").run_terminal_command(command)
    assert "rejected" in result.text, result.text
    assert (project / "src" / "main.py").read_text() == "print(1)\n"
    _tool(project, tmp_path / "free").run_terminal_command(command)
    assert not (project / "src" / "main.py").exists()
