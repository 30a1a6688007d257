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

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from mzagent_tui.agent.safety.approval import ApprovalDecision, ApprovalRequest, PartVerdict, offered_rule
from mzagent_tui.agent.safety.textsafe import for_display, shown_exactly
from mzagent_tui.display.diff_view import DiffView
from mzagent_tui.display.highlight import highlight

GRACE_SECONDS = 0.35
# Commands whose second word matters for an "always allow" prefix (git status, npm test).
VERDICT_STYLE = {"allow": ("✓ allowed ", "green"), "ask": ("? asks    ", "yellow"), "deny": ("✗ denied  ", "red")}


def tool_label(name: str) -> str:
    """`mcp__files__read` → `read  (MCP server "files")`."""
    server, _, tool = name.removeprefix("mcp__").partition("__")
    return f'{tool}  (MCP server "{server}")' if tool else name


def parts_table(parts: tuple[PartVerdict, ...]) -> Text:
    """One line per part: verdict, the part, why; risks in bold."""
    text = Text()
    for index, part in enumerate(parts):
        if index:
            text.append("\n")
        label, colour = VERDICT_STYLE[part.verdict]
        text.append(label, style=f"bold {colour}")
        text.append(shown_exactly(part.text))
        text.append(f"  — {shown_exactly(part.reason)}", style="dim")
        for risk in part.risks:
            text.append(f"  ⚠ {risk}", style="bold red")
    return text


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
        return self.request.kind in ("write", "write_sensitive")

    def compose(self) -> ComposeResult:
        is_command = self.request.kind == "command"
        is_tool = self.request.kind == "tool"
        title = "Run this command?" if is_command else "Write this file?" if self._is_write else "Call this tool?" if is_tool else "Allow this?"
        with Vertical(id="approval-dialog"):
            yield Label(title, id="approval-title")
            if self._is_write:
                yield Label(Text(shown_exactly(self.request.path or self.request.command, keep="")), id="approval-path")
                if self.request.diff:
                    diff = DiffView(self.request.diff, self.request.path, classes="approval-diff")
                    diff.can_focus = True  # a long diff is scrolled with the keys here
                    yield diff
                from textual.widgets import TextArea  # loads tree-sitter: with the first write dialog, not at start-up

                yield TextArea(self.request.content, id="approval-editor", classes="-hidden", soft_wrap=False, show_line_numbers=True)
            elif is_tool:
                yield Label(Text(for_display(tool_label(self.request.tool))), id="approval-path")
                with VerticalScroll(id="approval-command"):
                    yield Static(highlight(self.request.arguments, "json"))
            else:
                with VerticalScroll(id="approval-command"):
                    body = highlight(shown_exactly(self.request.command), "bash") if is_command else Text(shown_exactly(self.request.command))
                    yield Static(body)
            if self.request.warning:
                yield Static(Text("⚠ " + self.request.warning), id="approval-warning")
            if self.request.parts:
                yield Static(parts_table(self.request.parts), id="approval-parts")
            yield Static(Text.assemble(("in ", "dim"), for_display(self.request.cwd)), id="approval-cwd")
            if is_command and self.request.sandbox:
                yield Static(Text(self.request.sandbox), id="approval-sandbox")
            if self.request.reason:
                yield Static(Text.assemble(("reason: ", "dim"), for_display(self.request.reason)), id="approval-reason")
            yield Input(id="approval-input", classes="-hidden")
            with Horizontal(id="approval-buttons"):
                yield Button(Text("Write [y]" if self._is_write else "Call once [y]" if is_tool else "Run once [y]"), id="run", variant="warning")
                yield Button(Text("Reject [n]"), id="reject", variant="primary")
                yield Button(Text("Reason [r]"), id="reason")
                if is_command or self._is_write:
                    yield Button(Text("Edit [e]"), id="edit")
                if is_command or is_tool or self.request.kind == "write":
                    yield Button(Text("Always [a]"), id="always")
                if self._sandboxed:
                    yield Button(Text("Outside [o]"), id="outside", variant="error")
                    yield Button(Text("Network [w]"), id="network")

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
        return self.request.kind == "command" and self.request.sandbox.startswith("sandbox:")

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
        if self.request.kind == "command":
            self._set_mode("edit", self.request.command, "Edit the command, Enter to run it, Esc to go back")
        elif self._is_write:
            self._set_mode("content")

    def action_ask_prefix(self) -> None:
        if self._too_soon():
            return
        if self.request.kind == "command":
            self._set_mode("prefix", offered_rule(self.request), "Always allow commands starting with…")
        elif self.request.kind == "write":
            self._set_mode("writes", offered_rule(self.request), "Allow writes for this session to paths matching this glob (* for all)")
        elif self.request.kind == "tool":
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
        titles = {"reason": "reason for the model", "edit": "command to run", "prefix": "allowed tool" if self.request.kind == "tool" else "allowed prefix", "writes": "allowed paths"}
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
