"""The modules beside a file that an import can name, and what each defines: where a name a
write uses but never defines may come from, and which modules still import a name a rewrite took
away."""

from __future__ import annotations

from pathlib import Path

from mzagent_tui.agent.aids.definitions import defined_names

MAX_SIBLINGS = 200
"""Modules beside a written file that are searched for its names; more are not read."""
MAX_SIBLING_BYTES = 500_000


def modules_beside(path: Path) -> list[tuple[Path, bytes]]:
    """The Python modules in `path`'s folder that an import can name, with their content: not
    `path`, not one larger than MAX_SIBLING_BYTES, not a link that leads elsewhere (its content
    must not reach the model through a note); the first MAX_SIBLINGS."""
    found = []
    for sibling in sorted(path.parent.glob("*.py"))[:MAX_SIBLINGS]:
        if sibling.name == path.name or not sibling.stem.isidentifier() or not _beside(sibling, path):
            continue
        try:
            if sibling.stat().st_size <= MAX_SIBLING_BYTES:
                found.append((sibling, sibling.read_bytes()))
        except OSError:
            continue
    return found


def sibling_definitions(path: Path) -> dict[str, list[str]]:
    """The top-level names each Python module beside `path` defines, by module name."""
    return {sibling.stem: [name for name in defined_names(source) or [] if "." not in name] for sibling, source in modules_beside(path)}


def _beside(sibling: Path, path: Path) -> bool:
    """A regular file in `path`'s folder, not a link that leads elsewhere."""
    return sibling.is_file() and sibling.resolve().parent == path.resolve().parent
