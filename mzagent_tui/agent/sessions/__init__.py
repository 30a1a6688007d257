"""What a session leaves behind and how it is taken back: the append-only log (`session`), the
list and replay of past sessions (`history`), snapshots of what a command changed
(`snapshots`), undo and the Markdown export."""
