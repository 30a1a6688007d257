"""Containment: every path a tool touches must resolve inside the project root."""

from __future__ import annotations

import os
from pathlib import Path

from mzagent_tui.agent.tools.registry import ToolError

MAX_PATH_CHARS = 4096


def resolve_inside(root: Path, raw: object) -> Path:
    """Resolve a model-given path against the root and refuse anything outside it.

    Checked on the resolved path (symlinks followed), so `/w/proj-evil` is not inside
    `/w/proj` and a link that points out of the project is refused.
    """
    if not isinstance(raw, str):
        raise ToolError("path.not_string", kind=type(raw).__name__)
    if not raw.strip():
        raise ToolError("path.empty")
    if "\x00" in raw:
        raise ToolError("path.nul")
    if len(raw) > MAX_PATH_CHARS:
        raise ToolError("path.too_long", limit=MAX_PATH_CHARS)
    candidate = Path(os.path.expanduser(raw.strip()))
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as exc:
        raise ToolError("path.unresolved", raw=raw, error=exc) from None
    if not resolved.is_relative_to(root):
        raise ToolError("path.outside", raw=raw, root=root)
    return resolved


def relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() or "."
