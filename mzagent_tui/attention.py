"""Getting the user back when the agent needs them: the terminal bell, or a desktop notification
escape (OSC 9 for iTerm2, WezTerm, Windows Terminal, kitty; OSC 777 for foot, Ghostty, urxvt,
VTE), sent when the approval dialog opens or a run ends. Not while the user is typing in the app:
they are already here, and a sound mid-word is noise.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mzagent_tui.agent.safety.textsafe import strip_control

TYPING_PAUSE = 2.0
"""Seconds after the last keystroke in the task box during which no signal is sent."""
BELL = "\a"


def attention_sequence(mode: str, title: str, body: str) -> str:
    """The bytes to write for one signal ("" for `off`). Text loses control characters, and
    OSC 777's field separator, so it cannot end the sequence early."""
    if mode == "bell":
        return BELL
    if mode != "osc":
        return ""
    title = strip_control(title).replace(";", ",")[:80]
    body = strip_control(body).replace(";", ",").replace("\n", " ")[:200]
    return f"\x1b]9;{title}: {body}\x07\x1b]777;notify;{title};{body}\x07"


class Attention:
    def __init__(self, mode: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.mode = mode
        self._clock = clock
        self._typed_at = float("-inf")

    def typed(self) -> None:
        self._typed_at = self._clock()

    def signal(self, title: str, body: str) -> str:
        """What to write now: nothing while the user types or when signals are off."""
        if self._clock() - self._typed_at < TYPING_PAUSE:
            return ""
        return attention_sequence(self.mode, title, body)
