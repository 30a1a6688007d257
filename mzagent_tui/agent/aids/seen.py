"""Which of the project's files the model has seen: read, written, or named in a command.

write_to_file replaces a whole file, so it overwrites an existing file only when the model has
seen it (the aid `write.not_read`, at before_write): a small model wrote a test file's content over
code it had never looked at.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path, PurePosixPath
from typing import Any

from mzagent_tui.agent.events import Action, Event, FileChanged
from mzagent_tui.agent.ground.words import say
from mzagent_tui.agent.safety.shell_parse import Script, parse
from mzagent_tui.agent.tools.paths import relative, resolve_inside
from mzagent_tui.agent.tools.registry import ToolError, ToolResult

IN_PLACE_PROGRAMS = {"sed", "gsed", "perl"}


def named_files(command: str, script: Script, root: Path) -> set[Path]:
    """The project's files a command names (`cat plan.txt`, `python3 build_index.py > out.log`): the model
    has seen them, or chose them, so write_to_file may overwrite them afterwards. Not the files of an
    in-place edit (`sed -i 's/a/b/' run.py`): after one that matched nothing, a small model wrote
    run.py from its guess, and the file's import was gone."""
    edited = in_place_words(script)
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # an unclosed quote: the plain words still name files
        words = command.split()
    found = set()
    for word in words:
        if word.startswith("-") or word in edited:
            continue
        try:
            path = (root / word).resolve()
            if path.is_relative_to(root) and path.is_file():
                found.add(path)
        except (OSError, ValueError):  # a word too long for a file name, or holding a NUL byte
            continue
    return found


def seen_in(event: Event, root: Path) -> set[Path]:
    """The files an event of an earlier run shows the model saw (a resumed session keeps them)."""
    if isinstance(event, FileChanged) and not event.deleted:
        return {Path(event.path)}
    if not isinstance(event, Action) or not event.args or not isinstance(event.args[0], str):
        return set()
    if event.tool == "run_terminal_command":
        return named_files(event.args[0], parse(event.args[0]), root)
    if event.tool in ("read_file", "write_to_file", "edit_file"):
        try:
            return {resolve_inside(root, event.args[0])}
        except ToolError:  # the tool refused the path then too: nothing was seen
            return set()
    return set()


def in_place_words(script: Script) -> set[str]:
    """The words of the in-place edits in `script` (their files among them): such a command
    names a file without showing it, so it does not count as the model having seen the file."""
    return {word for words in _in_place_commands(script) for word in words[1:]}


def _in_place_commands(script: Script) -> list[list[str]]:
    """The literal words of each simple command of `script` that edits in place."""
    found = []
    for simple in script.commands:
        words = [word.text for word in simple.words if word.literal]
        if not words or PurePosixPath(words[0]).name not in IN_PLACE_PROGRAMS:
            continue
        for word in words[1:]:
            if word == "--":
                break
            if word.startswith("--in-place") or (word.startswith("-") and not word.startswith("--") and "i" in word[1:].split(".")[0]):
                found.append(words)
                break
    return found


def seen_by(root: Path, tool: str, args: list[Any], result: ToolResult) -> set[Path]:
    """The files a call just showed the model: a file read, a file written (changed or not), the
    files a command named."""
    if result.write is not None:
        return {result.write.path}
    if result.command is not None:
        return named_files(result.command.analysis.command, result.command.analysis.script, root)
    if tool == "read_file" and result.ok and args and isinstance(args[0], str):
        try:
            return {resolve_inside(root, args[0])}
        except ToolError:  # a user skill's file, outside the project
            return set()
    return set()


def unread_overwrite(root: Path, seen: set[Path], tool: str, args: list[Any]) -> str | None:
    """The refusal of a write_to_file that would replace a file the model has not seen (None: let
    it through; the tool itself refuses what is not a file or not in the project)."""
    if tool != "write_to_file" or not args or not isinstance(args[0], str):
        return None
    try:
        path = resolve_inside(root, args[0])
        if path in seen or not path.is_file() or path.stat().st_size == 0:
            return None
    except (ToolError, OSError):
        return None
    rel = relative(root, path)
    return say("call.refused", error=say("write.not_read", rel=rel, quoted=json.dumps(rel)))
