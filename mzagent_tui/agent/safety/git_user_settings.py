"""The user's git settings as commands in the sandbox see them: an allow-list, read by git.

Commands need the user's name and e-mail, line-ending and merge habits and aliases; they do not
need the tokens some setups keep in `~/.gitconfig` (`github.token`, `sendemail.smtpPass`, an
`http.extraHeader`, an inline credential helper, a token in a URL). Filtering known-bad lines
leaked whatever the filter did not name, so the copy bound in front of the original holds only
the settings listed here. The file is read by git itself (hardened, through own_programs), so a
spelling git accepts and a hand parser would not (a key on a section's line, a continuation)
cannot smuggle anything past the list; includes are not followed.
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
from pathlib import Path

from mzagent_tui.agent.safety import own_programs

KEPT = (
    "user.name", "user.email",
    "core.autocrlf", "core.eol", "core.safecrlf", "core.quotepath", "core.filemode", "core.ignorecase",
    "core.precomposeunicode", "core.whitespace", "core.excludesfile", "core.abbrev",
    "init.defaultbranch", "pull.rebase", "pull.ff", "push.default", "push.autosetupremote", "fetch.prune",
    "merge.conflictstyle", "merge.ff", "rebase.autosquash", "rebase.autostash", "rebase.updaterefs",
    "diff.algorithm", "diff.colormoved", "diff.renames", "diff.mnemonicprefix", "status.short", "status.branch",
    "status.showuntrackedfiles", "log.date", "log.decorate", "branch.sort", "tag.sort", "column.ui",
    "help.autocorrect", "rerere.enabled", "commit.verbose", "safe.directory",
    "advice.*", "color.*", "alias.*", "url.*.insteadof", "url.*.pushinsteadof",
)
"""Settings kept, as `section.name` or `section.*.name` (lower case, as `git config --list` gives
them); everything else is dropped."""
_URL_USER = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@\"]*@")
TIMEOUT = 10.0


def kept_settings(path: Path) -> str:
    """The allow-listed settings of the git config file `path`, as config text ("" when git is
    missing or cannot read it: then commands see an empty file, never the original)."""
    try:
        result = own_programs.git("config", "--file", str(path), "--null", "--list", cwd=path.parent, timeout=TIMEOUT, readable=[path])
    except (OSError, subprocess.TimeoutExpired):
        return ""
    if result.returncode != 0:
        return ""
    lines = []
    for entry in result.stdout.decode("utf-8", "replace").split("\0"):
        key, _, value = entry.partition("\n")
        if key and _kept(key, value):
            lines.append(_render(key, value))
    return "".join(lines)


def _kept(key: str, value: str) -> bool:
    if not any(fnmatch.fnmatchcase(key, pattern) for pattern in KEPT):
        return False
    if key.startswith("alias."):
        return not value.lstrip().startswith("!")  # a shell alias may carry a secret inline
    return True


def _render(key: str, value: str) -> str:
    section, _, rest = key.partition(".")
    subsection, _, name = rest.rpartition(".")
    if section == "url":
        subsection = _URL_USER.sub(r"\1", subsection)  # url."https://TOKEN@host/".insteadOf
    header = f'[{section} "{_escaped(subsection)}"]' if subsection else f"[{section}]"
    return f'{header}\n\t{name} = "{_escaped(value)}"\n'


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
