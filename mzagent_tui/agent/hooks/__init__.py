"""Hooks: the user's own commands run around the agent's tool calls and at the end of a run
(config: what the user config asks for; runner: one hook as a process; dispatch: which hooks an
event calls and what their outcome does to the run)."""
