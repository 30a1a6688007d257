"""Neutralise terminal control sequences in untrusted text (command output, model text, files)."""

from __future__ import annotations

import re
import unicodedata

# CSI, OSC (ended by BEL or ST), other two-byte escapes, then stray C0/C1 controls.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f]")
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")


def strip_control(text: str) -> str:
    """Remove escape sequences and control characters; keep newlines and tabs.

    A lone carriage return (progress bars) becomes a newline so no output is hidden.
    """
    text = _ANSI.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", text)


def for_display(text: str) -> str:
    """`strip_control` plus bidi overrides, which can make shown text differ from what runs."""
    return _BIDI.sub("", strip_control(text))


def shown_exactly(text: str, keep: str = "\n\t") -> str:
    """Text that runs as it is (a command the user approves), with every character that a
    terminal would act on or not show written out as an escape (`\\x1b`, `\\u202e`), never
    removed: an escape sequence is a few literal bytes of a word to bash, and removing it for
    display (`ESC ] … BEL`) would hide all the text between. A path keeps no new line (`keep=""`):
    a name with one would show as two."""
    out = []
    for char in text:
        if char in keep:
            out.append(char)
        elif _CONTROLS.match(char) or char in "\x1b\r\n\t" or unicodedata.category(char) in ("Cf", "Zl", "Zp", "Co", "Cn", "Cs"):
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(char)
    return "".join(out)
