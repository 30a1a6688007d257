"""Textual's footer, rebuilt only when the keys it shows change.

Textual's `Footer` removes and mounts every key widget each time a screen announces its
bindings, and the app announces the same keys three times before its first frame (mount, the
task box's focus, the first refresh): two full rebuilds of ten styled widgets for nothing.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

KeySignature = tuple[tuple[Binding, str, bool, str], ...]


class KeyFooter(Footer):
    """A `Footer` that skips a rebuild when the shown keys are the ones already on screen."""

    _shown: KeySignature | None = None

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._shown = self._signature()
        yield from super().compose()

    def _signature(self) -> KeySignature:
        """What `Footer.compose` reads from the bindings, in its order."""
        return tuple(
            (binding, self.app.get_key_display(binding), enabled, tooltip)
            for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
            if binding.show or key == self.app.COMMAND_PALETTE_BINDING
        )

    async def _recompose_if_changed(self) -> None:
        if self.is_attached and self._signature() != self._shown:
            await self.recompose()
