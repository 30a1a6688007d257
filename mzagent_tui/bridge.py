"""The core's ports implemented for Textual: an event sink and a modal approver.

Both are called on the agent's worker thread. The sink turns core events into messages;
the approver opens the approval dialog on the UI thread and waits for its result, giving up
(as a rejection) when the run is cancelled so the thread never waits forever.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

from textual.app import App
from textual.message_pump import MessagePump

from mzagent_tui.agent.safety.approval import ApprovalDecision, ApprovalRequest
from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.events import Event, TextDelta, ThinkingDelta
from mzagent_tui.messages import AgentEvent, StreamChunk

STREAM_INTERVAL = 0.05


class EventBridge:
    """Posts core events as messages to `target` (the conversation); buffers text deltas and sends them at most 20 times a second.

    `flush` also runs on a UI timer so text that arrived before a pause in the stream is shown.
    Messages are posted while holding the lock, so their order in the app's queue is the order
    in which the core emitted them, whichever thread flushes.
    """

    def __init__(self, target: MessagePump, conversation: int = 0, clock: Callable[[], float] = time.monotonic) -> None:
        self._target = target
        self._conversation = conversation
        self._clock = clock
        self._lock = threading.Lock()
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._last_flush = 0.0

    def __call__(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, (TextDelta, ThinkingDelta)):
                (self._text if isinstance(event, TextDelta) else self._thinking).append(event.text)
                if self._clock() - self._last_flush >= STREAM_INTERVAL:
                    self._flush_locked()
                return
            self._flush_locked()
            self._target.post_message(AgentEvent(event, self._conversation))

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        text, thinking = "".join(self._text), "".join(self._thinking)
        self._text.clear()
        self._thinking.clear()
        self._last_flush = self._clock()
        if text or thinking:
            self._target.post_message(StreamChunk(text, thinking, self._conversation))


CANCELLED = ApprovalDecision(False, note="the run was cancelled", cancelled=True)
"""A question withdrawn by a cancel: no one answered it (see ApprovalDecision.cancelled)."""


class ModalApprover:
    """Asks through a modal screen built by `make_screen`; a cancel withdraws the question."""

    def __init__(
        self,
        app: App,
        make_screen: Callable[[ApprovalRequest], object],
        cancel: Callable[[], CancelToken],
    ) -> None:
        self._app = app
        self._make_screen = make_screen
        self._cancel = cancel

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        answer: Future[ApprovalDecision] = Future()
        screen = self._make_screen(request)

        def settle(result: ApprovalDecision | None) -> None:
            if not answer.done():
                answer.set_result(result or ApprovalDecision(False))

        def show() -> None:
            self._app.push_screen(screen, callback=settle)

        try:
            self._app.call_from_thread(show)
        except RuntimeError:  # the app is shutting down
            return ApprovalDecision(False, note="the app is closing")
        token = self._cancel()
        while True:
            try:
                return answer.result(timeout=0.1)
            except FutureTimeout:
                if token.cancelled:
                    try:
                        self._app.call_from_thread(_dismiss_if_open, self._app, screen)
                    except RuntimeError:  # the app already stopped; nothing to dismiss
                        pass
                    return CANCELLED


def _dismiss_if_open(app: App, screen: object) -> None:
    if screen in app.screen_stack:
        screen.dismiss(CANCELLED)  # type: ignore[attr-defined]
