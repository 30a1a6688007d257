"""An event's way out of the agent: counted, logged, then handed to the front-end.

Built before the agent by `assemble`, since the tools, the gate and the aids report through it
too; the agent adds what it watches for itself (`watch`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mzagent_tui.agent.events import Event, EventSink, TextDelta, ThinkingDelta
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.usage import Meter

_NOT_LOGGED = (TextDelta, ThinkingDelta)


@dataclass
class Report:
    session: Session
    meter: Meter
    sink: EventSink
    watchers: list[Callable[[Event], None]] = field(default_factory=list)

    def watch(self, watcher: Callable[[Event], None]) -> None:
        """`watcher` sees every event after the meter and before the log and the front-end."""
        self.watchers.append(watcher)

    def __call__(self, event: Event) -> None:
        """The meter counts it, the watchers see it, the session logs it (not the stream's
        deltas, whose reply is logged whole), then the front-end gets it."""
        self.meter.observe(event)
        for watcher in self.watchers:
            watcher(event)
        if not isinstance(event, _NOT_LOGGED):
            self.session.record_event(event)
        self.sink(event)
