"""A rename the task asks for, and where the old name is still used.

"Rename calc_tax to compute_vat everywhere" was answered by a small model after one `sed` on a
file that does not exist, and "rename common.py to names.py and fix the imports" after the
first of two importing files. Both are found the same way a careful colleague would check: search
the project for the old name before saying it is done.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.filelist import project_files
from mzagent_tui.agent.ground.call_syntax import call_source
from mzagent_tui.agent.ground.textfiles import read_regular

RENAME = re.compile(
    r"\brename\s+(?:[\w-]+\s+){0,3}?"
    r"[`'\"]?(?P<old>[A-Za-z_][\w.-]{2,120})[`'\"]?\s+(?:to|into|as)\s+[`'\"]?(?P<new>[A-Za-z_][\w.-]{1,120})[`'\"]?",
    re.IGNORECASE,
)
""""rename calc_tax to compute_vat", "Rename `common.py` to `names.py`", "rename the config key
timeout to timeout_seconds" (up to three words between the verb and the old name). Only the
order: "I renamed it to x and now it fails" reports a rename, it does not ask for one. Names of
fewer than three characters are not searched for: `x` is in every file."""
DISTINCT = re.compile(r"_|\d|[a-z][A-Z]")
"""A name that is no English word (`calc_tax`, `parseV2`, `md5sum`): replacing it everywhere is the
rename. A plain word (`timeout`) is also a keyword argument or prose; only its places are shown."""
MODULE_SUFFIXES = (".py",)
"""Files whose name is also the name code imports them by."""
MAX_FILES = 2000
MAX_FILE_BYTES = 1_000_000
TWICE = "   <- renamed twice"
"""The mark of a place where the rename ran again on the new name."""
SHOWN = 12
"""Places quoted in a reminder; the rest are counted."""


@dataclass(frozen=True)
class Rename:
    old: str
    """The name the project must no longer use: an identifier, or a file's module name."""
    new: str
    old_file: str = ""
    """For a file rename: the old file, which must be gone."""
    new_file: str = ""
    code_only: bool = False
    """A module's name is looked for in code only: "common" in the README's prose is a word."""


def renames_in(task: str) -> list[Rename]:
    """The renames a task asks for. For a file rename the word searched for is the module name
    (`common` for common.py), which is how other files refer to it; other files are looked for
    by their whole name."""
    found = []
    for match in RENAME.finditer(task):
        old, new = match["old"].rstrip(".,"), match["new"].rstrip(".,")
        if old == new:
            continue
        suffix = Path(old).suffix
        if suffix in MODULE_SUFFIXES and Path(new).suffix == suffix:
            found.append(Rename(Path(old).stem, Path(new).stem, old_file=old, new_file=new, code_only=True))
        elif suffix:
            found.append(Rename(old, new, old_file=old, new_file=new))
        else:
            found.append(Rename(old, new))
    return list(dict.fromkeys(found))


def leftovers(root: Path, rename: Rename) -> list[str]:
    """`path:line: text` for each line of a project file that still uses the old name as a whole
    word (not inside a longer name: `calc_tax_rate` is another name), and the old file if it is
    still there; and the new name made twice over (`timeout_seconds_seconds`, a `sed` that ran again
    on a new name containing the old), marked TWICE."""
    word = _word(rename.old)
    doubled = _word(twice(rename)) if twice(rename) else None
    places = []
    if rename.old_file and (root / rename.old_file).is_file():
        places.append(f"{rename.old_file}: the file is still there")
    for name in project_files(root)[:MAX_FILES]:
        if name == rename.old_file or (rename.code_only and Path(name).suffix not in MODULE_SUFFIXES):
            continue
        text = read_regular(root / name, MAX_FILE_BYTES)
        if text is None or "\0" in text:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if word.search(line):
                places.append(f"{name}:{number}: {line.strip()[:160]}")
            elif doubled is not None and doubled.search(line):
                places.append(f"{name}:{number}: {line.strip()[:160]}{TWICE}")
    return places


def twice(rename: Rename) -> str:
    """What the old name becomes when the rename runs twice: `timeout_seconds_seconds`."""
    return rename.new.replace(rename.old, rename.new, 1) if rename.old in rename.new else ""


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")


def files_of(places: list[str], marked: bool = False) -> list[str]:
    """The files named by `leftovers` lines that are lines of code (not the old file itself):
    those that still use the old name, or with `marked` those where the rename ran twice."""
    return list(dict.fromkeys(
        place.split(":", 1)[0] for place in places if not place.endswith("the file is still there") and place.endswith(TWICE) == marked
    ))


def rename_note(root: Path, rename: Rename, places: list[str]) -> str:
    """What is left, and the commands that finish it: a small model runs a call it is shown more
    reliably than it edits six files by hand. The old file is moved only onto nothing, and removed
    only when the new one holds the same bytes: neither command loses a line."""
    shown = "\n".join(places[:SHOWN])
    more = f"\n(and {len(places) - SHOWN} more)" if len(places) > SHOWN else ""
    how = []
    repeated = files_of(places, marked=True)
    if repeated:
        how.append(f"Undo the second rename with {call_source('run_terminal_command', [_substitute(twice(rename), rename.new, repeated)])}")
    steps = []
    if rename.old_file and any(place.endswith("the file is still there") for place in places):
        old, new = root / rename.old_file, root / rename.new_file
        if not new.exists():
            steps.append(f"mv {shlex.quote(rename.old_file)} {shlex.quote(rename.new_file)}")
        elif _same_bytes(old, new):
            steps.append(f"rm {shlex.quote(rename.old_file)}")
    files = files_of(places)
    if files and not (rename.code_only or DISTINCT.search(rename.old)):
        how.append("Change each place that uses the old name as the renamed name (read each file, then write it)")
    elif files:
        steps.append(_substitute(rename.old, rename.new, files))
    if steps:
        how.append(f"Finish the rename with {call_source('run_terminal_command', [' && '.join(steps)])}")
    elif not how:
        how.append("Finish the rename (read each file, then write it)")
    again = f" (or was renamed twice, to {twice(rename)})" if repeated else ""
    return (
        f"Reminder: the task renames {rename.old_file or rename.old} to {rename.new_file or rename.new}, but the old name is still used{again}:\n"
        f"{shown}{more}\n" + ".\n".join(how) + ".\nThen check that the program still works, and give your final answer."
    )


def _substitute(old: str, new: str, files: list[str]) -> str:
    """The command that replaces a whole-word name in files, keeping each file's permissions."""
    substitution = "s/\\b" + re.escape(old) + "\\b/" + new + "/g"
    return f"perl -pi -e {shlex.quote(substitution)} {' '.join(shlex.quote(name) for name in files)}"


def _same_bytes(one: Path, other: Path) -> bool:
    try:
        return one.is_file() and other.is_file() and one.read_bytes() == other.read_bytes()
    except OSError:
        return False
