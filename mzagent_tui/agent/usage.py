"""Tokens, context fill and cost: one meter that every front-end and the cost limit read.

Prices are per million tokens and optional (`price_in`, `price_out` in the config); without
them there is no cost, only tokens. Usage the server did not report is estimated (4 characters
per token) and everything derived from it is marked as an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from mzagent_tui.agent.events import Event, ModelInfo, Usage

PER_MILLION = 1_000_000


@dataclass
class Meter:
    price_in: float = 0.0
    price_out: float = 0.0
    window: int = 0
    """The model's context window in tokens; 0 when unknown."""
    tokens_in: int = 0
    tokens_out: int = 0
    context: int = 0
    """Prompt tokens of the latest request: how full the context is now."""
    estimated: bool = False

    def observe(self, event: Event) -> None:
        """Count a step's usage; learn the window the server reported if none was configured."""
        if isinstance(event, Usage):
            self.tokens_in += event.prompt_tokens
            self.tokens_out += event.completion_tokens
            self.context = event.prompt_tokens
            self.estimated = self.estimated or event.estimated
        elif isinstance(event, ModelInfo) and not self.window:
            self.window = event.context_window

    @property
    def priced(self) -> bool:
        return self.price_in > 0 or self.price_out > 0

    @property
    def cost(self) -> float:
        return (self.tokens_in * self.price_in + self.tokens_out * self.price_out) / PER_MILLION

    @property
    def fill(self) -> float | None:
        """The share of the context window the latest request used, or None if the window is unknown."""
        return self.context / self.window if self.window else None

    def summary(self, context: bool = True) -> str:
        """`tokens ~1,234 in / ~56 out · context 8% of 16k · ~$0.0012`; `~` marks estimates."""
        approx = "~" if self.estimated else ""
        parts = [f"tokens {approx}{self.tokens_in:,} in / {approx}{self.tokens_out:,} out"]
        if context and self.fill is not None:
            parts.append(f"context {self.fill:.0%} of {_short(self.window)}")
        elif context and self.context:
            parts.append(f"context {_short(self.context)}")
        if self.priced:
            parts.append(f"{approx}{money(self.cost)}")
        return " · ".join(parts)


def money(amount: float) -> str:
    """Dollars with enough digits to see small sums move: $0.0012, $1.23."""
    return f"${amount:.4f}" if amount < 1 else f"${amount:,.2f}"


def _short(tokens: int) -> str:
    return f"{tokens / 1000:.0f}k" if tokens >= 10_000 else f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
