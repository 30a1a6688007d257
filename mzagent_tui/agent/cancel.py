"""A cancel token shared by the front-end (which sets it) and the worker (which checks it)."""

from __future__ import annotations

import signal
import threading

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""CI's `timeout` or a service manager, and a closed terminal: both front-ends treat them like
Ctrl+C (cancel the run, kill the command's group) and exit with 128 + the signal's number."""


class Cancelled(Exception):
    """Raised inside the core when the user cancelled the run."""


class CancelToken:
    """Thread-safe flag. Blocking code waits on it instead of sleeping, so cancel is prompt."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; return True at once if cancelled meanwhile."""
        return self._event.wait(max(0.0, seconds))

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled()
