"""An MCP server's tool as one of ours: a signature and description read from its input schema,
arguments checked against that schema, the same approval gate, and a plain-text observation.

Nothing here imports the MCP SDK: `McpTool` calls through a `Caller` (the hub), so the mapping
is tested with plain data.

A result is scanned for credentials as a command's output is: a server's read-only tool runs
without a question in auto-safe and plan mode, and a filesystem server reads what it is asked
(`~/.aws/credentials`), so a result holding a credential asks before the model sees it where
the call ran without the user's answer, and is masked span by span where they answered.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mzagent_tui.agent.cancel import Cancelled
from mzagent_tui.agent.safety.approval_requests import SecretReadApproval, ToolCallApproval
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.registry import Tool, ToolError, ToolResult

PREFIX = "mcp__"
MAX_RESULT_CHARS = 30_000
_NOT_NAME = re.compile(r"[^A-Za-z0-9_]")
_JSON_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "true/false", "array": "list", "object": "dict"}


@dataclass(frozen=True)
class RemoteTool:
    """A tool as an MCP server lists it."""

    server: str
    name: str
    description: str
    schema: dict[str, Any]
    read_only: bool = False
    """Annotated `readOnlyHint`: runs without asking in auto-safe."""

    @property
    def full_name(self) -> str:
        """`mcp__SERVER__TOOL`, with anything but letters, digits and `_` made `_` so the model can write it as a call."""
        return _NOT_NAME.sub("_", f"{PREFIX}{self.server}__{self.name}")


Caller = Callable[[RemoteTool, dict[str, Any]], ToolResult]
"""Runs one call on the server (timeout and cancel included) and describes its result."""


class McpTool:
    """The callable the registry runs: binds the model's arguments to the schema's names,
    checks them, asks the gate, then calls the server."""

    def __init__(self, remote: RemoteTool, caller: Caller, ctx: ToolContext) -> None:
        self.remote = remote
        self._caller = caller
        self._ctx = ctx
        self.names = _parameter_names(remote.schema)
        """Python-safe parameter name -> the schema's own name, required ones first."""

    def tool(self) -> Tool:
        return Tool(self.remote.full_name, self, self.signature(), self.remote.description.strip().replace("\n", " ") or "(no description)", self.remote.schema, self.details())

    def signature(self) -> inspect.Signature:
        required = set(self.remote.schema.get("required") or ())
        params = [
            inspect.Parameter(safe, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=inspect.Parameter.empty if real in required else None)
            for safe, real in self.names.items()
        ]
        return inspect.Signature(params)

    def details(self) -> str:
        """`Parameters: path (string): the file to read; limit (integer, optional).`"""
        properties = self.remote.schema.get("properties") or {}
        required = set(self.remote.schema.get("required") or ())
        described = []
        for safe, real in self.names.items():
            found = properties.get(real)
            prop = found if isinstance(found, dict) else {}
            json_type = prop.get("type")
            kind = _JSON_TYPES.get(json_type, "") if isinstance(json_type, str) else ""
            label = ", ".join(p for p in (kind, "" if real in required else "optional") if p)
            text = safe + (f" ({label})" if label else "")
            if isinstance(prop.get("description"), str) and prop["description"].strip():
                text += f": {prop['description'].strip()}"
            described.append(text)
        return f"Parameters: {'; '.join(described)}." if described else ""

    def __call__(self, *args: Any) -> ToolResult:
        required = set(self.remote.schema.get("required") or ())
        arguments = {self.names[safe]: value for safe, value in zip(self.names, args) if value is not None or self.names[safe] in required}
        problem = schema_problem(self.remote.schema, arguments)
        if problem:
            raise ToolError("mcp.schema", tool=self.remote.full_name, problem=problem, details=self.details())
        decision = self._ctx.approver.approve(
            ToolCallApproval(
                cwd=str(self._ctx.root), reason=self._ctx.thought, tool=self.remote.full_name, arguments=arguments, read_only=self.remote.read_only,
            )
        )
        if decision.cancelled:
            raise Cancelled()
        if not decision.approved:
            note = f" Their note: {decision.note}" if decision.note else ""
            return ToolResult(f"The user rejected the call to {self.remote.full_name}.{note} Do something else, or ask in the final answer.", ok=False)
        return self._screened(self._caller(self.remote, arguments), unasked=decision.by_policy)

    def _screened(self, result: ToolResult, unasked: bool) -> ToolResult:
        """The result as the model may see it (see the module's words)."""
        from mzagent_tui.agent.safety.credentials import describe, find_credentials, masked  # loads with the first result

        found = find_credentials(result.text)
        if not found:
            return result
        what = describe(found, of=" of the result")
        if unasked:
            answer = self._ctx.approver.approve(SecretReadApproval(
                what=f"show the result of {self.remote.full_name}", cwd=str(self._ctx.root),
                reason=f"this result looks like it holds a credential ({what}): show it to the model?",
            ))
            if answer.cancelled:
                raise Cancelled()
            if not answer.approved:
                return ToolResult(
                    f"The result of {self.remote.full_name} looks like it holds a credential ({what}); the user did not "
                    "allow showing it, so it was withheld. Go on without it, or say in your final answer what you need.",
                    ok=False,
                )
            if not answer.by_policy:
                return result
        return dataclasses.replace(result, text=masked(result.text, found))


def _parameter_names(schema: dict[str, Any]) -> dict[str, str]:
    properties = schema.get("properties") or {}
    if not isinstance(properties, dict):
        return {}
    required = [name for name in properties if name in set(schema.get("required") or ())]
    optional = [name for name in properties if name not in required]
    names: dict[str, str] = {}
    for real in required + optional:
        safe = _NOT_NAME.sub("_", str(real)) or "arg"
        if safe[0].isdigit() or keyword.iskeyword(safe):
            safe = f"{safe}_"
        while safe in names:
            safe += "_"
        names[safe] = str(real)
    return names


def schema_problem(schema: dict[str, Any], arguments: dict[str, Any]) -> str:
    """Why `arguments` do not fit `schema` (the first few problems, in words), or ''."""
    import jsonschema  # comes with the mcp package; only needed once a server is connected

    try:
        validator_class = jsonschema.validators.validator_for(schema)
        validator = validator_class(schema)
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    except jsonschema.SchemaError as exc:
        return f"the server's schema is broken ({exc.message})"
    problems = []
    for error in errors[:3]:
        where = ".".join(str(p) for p in error.path)
        problems.append(f"{where}: {error.message}" if where else error.message)
    return "; ".join(problems)


def describe_result(content: list[Any], structured: Any, is_error: bool) -> tuple[str, bool]:
    """The observation for a call's result: text joined, other content described; `is_error` fails it."""
    parts = []
    for block in content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            data = getattr(block, "data", "") or ""
            size = len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))
            parts.append(f"[{kind}: {getattr(block, 'mime_type', '') or 'unknown type'}, {size} bytes]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource {resource.uri}: {getattr(resource, 'mime_type', None) or 'binary'}]")
        elif kind == "resource_link":
            parts.append(f"[resource link: {block.uri}]")
        else:
            parts.append(f"[{kind or type(block).__name__} content]")
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    text = "\n".join(parts) or "(no output)"
    if len(text) > MAX_RESULT_CHARS:
        cut = len(text) - MAX_RESULT_CHARS
        text = f"{text[:MAX_RESULT_CHARS]}\n[end of the shown result: {cut:,} more characters were cut]"
    return (f"Error from the tool: {text}" if is_error else text), not is_error
