"""Turn one model reply into one decision: a tool call, a final answer, or a format error.

This module implements `docs/parser-spec.md`. `parse_reply` is a pure function and never
raises: every problem becomes `ParsedReply.error`, a short correction the loop sends back to
the model. The agent never guesses what the model meant and never runs a half-received call.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mzagent_tui.agent.ground.call_syntax import FENCE, LANGUAGE_CHARS

__all__ = ["ParsedReply", "bind_arguments", "parse_reply", "partial_tag_length", "wrap_observation"]


@dataclass
class ParsedReply:
    """The decision read from one reply. Exactly one of `tool`, `final_answer`, `error` is set."""

    thought: str | None = None
    tool: str | None = None
    args: list[Any] = field(default_factory=list)
    final_answer: str | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def is_action(self) -> bool:
        return self.tool is not None


class _FormatError(Exception):
    """Internal: a format problem, turned into `ParsedReply.error` at the top."""


_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_THOUGHT_OPEN = re.compile(r"<thought>", re.IGNORECASE)
_THOUGHT_CLOSE = re.compile(r"</thought>", re.IGNORECASE)
_DECISION = re.compile(r"<(action|final_answer)>", re.IGNORECASE)
_FINAL_CLOSE = re.compile(r"</final_answer>", re.IGNORECASE)
_TOOL_CALL = re.compile(r"<tool_call>", re.IGNORECASE)
_ACTION_LINE = re.compile(r"^[ \t]*Action[ \t]*:[ \t]*", re.IGNORECASE | re.MULTILINE)
_JSON_LINE = re.compile(r"^[ \t]*(?:```[A-Za-z]*[ \t]*\n[ \t]*)?(?=\{)", re.MULTILINE)
_LEFTOVER_TAG = re.compile(r"<(action|observation|final_answer|tool_call)>", re.IGNORECASE)
_LEADING_FENCE = re.compile(rf"^```[{LANGUAGE_CHARS}]*[ \t]*\n?")
_FENCE_LANGUAGE = re.compile(rf"[{LANGUAGE_CHARS}]*")
_FENCE_CLOSE = re.compile(r"\n[ \t]*```[ \t]*(?=[ \t\r\n]*[,)])")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_KEYWORD = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)")
_WINDOWS_PATH = re.compile(r"^[A-Za-z]:\\(?!\\)")
_STRING_PREFIXES = {"r", "u", "f", "b", "rb", "br", "fr", "rf"}
_OPEN_QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d"}
_SIMPLE_ESCAPES = {
    "n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"',
    "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\n": "",
}
_HEX_WIDTH = {"x": 2, "u": 4, "U": 8}
_NAME_KEYS = ("name", "tool", "tool_name", "action")
_ARG_KEYS = ("arguments", "args", "parameters", "action_input", "input")

NEWLINE_RULE = "escape newlines inside strings as \\n"
UNESCAPED_QUOTES_NOTE = (
    "the last argument held quotes of its own kind without a backslash; it was read up to the quote before the "
    "closing parenthesis, so check the result (write \\\" inside a double-quoted string)"
)
UNCLOSED_STRING_NOTE = (
    "the last argument's string was never closed (the quote before the closing parenthesis had a backslash); "
    "it was read to the end of the action, so check the result"
)
_LOOSE_NOTES = {-1: UNESCAPED_QUOTES_NOTE, -2: UNCLOSED_STRING_NOTE}
"""The note for each loose reading, by the end `_parse_call` returns for it."""
_CLOSING_TAG = re.compile(r"</(action|tool_call)>", re.IGNORECASE)
_OWN_TAGS = re.compile(r"<(/?)(observation|final_answer|action|thought|question|think|tool_call)\b", re.IGNORECASE)
_CLOSING_CALL = re.compile(r"([\"'])[ \t\r\n]*\)[ \t\r\n`]*\Z")


def parse_reply(text: str, signatures: Mapping[str, Sequence[str]] | None = None) -> ParsedReply:
    """Read one model reply.

    Args:
        text: the reply as the model wrote it (reasoning fields excluded).
        signatures: tool name -> parameter names, used to bind keyword arguments.
    """
    try:
        return _parse(text if isinstance(text, str) else str(text), signatures or {})
    except _FormatError as exc:
        return ParsedReply(error=str(exc))
    except Exception as exc:  # noqa: BLE001 - the contract is "never raises"
        return ParsedReply(error=f"the reply could not be read ({type(exc).__name__}); use the format from the instructions")


def _parse(text: str, signatures: Mapping[str, Sequence[str]]) -> ParsedReply:
    text = _strip_reasoning(text)
    thought, text = _extract_thought(text)
    match = _DECISION.search(text)
    if match is None:
        return _parse_fallback(text, thought, signatures)
    preamble = text[: match.start()].strip()
    if thought is None and preamble:
        thought = preamble
    body = text[match.end():]
    if match.group(1).lower() == "final_answer":
        return _final(body, thought)
    result = _parse_action_body(body, signatures)
    result.thought = thought
    return result


def _strip_reasoning(text: str) -> str:
    text = _THINK_BLOCK.sub("", text)
    close = None
    for close in _THINK_CLOSE.finditer(text):
        pass
    if close is not None:
        text = text[close.end():]
    opened = _THINK_OPEN.search(text)
    if opened is not None:
        text = text[: opened.start()]
    return text


def _extract_thought(text: str) -> tuple[str | None, str]:
    opened = _THOUGHT_OPEN.search(text)
    if opened is None:
        return None, text
    closed = _THOUGHT_CLOSE.search(text, opened.end())
    if closed is not None:
        thought = text[opened.end(): closed.start()]
        rest = text[: opened.start()] + text[closed.end():]
    else:
        decision = _DECISION.search(text, opened.end())
        end = decision.start() if decision else len(text)
        thought = text[opened.end(): end]
        rest = text[: opened.start()] + text[end:]
    return thought.strip(), rest


def _final(body: str, thought: str | None) -> ParsedReply:
    closed = _FINAL_CLOSE.search(body)
    answer = (body[: closed.start()] if closed else body).strip()
    if not answer:
        return ParsedReply(thought=thought, error="the <final_answer> is empty; write the answer inside it")
    return ParsedReply(thought=thought, final_answer=answer)


def _parse_fallback(text: str, thought: str | None, signatures: Mapping[str, Sequence[str]]) -> ParsedReply:
    marker = _TOOL_CALL.search(text)
    closing = "</tool_call>"
    if marker is None:
        marker = _ACTION_LINE.search(text)
        closing = "</action>"
    if marker is None:
        marker = _bare_json_call(text, signatures)
        closing = "```"
    if marker is None:
        raise _FormatError(
            "no <action> or <final_answer> found; reply with <thought>...</thought> and then "
            "either <action>tool(args)</action> or <final_answer>...</final_answer>"
        )
    result = _parse_action_body(text[marker.end():], signatures, closing=closing)
    result.thought = thought if thought is not None else (text[: marker.start()].strip() or None)
    return result


def _bare_json_call(text: str, signatures: Mapping[str, Sequence[str]]) -> re.Match[str] | None:
    """A JSON call on a line of its own (Hermes style without the tags, which Qwen models fall
    into): `{"name": "read_file", "arguments": {...}}`. Only a known tool's name counts, so a
    JSON example in an explanation does not become an action."""
    for match in _JSON_LINE.finditer(text):
        try:
            obj, _ = json.JSONDecoder(strict=False).raw_decode(text, match.end())
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        name, call = _json_call_parts(obj)
        if name in signatures and any(k in call for k in _ARG_KEYS):
            return match
    return None


def _json_call_parts(obj: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """The tool's name in a JSON call and the object holding its arguments (an OpenAI-style
    `{"function": {...}}` is unwrapped)."""
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    return next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), None), obj


def _parse_action_body(body: str, signatures: Mapping[str, Sequence[str]], closing: str = "</action>") -> ParsedReply:
    stripped = _LEADING_FENCE.sub("", body.lstrip(), count=1).lstrip("` \t\r\n")
    if not stripped or stripped.lower().startswith(closing):
        raise _FormatError("the <action> is empty; write one tool call such as read_file(\"a.py\")")
    if stripped.startswith("{"):
        name, positional, keywords, end = _parse_json_call(stripped)
    else:
        name, positional, keywords, end = _parse_call(stripped)
    args = _bind(name, positional, keywords, signatures)
    notes = _leftover_notes(stripped[end:], closing)
    if end < 0:
        notes = [_LOOSE_NOTES[end]]
    return ParsedReply(tool=name, args=args, notes=notes)


def _leftover_notes(rest: str, closing: str) -> list[str]:
    rest = rest.strip().lstrip("`").strip()
    if rest.lower().startswith(closing):
        rest = rest[len(closing):]
    found = [m.group(1).lower() for m in _LEFTOVER_TAG.finditer(rest)]
    notes = []
    if "action" in found or "tool_call" in found:
        notes.append("only the first action was run; write one action per reply")
    if "observation" in found:
        notes.append("the <observation> you wrote was ignored; observations come from the tools")
    if "final_answer" in found:
        notes.append("the final answer you wrote before seeing this result was ignored; give it after checking the result")
    return notes


def _parse_json_call(text: str) -> tuple[str, list[Any], list[tuple[str, Any]], int]:
    try:
        obj, end = json.JSONDecoder(strict=False).raw_decode(text)
    except ValueError as exc:  # also a plain ValueError, without `msg`: a number longer than int() reads
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else exc
        raise _FormatError(f"the action is not valid JSON ({reason}); write the call as tool(args)") from None
    if not isinstance(obj, dict):
        raise _FormatError("the JSON action must be an object with \"name\" and \"arguments\"")
    name, obj = _json_call_parts(obj)
    if not name or not _NAME.fullmatch(name):
        raise _FormatError("the JSON action needs a \"name\" naming the tool")
    raw_args: Any = next((obj[k] for k in _ARG_KEYS if k in obj), {})
    if isinstance(raw_args, str):
        try:
            raw_args = json.loads(raw_args, strict=False)
        except ValueError:
            raw_args = [raw_args]
        if not isinstance(raw_args, (dict, list)):
            raw_args = [raw_args]
    if isinstance(raw_args, dict):
        return name, [], [(str(k), v) for k, v in raw_args.items()], end
    if isinstance(raw_args, list):
        return name, list(raw_args), [], end
    return name, [raw_args], [], end


def _parse_call(text: str) -> tuple[str, list[Any], list[tuple[str, Any]], int]:
    name_match = _NAME.match(text)
    if name_match is None:
        raise _FormatError("the action must be a tool call such as read_file(\"a.py\")")
    name = name_match.group(0)
    pos = name_match.end()
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    if pos >= len(text) or text[pos] != "(":
        raise _FormatError(f"write the action as a call with parentheses: {name}(...)")
    try:
        raw_args, end = _split_call_arguments(text, pos + 1)
        positional: list[Any] = []
        keywords: list[tuple[str, Any]] = []
        for index, raw in enumerate(raw_args, start=1):
            keyword = _KEYWORD.match(raw)
            source = raw[keyword.end():] if keyword else raw
            value = _literal(source, index)
            if keyword:
                keywords.append((keyword.group(1), value))
            elif keywords:
                raise _FormatError(f"argument {index} is positional but comes after a keyword argument")
            else:
                positional.append(value)
    except _FormatError:
        loose = _last_string_to_the_end(text, pos + 1)
        if loose is None:
            raise
        args, unclosed = loose
        return name, args, [], -2 if unclosed else -1
    return name, positional, keywords, end


def _last_string_to_the_end(text: str, start: int) -> tuple[list[Any], bool] | None:
    """The one reading of a call whose last string holds unescaped quotes of its own kind
    (`write_to_file("a.py", "def f():\n    \"\"\"Doc.\"\"\"\n")` written without the backslashes):
    the last argument runs from its opening quote to the quote just before the call's closing
    `)` at the end of the action. Only for two positional strings, where the second is content
    (a lone argument such as `"a" + "b"` stays an error), and never for a reply cut off before
    its `)` (None).

    When that quote has a backslash, the string was never closed (True with the arguments): a
    small model wrote `'print(f\\'on {PORT}\\')` and the action's end, the content's own `')`
    taken for the string's close. The content then runs to the end of the action, the `)` in it
    where it closes a parenthesis the content opened."""
    tag = _CLOSING_TAG.search(text, start)
    closing = _CLOSING_CALL.search(text[: tag.start() if tag else len(text)], start)
    if closing is None:
        return None
    quote, last_end = closing.group(1), closing.start()
    first_start = _skip_spaces(text, start)
    if first_start >= last_end or text[first_start] not in "\"'":
        return None
    try:
        first, after = _read_string(text, first_start, "", 1)
    except _FormatError:
        return None
    comma = _skip_spaces(text, after)
    if comma >= last_end or text[comma] != ",":
        return None
    second_start = _skip_spaces(text, comma + 1)
    if second_start >= last_end or text[second_start] != quote:
        return None
    backslashes = len(text[second_start + 1 : last_end]) - len(text[second_start + 1 : last_end].rstrip("\\"))
    if backslashes % 2 == 0:
        return [first, _decode(text[second_start + 1 : last_end], raw_string=False)], False
    content = _decode(text[second_start + 1 : last_end + 1], raw_string=False)
    if content.count("(") > content.count(")"):
        content += ")"
    return [first, content], True


def _skip_spaces(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def _split_call_arguments(text: str, start: int) -> tuple[list[str], int]:
    """Scan from just after `(` to the matching `)`, outside string literals.

    Returns each top-level argument as Python source in which every string literal has
    already been decoded and re-written with `repr`, so `ast.literal_eval` can finish the job.
    """
    args: list[str] = []
    current: list[str] = []
    depth = 0
    i = start
    while i < len(text):
        char = text[i]
        prefix = _string_prefix(text, i)
        if prefix is not None:
            literal, i = _read_string(text, i + len(prefix), prefix, len(args) + 1)
            current.append(repr(literal))
            continue
        if char in _OPEN_QUOTES:
            literal, i = _read_string(text, i, "", len(args) + 1)
            current.append(repr(literal))
            continue
        if text.startswith(FENCE, i):
            literal, i = _read_fenced(text, i, len(args) + 1)
            current.append(repr(literal))
            continue
        if char == "#":
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                if char != ")":
                    raise _FormatError(f"unbalanced '{char}' in argument {len(args) + 1}")
                last = "".join(current).strip()
                if last:  # empty after a trailing comma, or no arguments at all
                    args.append(last)
                return args, i + 1
            depth -= 1
        elif char == "," and depth == 0:
            piece = "".join(current).strip()
            if not piece:
                raise _FormatError(f"argument {len(args) + 1} is empty")
            args.append(piece)
            current = []
            i += 1
            continue
        current.append(char)
        i += 1
    raise _FormatError("the call is not closed with ')'; the reply may have been cut off, send the whole call again")


def _string_prefix(text: str, i: int) -> str | None:
    """Return a string prefix (r, f, b, ...) starting at i if a quote follows it."""
    if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
        return None
    for length in (2, 1):
        candidate = text[i: i + length]
        if candidate.lower() in _STRING_PREFIXES and text[i + length: i + length + 1] in _OPEN_QUOTES:
            if candidate.isalpha():
                return candidate
    return None


MAX_SHOWN_CALL = 4000
"""A corrected call longer than this is not shown in a format error."""


def _read_string(text: str, i: int, prefix: str, arg_index: int) -> tuple[str, int]:
    """Read one string literal starting at its opening quote; return (value, index after it)."""
    kind = prefix.lower()
    if "f" in kind:
        raise _FormatError(f"argument {arg_index} is an f-string; write the final text as a plain string")
    if "b" in kind:
        raise _FormatError(f"argument {arg_index} is a bytes literal; write a plain string")
    opener = text[i]
    closer = _OPEN_QUOTES[opener]
    quote = opener * 3 if opener in "\"'" and text.startswith(opener * 3, i) else opener
    end_quote = quote if quote != opener else closer
    j = i + len(quote)
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text.startswith(end_quote, j):
            raw = text[i + len(quote): j]
            return _decode(raw, raw_string="r" in kind), j + len(end_quote)
        j += 1
    if '"""' in text or "'''" in text:
        raise _FormatError(
            f"argument {arg_index} is an unterminated string: the triple quotes (a docstring) inside the content end the "
            'string early; inside a double-quoted string write each quote as \\" (\\"\\"\\"), or write the file with '
            "write_to_file(path, content)"
        )
    cut = text.rfind("</action")
    if cut > i:
        before = text[:cut].rstrip()
        last = before.rpartition("\n")[2][-40:].strip()
        closed = _closed_call(before, quote)
        how = (
            f"With {quote} before the last ), the whole call would be:\n{closed}\nSend that call, or your own corrected one; "
            if closed else f"End the content with {quote} and then close the call, as in ...{quote})</action>; "
        )
        raise _FormatError(f"argument {arg_index} is an unterminated string: it runs on to </action> ({last}</action>) without its closing {quote}. {how}{NEWLINE_RULE}")
    raise _FormatError(f"argument {arg_index} is an unterminated string; {NEWLINE_RULE} and close every quote")


def _read_fenced(text: str, i: int, arg_index: int) -> tuple[str, int]:
    """Read a fenced argument starting at its opening ``` (a language name may follow it): the
    lines after that line, up to a line that is only ``` (indented or not) followed by the call's
    `,` or `)`. Its text is taken as it stands, with nothing unescaped, and ends with a line break."""
    line_end = text.find("\n", i)
    if line_end < 0 or not _FENCE_LANGUAGE.fullmatch(text[i + len(FENCE): line_end].strip()):
        raise _FormatError(f"argument {arg_index} opens a fenced block: start the content on the line after {FENCE}")
    closing = _FENCE_CLOSE.search(text, line_end)
    if closing is None:
        raise _FormatError(f"argument {arg_index} is a fenced block without its end: put {FENCE} on a line of its own after the content, then the closing )")
    return text[line_end + 1: closing.start() + 1], closing.end()


def _closed_call(call: str, quote: str) -> str | None:
    """A call whose last string ran on to `</action>`, with its closing quote put before the call's
    last `)`, when that parses: shown to the model, never run. A small model sent the same unclosed
    call three times after being told how it should end; a whole call it can copy."""
    if not call.endswith(")") or len(call) > MAX_SHOWN_CALL:
        return None
    closed = f"{call[:-1]}{quote})"
    try:
        _parse_call(closed)
    except _FormatError:
        return None
    return closed


def _decode(raw: str, raw_string: bool) -> str:
    """Apply Python escape rules; a string that is not a valid literal is kept verbatim."""
    if raw_string:
        return raw
    if _WINDOWS_PATH.match(raw) and "\\\\" not in raw:
        return raw
    decoded = _unescape(raw)
    return raw if decoded is None else decoded


def _unescape(raw: str) -> str | None:
    out: list[str] = []
    i = 0
    while i < len(raw):
        char = raw[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        if i + 1 >= len(raw):
            return None
        nxt = raw[i + 1]
        if nxt in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[nxt])
            i += 2
        elif nxt in _HEX_WIDTH:
            width = _HEX_WIDTH[nxt]
            digits = raw[i + 2: i + 2 + width]
            if len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
                return None
            code = int(digits, 16)
            if code > 0x10FFFF:
                return None
            out.append(chr(code))
            i += 2 + width
        elif nxt in "01234567":
            j = i + 1
            while j < len(raw) and j < i + 4 and raw[j] in "01234567":
                j += 1
            out.append(chr(int(raw[i + 1: j], 8)))
            i = j
        elif nxt == "N":
            close = raw.find("}", i)
            if not raw.startswith("{", i + 2) or close < 0:
                return None
            try:
                out.append(unicodedata.lookup(raw[i + 3: close]))
            except KeyError:
                return None
            i = close + 1
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out)


def _literal(source: str, index: int) -> Any:
    source = source.strip()
    if not source:
        raise _FormatError(f"argument {index} is empty")
    try:
        return ast.literal_eval(source)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    if _NAME.fullmatch(source):
        raise _FormatError(f"argument {index} is a bare word ({source[:40]}); put text in quotes")
    raise _FormatError(
        f"argument {index} is not a literal value; write plain strings, numbers, lists or dicts (no expressions)"
    )


def wrap_observation(text: str) -> str:
    """Wrap tool output so tags inside it cannot pass for the agent's own."""
    neutral = _OWN_TAGS.sub(r"&lt;\1\2", text)
    return f"<observation>{neutral}</observation>"


def bind_arguments(name: str, arguments: Mapping[str, Any], signatures: Mapping[str, Sequence[str]]) -> ParsedReply:
    """A call whose arguments came as a JSON object (native tool calls): bound to the tool's
    parameters like keyword arguments, with the same errors."""
    try:
        return ParsedReply(tool=name, args=_bind(name, [], [(str(k), v) for k, v in arguments.items()], signatures))
    except _FormatError as exc:
        return ParsedReply(error=str(exc))


def partial_tag_length(text: str, tag: str) -> int:
    """How many characters at the end of streamed `text` could be the start of `tag`: a front-end
    holds them back until the next fragment shows whether the tag has begun."""
    tail = text[-len(tag):].lower()
    for size in range(min(len(tail), len(tag) - 1), 0, -1):
        if tag.startswith(tail[-size:]):
            return size
    return 0


def _bind(
    name: str,
    positional: list[Any],
    keywords: list[tuple[str, Any]],
    signatures: Mapping[str, Sequence[str]],
) -> list[Any]:
    if not keywords:
        return positional
    params = signatures.get(name)
    if params is None:
        return positional + [value for _, value in keywords]
    params = list(params)
    slots: dict[int, Any] = dict(enumerate(positional))
    for key, value in keywords:
        if key not in params:
            raise _FormatError(f"{name} has no parameter '{key}'; its parameters are: {', '.join(params) or 'none'}")
        index = params.index(key)
        if index in slots:
            raise _FormatError(f"{name} got '{key}' twice")
        slots[index] = value
    missing = [params[i] for i in range(max(slots) + 1) if i not in slots]
    if missing:
        raise _FormatError(f"{name} is missing argument '{missing[0]}'")
    return [slots[i] for i in range(len(slots))]
