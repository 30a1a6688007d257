"""The aids at the write point: before a write lands, they may change what it writes, and once it
has landed the write's result says what they did. The loop calls them around the write tool, which
writes what it is given and reports only that.

- `offered_write`: a write that stops partway through the write_to_file call the last observation
  offered for its file (see `Agent._remember_offers`) sends that call's whole content: a small model
  said it would send the offered call, copied its first function, and stopped, three times.
- `write_repairs`: slips in a Python, JSON or shell string argument are repaired when that alone
  makes the file parse (see write_repairs); the diff the user approves shows the repaired content.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from mzagent_tui.agent.aids.seam import Aids
from mzagent_tui.agent.aids.write_repairs import repair
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.paths import relative, resolve_inside
from mzagent_tui.agent.tools.registry import ToolError, ToolResult


@dataclass(frozen=True)
class Prepared:
    """A write_to_file call as the aids at the write point leave it: the arguments to send and, when
    an aid changed them, which one and what the result is to say of it."""

    args: list[Any]
    aid: str = ""
    said: str = ""
    """Words for the end of the result's first line, the one that says what was written."""

    def told(self, result: ToolResult, aids: Aids) -> ToolResult:
        """The write's result, with what the aid did said once the write landed (a repair of content
        the user then edited is not said: what landed is the user's content)."""
        if not self.aid or result.write is None:
            return result
        if self.aid == "write_repairs" and result.text.startswith("The user edited"):
            return result
        aids.fired(self.aid)
        first, _, rest = result.text.partition("\n")
        return dataclasses.replace(result, text=first + self.said + ("\n" + rest if rest else ""))


def before_write(ctx: ToolContext, aids: Aids, args: list[Any]) -> Prepared:
    """The arguments a write_to_file call sends: the model's, or the content an aid put in place
    of its content. A call the tool will refuse (arguments of the wrong kind, a path outside the
    project) is left as it is."""
    if len(args) != 2 or not all(isinstance(arg, str) for arg in args):
        return Prepared(args)
    file_path, content = args
    try:
        path = resolve_inside(ctx.root, file_path)
    except ToolError:
        return Prepared(args)
    offered = ctx.offered.get(path)
    if offered is not None and _stops_partway(content, offered) and aids.on("offered_write"):
        shown = f"{len(content.rstrip().splitlines())} of {len(offered.rstrip().splitlines())} lines"
        said = f" Your content stopped partway through the call the last note offered ({shown}), so that call's whole content was written."
        return Prepared([file_path, offered], "offered_write", said)
    if aids.on("write_repairs"):
        repaired, how = repair(relative(ctx.root, path), content)
        if how:
            return Prepared([file_path, repaired], "write_repairs", " " + " ".join(how) + " So it parses.")
    return Prepared(args)


def _stops_partway(content: str, offered: str) -> bool:
    """`content` is the first lines of `offered`, cut short at the end of a line: a small model said
    it would send the call a note offered, copied its first function, and stopped, three times."""
    cut = content.rstrip()
    return bool(cut.strip()) and len(cut) < len(offered.rstrip()) and offered.startswith(cut + "\n")
