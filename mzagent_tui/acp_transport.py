"""`mzagent acp`'s stdin/stdout: the SDK's newline-delimited JSON-RPC, plus the answers JSON-RPC
2.0 requires for a line that is not a message. The SDK logs such a line and skips it, so a
client that sent a request it garbled would wait for an answer forever; here it gets `-32700`
(not JSON) or `-32600` (JSON, but not a request, notification or response), with `id: null`
since no id can be read from it.
"""

from __future__ import annotations

import json
from typing import Any

from acp import RequestError
from acp._transport import NdjsonTransport  # the SDK's stdio framing; agent-client-protocol is pinned <0.13
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
from acp.stdio import stdio_streams
from acp.task import MessageSender, TaskSupervisor


class AnsweringTransport(NdjsonTransport):
    """The SDK's framing; a line that is not a message is answered instead of skipped."""

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError:  # not JSON, or not UTF-8
                await self.send(error_reply(RequestError.parse_error({"details": "the line is not JSON"})))
                continue
            if not isinstance(message, dict) or not ("method" in message or "id" in message):
                await self.send(error_reply(RequestError.invalid_request({"details": "a message is a JSON object with a method or an id"})))
                continue
            return message


def error_reply(error: RequestError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": error.to_error_obj()}


async def stdio_transport() -> AnsweringTransport:
    """stdin and stdout as the SDK's `run_agent` would open them, with the answering framing."""
    reader, writer = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    return AnsweringTransport(reader, MessageSender(writer, TaskSupervisor(source="mzagent.acp")))
