"""The MCP servers of one agent: started together on an event-loop thread of their own, called
from the agent's worker thread, stopped with it.

A server given by `url` is already running and is reached over streamable HTTP. Any other runs
as `python -c GUARD` → `bash` → the server, in a session of its own. The guard
asks the kernel for SIGUSR1 when the thread that started it dies (PR_SET_PDEATHSIG, also on
kill -9 of the agent), and bash's trap then kills the server's whole process group, so no server
outlives the app. Its stderr goes to `mcp-NAME.log` in the session folder, never to our stdout.

A server that runs what the model can write (program.py) is confined by the guard itself: the
SDK starts the process and takes no preexec function, so the guard applies the sandbox the
session wrote down for it (`Sandbox.save_confinement`: the commands' sandbox with the project
read-only and no network) before it execs bash. Read-only, because a server writes whenever it
likes, not only during a call, and the check after each command would never see its writes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from mzagent_tui.agent.cancel import Cancelled, CancelToken
from mzagent_tui.agent.mcp.config import McpServerConfig
from mzagent_tui.agent.mcp.program import ServerProgram, not_started, server_confinement, server_program
from mzagent_tui.agent.mcp.tools import RemoteTool, describe_result
from mzagent_tui.agent.safety.sandbox import Sandbox
from mzagent_tui.agent.tools.process import shell_path
from mzagent_tui.agent.tools.registry import ToolResult

INSTALL_HINT = "pip install 'mzagent-tui[mcp]'"
STOP_WAIT = 5.0
SDK_TIMEOUT_MARGIN = 5.0
_POLL = 0.1
GUARD = """import ctypes, os, signal, sys
if sys.argv[2]:
    sys.path.insert(0, sys.argv[3])
    from mzagent_tui.agent.safety.sandbox import confine_from_file
    confine_from_file(sys.argv[2])
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGUSR1)
if os.getppid() != int(sys.argv[1]):
    os._exit(1)
os.execv(sys.argv[4], [sys.argv[4], "-c", "trap 'trap - USR1; kill -KILL 0' USR1; \\"$@\\" <&0 & wait $!", "mcp-server", *sys.argv[5:]])
"""
"""Confines itself when given a confinement file (importing the sandbox from the folder the
running mzagent was imported from), sets the parent-death signal, then execs bash (its absolute
path, from the trusted PATH), which runs the server as a job (stdin kept) and kills the group
when that signal comes."""
PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])
"""The folder holding the `mzagent_tui` package running now: a confining guard imports it from there."""


class McpServerRefused(Exception):
    """A server that is not started, and why (its program is in the project)."""


def mcp_available() -> bool:
    try:
        import mcp  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class _Server:
    config: McpServerConfig
    stop: asyncio.Event
    client: Any = None
    tools: list[RemoteTool] = field(default_factory=list)
    failure: str = ""
    """Why it is not running (empty while it is)."""
    task: asyncio.Task[None] | None = None
    http_error: str = ""
    """The last HTTP error status of a server reached by `url` (the SDK's own message omits it)."""


@dataclass(frozen=True)
class _Launch:
    """How a server we start is started: its program, and the confinement file its guard applies
    ("" when it runs as the user)."""

    found: ServerProgram
    confinement: str = ""
    env: dict[str, str] = field(default_factory=dict)


class McpHub:
    def __init__(self, servers: list[McpServerConfig], log_folder: Path, sandbox: Sandbox | None = None) -> None:
        """Start every server at once, without waiting; `wait_started` collects them. `sandbox`:
        the session's, for servers that must run confined (None: no sandbox, such a server is
        not started)."""
        self._log_folder = log_folder
        self._launches = {config.name: _launch(config, sandbox) for config in servers if not config.url}
        self._logs: list[IO[str]] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mzagent-mcp", daemon=True)
        self._thread.start()
        self._servers: dict[str, _Server] = {}
        self._closed = False
        self._started = asyncio.run_coroutine_threadsafe(self._start_all(servers), self._loop)

    def log_path(self, name: str) -> Path:
        return self._log_folder / f"mcp-{name}.log"

    def wait_started(self) -> tuple[list[RemoteTool], list[str]]:
        """The tools of the servers that started, and one line per server that did not."""
        self._started.result()
        tools = [tool for server in self._servers.values() for tool in server.tools]
        failures = [f"MCP server '{s.config.name}' {s.failure} ({self._where(s.config)})" for s in self._servers.values() if s.failure]
        return tools, failures

    async def _start_all(self, configs: list[McpServerConfig]) -> None:
        await asyncio.gather(*(self._start(config) for config in configs))

    async def _start(self, config: McpServerConfig) -> None:
        server = _Server(config, asyncio.Event())
        self._servers[config.name] = server
        ready: asyncio.Future[None] = self._loop.create_future()
        server.task = asyncio.create_task(self._serve(server, ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), config.startup_timeout)
        except TimeoutError:
            server.failure = f"did not start within {config.startup_timeout:g} s"
            server.task.cancel()
        except McpServerRefused as exc:
            server.failure = str(exc)
        except Exception as exc:  # noqa: BLE001 - any failure of a user's server is one notice
            server.failure = f"failed to start: {server.http_error + ', ' if server.http_error else ''}{_reason(exc)}"

    def _where(self, config: McpServerConfig) -> str:
        """Where to look when a server fails: its address, or the log of one we started."""
        return f"at {config.url}" if config.url else f"its log: {self.log_path(config.name)}"

    async def _transport(self, server: _Server, stack: contextlib.AsyncExitStack) -> Any:
        """Streamable HTTP to a running server (its HTTP client closed with `stack`), or stdio
        to one we start under the guard.

        A started server works in the user's home unless its config names a `cwd`: in the project
        folder, `python -m SERVER` would import the project's own SERVER.py first and `npx -y
        PACKAGE` would run the project's node_modules copy, unconfined, as the agent starts."""
        config = server.config
        if config.url:
            from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

            async def note_error(response: Any) -> None:
                if response.status_code >= 400:
                    server.http_error = f"HTTP {response.status_code} {response.reason_phrase}".strip()

            http = await stack.enter_async_context(create_mcp_http_client(headers=config.headers))
            http.event_hooks["response"].append(note_error)
            return streamable_http_client(config.url, http_client=http)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        launch = self._launches[config.name]
        if launch.found.refused:
            raise McpServerRefused(launch.found.refused)
        log = self.log_path(config.name).open("a", encoding="utf-8")
        self._logs.append(log)
        site = [] if launch.confinement else ["-S"]  # a confining guard imports our sandbox (and what it imports)
        params = StdioServerParameters(
            command=sys.executable,
            args=["-I", *site, "-c", GUARD, str(os.getpid()), launch.confinement, PACKAGE_ROOT, shell_path(), launch.found.program, *config.args],
            env=launch.env,
            cwd=config.cwd or str(Path.home()),
        )
        return stdio_client(params, errlog=log)

    async def _serve(self, server: _Server, ready: asyncio.Future[None]) -> None:
        from mcp import Client

        config = server.config
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await stack.enter_async_context(Client(await self._transport(server, stack), read_timeout_seconds=config.startup_timeout))
                server.tools = await self._list_tools(client, config)
                server.client = client
                ready.set_result(None)
                await server.stop.wait()
        except BaseException as exc:
            if not ready.done() and isinstance(exc, Exception):
                ready.set_exception(exc)
            elif not ready.done():
                ready.cancel()
            elif not server.failure:
                server.failure = f"stopped: {_reason(exc)}" if isinstance(exc, Exception) else "stopped"
            if not isinstance(exc, Exception):
                raise
        finally:
            server.client = None

    @staticmethod
    async def _list_tools(client: Any, config: McpServerConfig) -> list[RemoteTool]:
        tools: list[RemoteTool] = []
        cursor = None
        while True:
            listing = await client.list_tools(cursor=cursor)
            for tool in listing.tools:
                if config.enabled_tools is not None and tool.name not in config.enabled_tools:
                    continue
                annotations = tool.annotations
                read_only = bool(annotations is not None and annotations.read_only_hint)
                schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
                tools.append(RemoteTool(config.name, tool.name, tool.description or "", schema, read_only))
            cursor = listing.next_cursor
            if not cursor:
                return tools

    def call(self, remote: RemoteTool, arguments: dict[str, Any], cancel: CancelToken) -> ToolResult:
        """Run one call, cancelled at the server's tool timeout or the user's cancel."""
        server = self._servers.get(remote.server)
        if server is None or server.client is None:
            reason = server.failure if server is not None and server.failure else "is not running"
            return ToolResult(f"Error: the MCP server '{remote.server}' {reason}; its tools cannot be used now.", ok=False)
        timeout = server.config.tool_timeout
        # The SDK's own timeout is later than ours, so the message says which setting to raise.
        call = server.client.call_tool(remote.name, arguments, read_timeout_seconds=timeout + SDK_TIMEOUT_MARGIN)
        future = asyncio.run_coroutine_threadsafe(call, self._loop)
        deadline = time.monotonic() + timeout
        while True:
            try:
                result = future.result(timeout=_POLL)
                break
            except concurrent.futures.TimeoutError:
                if cancel.cancelled:
                    future.cancel()
                    raise Cancelled() from None
                if time.monotonic() > deadline:
                    future.cancel()
                    return ToolResult(f"Error: {remote.full_name} did not answer within {timeout:g} s (tool_timeout_sec); the call was cancelled.", ok=False)
            except concurrent.futures.CancelledError:
                return ToolResult(f"Error: the call to {remote.full_name} was cancelled.", ok=False)
            except Exception as exc:  # noqa: BLE001 - a broken server is an observation, not a crash
                reason = _reason(exc)
                if "Connection closed" in reason:
                    server.failure = "stopped during a call"
                    server.client = None
                    return ToolResult(f"Error: the MCP server '{remote.server}' stopped during the call to {remote.full_name} ({self._where(server.config)}); its tools cannot be used now.", ok=False)
                return ToolResult(f"Error: the call to {remote.full_name} failed: {reason}.", ok=False)
        text, ok = describe_result(result.content, result.structured_content, bool(result.is_error))
        return ToolResult(text, ok=ok)

    def close(self) -> None:
        """Stop every server (stdin closed, then the SDK's terminate and kill) and the loop."""
        if self._closed:
            return
        self._closed = True
        stopping = asyncio.run_coroutine_threadsafe(self._stop_all(), self._loop)
        try:
            stopping.result(STOP_WAIT + 3)
        except Exception:  # noqa: BLE001 - closing must not fail; the guard kills what is left with the thread
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(STOP_WAIT)
        for log in self._logs:
            log.close()

    async def _stop_all(self) -> None:
        self._started.cancel()
        for server in self._servers.values():
            server.stop.set()
        tasks = [s.task for s in self._servers.values() if s.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=STOP_WAIT)


def _launch(config: McpServerConfig, sandbox: Sandbox | None) -> _Launch:
    """Found and, for a confined server, its confinement written down, on the caller's thread
    (the sandbox is the session's, not the hub loop's)."""
    found = server_program(config)
    env = {**config.env, "PATH": found.path}
    if found.refused or not found.confined:
        return _Launch(found, env=env)
    confinement = server_confinement(sandbox)
    saved = sandbox.save_confinement(confinement, f"mcp-{config.name}") if sandbox is not None else None
    if sandbox is None or saved is None:
        return _Launch(ServerProgram(refused=not_started(found.confined, confinement.mode)))
    return _Launch(found, str(saved), sandbox.environment(env))


def _reason(exc: BaseException) -> str:
    """The innermost message of an exception group (anyio wraps a server's failure in one)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
