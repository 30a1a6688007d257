"""Commands that edit files in place (`sed -i`, `perl -pi -e`): when one succeeds and no file
changed, its pattern matched nothing. sed says nothing about that, and a small model ran
`sed -i 's/total(sum_all)/sum_all/' app.py`, saw "succeeded", and reported the rename done."""

from __future__ import annotations

from pathlib import PurePosixPath

from mzagent_tui.agent.safety.shell_parse import Script

IN_PLACE_PROGRAMS = {"sed", "gsed", "perl"}

NOTHING_CHANGED = (
    "Note: this in-place edit changed no file: its pattern matched nothing, so the text is not what the pattern "
    "says. Read the file to see its exact text, or write the whole file with write_to_file."
)


def edits_in_place(script: Script) -> bool:
    """Whether a simple command of `script` is sed or perl with an in-place option (`-i`,
    `-i.bak`, `-Ei`, `-pi`, `--in-place`)."""
    return bool(_in_place_commands(script))


def in_place_words(script: Script) -> set[str]:
    """The words of the in-place edits in `script` (their files among them): such a command
    names a file without showing it, so it does not count as the model having seen the file."""
    return {word for words in _in_place_commands(script) for word in words[1:]}


def _in_place_commands(script: Script) -> list[list[str]]:
    """The literal words of each simple command of `script` that edits in place."""
    found = []
    for simple in script.commands:
        words = [word.text for word in simple.words if word.literal]
        if not words or PurePosixPath(words[0]).name not in IN_PLACE_PROGRAMS:
            continue
        for word in words[1:]:
            if word == "--":
                break
            if word.startswith("--in-place") or (word.startswith("-") and not word.startswith("--") and "i" in word[1:].split(".")[0]):
                found.append(words)
                break
    return found
