"""Native tool calls: the API's `tools` and streamed `tool_calls` instead of the XML text format.

The loop stays the same: a native reply becomes the same `ParsedReply` (thought, one tool call
or a final answer), so the transcript, log, export, undo and approval do not know which protocol
carried the call. What differs is the conversation: the model's call is an assistant message
with `tool_calls`, and its result a `tool` message answering that call's id.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mzagent_tui.agent.model.parsing import ParsedReply, bind_arguments, parse_reply, wrap_observation
from mzagent_tui.agent.tools.registry import Tool, ToolRegistry

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}


@dataclass(frozen=True)
class NativeCall:
    """One tool call as streamed: its id, the tool's name and the arguments as JSON text."""

    id: str
    name: str
    arguments: str


def tool_schemas(tools: ToolRegistry) -> list[dict[str, Any]]:
    """The `tools` field: every tool with its JSON schema (an MCP tool's own, else read from the signature)."""
    return [{"type": "function", "function": {"name": tool.name, "description": tool.doc, "parameters": tool.schema or _schema(tool)}} for tool in tools]


def _schema(tool: Tool) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required = []
    for name, param in tool.signature.parameters.items():
        kind = _json_type(param.annotation)
        properties[name] = {"type": kind} if kind else {}
        if param.default is inspect.Parameter.empty:
            required.append(name)
    return {"type": "object", "properties": properties, "required": required}


def _json_type(annotation: Any) -> str:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _json_type(options[0]) if len(options) == 1 else ""
    return _JSON_TYPES.get(typing.get_origin(annotation) or annotation, "")


def parse_native(text: str, reasoning: str, calls: Sequence[NativeCall], signatures: Mapping[str, Sequence[str]]) -> ParsedReply:
    """Read a native reply: the first tool call (its text is the thought), or, with no call, the
    text as the final answer. A model that still writes the XML format is read as XML."""
    thought = text.strip() or reasoning.strip() or None
    if calls:
        call = calls[0]
        try:
            arguments = json.loads(call.arguments or "{}", strict=False)
        except ValueError as exc:  # also a plain ValueError, without `msg`: a number longer than int() reads
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else exc
            return ParsedReply(thought=thought, error=f"the arguments of {call.name} are not valid JSON ({reason}); send the call again")
        except RecursionError:
            return ParsedReply(thought=thought, error=f"the arguments of {call.name} are nested too deeply to read; send the call again")
        if not isinstance(arguments, dict):
            return ParsedReply(thought=thought, error=f"the arguments of {call.name} must be a JSON object")
        parsed = bind_arguments(call.name, arguments, signatures)
        parsed.thought = thought
        if len(calls) > 1:
            parsed.notes.append("only the first tool call was run; make one call per reply")
        return parsed
    if not text.strip():
        return ParsedReply(thought=thought, error="the reply is empty; call a tool, or write the answer for the user")
    as_xml = parse_reply(text, signatures)
    if as_xml.error is None:
        return as_xml
    return ParsedReply(thought=None, final_answer=text.strip())


def assistant_message(text: str, call: NativeCall | None) -> dict[str, Any]:
    """The model's reply as the conversation keeps it: only the call that is run, so every call has its answer."""
    if call is None:
        return {"role": "assistant", "content": text}
    function = {"name": call.name, "arguments": call.arguments or "{}"}
    return {"role": "assistant", "content": text, "tool_calls": [{"id": call.id, "type": "function", "function": function}]}


def tool_message(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def flattened(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as plain text messages, for requests sent without `tools`: the summary, and
    an XML run continuing a session that made native calls."""
    plain = []
    for message in messages:
        if message["role"] == "tool":
            plain.append({"role": "user", "content": wrap_observation(message["content"])})
        elif message.get("tool_calls"):
            function = message["tool_calls"][0]["function"]
            plain.append({"role": "assistant", "content": f"{message['content']}\n[called {function['name']} with {function['arguments']}]".strip()})
        else:
            plain.append({"role": message["role"], "content": message["content"]})
    return plain
