"""What the aids remember of a session's work, fed by its events and the tools' outcomes.

The write tool used to keep these on its context and word its answer from them; now it says only
what the write did, and the aids that advise a small model read this instead (`write.not_read`,
`write.same`, `examples`, the tracebacks a command ended in).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mzagent_tui.agent.events import Event, FileChanged


@dataclass
class AidState:
    seen: set[Path] = field(default_factory=set)
    """Files the model has read, written or named in a command in this session: `write.not_read`
    lets write_to_file replace an existing file only when it is one of these."""
    changed: set[Path] = field(default_factory=set)
    """Files a write of the model changed in this session: the same content written again is
    then a step already done, not a change that did not happen."""
    crashed: dict[Path, str] = field(default_factory=dict)
    """Files a command's Python traceback ended in, since the last change to any file: the cause
    may lie in another file (a call into a module the model wrote), so any change clears them."""
    failed: dict[Path, str] = field(default_factory=dict)
    """Files found wrong since their last change (a command's Python traceback ended in one, a
    reminder said one is not right, a docstring example printed otherwise), with what was said."""

    def observe(self, event: Event) -> None:
        """A file changed (by a write or a command): what was found wrong in it is past, and so is
        every crash (bytecode caches aside: a check's run writes those)."""
        if not isinstance(event, FileChanged):
            return
        path = Path(event.path)
        self.failed.pop(path, None)
        if "__pycache__" not in path.parts:
            self.crashed.clear()

    def wrote(self, path: Path, changed: bool) -> None:
        if changed:
            self.changed.add(path)

    def found_wrong(self, path: Path) -> str | None:
        """What was said against the file since it last changed, if anything."""
        return self.failed.get(path) or self.crashed.get(path)
