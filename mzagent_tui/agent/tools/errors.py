"""The one exception a tool raises for a refusal or bad input. It lives apart from the registry
because the file helpers the gate uses (`beneath`) raise it too, and the registry's outcomes
carry the gate's reading of a command."""

from __future__ import annotations


class ToolError(Exception):
    """A refusal or bad input: the message goes back to the model as the observation."""
