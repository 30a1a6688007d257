"""A small MCP server for the tests: `python tests/mcp_server.py [--marker M] [--crash] [--slow-start S]`
over stdio, or `--http PORT [--token T]` over streamable HTTP on 127.0.0.1 (with `--token`, a
request without `Authorization: Bearer T` gets 401).

Tools: add (read-only), echo, write_note (writes a file beside the server's cwd), read_text,
try_write and connect (say what the server may do), hang, fail, pid, die (the server exits
mid-call), picture (image content).
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ImageContent, ToolAnnotations

app = MCPServer("test-server")


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def echo(text: str, times: int = 1) -> str:
    """Repeat the text."""
    return " ".join([text] * times)


@app.tool()
def write_note(name: str, text: str) -> str:
    """Write a note file in the working folder."""
    Path(name).write_text(text)
    return f"wrote {name}"


@app.tool()
def read_text(path: str) -> str:
    """Read a file, or say why it cannot be read."""
    try:
        return Path(path).read_text()
    except OSError as exc:
        return f"cannot read: {exc}"


@app.tool()
def try_write(path: str, text: str) -> str:
    """Write a file, or say why it cannot be written."""
    try:
        Path(path).write_text(text)
    except OSError as exc:
        return f"cannot write: {exc}"
    return f"wrote {path}"


@app.tool()
def connect(port: int) -> str:
    """Connect to 127.0.0.1:port, or say why it cannot."""
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError as exc:
        return f"cannot connect: {exc}"
    return "connected"


@app.tool()
def hang(seconds: float) -> str:
    """Sleep for a while."""
    time.sleep(seconds)
    return "woke up"


@app.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


@app.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@app.tool()
def die() -> str:
    """The server exits in the middle of the call."""
    os._exit(3)


@app.tool()
def picture() -> ImageContent:
    """A tiny image."""
    return ImageContent(type="image", data=base64.b64encode(b"\x89PNG" + b"0" * 96).decode(), mime_type="image/png")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--marker", default="")
    parser.add_argument("--crash", action="store_true")
    parser.add_argument("--slow-start", type=float, default=0.0)
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--token", default="")
    options = parser.parse_args()
    print(f"test server starting {options.marker}", file=sys.stderr, flush=True)
    if options.crash:
        sys.exit("crashed on purpose")
    time.sleep(options.slow_start)
    if options.http:
        import uvicorn

        web = app.streamable_http_app()
        uvicorn.run(_require_token(web, options.token) if options.token else web, host="127.0.0.1", port=options.http, log_level="warning")
    else:
        app.run()


def _require_token(inner, token: str):  # noqa: ANN001, ANN202 - ASGI apps
    expected = f"Bearer {token}".encode()

    async def guarded(scope, receive, send) -> None:  # noqa: ANN001
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await inner(scope, receive, send)

    return guarded


if __name__ == "__main__":
    main()
