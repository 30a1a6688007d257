"""Where a failed command's Python traceback ends in the project, and what it says there.

A small model that wrote code, ran it and saw it fail wrote the very same content again and was
told "that step is done". The write tool remembers the failure, so the same content is called
what it is: code that already failed this way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_FRAME = re.compile(r'^\s*File "([^"\n]+)", line (\d+)', re.MULTILINE)
_ERROR = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b.*$", re.MULTILINE)
MAX_ERROR_CHARS = 200


@dataclass(frozen=True)
class Failure:
    path: Path
    line: int
    error: str

    def describe(self) -> str:
        return f"{self.error} (line {self.line})"


def python_failure(output: str, root: Path) -> Failure | None:
    """The last frame of the last traceback that lies in a file under `root`, with the error line
    after it ("TypeError: ..."); None when the output has no such traceback."""
    start = output.rfind("Traceback (most recent call last):")
    if start < 0:
        return None
    tail = output[start:]
    frames = [(Path(found.group(1)), int(found.group(2)), found.end()) for found in _FRAME.finditer(tail)]
    error = _ERROR.search(tail, frames[-1][2]) if frames else None
    if error is None:
        return None
    for name, line, _ in reversed(frames):
        path = (root / name).resolve() if not name.is_absolute() else name.resolve()
        if path.is_relative_to(root) and path.is_file():
            return Failure(path, line, error.group(0).strip()[:MAX_ERROR_CHARS])
    return None
