"""Properties of the gate, checked against bash itself and by composition.

- Where the analyser says a command's words are literal, they are exactly the words bash passes
  to the program (bash prints them, we compare).
- Composing harmless and harmful pieces (separators, redirections, wrappers, assignments) never
  gives `allow` when any piece writes, runs code or leaves the project.
- A sample of attacks, run through the real tool with a user who says no, changes nothing; a
  few that are allowed because bash reads them harmlessly are run and change nothing either.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mzagent_tui.agent.safety.approval import ALLOW, Policy, PolicyApprover, Rules, StaticApprover
from mzagent_tui.agent.safety.commands import analyse
from mzagent_tui.agent.safety.secrets import Redactor, command_env
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.shell import ShellTool
from tests.conftest import Recorder

ROOT = Path("/w/proj")
_ALPHABET = st.sampled_from(list("ab-_.=/:*?#;&|<>(){}[]$`'\"\\ ~!%^,@+") + ["x", "y", "\t"])


def _quote(word: str, style: int) -> str:
    """Quote a word one of four ways bash accepts."""
    if style == 0:
        return shlex.quote(word)
    if style == 1:
        return '"' + "".join("\\" + c if c in '"\\$`' else c for c in word) + '"'
    if style == 2:
        return "".join("\\" + c if not c.isalnum() else c for c in word)
    return "'" + word.replace("'", "'\\''") + "'"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.text(_ALPHABET, min_size=1, max_size=8), st.integers(0, 3)), min_size=1, max_size=4))
def test_literal_words_are_the_words_bash_passes(words: list[tuple[str, int]]) -> None:
    command = "printf '%s\\0' " + " ".join(_quote(word, style) for word, style in words)
    analysis = analyse(command, ROOT)
    if analysis.problems or any(part.problems for part in analysis.parts):
        return  # not understood: it asks, whatever bash would do
    assert len(analysis.parts) == 1
    printed = subprocess.run(["bash", "-c", command], capture_output=True, check=True, cwd="/").stdout
    assert analysis.parts[0].words[2:] == [w.decode() for w in printed.split(b"\0")[:-1]]


def test_quoted_words_are_understood() -> None:
    """The property above is not met by understanding nothing."""
    words = ["a b", "it's", 'say "hi"', "$HOME", "back\\slash", "*.py", "#x", "a;b", "~"]
    for style in (0, 1, 3):
        command = "printf '%s\\0' " + " ".join(_quote(word, style) for word in words)
        analysis = analyse(command, ROOT)
        assert not analysis.problems and not analysis.parts[0].problems, (style, analysis)
        assert analysis.parts[0].words[2:] == words


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(st.sampled_from(list("ab ;&|<>()$`'\"\\#{}*\n=~-")), min_size=1, max_size=24))
def test_any_text_that_the_analyser_calls_plain_ls_runs_nothing_else(text: str) -> None:
    """Random shell text: if every part is understood and is `ls`/`echo` with literal words,
    bash must agree there is no other command (checked with a tracing bash)."""
    command = "echo " + text
    analysis = analyse(command, ROOT)
    if analysis.problems or any(p.problems or p.concerns or p.program not in ("echo", "") for p in analysis.parts):
        return
    trace = subprocess.run(["bash", "-xc", command], capture_output=True, cwd="/tmp", timeout=5).stderr.decode(errors="replace")
    ran = [line for line in trace.splitlines() if line.startswith("+")]
    assert len(ran) <= len(analysis.parts), (command, ran)


HARMLESS_COMMANDS = ["ls", "cat README.md", "git status", "grep -n x README.md", "wc -l README.md", "echo hi", "head -n 3 README.md"]
HARMFUL_COMMANDS = [
    "touch X", "rm -f X", "sort -o X README.md", "python3 -c 'open(\"X\",\"w\")'", "cat /etc/passwd", "cat .env",
    "git branch X", "tee X", "cp README.md /tmp/X", "find . -delete", "xargs touch", "sh evil.sh", "curl x",
]
HARMLESS_REDIRECTS = ["", " 2>/dev/null", " >/dev/null", " 2>&1"]
HARMFUL_REDIRECTS = [" > X", " >> /tmp/X", " 2> X", " &> X", " < .env"]
HARMLESS_PREFIXES = ["", "LANG=C ", "timeout 5 ", "nice ", "env "]
HARMFUL_PREFIXES = ["GIT_DIR=/x ", "LD_PRELOAD=x.so ", "HOME=. ", "BASH_ENV=x ", "env -S ", "PATH=. "]
SEPARATORS = ["; ", " && ", " || ", " | ", "\n", " & "]


@st.composite
def composed(draw: st.DrawFn) -> tuple[str, bool]:
    """A command line and whether any piece of it is harmful."""
    pieces: list[str] = []
    harmful = False
    for _ in range(draw(st.integers(1, 3))):
        bad_command, bad_redirect, bad_prefix = draw(st.booleans()), draw(st.booleans()), draw(st.booleans())
        command = draw(st.sampled_from(HARMFUL_COMMANDS if bad_command else HARMLESS_COMMANDS))
        redirect = draw(st.sampled_from(HARMFUL_REDIRECTS if bad_redirect else HARMLESS_REDIRECTS))
        prefix = draw(st.sampled_from(HARMFUL_PREFIXES if bad_prefix else HARMLESS_PREFIXES))
        harmful = harmful or bad_command or bad_redirect or bad_prefix
        piece = prefix + command + redirect
        if draw(st.booleans()):
            piece = "bash -c " + shlex.quote(piece)
        pieces.append(piece)
    line = pieces[0]
    for piece in pieces[1:]:
        line += draw(st.sampled_from(SEPARATORS)) + piece
    return line, harmful


@settings(max_examples=400, deadline=None)
@given(composed())
def test_composed_commands_are_never_allowed_when_a_piece_is_harmful(case: tuple[str, bool]) -> None:
    command, harmful = case
    rules = Rules()
    for prefix in ("ls", "cat", "git status", "echo", "grep", "wc", "head"):
        rules.add("allow", prefix)
    for mode, policy in (("auto-safe", Policy("auto-safe")), ("ask", Policy("ask", rules))):
        overall, parts = policy.evaluate(command, ROOT)
        if harmful:
            assert overall != ALLOW, (mode, command, [(p.text, p.verdict, p.reason) for p in parts])


def test_composition_of_harmless_pieces_is_allowed() -> None:
    """The property above is not met by asking for everything."""
    command = "LANG=C cat README.md 2>/dev/null | grep -n x && bash -c 'git status' ; timeout 5 wc -l README.md"
    assert Policy("auto-safe").evaluate(command, ROOT)[0] == ALLOW


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "README.md").write_text("hello\n")
    (root / ".env").write_text("KEY=secret\n")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return root.resolve()


def _tool(root: Path, tmp_path: Path, mode: str) -> ShellTool:
    rules = Rules()
    for prefix in ("ls", "pytest", "git status", "echo"):
        rules.add("allow", prefix)
    approver = PolicyApprover(StaticApprover(False, note="the test says no"), Policy(mode, rules))
    session = Session(tmp_path / "session", Redactor([]))
    ctx = ToolContext(root, session, Recorder(), approver, session.redact, env=command_env({"PATH": "/usr/bin:/bin"}), command_timeout=10)
    return ShellTool(ctx)


RUN_AND_CHECK = [
    ("ls >'/dev/null /'; touch X \"' #\"", "auto-safe"),
    ("bash -c ls > X", "ask"),
    ("find . $'-exec' touch X \\;", "auto-safe"),
    ("find . -exec$UNSET touch X \\;", "auto-safe"),
    ("find . {-exec,touch,X,\\;}", "auto-safe"),
    ("sort -o X README.md", "auto-safe"),
    ("uniq README.md X", "auto-safe"),
    ("xxd README.md X", "auto-safe"),
    ("env -S 'touch X'", "auto-safe"),
    ("time -o X ls", "auto-safe"),
    ("git branch X", "auto-safe"),
    ("echo hi | tee X", "ask"),
    ("pytest --basetemp=X/../../X", "ask"),
    ("eval touch X", "auto-safe"),
    ("ls; touch X", "ask"),
    ("l\\\ns; touch X", "ask"),
    ("sed -n '1e touch X' README.md", "auto-safe"),
    ("sed 's/h/x/w X' README.md", "auto-safe"),
    ("awk 'BEGIN{system(\"touch X\")}'", "auto-safe"),
    ("timeout 5 sh -c 'touch X'", "auto-safe"),
    ("git -c core.pager='touch X' log", "auto-safe"),
]


@pytest.mark.parametrize(("command", "mode"), RUN_AND_CHECK)
def test_rejected_attacks_change_nothing(command: str, mode: str, scratch: Path, tmp_path: Path) -> None:
    result = _tool(scratch, tmp_path, mode).run_terminal_command(command)
    assert "rejected" in result.text
    assert sorted(p.name for p in scratch.iterdir()) == [".env", "README.md"]
    assert not (scratch.parent / "X").exists()


@pytest.mark.parametrize("command", ["ls #; touch X", "ls \\;touch X", "echo \"a ; touch X\"", "echo 'x' \"' #\" ; echo done"])
def test_allowed_lookalikes_run_and_bash_reads_them_as_we_do(command: str, scratch: Path, tmp_path: Path) -> None:
    result = _tool(scratch, tmp_path, "auto-safe").run_terminal_command(command)
    assert "rejected" not in result.text
    assert not (scratch / "X").exists()


@pytest.mark.parametrize(
    "command",
    [
        "echo \n\\;",  # tree-sitter put the line break inside a word; bash runs `\;` as a second command
        "printf x \"a(\"\\`#",  # two adjacent nodes that bash reads as one word
        "echo ~\"=\t\"#b",  # a quoted tilde prefix: bash does not expand it
        "echo ~'x'/y",
    ],
)
def test_disagreements_found_by_fuzzing_fail_closed(command: str) -> None:
    analysis = analyse(command, ROOT)
    assert analysis.problems or any(part.problems for part in analysis.parts)
