"""Drawing untrusted code and diffs, for the dialogs (`screens`) and the transcript (`widgets`)
alike: syntax highlighting (`highlight`) and the diff view (`diff_view`)."""
