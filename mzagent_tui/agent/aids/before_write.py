"""What a write's content gets before it is written (aids at `before_write`).

`write.recipe_tabs`: make runs a rule's recipe only from lines that start with a tab; a line
indented with spaces stops it with "missing separator". A model reads a file as text in which a
tab and spaces look alike: asked to fix that error, the bundled model wrote the Makefile back with
the same spaces three times, each write "unchanged". Here the recipe lines of a Makefile that
start with spaces get the tab make needs, and the model is told which lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from mzagent_tui.agent.ground.words import say

MAKEFILE_NAMES = frozenset({"makefile", "gnumakefile"})
RULE = re.compile(r"^[^\s#=:][^#=]*?::?(?![=:])")
"""A rule's first line: targets, then `:` or `::` that is not an assignment's `:=` / `::=`."""
DIRECTIVE = re.compile(r"^(?:-?include|sinclude|ifn?eq|ifn?def|else|endif|export|unexport|override|vpath|undefine)\b")
"""Lines that neither start nor end a rule's recipe (a conditional may stand inside one)."""
ASSIGNMENT = re.compile(r"^[\w.$(){}-]+\s*(?:=|:=|::=|\?=|\+=|!=)")
"""A variable set in a line that may be indented with spaces (`    QUIET =` inside an `ifeq`):
make reads it as an assignment, not as a recipe line."""


@dataclass(frozen=True)
class Retabbed:
    content: str
    lines: tuple[int, ...]
    """The 1-based lines that now start with a tab."""


def is_makefile(path: str) -> bool:
    name = PurePosixPath(path.replace("\\", "/")).name
    return name.lower() in MAKEFILE_NAMES or name.endswith(".mk")


def recipe_tabs(content: str) -> Retabbed:
    """The content with each recipe line that starts with spaces starting with a tab instead.
    Untouched: a file that sets `.RECIPEPREFIX` (its recipes start with another character), the
    lines of a `define` block, the continuation of a line ending in a backslash, an indented
    assignment or directive, and any line not below a rule's first line."""
    if ".RECIPEPREFIX" in content:
        return Retabbed(content, ())
    lines = content.split("\n")
    changed: list[int] = []
    in_rule = in_define = continued = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        if continued:
            continued = line.endswith("\\")
            continue
        continued = line.endswith("\\")
        if in_define:
            in_define = not stripped.startswith("endef")
            continue
        if not stripped or line.startswith("\t") or (stripped.startswith("#") and not line[0].isspace()):
            continue
        if line[0] == " ":
            if in_rule and not ASSIGNMENT.match(stripped) and not DIRECTIVE.match(stripped):
                lines[index] = "\t" + line.lstrip(" ")
                changed.append(index + 1)
            continue
        if stripped.startswith("define") and not RULE.match(line):
            in_define = True
        elif not DIRECTIVE.match(stripped):
            in_rule = RULE.match(line) is not None
    return Retabbed("\n".join(lines), tuple(changed))


def before_write(tool: str, args: list[Any], on: bool) -> tuple[list[Any], str]:
    """The call's arguments as they will be written, and the note for the model ("" when none):
    `write_to_file`'s content or `edit_file`'s new text, for a Makefile, with `on` (the aid's
    switch)."""
    if not on or tool not in ("write_to_file", "edit_file") or not args or not isinstance(args[0], str) or not is_makefile(args[0]):
        return args, ""
    at = 1 if tool == "write_to_file" else 2
    if len(args) <= at or not isinstance(args[at], str):
        return args, ""
    fixed = recipe_tabs(args[at])
    if not fixed.lines:
        return args, ""
    shown = ", ".join(str(number) for number in fixed.lines[:10]) + (f" and {len(fixed.lines) - 10} more" if len(fixed.lines) > 10 else "")
    return [*args[:at], fixed.content, *args[at + 1 :]], say("write.recipe_tabs", rel=args[0], lines=shown)
