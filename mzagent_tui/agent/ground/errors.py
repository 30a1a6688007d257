"""The one exception a tool raises for a refusal or bad input. It is on the ground floor because
code below the tools raises it too: the file helpers (`beneath`) and undo."""

from __future__ import annotations


class ToolError(Exception):
    """A refusal or bad input: the message goes back to the model as the observation."""
