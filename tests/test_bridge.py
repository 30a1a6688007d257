"""The event bridge: coalesced stream text, order kept, nothing left behind by a pause."""

from __future__ import annotations

from mzagent_tui.agent.events import TextDelta, ThinkingDelta, Thought
from mzagent_tui.bridge import STREAM_INTERVAL, EventBridge
from mzagent_tui.messages import AgentEvent, StreamChunk


class FakeApp:
    def __init__(self) -> None:
        self.posted: list[object] = []

    def post_message(self, message: object) -> bool:
        self.posted.append(message)
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_deltas_are_coalesced_and_flushed_before_the_next_event() -> None:
    app, clock = FakeApp(), Clock()
    bridge = EventBridge(app, clock=clock)  # type: ignore[arg-type]
    bridge(TextDelta("a"))
    for piece in "bcd":
        clock.now += STREAM_INTERVAL / 10
        bridge(TextDelta(piece))
    bridge(ThinkingDelta("hm"))
    bridge(Thought("done"))
    assert [type(m).__name__ for m in app.posted] == ["StreamChunk", "StreamChunk", "AgentEvent"]
    assert app.posted[0] == StreamChunk("a", "")
    assert app.posted[1] == StreamChunk("bcd", "hm")
    assert app.posted[2] == AgentEvent(Thought("done"))


def test_the_timer_flush_shows_text_that_arrived_before_a_pause() -> None:
    app, clock = FakeApp(), Clock()
    bridge = EventBridge(app, clock=clock)  # type: ignore[arg-type]
    bridge(TextDelta("first"))
    clock.now += 0.001
    bridge(TextDelta(" then a pause"))
    assert app.posted == [StreamChunk("first", "")]
    bridge.flush()
    assert app.posted[-1] == StreamChunk(" then a pause", "")
    bridge.flush()
    assert len(app.posted) == 2
