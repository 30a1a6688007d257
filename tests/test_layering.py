"""The package's shape: floors in one order (a module imports its own floor and those below),
no import cycles (function-local imports count), no Textual in the core, and front-ends that do
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


def cycles_in(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk meets, each as the path that closes it."""
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return cycles


def test_no_import_cycles() -> None:
    graph = imports()
    assert cycles_in(defaultdict(set, {name: graph[name] for name in modules()})) == []


def test_front_ends_use_the_core_not_the_tools_internals() -> None:
    graph = imports()
    front_ends = [name for name in modules() if name in FRONT_ENDS or name.startswith(("mzagent_tui.widgets", "mzagent_tui.screens", "mzagent_tui.display"))]
    reaching = {name: sorted(t for t in graph[name] if t.startswith("mzagent_tui.agent.tools")) for name in front_ends}
    assert {name: targets for name, targets in reaching.items() if targets} == {}


def test_the_app_leaves_the_run_to_the_conversation() -> None:
    """Tasks, their events and the worker's messages are the conversation's (widgets/conversation.py);
    the app keeps settings, policy, the local model, the palette and the dialogs."""
    run_machinery = {"mzagent_tui.agent.loop", "mzagent_tui.agent.events", "mzagent_tui.bridge", "mzagent_tui.messages", "mzagent_tui.agent.usage"}
    assert imports()["mzagent_tui.app"] & run_machinery == set()
    assert run_machinery <= imports()["mzagent_tui.widgets.conversation"]


FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ground", ("__init__.py", "agent/__init__.py", "agent/ground/")),
    ("vocabulary", ("agent/cancel.py", "agent/task_facts.py", "agent/config.py", "agent/events.py", "agent/event_text.py", "agent/usage.py")),
    ("safety", ("agent/safety/",)),
    ("sessions", ("agent/sessions/",)),
    ("tools", ("agent/tools/", "agent/filelist.py", "agent/skills.py")),
    ("model", ("agent/model/",)),
    ("around the loop", ("agent/aids/", "agent/hooks/", "agent/mcp/", "agent/planning.py", "agent/mentions.py", "agent/prompt_commands.py", "agent/user_commands.py", "agent/report.py")),
    ("loop", ("agent/loop.py",)),
    ("assembly", ("agent/run_config.py", "agent/assembly.py")),
    ("front-end parts", ("display/", "messages.py", "bridge.py", "task_completions.py", "collection_pacing.py")),
    ("screens", ("screens/",)),
    ("widgets", ("widgets/",)),
    ("front-ends", ("app.py", "headless.py", "acp_server.py", "acp_transport.py", "session_commands.py", "attention.py", "cli.py", "__main__.py")),
)
"""The floors of the package, lowest first, each a list of folders (ending in /) and modules
under mzagent_tui/: a module may import its own floor and the floors below, never above; two
folders on one floor do not import each other. docs/layout.md draws the same order."""


def room_of(name: str) -> str:
    """The folder or module of FLOORS a module is in (`agent/safety/` for `...agent.safety.sandbox`)."""
    path = modules()[name].relative_to(PACKAGE).as_posix()
    rooms = [room for _, floor_rooms in FLOORS for room in floor_rooms if path == room or (room.endswith("/") and path.startswith(room))]
    assert rooms, f"{path} is on no floor: add it to FLOORS in tests/test_layering.py (and to docs/layout.md)"
    return max(rooms, key=len)


def floor_of(name: str) -> int:
    room = room_of(name)
    return next(index for index, (_, rooms) in enumerate(FLOORS) if room in rooms)


def test_every_module_is_on_one_floor() -> None:
    declared = [room for _, floor_rooms in FLOORS for room in floor_rooms]
    assert len(declared) == len(set(declared))
    assert all((PACKAGE / room).exists() for room in declared), [room for room in declared if not (PACKAGE / room).exists()]
    for name in modules():
        room_of(name)


def test_no_module_imports_a_floor_above_its_own() -> None:
    graph = imports()
    upward = sorted(
        f"{source} (floor {FLOORS[floor_of(source)][0]}) imports {target} (floor {FLOORS[floor_of(target)][0]})"
        for source, targets in graph.items()
        for target in targets
        if floor_of(target) > floor_of(source)
    )
    assert not upward, "imports against the floors (FLOORS, docs/layout.md):\n" + "\n".join(upward)


def test_folders_that_share_a_floor_do_not_import_each_other() -> None:
    """The aids, the hooks and the tool servers each stand beside the loop, not on one another."""
    graph = imports()
    across = sorted(
        f"{source} imports {target}"
        for source, targets in graph.items()
        for target in targets
        if floor_of(source) == floor_of(target) and room_of(source) != room_of(target) and room_of(source).endswith("/") and room_of(target).endswith("/")
    )
    assert not across, "imports between folders on one floor:\n" + "\n".join(across)


def test_no_cycle_between_folders_and_modules() -> None:
    """The package-level graph: each folder of FLOORS is one node, each module outside them another."""
    graph: dict[str, set[str]] = defaultdict(set)
    for source, targets in imports().items():
        graph[room_of(source)].update(room_of(target) for target in targets if room_of(target) != room_of(source))
    cycles = cycles_in(graph)
    assert not cycles, "cycles between folders and modules:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_the_core_never_imports_textual() -> None:
    """Read from the source, function-local imports included: the headless front-end and ACP run
    the core without loading Textual."""
    found = sorted(
        f"{name}: {ast.unparse(node)}"
        for name, path in modules().items()
        if name.startswith("mzagent_tui.agent")
        for node in ast.walk(ast.parse(path.read_text()))
        if (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "textual")
        or (isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "textual" for alias in node.names))
    )
    assert not found, "Textual imported by the core:\n" + "\n".join(found)


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
