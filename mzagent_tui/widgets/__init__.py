"""Widgets: the project tree, the transcript and its entries, the task input, the run status."""
