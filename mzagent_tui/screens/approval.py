"""The approval dialog: every terminal command the policy does not allow by itself opens it,
and every write when writes are gated (showing the write's diff).

Keys: y run once (write), n / Esc reject (the focused default), r reject with a reason, e edit
(the command, or the new content in a text area: ctrl+s writes it), a always allow a prefix
(or, for writes, a path glob) for this session. Keys in the first 350 ms are ignored so that
typing in the task box can never approve anything.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import assert_never

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from mzagent_tui.agent.safety.approval import ApprovalDecision, offered_rule
from mzagent_tui.agent.safety.approval_requests import (
    ApprovalRequest,
    CommandApproval,
    FileChangeApproval,
    GitEntryApproval,
    PartVerdict,
    PlantedFileApproval,
    SecretReadApproval,
    ToolCallApproval,
    WriteApproval,
)
from mzagent_tui.agent.safety.textsafe import for_display, shown_exactly
from mzagent_tui.display.diff_view import DiffView
from mzagent_tui.display.highlight import highlight

GRACE_SECONDS = 0.35
# Commands whose second word matters for an "always allow" prefix (git status, npm test).
VERDICT_LABEL = {"allow": "✓ allowed ", "ask": "? asks    ", "deny": "✗ denied  "}


@dataclass(frozen=True)
class VerdictStyles:
    """The verdicts' colours, read from the theme through app.tcss (`PartsTable`); the plain
    defaults draw the table without a screen."""

    allow: Style = Style(bold=True)
    ask: Style = Style(bold=True)
    deny: Style = Style(bold=True)
    risk: Style = Style(bold=True)


def tool_label(name: str) -> str:
    """`mcp__files__read` → `read  (MCP server "files")`."""
    server, _, tool = name.removeprefix("mcp__").partition("__")
    return f'{tool}  (MCP server "{server}")' if tool else name


def parts_table(parts: tuple[PartVerdict, ...], styles: VerdictStyles = VerdictStyles()) -> Text:
    """One line per part: verdict, the part, why; risks in bold."""
    text = Text()
    for index, part in enumerate(parts):
        if index:
            text.append("\n")
        text.append(VERDICT_LABEL[part.verdict], style=getattr(styles, part.verdict))
        text.append(shown_exactly(part.text))
        text.append(f"  — {shown_exactly(part.reason)}", style="dim")
        for risk in part.risks:
            text.append(f"  ⚠ {risk}", style=styles.risk)
    return text


class PartsTable(Static):
    """The verdicts of a command's parts in the theme's colours, drawn again when it changes
    (its content is the same table without them)."""

    COMPONENT_CLASSES = {"parts-table--allow", "parts-table--ask", "parts-table--deny", "parts-table--risk"}

    def __init__(self, parts: tuple[PartVerdict, ...], *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(parts_table(parts), id=id)
        self.parts = parts

    def render(self) -> Text:
        def style(verdict: str) -> Style:
            return self.get_component_rich_style(f"parts-table--{verdict}", partial=True)

        return parts_table(self.parts, VerdictStyles(style("allow"), style("ask"), style("deny"), style("risk")))


@dataclass(frozen=True)
class DialogShape:
    """What the dialog offers for one kind of request."""

    title: str
    run_label: str
    can_edit: bool
    """e edits the command, or the new content of a file."""
    offers_always: bool
    """a allows a prefix, a tool or a path glob for the session (never a file that plants code)."""


def dialog_shape(request: ApprovalRequest) -> DialogShape:
    match request:
        case CommandApproval():
            return DialogShape("Run this command?", "Run once [y]", can_edit=True, offers_always=True)
        case WriteApproval():
            return DialogShape("Write this file?", "Write [y]", can_edit=True, offers_always=True)
        case PlantedFileApproval() | GitEntryApproval():
            return DialogShape("Write this file?", "Write [y]", can_edit=True, offers_always=False)
        case ToolCallApproval():
            return DialogShape("Call this tool?", "Call once [y]", can_edit=False, offers_always=True)
        case SecretReadApproval():
            return DialogShape("Allow this?", "Run once [y]", can_edit=False, offers_always=False)
        case _:
            assert_never(request)


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    AUTO_FOCUS = "#reject"
    BINDINGS = [
        Binding("y", "run_once", "Run once", id="approval.run"),
        Binding("n", "reject", "Reject", id="approval.reject"),
        Binding("escape", "escape", "Reject", id="approval.escape"),
        Binding("r", "ask_reason", "Reject with reason", id="approval.reason"),
        Binding("e", "ask_edit", "Edit", id="approval.edit"),
        Binding("a", "ask_prefix", "Always allow", id="approval.always"),
        Binding("ctrl+s", "save", "Save", id="approval.save"),
        Binding("o", "run_outside", "Run outside the sandbox", id="approval.outside"),
        Binding("w", "run_with_network", "Run with network", id="approval.network"),
    ]

    def __init__(self, request: ApprovalRequest, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.request = request
        self._clock = clock
        self._opened_at = clock()
        self._mode = "choose"

    @property
    def _is_write(self) -> bool:
        return isinstance(self.request, FileChangeApproval)

    def compose(self) -> ComposeResult:
        request, shape = self.request, dialog_shape(self.request)
        with Vertical(id="approval-dialog"):
            yield Label(shape.title, id="approval-title")
            yield from self._asked(request)
            yield Static(Text.assemble(("in ", "dim"), for_display(request.cwd)), id="approval-cwd")
            if isinstance(request, CommandApproval) and request.sandbox:
                yield Static(Text(request.sandbox), id="approval-sandbox")
            if request.reason:
                yield Static(Text.assemble(("reason: ", "dim"), for_display(request.reason)), id="approval-reason")
            yield Input(id="approval-input", classes="-hidden")
            with Horizontal(id="approval-buttons"):
                yield Button(Text(shape.run_label), id="run", variant="warning")
                yield Button(Text("Reject [n]"), id="reject", variant="primary")
                yield Button(Text("Reason [r]"), id="reason")
                if shape.can_edit:
                    yield Button(Text("Edit [e]"), id="edit")
                if shape.offers_always:
                    yield Button(Text("Always [a]"), id="always")
                if self._sandboxed:
                    yield Button(Text("Outside [o]"), id="outside", variant="error")
                    yield Button(Text("Network [w]"), id="network")

    def _asked(self, request: ApprovalRequest) -> ComposeResult:
        """What is asked: the command, the tool's call or the file's change, with the warning
        and the verdicts of its parts."""
        match request:
            case CommandApproval():
                with VerticalScroll(id="approval-command"):
                    yield Static(highlight(shown_exactly(request.command), "bash"))
                if request.warning:
                    yield Static(Text("⚠ " + request.warning), id="approval-warning")
                if request.parts:
                    yield PartsTable(request.parts, id="approval-parts")
            case ToolCallApproval():
                yield Label(Text(for_display(tool_label(request.tool))), id="approval-path")
                with VerticalScroll(id="approval-command"):
                    yield Static(highlight(request.shown_arguments, "json"))
                if request.parts:
                    yield PartsTable(request.parts, id="approval-parts")
            case WriteApproval() | PlantedFileApproval() | GitEntryApproval():
                yield Label(Text(shown_exactly(request.path, keep="")), id="approval-path")
                if request.diff:
                    diff = DiffView(request.diff, request.path, classes="approval-diff")
                    diff.can_focus = True  # a long diff is scrolled with the keys here
                    yield diff
                from textual.widgets import TextArea  # loads tree-sitter: with the first write dialog, not at start-up

                yield TextArea(request.content, id="approval-editor", classes="-hidden", soft_wrap=False, show_line_numbers=True)
            case SecretReadApproval():
                with VerticalScroll(id="approval-command"):
                    yield Static(Text(shown_exactly(request.summary)))
            case _:
                assert_never(request)

    class Opened(Message):
        """The dialog is on screen: the app may call the user back to it."""

        def __init__(self, request: ApprovalRequest) -> None:
            super().__init__()
            self.request = request

    def on_mount(self) -> None:
        self._opened_at = self._clock()
        self.post_message(self.Opened(self.request))

    @property
    def _sandboxed(self) -> bool:
        """A command that will run in the sandbox: the user (never the model) may lift it once."""
        return isinstance(self.request, CommandApproval) and self.request.sandboxed

    @property
    def accepts_keys(self) -> bool:
        """The grace after opening is over: a key typed now was meant for this dialog."""
        return self.is_mounted and not self._too_soon()

    def _too_soon(self) -> bool:
        return self._clock() - self._opened_at < GRACE_SECONDS

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a text box is open, letters are typed, not choices; ctrl+s saves a prefix for
        every session, or writes the edited content."""
        if action == "save":
            return self._mode in ("prefix", "content")
        if action in ("run_outside", "run_with_network") and not self._sandboxed:
            return False
        if self._mode != "choose" and action not in ("escape",):
            return False
        return True

    def action_run_once(self) -> None:
        if not self._too_soon():
            self.dismiss(ApprovalDecision(True))

    def action_run_outside(self) -> None:
        if not self._too_soon() and self._sandboxed:
            self.dismiss(ApprovalDecision(True, outside_sandbox=True, note="run outside the sandbox by the user"))

    def action_run_with_network(self) -> None:
        if not self._too_soon() and self._sandboxed:
            self.dismiss(ApprovalDecision(True, network=True, note="run with network by the user"))

    def action_reject(self) -> None:
        if not self._too_soon():
            self.dismiss(ApprovalDecision(False))

    def action_escape(self) -> None:
        if self._mode != "choose":
            self._set_mode("choose")
        elif not self._too_soon():
            self.dismiss(ApprovalDecision(False))

    def action_ask_reason(self) -> None:
        if not self._too_soon():
            self._set_mode("reason", "", "Why not? The model will read this. Enter to send, Esc to go back")

    def action_ask_edit(self) -> None:
        if self._too_soon():
            return
        match self.request:
            case CommandApproval(command=command):
                self._set_mode("edit", command, "Edit the command, Enter to run it, Esc to go back")
            case FileChangeApproval():
                self._set_mode("content")

    def action_ask_prefix(self) -> None:
        if self._too_soon():
            return
        match self.request:
            case CommandApproval():
                self._set_mode("prefix", offered_rule(self.request), "Always allow commands starting with…")
            case WriteApproval():
                self._set_mode("writes", offered_rule(self.request), "Allow writes for this session to paths matching this glob (* for all)")
            case ToolCallApproval():
                self._set_mode("prefix", offered_rule(self.request), "Always allow this tool (a glob such as mcp__server__* allows a whole server)")

    def _set_mode(self, mode: str, value: str = "", placeholder: str = "") -> None:
        self._mode = mode
        box = self.query_one("#approval-input", Input)
        box.set_class(mode in ("choose", "content"), "-hidden")
        self.query_one("#approval-buttons").set_class(mode != "choose", "-hidden")
        if self._is_write:
            from textual.widgets import TextArea

            editor = self.query_one("#approval-editor", TextArea)
            editor.set_class(mode != "content", "-hidden")
            for view in self.query(".approval-diff"):
                view.set_class(mode == "content", "-hidden")
            if mode == "content":
                editor.border_title = "new content"
                editor.border_subtitle = "ctrl+s: write this · Esc: back"
                editor.focus()
                return
        if mode == "choose":
            self.query_one("#reject", Button).focus()
            return
        box.value = value
        box.placeholder = placeholder
        titles = {"reason": "reason for the model", "edit": "command to run", "prefix": "allowed tool" if isinstance(self.request, ToolCallApproval) else "allowed prefix", "writes": "allowed paths"}
        box.border_title = titles[mode]
        box.border_subtitle = "Enter: this session · ctrl+s: every session (saved to your config)" if mode == "prefix" else ""
        box.focus()

    def action_save(self) -> None:
        if self._mode == "content":
            from textual.widgets import TextArea

            self.dismiss(ApprovalDecision(True, content=self.query_one("#approval-editor", TextArea).text, note="content edited by the user"))
            return
        value = self.query_one("#approval-input", Input).value.strip()
        if value:
            self.dismiss(ApprovalDecision(True, always_prefix=value, save_rule=True))

    @on(Input.Submitted, "#approval-input")
    def _submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if self._mode == "reason":
            self.dismiss(ApprovalDecision(False, note=value))
        elif self._mode == "edit" and value:
            self.dismiss(ApprovalDecision(True, command=value))
        elif self._mode == "prefix" and value:
            self.dismiss(ApprovalDecision(True, always_prefix=value))
        elif self._mode == "writes" and value:
            self.dismiss(ApprovalDecision(True, allow_writes=value, note=f"writes to '{value}' allowed for this session"))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        actions = {
            "run": self.action_run_once, "reject": self.action_reject, "reason": self.action_ask_reason, "edit": self.action_ask_edit,
            "always": self.action_ask_prefix, "outside": self.action_run_outside, "network": self.action_run_with_network,
        }
        actions[event.button.id or "reject"]()
