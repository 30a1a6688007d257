"""Typed messages the agent worker posts to the UI (thread-safe through `post_message`)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from mzagent_tui.agent.events import Event


@dataclass
class AgentEvent(Message):
    """One core event, delivered on the UI thread in the order the core emitted it."""

    event: Event


@dataclass
class StreamChunk(Message):
    """Coalesced reply and reasoning text (about 20 per second, not one per token)."""

    text: str
    thinking: str
