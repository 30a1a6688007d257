"""Exit codes that are answers, not failures: `grep` exits with 1 when no line matches, `diff`
and `cmp` when the files differ, `test` when the condition is false. Reported as "Command FAILED",
a small model took a check that found no old word left for a broken edit and rewrote the file,
so the shell tool reports such a status as the answer it is.
"""

from __future__ import annotations

from mzagent_tui.agent.safety.commands import Analysis

ANSWER_CODE = 1
MEANINGS = {
    "grep": "no line matched",
    "egrep": "no line matched",
    "fgrep": "no line matched",
    "zgrep": "no line matched",
    "rg": "no line matched",
    "diff": "the files differ",
    "cmp": "the files differ",
    "test": "the condition is false",
}


def exit_code_answer(analysis: Analysis, exit_code: int | None) -> str:
    """What exit code 1 says when the command's status is that of a program for which 1 is an
    answer ("" otherwise). The status is the last program's only for one command or one
    pipeline: in `grep x f && echo yes` or `a; grep x f` it may come from another program."""
    if exit_code != ANSWER_CODE:
        return ""
    parts = [part for part in analysis.parts if not part.wrapper]
    if not parts or any(not part.piped_into for part in parts[1:]):
        return ""
    last = parts[-1]
    words = last.rule_words or last.words
    return MEANINGS.get(words[0], "") if words else ""
