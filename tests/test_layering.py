"""The package's shape: no import cycles (function-local imports count) and front-ends that do
not reach into the tools' internals."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mzagent_tui"
FRONT_ENDS = ("mzagent_tui.app", "mzagent_tui.headless", "mzagent_tui.acp_server", "mzagent_tui.cli", "mzagent_tui.bridge", "mzagent_tui.session_commands", "mzagent_tui.attention")


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(("mzagent_tui", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")
        found[name] = path
    return found


def imports() -> dict[str, set[str]]:
    """Every package module each module imports, anywhere in it."""
    known = modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mzagent_tui"):
                graph[name].update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in known)
                if node.module in known:
                    graph[name].add(node.module)
            elif isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name in known)
    return graph


def test_no_import_cycles() -> None:
    graph = imports()
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[node] = 2

    for name in sorted(modules()):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_front_ends_use_the_core_not_the_tools_internals() -> None:
    graph = imports()
    front_ends = [name for name in modules() if name in FRONT_ENDS or name.startswith(("mzagent_tui.widgets", "mzagent_tui.screens"))]
    reaching = {name: sorted(t for t in graph[name] if t.startswith("mzagent_tui.agent.tools")) for name in front_ends}
    assert {name: targets for name, targets in reaching.items() if targets} == {}


def test_the_app_leaves_the_run_to_the_conversation() -> None:
    """Tasks, their events and the worker's messages are the conversation's (widgets/conversation.py);
    the app keeps settings, policy, the local model, the palette and the dialogs."""
    run_machinery = {"mzagent_tui.agent.loop", "mzagent_tui.agent.events", "mzagent_tui.bridge", "mzagent_tui.messages", "mzagent_tui.agent.usage"}
    assert imports()["mzagent_tui.app"] & run_machinery == set()
    assert run_machinery <= imports()["mzagent_tui.widgets.conversation"]


def package_of(name: str) -> str:
    """`mzagent_tui.agent.safety.sandbox` -> `safety`; modules at the core's top level -> `core`."""
    parts = name.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "agent" else "core"


AGENT_PACKAGES_MAY_NOT_IMPORT = {
    "safety": {"aids", "model", "tools", "mcp"},
    "sessions": {"aids", "mcp"},
    "model": {"aids", "sessions", "mcp"},
    "aids": {"mcp"},
    "tools": {"aids"},
}


def test_the_core_packages_keep_their_layers() -> None:
    """The gate and the wall do not depend on the model, the tools or the aids; sessions (undo
    opens files through ground.beneath, with no link followed) do not depend on the aids; the model client does not know the aids or the session log;
    tools return plain outcomes and the aids act at the loop's points around them, never inside a tool."""
    graph = imports()
    crossings = sorted(
        f"{source} -> {target}"
        for source, targets in graph.items()
        for target in targets
        if source.startswith("mzagent_tui.agent.") and target.startswith("mzagent_tui.agent.")
        and package_of(target) in AGENT_PACKAGES_MAY_NOT_IMPORT.get(package_of(source), set())
    )
    assert crossings == []


def test_the_loop_stays_readable_and_the_agent_is_built_in_one_place() -> None:
    """`Agent.__init__` only keeps the parts `assemble` wired (at most 25 lines), no function of
    the loop is over 60 lines, and `assemble` is the only module that constructs an `Agent`."""
    tree = ast.parse((PACKAGE / "agent" / "loop.py").read_text())
    lengths = {node.name: node.end_lineno - node.lineno + 1 for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert lengths["__init__"] <= 25 and {name: n for name, n in lengths.items() if n > 60} == {}
    building = sorted(
        name for name, path in modules().items()
        if any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Agent" for node in ast.walk(ast.parse(path.read_text())))
    )
    assert building == ["mzagent_tui.agent.assembly"]
