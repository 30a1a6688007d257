"""Close a docstring a small model left open with two quotes.

Writing a docstring inside the action's string literal takes `\\"\\"\\"`, and a small model often
writes one quote too few where the docstring ends (`\\"\\"` then a new line). The file then does
not parse, and the model, shown the error, writes the same two quotes again. When the file does
not compile, and giving each such line its third quote makes it compile, the write is made with
the quotes completed (the diff the user sees shows the content as written).
"""

from __future__ import annotations

MAX_REPAIRED_CHARS = 1_000_000


def close_docstrings(name: str, content: str) -> tuple[str, list[int]]:
    """(content to write, numbers of the lines given a third quote); the content unchanged, and no
    lines, unless it is Python that does not compile and compiles after the repair."""
    if not name.endswith(".py") or len(content) > MAX_REPAIRED_CHARS or _compiles(content, name):
        return content, []
    for quote in ('"', "'"):
        triple = quote * 3
        lines = content.split("\n")
        repaired = []
        open_string = False
        for number, line in enumerate(lines, 1):
            stripped = line.rstrip()
            if triple in line:
                open_string ^= line.count(triple) % 2 == 1
                rest = stripped.rpartition(triple)[2]
                closes_short = open_string and len(rest) > 2 and rest.endswith(quote * 2) and not rest.endswith("\\" + quote * 2)
            else:
                closes_short = open_string and stripped.endswith(quote * 2) and not stripped.endswith("\\" + quote * 2)
            if closes_short:
                lines[number - 1] = stripped + quote + line[len(stripped):]
                repaired.append(number)
                open_string = False
        fixed = "\n".join(lines)
        if repaired and _compiles(fixed, name):
            return fixed, repaired
    return content, []


def _compiles(text: str, name: str) -> bool:
    try:
        compile(text, name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True
