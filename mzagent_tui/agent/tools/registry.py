"""A registry of tools built from plain callables, and the call path the loop uses."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from mzagent_tui.agent.cancel import Cancelled
from mzagent_tui.agent.ground.call_syntax import call_source
from mzagent_tui.agent.ground.errors import ToolError
from mzagent_tui.agent.ground.words import say
from mzagent_tui.agent.tools.process import ProcessResult

if TYPE_CHECKING:
    from mzagent_tui.agent.safety.commands import Analysis  # tree-sitter: not loaded for the name alone


@dataclass(frozen=True)
class CommandOutcome:
    """What a command did, plainly: the aids that comment on commands read this, not the tool."""

    analysis: Analysis
    """The command as run (the user may have edited it), read once."""
    result: ProcessResult
    output: str
    """stdout and stderr as kept (head and tail), as text."""
    stdout: str
    edited: bool = False
    """The user edited the command before it ran (`analysis` is the command as edited)."""
    tail: str = ""
    """What the report says after the command's output: that the sandbox may have blocked it, the
    files it changed, advice for a program that waits for input."""
    answer: str = ""
    """What its exit code says, when for this program that is an answer, not a failure (`grep` 1: no
    line matched)."""


@dataclass(frozen=True)
class WriteOutcome:
    """What a write of the model did, plainly: the aids that comment on writes read this."""

    path: Path
    rel: str
    before: bytes | None
    """The file's content before the write; None when the write created it."""
    after: bytes

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced; `text` is the observation for the model."""

    text: str
    ok: bool = True
    exit_code: int | None = None
    output_path: str | None = None
    command: CommandOutcome | None = None
    write: WriteOutcome | None = None


@dataclass(frozen=True)
class Tool:
    name: str
    func: Callable[..., Any]
    signature: inspect.Signature
    doc: str
    schema: dict[str, Any] | None = None
    """JSON schema of the parameters, where the tool came with one (MCP); else read from the signature."""
    details: str = ""
    """What each parameter means, shown after the description."""

    @property
    def params(self) -> list[str]:
        return list(self.signature.parameters)

    def takes_structured(self) -> bool:
        """A parameter is a list or a dict, by the schema where the tool has one, else by its annotation."""
        if self.schema is not None:
            properties = self.schema.get("properties")
            kinds = [p.get("type") for p in properties.values() if isinstance(p, dict)] if isinstance(properties, dict) else []
            return any(kind in ("array", "object") for kind in kinds)
        return any(typing.get_origin(p.annotation) in (list, dict) or p.annotation in (list, dict) for p in self.signature.parameters.values())

    def describe(self) -> str:
        """`- name(params): doc`; the return annotation means nothing to the model."""
        shown = self.signature.replace(return_annotation=inspect.Signature.empty)
        details = f" {self.details}" if self.details else ""
        return f"- {self.name}{shown}: {self.doc}{details}"


class ToolRegistry:
    def __init__(self, funcs: Iterable[Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for func in funcs:
            self.add(func)

    def add(self, func: Callable[..., Any]) -> None:
        name = func.__name__
        try:
            signature = inspect.signature(func, eval_str=True)
        except Exception:  # noqa: BLE001 - an annotation that cannot be evaluated stays a string
            signature = inspect.signature(func)
        doc = inspect.cleandoc(func.__doc__ or "").replace("\n", " ") or "(no description)"
        self._tools[name] = Tool(name, func, signature, doc)

    def add_tool(self, tool: Tool) -> None:
        """A tool built elsewhere (an MCP server's), with its own signature and schema."""
        self._tools[tool.name] = tool

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def signatures(self) -> dict[str, list[str]]:
        return {tool.name: tool.params for tool in self._tools.values()}

    def describe(self) -> str:
        return "\n".join(tool.describe() for tool in self._tools.values())

    def structured(self) -> set[str]:
        """The tools that take a list or a dict (update_plan's steps): the reply grammar lets only these write one."""
        return {tool.name for tool in self._tools.values() if tool.takes_structured()}

    def call(self, name: str, args: list[Any]) -> ToolResult:
        """Run a tool; every failure becomes an observation, never an exception (except Cancelled)."""
        tool = self._tools.get(name)
        if tool is None:
            hint = say("call.use_a_command") if "run_terminal_command" in self._tools else ""
            return ToolResult(say("call.no_such_tool", name=name, tools=", ".join(self._tools), hint=hint), ok=False)
        try:
            tool.signature.bind(*args)
        except TypeError:
            takes = tool.signature.replace(return_annotation=inspect.Signature.empty)
            return ToolResult(say("call.arguments", name=name, takes=takes, count=len(args), joined=_joined(name, tool.params, args)), ok=False)
        try:
            result = tool.func(*args)
        except ToolError as exc:
            return ToolResult(say("call.refused", error=exc), ok=False)
        except (Cancelled, KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - a custom tool's bug must not end the run
            return ToolResult(say("call.failed", name=name, kind=type(exc).__name__, error=exc), ok=False)
        return result if isinstance(result, ToolResult) else ToolResult(str(result))


def load_custom_tool(spec: str) -> Callable[..., Any]:
    """Import `module:function` (from the installed packages and PYTHONPATH, never from the
    project or the current folder) or `path/to/file.py:function` (a file the user named);
    raise ValueError with a one-line reason."""
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise ValueError(f"custom tool '{spec}' must be written as module:function or path/to/file.py:function")
    if target.endswith(".py"):
        module = _load_file(Path(target).expanduser(), spec)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise ValueError(
                f"cannot import module '{target}' for custom tool '{spec}': {exc} "
                "(modules are not imported from the current folder: name the file, as path/to/file.py:function)"
            ) from None
    func = getattr(module, attr, None)
    if not callable(func):
        raise ValueError(f"'{attr}' in '{target}' is not a function")
    return func


def _load_file(path: Path, spec: str) -> ModuleType:
    if not path.is_file():
        raise ValueError(f"custom tool '{spec}': {path} is not a file")
    module_spec = importlib.util.spec_from_file_location(f"mzagent_custom_{path.stem}", path)
    if module_spec is None or module_spec.loader is None:
        raise ValueError(f"custom tool '{spec}': cannot load {path}")
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's file may fail in any way
        raise ValueError(f"custom tool '{spec}': {path} failed to load: {type(exc).__name__}: {exc}") from None
    return module


MAX_SHOWN_CALL = 2000
"""A corrected call longer than this is described, not shown."""


def _joined(name: str, params: list[str], args: list[Any]) -> str:
    """For a call whose text was split into pieces past the last parameter (`write_to_file("a.csv",
    "name,score\\n", "Ann,90\\n")`): the call with the pieces joined, which a small model that did
    not follow "takes 2 arguments" could copy. Only pieces that are whole lines are joined: pieces
    cut at quotes the code itself holds (`"COLORS = [", "red", "green"`) lose those quotes when
    joined, and a model copied that broken join (`COLORS = [redgreenblue]`)."""
    last = len(params) - 1
    if last < 0 or len(args) <= len(params) or not all(isinstance(arg, str) for arg in args[last:]):
        return ""
    call = call_source(name, [*args[:last], "".join(args[last:])])
    if not all(piece.endswith("\n") for piece in args[last:-1]) or len(call) > MAX_SHOWN_CALL:
        return say("call.join_pieces", param=params[-1])
    return say("call.join_pieces_as", param=params[-1], call=call)
