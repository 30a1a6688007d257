"""MCP servers as tools: config, schema mapping, the gate, and a real stdio server (tests/mcp_server.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import psutil
import pytest

from mzagent_tui.agent.assembly import assemble
from mzagent_tui.agent.cancel import Cancelled, CancelToken
from mzagent_tui.agent.config import ConfigError, user_config_path
from mzagent_tui.agent.events import ApprovalAsked, Notice, Observation, Stopped, StopReason
from mzagent_tui.agent.mcp.config import McpServerConfig, load_mcp_servers
from mzagent_tui.agent.mcp.hub import McpHub
from mzagent_tui.agent.mcp.tools import McpTool, RemoteTool
from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy, PolicyApprover, Rules
from mzagent_tui.agent.safety.approval_requests import ToolCallApproval
from mzagent_tui.agent.tools.registry import ToolRegistry, ToolResult
from tests.conftest import Recorder, RecordingApprover, config_for
from tests.scripted_server import Reply

SERVER = str(Path(__file__).with_name("mcp_server.py"))
SCHEMA = {
    "type": "object",
    "properties": {
        "limit": {"type": "integer", "description": "at most this many"},
        "file-path": {"type": "string", "description": "the file"},
        "class": {"type": "string"},
    },
    "required": ["file-path"],
}


def test_server(name: str = "t", *extra: str, **options: object) -> McpServerConfig:
    """The test server; it imports the MCP SDK, which took 12.7 s on a loaded machine, so it gets
    60 s to start unless a test says otherwise (the wait only bounds a failure)."""
    options.setdefault("startup_timeout", 60.0)
    return McpServerConfig(name, sys.executable, (SERVER, *extra), **options)  # type: ignore[arg-type]


test_server.__test__ = False  # a helper, not a test


def write_config(text: str) -> Path:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# Config ------------------------------------------------------------------------------------


def test_servers_come_from_the_user_config_with_codex_keys() -> None:
    write_config("""
        [mcp_servers.files]
        command = "npx"
        args = ["-y", "files-server"]
        env = { ROOT = "/tmp" }
        enabled_tools = ["read"]
        startup_timeout_sec = 5
        tool_timeout_sec = 30.5

        [mcp_servers.off]
        command = "x"
        enabled = false
    """)
    [server] = load_mcp_servers()
    assert server == McpServerConfig("files", "npx", ("-y", "files-server"), {"ROOT": "/tmp"}, "", ("read",), 5.0, 30.5)


@pytest.mark.parametrize(
    ("table", "fragment"),
    [
        ('[mcp_servers.a]\nargs = ["x"]', "needs `command`"),
        ('[mcp_servers.a]\ncommand = "x"\nargs = "y"', "`args` must be a list"),
        ('[mcp_servers.a]\ncommand = "x"\ntool_timeout_sec = -1', "positive number"),
        ('[mcp_servers.a]\ncommand = "x"\nstartup_timeout_sec = true', "positive number"),
        ('[mcp_servers.a]\ncommand = "x"\nshell = true', "unknown keys: shell"),
        ('[mcp_servers."a b"]\ncommand = "x"', "only letters"),
        ('mcp_servers = 3', "must be tables"),
        ('[mcp_servers.a]\nurl = "file:///etc/passwd"', "http:// or https://"),
        ('[mcp_servers.a]\nurl = "http://h/mcp"\ncommand = "x"', "do not apply"),
        ('[mcp_servers.a]\ncommand = "x"\nbearer_token_env_var = "T"', "only go with `url`"),
        ('[mcp_servers.a]\nurl = "http://h/mcp"\nbearer_token_env_var = "MZAGENT_TEST_UNSET_TOKEN"', "is not set"),
        ('[mcp_servers.a]\nurl = "http://h/mcp"\nhttp_headers = { A = 1 }', "table of strings"),
    ],
)
def test_bad_server_tables_are_clear_errors(table: str, fragment: str) -> None:
    write_config(table)
    with pytest.raises(ConfigError, match=fragment):
        load_mcp_servers()


def test_a_project_cannot_start_servers(server, project: Path) -> None:
    """Attack: the config conventions of other agents, and our own config file, placed in the
    project (and MZAGENT_ variables in its .env) start nothing."""
    marker = f"planted-{uuid.uuid4().hex}"
    planted = f'[mcp_servers.evil]\ncommand = "{sys.executable}"\nargs = ["{SERVER}", "--marker", "{marker}"]\n'
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text(planted)
    (project / "config.toml").write_text(planted)
    (project / ".mcp.json").write_text('{"mcpServers": {"evil": {"command": "%s", "args": ["%s", "--marker", "%s"]}}}' % (sys.executable, SERVER, marker))
    (project / ".env").write_text(f"MZAGENT_MCP_SERVERS=evil\nMZAGENT_CONFIG={project / 'config.toml'}\n")
    os.chdir(project)
    assert load_mcp_servers() == []
    server.script(Reply("<final_answer>ok</final_answer>"))
    agent = assemble(config_for(server, project, environ={"PATH": os.environ["PATH"]}), RecordingApprover(ApprovalDecision(True)), Recorder())
    agent.run("hi")
    assert not [p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]
    assert "mcp__" not in agent.messages[0]["content"]


# Schema mapping ----------------------------------------------------------------------------


class _Ctx:
    def __init__(self, approver: object) -> None:
        self.approver = approver
        self.root = Path("/p")
        self.thought = "because"


def mapped(decision: ApprovalDecision = ApprovalDecision(True), read_only: bool = False) -> tuple[McpTool, list[dict], RecordingApprover]:
    calls: list[dict] = []
    approver = RecordingApprover(decision)

    def caller(remote: RemoteTool, arguments: dict) -> ToolResult:
        calls.append(arguments)
        return ToolResult("done")

    tool = McpTool(RemoteTool("my-files", "read.file", "Read a file.\nFast.", SCHEMA, read_only), caller, _Ctx(approver))  # type: ignore[arg-type]
    return tool, calls, approver


def test_schema_becomes_a_signature_and_a_description() -> None:
    tool = mapped()[0].tool()
    assert tool.name == "mcp__my_files__read_file"
    assert tool.params == ["file_path", "limit", "class_"]
    assert tool.describe() == (
        "- mcp__my_files__read_file(file_path, limit=None, class_=None): Read a file. Fast. "
        "Parameters: file_path (string): the file; limit (integer, optional): at most this many; class_ (string, optional)."
    )


def test_calls_bind_keywords_and_positions_to_the_schemas_names() -> None:
    tool, calls, approver = mapped()
    registry = ToolRegistry()
    registry.add_tool(tool.tool())
    from mzagent_tui.agent.model.parsing import parse_reply

    parsed = parse_reply('<action>mcp__my_files__read_file(limit=3, file_path="a.py")</action>', registry.signatures())
    assert registry.call(parsed.tool, parsed.args).text == "done"
    assert registry.call("mcp__my_files__read_file", ["b.py"]).text == "done"
    assert calls == [{"file-path": "a.py", "limit": 3}, {"file-path": "b.py"}]
    request = approver.requests[0]
    assert isinstance(request, ToolCallApproval) and request.tool == "mcp__my_files__read_file" and request.reason == "because"
    assert request.arguments == {"file-path": "a.py", "limit": 3} and '"file-path": "a.py"' in request.shown_arguments


def test_arguments_that_break_the_schema_are_a_clear_error_and_nothing_is_asked() -> None:
    tool, calls, approver = mapped()
    registry = ToolRegistry()
    registry.add_tool(tool.tool())
    result = registry.call("mcp__my_files__read_file", ["a.py", "ten"])
    assert not result.ok
    assert "do not fit its schema" in result.text and "limit: 'ten' is not of type 'integer'" in result.text
    assert "Parameters: file_path (string)" in result.text
    assert calls == [] and approver.requests == []


def test_a_rejected_call_reaches_the_model_and_is_not_made() -> None:
    tool, calls, _ = mapped(ApprovalDecision(False, note="not that file"))
    result = tool("a.py")
    assert not result.ok and "rejected" in result.text and "not that file" in result.text and calls == []


# The gate ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "read_only", "rules", "asked", "approved"),
    [
        ("auto-safe", True, {}, False, True),
        ("auto-safe", False, {}, True, False),
        ("ask", True, {}, True, False),
        ("yolo", False, {}, False, True),
        ("ask", False, {"allow": "mcp__t__echo"}, False, True),
        ("ask", False, {"allow": "mcp__t__*"}, False, True),
        ("ask", False, {"allow": "mcp__other__*"}, True, False),
        ("yolo", True, {"deny": "mcp__t__*"}, False, False),
        ("auto-safe", True, {"ask": "mcp__t__echo"}, True, False),
    ],
)
def test_tool_calls_go_through_the_same_gate(mode: str, read_only: bool, rules: dict[str, str], asked: bool, approved: bool) -> None:
    user = RecordingApprover(ApprovalDecision(False))
    policy = Policy(mode, Rules())
    for kind, prefix in rules.items():
        policy.rules.add(kind, prefix)
    events: list[object] = []
    gate = PolicyApprover(user, policy, emit=events.append)
    decision = gate.approve(ToolCallApproval(cwd="/p", tool="mcp__t__echo", arguments={}, read_only=read_only))
    assert bool(user.requests) is asked
    assert decision.approved is approved
    assert bool([e for e in events if isinstance(e, ApprovalAsked)]) is asked


def test_always_allow_names_the_tool_for_the_rest_of_the_session() -> None:
    user = RecordingApprover(ApprovalDecision(True, always_prefix="mcp__t__echo"))
    gate = PolicyApprover(user, Policy("ask"))
    request = ToolCallApproval(cwd="/p", tool="mcp__t__echo", arguments={})
    assert gate.approve(request).approved and gate.approve(request).approved
    assert len(user.requests) == 1
    other = ToolCallApproval(cwd="/p", tool="mcp__t__add", arguments={})
    gate.approve(other)
    assert len(user.requests) == 2  # the rule names one tool, not the server


# A real server -----------------------------------------------------------------------------


@pytest.fixture
def hub(tmp_path: Path):
    started: list[McpHub] = []

    def start(*servers: McpServerConfig) -> McpHub:
        running = McpHub(list(servers), tmp_path)
        started.append(running)
        return running

    yield start
    for running in started:
        running.close()


def tools_of(hub: McpHub) -> dict[str, RemoteTool]:
    tools, failures = hub.wait_started()
    assert failures == []
    return {tool.name: tool for tool in tools}


def test_listing_and_calls(hub, tmp_path: Path) -> None:
    running = hub(test_server())
    tools = tools_of(running)
    assert set(tools) >= {"add", "echo", "hang", "fail", "die", "picture"}
    assert tools["add"].read_only and not tools["echo"].read_only
    assert tools["add"].schema["required"] == ["a", "b"]
    cancel = CancelToken()
    assert running.call(tools["add"], {"a": 2, "b": 3}, cancel) == ToolResult("5")
    assert running.call(tools["echo"], {"text": "hi", "times": 2}, cancel) == ToolResult("hi hi")
    failed = running.call(tools["fail"], {}, cancel)
    assert not failed.ok and "Error from the tool" in failed.text and "fail" in failed.text
    assert running.call(tools["picture"], {}, cancel) == ToolResult("[image: image/png, 100 bytes]")
    assert "test server starting" in running.log_path("t").read_text()


def test_a_running_server_is_reached_over_streamable_http(hub, http_server: str, monkeypatch) -> None:  # noqa: ANN001
    """`url` with `bearer_token_env_var`: the token comes from the environment, never the file."""
    monkeypatch.setenv("TEST_MCP_TOKEN", "tok-123")
    write_config(f"""
        [mcp_servers.remote]
        url = "{http_server}"
        bearer_token_env_var = "TEST_MCP_TOKEN"
        http_headers = {{ X-Client = "mzagent" }}
    """)
    [config] = load_mcp_servers()
    assert config.headers == {"X-Client": "mzagent", "Authorization": "Bearer tok-123"} and config.command == ""
    running = hub(config)
    tools = tools_of(running)
    assert tools["add"].read_only
    assert running.call(tools["add"], {"a": 2, "b": 3}, CancelToken()) == ToolResult("5")


def test_a_wrong_token_is_one_clear_failure(hub, http_server: str) -> None:
    running = hub(McpServerConfig("remote", url=http_server, headers={"Authorization": "Bearer wrong"}, startup_timeout=5.0))
    tools, failures = running.wait_started()
    assert tools == [] and failures == [f"MCP server 'remote' failed to start: HTTP 401 Unauthorized, MCPError: Server returned an error response (at {http_server})"]


def test_a_hanging_tool_is_cancelled_at_its_timeout(hub) -> None:
    running = hub(test_server(tool_timeout=1.0))
    tools = tools_of(running)
    began = time.monotonic()
    result = running.call(tools["hang"], {"seconds": 60}, CancelToken())
    assert not result.ok and "did not answer within 1 s (tool_timeout_sec)" in result.text
    assert time.monotonic() - began < 30
    assert running.call(tools["add"], {"a": 1, "b": 1}, CancelToken()).text == "2"


def test_a_cancel_stops_the_wait(hub) -> None:
    running = hub(test_server())
    tools = tools_of(running)
    cancel = CancelToken()
    timer = __import__("threading").Timer(0.5, cancel.cancel)
    timer.start()
    with pytest.raises(Cancelled):
        running.call(tools["hang"], {"seconds": 60}, cancel)


def test_a_server_that_fails_to_start_leaves_the_others_working(hub, tmp_path: Path) -> None:
    running = hub(test_server("good"), test_server("broken", "--crash"), test_server("slow", "--slow-start", "60", startup_timeout=1.5))
    tools, failures = running.wait_started()
    assert {tool.server for tool in tools} == {"good"}
    assert len(failures) == 2
    assert any(f.startswith("MCP server 'broken' failed to start") and "mcp-broken.log" in f for f in failures)
    assert any(f.startswith("MCP server 'slow' did not start within 1.5 s") for f in failures)
    assert "crashed on purpose" in (tmp_path / "mcp-broken.log").read_text()
    add = next(tool for tool in tools if tool.name == "add")
    assert running.call(add, {"a": 1, "b": 2}, CancelToken()).text == "3"


def test_a_missing_program_is_one_failure(hub) -> None:
    running = hub(McpServerConfig("ghost", "/nonexistent/mcp-server"))
    tools, failures = running.wait_started()
    assert tools == [] and len(failures) == 1 and failures[0].startswith("MCP server 'ghost' failed to start")


def test_a_server_killed_mid_call(hub) -> None:
    running = hub(test_server())
    tools = tools_of(running)
    result = running.call(tools["die"], {}, CancelToken())
    assert not result.ok and "stopped during the call" in result.text
    again = running.call(tools["add"], {"a": 1, "b": 2}, CancelToken())
    assert not again.ok and "cannot be used now" in again.text


def test_servers_stop_when_closed(hub) -> None:
    marker = f"close-{uuid.uuid4().hex}"
    running = hub(test_server("t", "--marker", marker))
    tools = tools_of(running)
    pid = int(running.call(tools["pid"], {}, CancelToken()).text)
    assert marker in " ".join(psutil.Process(pid).cmdline())
    running.close()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


PARENT = """
import sys, time
from pathlib import Path
from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.mcp.config import McpServerConfig
from mzagent_tui.agent.mcp.hub import McpHub
hub = McpHub([McpServerConfig("t", sys.executable, (sys.argv[1], "--marker", sys.argv[2]), startup_timeout=60)], Path(sys.argv[3]))
tools, _ = hub.wait_started()
pid = next(t for t in tools if t.name == "pid")
print(hub.call(pid, {}, CancelToken()).text, flush=True)
time.sleep(300)
"""


def test_no_server_outlives_a_kill_9_of_the_agent(tmp_path: Path) -> None:
    marker = f"orphan-{uuid.uuid4().hex}"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, SERVER, marker, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(parent.stdout.readline())
        server = psutil.Process(pid)
        assert marker in " ".join(server.cmdline())
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        gone, alive = psutil.wait_procs([server], timeout=10)
        assert alive == []
    finally:
        parent.kill()
        for process in psutil.process_iter(["cmdline"]):
            if marker in " ".join(process.info["cmdline"] or []):
                process.kill()


# The agent ---------------------------------------------------------------------------------


def test_the_model_calls_a_server_tool_through_the_loop(server, project: Path) -> None:
    server.script(
        Reply('<thought>add</thought><action>mcp__t__add(a=2, b=40)</action>'),
        Reply('<thought>echo</thought><action>mcp__t__echo("hi", times="x")</action>'),
        Reply("<final_answer>42</final_answer>"),
    )
    recorder = Recorder()
    approver = RecordingApprover(ApprovalDecision(True))
    config = config_for(server, project, Policy("auto-safe"), {"PATH": os.environ["PATH"]}).with_servers([test_server(), test_server("broken", "--crash")])
    agent = assemble(config, approver, recorder)
    try:
        result = agent.run("what is 2 + 40?")
    finally:
        agent.close()
    assert result.reason is StopReason.FINAL_ANSWER
    system = server.requests[0]["messages"][0]["content"]
    assert "- mcp__t__add(a, b): Add two integers. Parameters: a (integer); b (integer)." in system
    observations = recorder.of(Observation)
    assert observations[0].text == "42" and observations[0].ok
    assert not observations[1].ok and "do not fit its schema" in observations[1].text
    assert approver.requests == []  # add is read-only (auto-safe); echo's bad arguments never reached the gate
    notices = [n.text for n in recorder.of(Notice)]
    assert any(n.startswith("MCP: 11 tools from t") for n in notices)
    assert any(n.startswith("MCP server 'broken' failed to start") for n in notices)
    assert (agent.session.folder / "mcp-t.log").is_file()
    assert recorder.of(Stopped)[-1].reason is StopReason.FINAL_ANSWER
