"""Project instructions: the project's AGENTS.md, the convention Codex, opencode and others read.

It goes into the system prompt as text for the model, capped at 8 KB. It is never configuration:
nothing in it can change approval, the sandbox, tools or the endpoint, because it is only ever
read here, as prompt text.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.ground.beneath import open_beneath
from mzagent_tui.agent.tools.registry import ToolError

FILE_NAME = "AGENTS.md"
MAX_BYTES = 8 * 1024


@dataclass(frozen=True)
class Instructions:
    text: str
    size: int
    """The file's whole size in bytes; more than `MAX_BYTES` means `text` was cut."""

    @property
    def cut(self) -> bool:
        return self.size > MAX_BYTES

    def notice(self) -> str:
        shown = f"{self.size / 1024:.1f} KB" if self.size >= 1024 else f"{self.size} bytes"
        if self.cut:
            return f"Loaded {FILE_NAME} into the prompt: the first {MAX_BYTES // 1024} KB of {shown} (the rest was left out)"
        return f"Loaded {FILE_NAME} into the prompt ({shown})"


def load_instructions(root: Path) -> Instructions | None:
    """The project's AGENTS.md (a regular file, reached without symlinks), or None."""
    try:
        with os.fdopen(open_beneath(root, FILE_NAME, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
                return None
            data = handle.read(MAX_BYTES)
    except (OSError, ToolError):  # missing, a symlink, unreadable: no instructions
        return None
    text = data.decode("utf-8", errors="replace")
    if info.st_size > MAX_BYTES and "\n" in text:
        text = text[: text.rindex("\n") + 1]  # end at a whole line
    return Instructions(text.strip(), info.st_size)
