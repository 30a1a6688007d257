"""Widgets: the project tree, the transcript and its entries, the task input, the run status (the diff
view and highlighting they share with the dialogs are in `display`)."""
