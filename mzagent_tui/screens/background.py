"""The session's background commands: each with its state, the chosen one's live output, and a
key to stop it. Refreshed twice a second from the processes themselves (not from events), so
what it shows is what runs now; their output is untrusted text, shown plain."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from mzagent_tui.agent.safety.textsafe import for_display

REFRESH_SECONDS = 0.5


class ShownProcess(Protocol):
    """What the screen reads of a background command (agent/tools/background.py's)."""

    id: str
    command: str
    output_path: Path
    total_bytes: int

    @property
    def running(self) -> bool: ...

    def status(self) -> str: ...

    def latest(self) -> str: ...

    def stop(self) -> None: ...


class ProcessList(Protocol):
    """The conversation's background commands (the agent's `background`)."""

    def all(self) -> Sequence[ShownProcess]: ...

    def get(self, process_id: str) -> ShownProcess | None: ...


def process_label(process: ShownProcess) -> Text:
    return Text(f"{process.id}  {process.status():<9} {for_display(process.command)}")


class BackgroundScreen(ModalScreen[None]):
    AUTO_FOCUS = "#background-list"
    BINDINGS = [
        Binding("escape", "close", "Close", id="background.close"),
        Binding("s", "stop", "Stop", id="background.stop"),
    ]

    def __init__(self, processes: ProcessList) -> None:
        super().__init__()
        self.processes = processes
        self._shown: list[str] = []
        """The ids listed, in order: the list is rebuilt only when one is added."""

    def compose(self) -> ComposeResult:
        with Vertical(id="background-dialog"):
            yield Label(Text("Background commands — s stops the chosen one, Esc closes"), id="background-title")
            yield OptionList(id="background-list")
            with VerticalScroll(id="background-output-scroll"):
                yield Static(id="background-output")

    def on_mount(self) -> None:
        self.refresh_view()
        self.set_interval(REFRESH_SECONDS, self.refresh_view)

    def refresh_view(self) -> None:
        processes = self.processes.all()
        listing = self.query_one("#background-list", OptionList)
        if [p.id for p in processes] != self._shown:
            highlighted = listing.highlighted
            listing.clear_options()
            listing.add_options(Option(process_label(p), id=p.id) for p in processes)
            self._shown = [p.id for p in processes]
            listing.highlighted = highlighted if highlighted is not None else (0 if processes else None)
        else:
            for process in processes:
                listing.replace_option_prompt(process.id, process_label(process))
        chosen = self.chosen()
        if chosen is None:
            text = "No background command in this session. The model starts one with start_background_command; you, with !&command."
        else:
            text = f"{chosen.latest() or '(no output yet)'}\n— {chosen.total_bytes} bytes in all, saved in {chosen.output_path}"
        self.query_one("#background-output", Static).update(Text(text))

    def chosen(self) -> ShownProcess | None:
        index = self.query_one("#background-list", OptionList).highlighted
        return None if index is None or index >= len(self._shown) else self.processes.get(self._shown[index])

    @on(OptionList.OptionHighlighted, "#background-list")
    def _highlighted(self) -> None:
        self.refresh_view()

    def action_stop(self) -> None:
        """Stop the chosen one; its supervisor ends it (with a grace period) on its own thread."""
        chosen = self.chosen()
        if chosen is None or not chosen.running:
            self.notify("Nothing running is chosen.")
            return
        chosen.stop()
        self.notify(f"Stopping {chosen.id}.")
        self.refresh_view()

    def action_close(self) -> None:
        self.dismiss(None)
