"""Typed messages the agent worker posts to the UI (thread-safe through `post_message`)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from mzagent_tui.agent.events import Event


@dataclass
class AgentEvent(Message):
    """One core event, delivered on the UI thread in the order the core emitted it.

    `conversation` numbers the conversation it belongs to: a run cancelled by "new
    conversation" may still report, and the conversation drops what belongs to an older one.
    """

    event: Event
    conversation: int = 0


@dataclass
class StreamChunk(Message):
    """Coalesced reply and reasoning text (about 20 per second, not one per token)."""

    text: str
    thinking: str
    conversation: int = 0
