"""Screens: the approval dialog and the file preview."""
