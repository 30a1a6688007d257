"""Python's full garbage collections, moved to moments when nobody is typing.

Measured with `bench/ui_offline.py`: while the model streams and a command prints, CPython 3.11
runs a full (generation 2) collection every second or so, and each walks every live object of
Textual and the transcript: 87-113 ms with the event loop stopped, the longest stalls of the
run. The young generations stay automatic (a few ms each); the full collection is taken over:
the objects alive after the first frame (modules, classes, the stylesheet) are frozen out of
it, and it runs when no key or mouse event has come for a second, or, should input never pause,
after ten times as many young collections as CPython would wait for (memory stays bounded).
From Python 3.14 the collector is incremental and this is left to it.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable

IDLE_SECONDS = 1.0
"""No input for this long: a full collection now is not felt."""
FORCED_FACTOR = 10
"""With input that never pauses, a full collection after this many times CPython's own wait."""
NEVER = 2**30
"""A generation-2 threshold CPython never reaches: its own full collections stop."""


class CollectionPacer:
    """Owns the process's generation-2 collections from `start` to `stop` (one app at a time)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last_input = clock()
        self._threshold: tuple[int, int, int] | None = None
        self.collections = 0
        """Full collections run by the pacer (for tests and benchmarks)."""

    @property
    def active(self) -> bool:
        return self._threshold is not None

    def start(self) -> None:
        """Freeze what start-up made and take generation 2 over from CPython."""
        if self._threshold is not None or sys.version_info >= (3, 14):
            return
        young, middle, old = gc.get_threshold()
        self._threshold = (young, middle, old)
        gc.freeze()
        gc.set_threshold(young, middle, NEVER)

    def stop(self) -> None:
        """CPython's own thresholds back, the frozen objects collectable again."""
        if self._threshold is None:
            return
        gc.set_threshold(*self._threshold)
        self._threshold = None
        gc.unfreeze()

    def input_seen(self) -> None:
        self._last_input = self._clock()

    def tick(self) -> bool:
        """Run a full collection if one is due and the moment is right; True if it ran."""
        if self._threshold is None:
            return False
        pending = gc.get_count()[2]
        due = pending >= self._threshold[2]
        idle = self._clock() - self._last_input >= IDLE_SECONDS
        if not (due and idle) and pending < self._threshold[2] * FORCED_FACTOR:
            return False
        gc.collect()
        self.collections += 1
        return True
