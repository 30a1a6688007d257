"""mzagent-tui: a terminal front-end for a ReAct coding agent."""

__version__ = "0.1.0"
