"""The one exception a tool raises for a refusal or bad input. It is on the ground floor because
code below the tools raises it too: the file helpers (`beneath`) and undo."""

from __future__ import annotations

from mzagent_tui.agent.ground.words import say


class ToolError(Exception):
    """A refusal or bad input: a reason by name and its fields (`ToolError("edit.same", rel=rel)`),
    worded by `words.say`; the text goes back to the model as the observation. Code that decides
    by the outcome reads `reason` and `fields`, never the text."""

    def __init__(self, reason: str, /, **fields: object) -> None:
        super().__init__(say(reason, **fields))
        self.reason = reason
        self.fields = fields
