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

from mzagent_tui.agent.cancel import CancelToken
from mzagent_tui.agent.events import Event, TextDelta, ThinkingDelta
from mzagent_tui.agent.safety.approval import ApprovalDecision, ApprovalRequest
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
    """Asks through a modal screen built by `make_screen`; a cancelled run, a closed approver (its
    conversation replaced) or an app that stopped means "no".

    The worker never waits on the UI thread itself: the dialog is opened and withdrawn through
    `call_later` (a message, which a closing app refuses), and the answer is awaited in short
    slices, so nothing can keep the worker thread, and with it the process, alive after the app.
    """

    def __init__(
        self,
        app: App,
        make_screen: Callable[[ApprovalRequest], object],
        cancel: Callable[[], CancelToken],
    ) -> None:
        self._app = app
        self._make_screen = make_screen
        self._cancel = cancel
        self._closed = threading.Event()

    def close(self) -> None:
        """The conversation is replaced or the app ends: a pending question is answered "no" and
        withdrawn, and no later one opens (a replaced run must not ask in the new conversation)."""
        self._closed.set()

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        token = self._cancel()
        if self._closed.is_set():
            return ApprovalDecision(False, note="the conversation was closed")
        answer: Future[ApprovalDecision] = Future()
        screen = self._make_screen(request)

        def settle(result: ApprovalDecision | None) -> None:
            if not answer.done():
                answer.set_result(result or ApprovalDecision(False))

        def show() -> None:
            if self._closed.is_set() or token.cancelled:
                settle(None)  # the conversation ended while the question was on its way
            else:
                self._app.push_screen(screen, callback=settle)

        if not self._post(show):
            return ApprovalDecision(False, note="the app is closing")
        while True:
            try:
                return answer.result(timeout=0.1)
            except FutureTimeout:
                if token.cancelled or self._closed.is_set() or not self._app.is_running:
                    self._post(lambda: _dismiss_if_open(self._app, screen))
                    return CANCELLED

    def _post(self, callback: Callable[[], None]) -> bool:
        """Run `callback` on the UI thread without waiting for it; False once the app is closing."""
        try:
            return self._app.call_later(callback)
        except RuntimeError:  # the app's loop is already closed
            return False


def _dismiss_if_open(app: App, screen: object) -> None:
    if screen in app.screen_stack:
        screen.dismiss(CANCELLED)  # type: ignore[attr-defined]
