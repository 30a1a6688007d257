"""A realistic task: a small project, two phrasings, a checker, a reference solution and the
near misses the checker must reject. The reference and the near misses are what make a checker
trustworthy: `python -m bench.realistic validate` runs every checker against all of them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

Edit = Callable[[str], str]
"""A change to one file's text: from the text before to the text after."""


class Failed(Exception):
    """A checker's verdict against the work, with the reason a person reading the record needs."""


Checker = Callable[[Path, "str | None"], None]
"""Runs the finished project and raises Failed with a reason; returns when the task is done."""


def expect(condition: bool, reason: str) -> None:
    if not condition:
        raise Failed(reason)


def edit(old: str, new: str, count: int = 1) -> Edit:
    """Replace `old` by `new` (`count` times; 0: every time). A mutation whose `old` is not in the
    file raises, so a near miss that no longer applies is caught by the validation, not silently a
    no-op that "the checker rejects"."""

    def apply(text: str) -> str:
        if old not in text:
            raise ValueError(f"edit does not apply: {old[:60]!r} is not in the file")
        return text.replace(old, new, -1 if count == 0 else count)

    return apply


@dataclass(frozen=True)
class Change:
    """Files to write (text, or an Edit of the current text), to delete (None), to make executable
    or not, and the final answer the agent gives (None: "Done." for a reference, the reference's
    answer for a near miss)."""

    files: Mapping[str, str | Edit | None] = field(default_factory=dict)
    executable: tuple[str, ...] = ()
    plain: tuple[str, ...] = ()
    answer: str | None = None

    def apply(self, root: Path) -> None:
        for name, content in self.files.items():
            path = root / name
            if content is None:
                path.unlink()
                continue
            if callable(content):
                with path.open(newline="") as handle:
                    text = content(handle.read())
            else:
                text = content
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, newline="")
        for name in self.executable:
            (root / name).chmod(0o755)
        for name in self.plain:
            (root / name).chmod(0o644)


@dataclass(frozen=True)
class RealisticTask:
    id: str
    category: str
    phrasings: tuple[str, str]
    """Terse first, chatty second (context, a pasted traceback, the user's own words)."""
    files: Mapping[str, str | bytes]
    """Text, or bytes for a file in another encoding than UTF-8."""
    checker: Checker
    reference: Change
    near_misses: Mapping[str, Change]
    """Each a named mutation applied on top of the reference (hard-coding, dropping an unrelated
    block, editing the tests, a wrong number in the answer); the checker must reject every one."""
    executables: tuple[str, ...] = ()
    """Files that start with the execute permission."""
    unchanged: bool = False
    """A question: every starting file must stay byte-identical."""

    def files_for(self, phrasing: int) -> Mapping[str, str | bytes]:
        return self.files

    def verdict(self, root: Path, answer: str | None) -> str | None:
        """None when the task is done, else why not."""
        try:
            if self.unchanged:
                for name, content in self.files.items():
                    path = root / name
                    original = content if isinstance(content, bytes) else content.encode()
                    expect(path.is_file() and path.read_bytes() == original, f"{name} changed, and the question asked for no change")
            self.checker(root, answer)
        except Failed as failed:
            return str(failed)
        return None

    def check(self, root: Path, answer: str | None) -> bool:
        return self.verdict(root, answer) is None
