"""A small stdio MCP server for the tests: `python tests/mcp_server.py [--marker M] [--crash] [--slow-start S]`.

Tools: add (read-only), echo, write_note (writes a file beside the server's cwd), hang, fail,
pid, die (the server exits mid-call), picture (image content).
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
    options = parser.parse_args()
    print(f"test server starting {options.marker}", file=sys.stderr, flush=True)
    if options.crash:
        sys.exit("crashed on purpose")
    time.sleep(options.slow_start)
    app.run()


if __name__ == "__main__":
    main()
