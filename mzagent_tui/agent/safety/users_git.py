"""Which commands the user typed (`!command`) get the repository writable: git's own work only.

The sandbox keeps `.git` read-only for every command because a program that can write it can
plant a hook or a `core.fsmonitor` that runs in the user's next git command, outside mzagent.
A `!git commit` must write it; a `!pytest` must not, since it runs the project's code (a
`conftest.py` the model wrote). So a typed command gets `.git` writable only when every part of
it is git itself, by its name, doing one of its own commands: not a wrapper (`env git`), not an
assignment (`GIT_EXEC_PATH=x git`), not an alias or a `git-NAME` program found on PATH (either
may be a shell command), not a `git` that PATH finds in a folder commands can write (a
`.venv/bin/git` an allowed test run left: the user's PATH, as the command runs with it, is
what the analysis judged), and not a form that runs a program its line names (`bisect run`,
`rebase --exec`, `submodule foreach`). Settings given with `-c` are
the user's own words and stay allowed; git's hooks still run in such a command, as they do in
the user's terminal.
"""

from __future__ import annotations

import re

from mzagent_tui.agent.safety.commands import Analysis, Part
from mzagent_tui.agent.safety.safe_git import GLOBAL_DANGEROUS

OWN_COMMANDS = frozenset((
    "add am apply archive bisect blame branch bundle checkout cherry cherry-pick clean clone commit config describe diff "
    "fetch format-patch fsck gc grep init log ls-files ls-remote ls-tree merge mv notes prune pull push range-diff rebase "
    "reflog remote repack replace reset restore revert rm shortlog show show-ref sparse-checkout stash status submodule "
    "switch tag worktree update-index update-ref rev-parse rev-list cat-file hash-object read-tree write-tree commit-tree "
    "symbolic-ref for-each-ref count-objects maintenance"
).split())
"""git's built-in commands that work on the repository (an alias cannot take a built-in's name)."""
RUNS_LINE_PROGRAM = {"bisect": "run", "submodule": "foreach"}
"""A built-in's word after which it runs a program named on the command line."""
UNSAFE_GLOBALS = ("--exec-path",)
"""A global option that makes git run its programs from another folder."""
_BY_NAME = re.compile(r"git(\s|$)")


def is_own_git(analysis: Analysis) -> bool:
    """Whether every part of the command is git doing its own work (see the module's words)."""
    return bool(analysis.parts) and not analysis.problems and all(_own_git(part) for part in analysis.parts)


def _own_git(part: Part) -> bool:
    if any(not _setting(problem) for problem in part.problems) or part.wrapper or not part.words or part.words[0] != "git" or not _BY_NAME.match(part.text):
        return False
    if part.runs_untrusted:
        return False
    if any(word == option or word.startswith(option + "=") for word in part.words for option in UNSAFE_GLOBALS):
        return False
    rule = part.rule_words
    if len(rule) < 2 or rule[1] not in OWN_COMMANDS:
        return False
    if rule[1] in RUNS_LINE_PROGRAM:
        return RUNS_LINE_PROGRAM[rule[1]] not in rule[2:]
    return rule[1] != "rebase" or not any(_rebase_exec(word) for word in rule[2:])


def _setting(problem: str) -> bool:
    """The analyser's finding for a `-c KEY=VALUE` the user typed: theirs to give, not a reason."""
    return problem.startswith("git -c ") and problem.endswith(": " + GLOBAL_DANGEROUS["-c"])


def _rebase_exec(word: str) -> bool:
    """`--exec CMD`, `--exec=CMD`, `-x CMD`, or `-x` in a cluster of short options (`-ix`)."""
    if word.startswith("--"):
        return word == "--exec" or word.startswith("--exec=")
    return word.startswith("-") and "x" in word[1:]
