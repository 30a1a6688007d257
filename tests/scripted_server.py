"""A scripted OpenAI-compatible server on 127.0.0.1 for tests and benchmarks.

Each POST to /v1/chat/completions takes the next step of the script. A step is either a
`Reply` (streamed as SSE, or plain JSON for non-streaming requests) or a `Fault` (a status
code, a stall, a cut stream, an HTML page, a reset connection). Requests are recorded so
tests can assert what the agent sent. A callable step computes the reply from the request.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    text: str
    finish_reason: str = "stop"
    reasoning: str = ""
    chunk_size: int = 7
    usage: tuple[int, int] | None = (100, 20)
    send_done: bool = True
    delay: float = 0.0
    """Seconds to wait between chunks."""
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)
    """Native tool calls (id, name, arguments JSON), streamed as `tool_calls` deltas after the
    text: the id and name in the first delta of each, the arguments in `chunk_size` pieces."""


@dataclass
class Fault:
    kind: str
    """status | stall | cut | html | html_as_json | html_as_sse | reset"""
    status: int = 500
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    text: str = "partial reply "
    chunks: int = 3


Step = Reply | Fault | Callable[[dict[str, Any]], "Reply | Fault"]


def write_reply(path: str, content: str) -> Reply:
    """A step that writes `content` to `path` (arguments JSON-quoted, as a model would)."""
    return Reply(f"<thought>write {path}</thought><action>write_to_file({json.dumps(path)}, {json.dumps(content)})</action>")


def read_reply(path: str) -> Reply:
    """A step that reads `path`: a file that exists is read before it may be overwritten."""
    return Reply(f"<thought>read {path}</thought><action>read_file({json.dumps(path)})</action>")


def answer_reply(text: str = "done") -> Reply:
    """A step that ends the run with `text` as the final answer."""
    return Reply(f"<thought>finished</thought><final_answer>{text}</final_answer>")


def last_user(request: dict[str, Any]) -> str:
    """The last message of a request the server received: the observation or reminder the model was sent."""
    return request["messages"][-1]["content"]


class ScriptedServer:
    """Start with `with ScriptedServer() as server:`; `server.base_url` ends in /v1. `port`: a
    fixed port (a preset's, 8080), else any free one."""

    def __init__(self, steps: list[Step] | None = None, default: Step | None = None, port: int = 0) -> None:
        self.steps: list[Step] = list(steps or [])
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.models: list[dict[str, Any]] = [{"id": "scripted", "object": "model"}]
        """What GET /v1/models lists (add `context_length` or `max_model_len` to a model)."""
        self.model_lookups = 0
        self.ollama_models: list[dict[str, Any]] | None = None
        """Set: the server also speaks Ollama's own API (`/api/tags` lists these, `/api/ps` the
        ones named in `loaded`), as an Ollama server does beside its OpenAI-compatible one."""
        self.loaded: list[str] = []
        self.paths: list[str] = []
        """Every GET's path, in order."""
        self.lock = threading.Lock()
        self.release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def script(self, *steps: Step) -> None:
        with self.lock:
            self.steps.extend(steps)

    def next_step(self, request: dict[str, Any]) -> Reply | Fault:
        with self.lock:
            self.requests.append(request)
            step = self.steps.pop(0) if self.steps else self.default
        if step is None:
            return Fault("status", 500, {"error": {"message": "script exhausted"}})
        return step(request) if callable(step) else step

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> bytes:
    payload: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else [],
    }
    if usage is not None:
        payload["usage"] = usage
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _make_handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            with server.lock:
                server.paths.append(self.path)
                if self.path.startswith("/api/"):
                    self._ollama(self.path)
                    return
                server.model_lookups += 1
                body = json.dumps({"object": "list", "data": server.models}).encode()
            self._send(200, body, "application/json")

        def _ollama(self, path: str) -> None:
            if server.ollama_models is None or path not in ("/api/tags", "/api/ps", "/api/version"):
                self._send(404, b"404 page not found", "text/plain")
                return
            if path == "/api/version":
                document: dict[str, Any] = {"version": "0.12.6"}
            elif path == "/api/tags":
                document = {"models": server.ollama_models}
            else:
                document = {"models": [m for m in server.ollama_models if m.get("name") in server.loaded]}
            self._send(200, json.dumps(document).encode(), "application/json")

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            request["_headers"] = {k.lower(): v for k, v in self.headers.items()}
            step = server.next_step(request)
            if isinstance(step, Fault):
                self._fault(step)
            elif request.get("stream"):
                self._stream(step, request)
            else:
                self._plain(step)

        def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def _plain(self, reply: Reply) -> None:
            body = {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": 0,
                "model": "scripted",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.text}, "finish_reason": reply.finish_reason}],
            }
            self._send(200, json.dumps(body).encode(), "application/json")

        def _start_stream(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True

        def _stream(self, reply: Reply, request: dict[str, Any]) -> None:
            self._start_stream()
            try:
                for i in range(0, len(reply.reasoning), reply.chunk_size):
                    self.wfile.write(_chunk({"reasoning_content": reply.reasoning[i: i + reply.chunk_size]}))
                for i in range(0, len(reply.text), reply.chunk_size):
                    if reply.delay:
                        time.sleep(reply.delay)
                    self.wfile.write(_chunk({"content": reply.text[i: i + reply.chunk_size]}))
                    self.wfile.flush()
                for index, (call_id, name, arguments) in enumerate(reply.tool_calls):
                    first = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
                    self.wfile.write(_chunk({"tool_calls": [first]}))
                    for i in range(0, len(arguments), reply.chunk_size):
                        piece = {"index": index, "function": {"arguments": arguments[i: i + reply.chunk_size]}}
                        self.wfile.write(_chunk({"tool_calls": [piece]}))
                self.wfile.write(_chunk({}, finish=reply.finish_reason))
                wants_usage = (request.get("stream_options") or {}).get("include_usage")
                if reply.usage and wants_usage:
                    prompt, completion = reply.usage
                    self.wfile.write(_chunk({}, usage={"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}))
                if reply.send_done:
                    self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _fault(self, fault: Fault) -> None:
            if fault.kind == "status":
                body = fault.body if fault.body is not None else {"error": {"message": f"scripted {fault.status}"}}
                raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self._send(fault.status, raw, "application/json", fault.headers)
            elif fault.kind == "html":
                self._send(200, b"<!doctype html><html><body>Welcome to nginx</body></html>", "text/html")
            elif fault.kind in ("html_as_json", "html_as_sse"):
                kind = "application/json" if fault.kind == "html_as_json" else "text/event-stream"
                self._send(200, b"\n<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>proxy login</body></html>", kind)
            elif fault.kind == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                self.connection.close()
                self.close_connection = True
            elif fault.kind in ("stall", "cut"):
                self._start_stream()
                size = max(1, -(-len(fault.text) // fault.chunks))
                for i in range(0, len(fault.text), size):
                    self.wfile.write(_chunk({"content": fault.text[i: i + size]}))
                self.wfile.flush()
                if fault.kind == "stall":
                    server.release.wait(60)
                self.close_connection = True
            else:
                raise ValueError(fault.kind)

    return Handler
