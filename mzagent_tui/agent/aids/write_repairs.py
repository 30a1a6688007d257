"""Slips a small model makes writing code through a string argument, and repeats word for word
when told, repaired in the write when the repair, and nothing else, makes a file that did not
parse parse.

- A docstring closed with two quotes: writing one takes `\\"\\"\\"`, and the model often writes
  `\\"\\"` where it ends. Shown the error, it writes the same two quotes again.
- Block statements after `;` on one line (`import csv; with open(p) as f: rows = list(f)`):
  Python allows a `with`/`for`/`if`/... only at the start of a line. Told so, the model wrote
  the same line again until it was stopped. The line is split where its statements end, each
  block's body one level deeper, which is how it reads.
- Python in a `.json` file: `json.dumps({'count': 4}, indent=4)` or `{'count': 4}` where the
  JSON text belongs. Told it is not JSON, the model wrote the same expression again. A plain
  literal (strings, numbers, True/False/None, lists, dicts with string keys) is written as the
  JSON it stands for; nothing is run.
- A comma after the last item of a JSON list or object (`[1, 2,]`, `"open": true,` before `}`),
  which JavaScript and Python allow and JSON does not. Told where each one is, the model copied
  the file, commas and all, or read it again three times.
- A written `\\t` at the start of a Python line in a fenced block, where nothing is escaped: it
  is a backslash and a t, not a tab. Told the file did not parse, the model wrote it again.
- `\\$((` in a shell script: the model escapes the dollar of an arithmetic or command
  substitution, which makes it a literal `$` and the script a syntax error (`bash -n`, which
  runs nothing, says whether it parses).

The diff the user approves shows the repaired content, and the model is told what changed.
"""

from __future__ import annotations

import ast
import io
import itertools
import json
import math
import re
import tokenize

from mzagent_tui.agent.tools.syntax_check import syntax_problem, without_trailing_commas

MAX_REPAIRED_CHARS = 1_000_000
INDENT = "    "
MAX_SPLIT_LINES = 20
BLOCK_KEYWORDS = frozenset({"if", "for", "while", "with", "def", "class", "try", "async"})
"""Statements that open a block. A line with `else`, `elif`, `except` or `finally` is left alone:
which block each belongs to cannot be read from one line."""
CONTINUATIONS = frozenset({"else", "elif", "except", "finally"})
LEADING_TAB_ESCAPES = re.compile(r"^([ \t]*)((?:\\t)+)(?=\S)")
SHELL_SUFFIXES = (".sh", ".bash")
ESCAPED_SUBSTITUTION = "\\$("
"""A substitution whose dollar the model escaped: `\\$((i * i))` is a literal `$` and a syntax error."""


def repair(name: str, content: str) -> tuple[str, list[str]]:
    """(content to write, what was repaired, one sentence each), by the file's kind."""
    if name.lower().endswith(SHELL_SUFFIXES):
        return repair_shell(name, content)
    if name.lower().endswith(".json"):
        return repair_json(content)
    return repair_python(name, content)


def repair_json(content: str) -> tuple[str, list[str]]:
    """JSON whose only fault is commas after the last items loses them; a Python literal, or
    `json.dumps(literal, indent=n)`, that is not JSON becomes the JSON it stands for."""
    if len(content) > MAX_REPAIRED_CHARS:
        return content, []
    try:
        json.loads(content)
        return content, []
    except (ValueError, RecursionError):  # nesting too deep to read is written as it came
        pass
    fixed = without_trailing_commas(content)
    if fixed is not None:
        return fixed, ["It had a comma after the last item of a list or object, which JSON does not allow, so it was written without it."]
    try:
        expression = ast.parse(content.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return content, []
    indent = None
    how = "a Python value"
    if isinstance(expression, ast.Call) and _is_dumps(expression.func) and len(expression.args) == 1:
        keywords = {keyword.arg: keyword.value for keyword in expression.keywords}
        given = keywords.pop("indent", None)
        if keywords or (given is not None and not (isinstance(given, ast.Constant) and isinstance(given.value, int))):
            return content, []
        indent = given.value if isinstance(given, ast.Constant) else None
        expression = expression.args[0]
        how = "a json.dumps(...) call"
    try:
        value = ast.literal_eval(expression)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return content, []
    if not isinstance(value, (dict, list)) or not _plain(value):
        return content, []
    return json.dumps(value, indent=indent) + "\n", [f"The content was {how}, not JSON, so it was written as the JSON it stands for."]


def _is_dumps(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "dumps" and isinstance(func.value, ast.Name) and func.value.id == "json") or (
        isinstance(func, ast.Name) and func.id == "dumps"
    )


def _plain(value: object) -> bool:
    """Whether JSON holds `value` as it is: no tuples, sets, bytes, infinite numbers, or keys that are not strings."""
    if isinstance(value, dict):
        return all(isinstance(key, str) and _plain(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, int, bool))


def repair_shell(name: str, content: str) -> tuple[str, list[str]]:
    """`\\$(` becomes `$(` when the script does not parse with it and does without it."""
    if ESCAPED_SUBSTITUTION not in content or len(content) > MAX_REPAIRED_CHARS:
        return content, []
    if syntax_problem(name, content.encode()) is None:
        return content, []
    lines = [number for number, line in enumerate(content.split("\n"), 1) if ESCAPED_SUBSTITUTION in line]
    fixed = content.replace(ESCAPED_SUBSTITUTION, "$(")
    if syntax_problem(name, fixed.encode()) is not None:
        return content, []
    return fixed, [f"\\$( became $( on line{_plural(lines)} {_numbers(lines)} (a backslash makes $ a literal dollar sign)."]


def repair_python(name: str, content: str) -> tuple[str, list[str]]:
    """(content to write, what was repaired, one sentence each); the content unchanged and
    nothing said unless it is Python that does not compile and compiles after the repairs."""
    if not name.lower().endswith(".py") or len(content) > MAX_REPAIRED_CHARS or _error_line(content) is None:
        return content, []
    said: list[str] = []
    fixed, closed = close_docstrings(content)
    if closed:
        said.append(f"The docstring's closing quotes on line{_plural(closed)} {_numbers(closed)} were completed (two quotes became three).")
    fixed, split = split_block_lines(fixed)
    if split:
        said.append(f"Line{_plural(split)} {_numbers(split)} put a block statement after ; so {'they were' if len(split) > 1 else 'it was'} written as separate, indented lines.")
    fixed, tabbed = unescape_indentation(fixed)
    if tabbed:
        said.append(f"Line{_plural(tabbed)} {_numbers(tabbed)} began with \\t written out (a backslash and a t, not a tab), so it became indentation.")
    if said and _error_line(fixed) is None:
        return fixed, said
    return content, []


def unescape_indentation(content: str) -> tuple[str, list[int]]:
    """A line that begins (after any spaces) with written `\\t` escapes gets four spaces for each:
    (content, line numbers). In a fenced block nothing is escaped, and a small model indented
    `return` with `\\t` there, twice, after being told the file did not parse."""
    lines = content.split("\n")
    changed: list[int] = []
    for number, line in enumerate(lines, 1):
        match = LEADING_TAB_ESCAPES.match(line)
        if match is not None:
            lines[number - 1] = match.group(1) + INDENT * (len(match.group(2)) // 2) + line[match.end():]
            changed.append(number)
    return "\n".join(lines), changed


def close_docstrings(content: str) -> tuple[str, list[int]]:
    """Give each triple-quoted string closed with two quotes its third: (content, line numbers)."""
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
        if repaired and _compiles_or_other_error("\n".join(lines)):
            return "\n".join(lines), repaired
    return content, []


def split_block_lines(content: str) -> tuple[str, list[int]]:
    """Split each line the compiler stops at that puts a block statement after `;`:
    (content, numbers of the lines split, as the model wrote them). Only lines the compiler
    points to are touched, so text inside a string that looks like code never is."""
    lines = content.split("\n")
    split: list[int] = []
    added = 0
    for _ in range(MAX_SPLIT_LINES):
        number = _error_line("\n".join(lines))
        if number is None or not 1 <= number <= len(lines):
            break
        pieces = _split_line(lines[number - 1])
        if pieces is None:
            break
        lines[number - 1:number] = pieces
        split.append(number - added)
        added += len(pieces) - 1
    return "\n".join(lines), sorted(split)


def _split_line(line: str) -> list[str] | None:
    """The statements of one line as separate lines, or None if the line is not a one-line
    block after `;` (or cannot be read on its own)."""
    statements = _statements(line)
    if statements is None or len(statements) < 2 or not any(_opens_block(text) for text in statements[1:]):
        return None
    level = len(line) - len(line.lstrip(" "))
    indent = line[:level]
    out: list[str] = []
    depth = 0
    for text in statements:
        while True:
            header, body = _header(text)
            if header is None:
                out.append(indent + INDENT * depth + text)
                break
            out.append(indent + INDENT * depth + header)
            depth += 1
            if not body:
                break
            text = body
    return out


def _statements(line: str) -> list[str] | None:
    """The line split at each `;` outside brackets and strings; None if it does not tokenize
    alone (a string or bracket continued on another line) or holds a continuation keyword."""
    text = line.strip()
    tokens = _top_level_tokens(text)
    if tokens is None or any(token.type == tokenize.NAME and token.string in CONTINUATIONS for token in tokens):
        return None
    cuts = [0, *(token.start[1] for token in tokens if token.type == tokenize.OP and token.string == ";"), len(text)]
    parts = [text[start:end].lstrip(";").strip() for start, end in itertools.pairwise(cuts)]
    return [part for part in parts if part]


def _opens_block(statement: str) -> bool:
    return statement.split(None, 1)[0].rstrip(":") in BLOCK_KEYWORDS if statement else False


def _header(statement: str) -> tuple[str | None, str]:
    """(a block statement's header up to its `:`, the statement after it) or (None, "")."""
    tokens = _top_level_tokens(statement) if _opens_block(statement) else None
    for token in tokens or []:
        if token.type == tokenize.OP and token.string == ":":
            return statement[:token.end[1]], statement[token.end[1]:].strip()
    return None, ""


def _top_level_tokens(text: str) -> list[tokenize.TokenInfo] | None:
    """The tokens of one line of code that stand outside brackets; None if it does not tokenize alone."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    depth = 0
    top: list[tokenize.TokenInfo] = []
    for token in tokens:
        if token.type == tokenize.OP and token.string in ("(", "[", "{"):
            depth += 1
        elif token.type == tokenize.OP and token.string in (")", "]", "}"):
            depth -= 1
        elif depth == 0:
            top.append(token)
    return top


def _plural(numbers: list[int]) -> str:
    return "s" if len(numbers) > 1 else ""


def _numbers(numbers: list[int]) -> str:
    return ", ".join(str(number) for number in numbers)


def _error_line(text: str) -> int | None:
    """The line the compiler stops at; None if the text compiles, or is nested too deep to compile
    here (not repaired: written as it came)."""
    try:
        compile(text, "<repair>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc.lineno or 0
    except ValueError:
        return 0
    except (RecursionError, MemoryError):
        return None
    return None


def _compiles_or_other_error(text: str) -> bool:
    """Whether the text compiles, or stops on something other than an unterminated string: a
    docstring repair is kept for the next repair to build on only when it closed the string."""
    try:
        compile(text, "<repair>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return "unterminated" not in str(exc.msg)
    except (ValueError, RecursionError, MemoryError):
        return False
    return True
