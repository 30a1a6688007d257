"""Modules planted in the project that a program of the user's would import when started from the
project folder: the user's MCP tool servers (Python and npx) and the bundled model's server run
none of them. (Round six of the outside attacks.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# A tool server of the user's, started in the project folder -----------------------------------


def _agent_with_servers(server, project: Path, *servers) -> list[str]:  # noqa: ANN001
    """Start the agent with the user's MCP servers, as `mzagent` does, and end it; its notices."""
    from mzagent_tui.agent.assembly import assemble
    from mzagent_tui.agent.events import Notice
    from mzagent_tui.agent.safety.approval import ApprovalDecision, Policy
    from tests.conftest import Recorder, RecordingApprover, config_for
    from tests.scripted_server import answer_reply

    server.script(answer_reply())
    recorder = Recorder()
    config = config_for(server, project, Policy("ask"), {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"]}).with_servers(servers)
    agent = assemble(config, RecordingApprover(ApprovalDecision(False)), recorder)
    try:
        agent.run("work")
    finally:
        agent.close()
    return [n.text for n in recorder.of(Notice)]


def test_a_users_python_tool_server_does_not_import_a_module_planted_in_the_project(server, project: Path, short: Path) -> None:
    pytest.importorskip("mcp")
    site = short / "site"
    site.mkdir()
    shutil.copy(Path(__file__).parents[1] / "mcp_server.py", site / "r6_mcp_server.py")  # the user's installed server
    marker = short / "planted-server-ran"
    (project / "r6_mcp_server.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nimport runpy, sys\nsys.path.remove(sys.path[0])\n"
        f"runpy.run_path({str(site / 'r6_mcp_server.py')!r}, run_name='__main__')\n"
    )
    from mzagent_tui.agent.mcp.config import McpServerConfig

    user_server = McpServerConfig("files", sys.executable, ("-m", "r6_mcp_server"), env={"PYTHONPATH": str(site)}, startup_timeout=60)  # the wait only bounds a failure
    notices = _agent_with_servers(server, project, user_server)
    assert any(n.startswith("MCP: ") and "from files" in n for n in notices), notices  # the server did start
    assert not marker.exists()


@pytest.mark.skipif(shutil.which("npx") is None, reason="npx is not installed")
def test_a_users_npx_tool_server_does_not_run_the_projects_copy_of_the_package(server, project: Path, short: Path) -> None:
    pytest.importorskip("mcp")
    marker = short / "planted-npx-ran"
    package = project / "node_modules" / "@modelcontextprotocol" / "server-filesystem"
    package.mkdir(parents=True)
    (project / "package.json").write_text('{"name": "p", "version": "1.0.0", "dependencies": {"@modelcontextprotocol/server-filesystem": "1.0.0"}}')
    (package / "package.json").write_text('{"name": "@modelcontextprotocol/server-filesystem", "version": "1.0.0", "bin": {"mcp-server-filesystem": "index.js"}}')
    (package / "index.js").write_text(f"#!/usr/bin/env node\nrequire('fs').writeFileSync({json.dumps(str(marker))}, 'ran')\n")
    (package / "index.js").chmod(0o755)
    (project / "node_modules" / ".bin").mkdir()
    (project / "node_modules" / ".bin" / "mcp-server-filesystem").symlink_to("../@modelcontextprotocol/server-filesystem/index.js")
    from mzagent_tui.agent.mcp.config import McpServerConfig

    user_server = McpServerConfig(
        "files", "npx", ("-y", "@modelcontextprotocol/server-filesystem", str(short)),
        env={"npm_config_offline": "true", "npm_config_cache": str(short / "npm-cache")}, startup_timeout=20,
    )
    _agent_with_servers(server, project, user_server)
    assert not marker.exists()


# The bundled model's server, started from the folder mzagent was started in --------------------


@pytest.mark.parametrize("planted", ["argparse.py", "mzagent_tui/__init__.py"])
def test_the_local_model_server_does_not_import_modules_planted_in_the_project(project: Path, short: Path, monkeypatch: pytest.MonkeyPatch, planted: str) -> None:
    from mzagent_tui.agent.model import local

    marker = short / "planted-module-ran"
    (project / planted).parent.mkdir(parents=True, exist_ok=True)
    (project / planted).write_text(f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit(3)\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("XDG_CACHE_HOME", str(short / "cache"))
    model = short / "model.gguf"
    model.write_bytes(b"not a model")
    server = local.LocalServer(model, settings=local.server_settings(model.stat().st_size), engine="prebuilt")
    server.launch()
    assert server.process is not None
    try:
        server.process.wait(60)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
    assert not marker.exists()
