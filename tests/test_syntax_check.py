"""What `syntax_problem` says about a broken file: the cause, where the parser names a symptom."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from mzagent_tui.agent.tools.syntax_check import TRAILING_COMMAS_NAMED, syntax_problem


def problem(text: str, name: str = "data.json") -> str | None:
    return syntax_problem(name, text.encode())


def test_a_trailing_comma_is_named_where_the_decoder_names_the_bracket_after_it() -> None:
    """Seen: told "Expecting property name enclosed in double quotes (line 5, column 1)", a small
    model wrote the same file, comma and all, three times."""
    assert problem('{\n  "open": true,\n}\n') == (
        "invalid JSON: a comma after the last item of a list or object (line 2, column 15): JSON allows none there, remove it"
    )


def test_every_trailing_comma_is_named_at_once() -> None:
    text = '{\n  "name": "box",\n  "sizes": [1, 2, 3,],\n  "open": true,\n}\n'
    assert problem(text) == (
        "invalid JSON: 2 commas after the last item of a list or object (line 3, column 20 and line 4, column 15): "
        "JSON allows none there, remove them"
    )


def test_other_errors_keep_the_decoders_message() -> None:
    assert problem("[1, 2") == "invalid JSON: Expecting ',' delimiter (line 1, column 6)"
    assert problem('{"a": 1,, }') == "invalid JSON: Expecting property name enclosed in double quotes (line 1, column 9)"
    assert problem("[,]") == "invalid JSON: Expecting value (line 1, column 2)"
    assert problem('["x,]" 2]') == "invalid JSON: Expecting ',' delimiter (line 1, column 8)", "a comma inside a string is no trailing comma"
    assert problem('{"a": ",}"}') is None


def test_no_more_than_the_limit_is_named() -> None:
    text = "[" + "[1,]," * (TRAILING_COMMAS_NAMED + 5) + "[2]]"
    assert problem(text).startswith(f"invalid JSON: {TRAILING_COMMAS_NAMED} commas after the last item")


scalars = st.none() | st.booleans() | st.integers() | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=5)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=12)


def with_trailing_commas(value: object, indent: str = "") -> str:
    """JSON text of `value`, one item a line, with a comma after the last item of every non-empty list and object."""
    inner = indent + "  "
    if isinstance(value, list) and value:
        return "[\n" + "".join(f"{inner}{with_trailing_commas(item, inner)},\n" for item in value) + indent + "]"
    if isinstance(value, dict) and value:
        return "{\n" + "".join(f"{inner}{json.dumps(key)}: {with_trailing_commas(item, inner)},\n" for key, item in value.items()) + indent + "}"
    return json.dumps(value)


@given(values)
def test_removing_the_commas_named_gives_back_the_value(value: object) -> None:
    text = with_trailing_commas(value)
    said = problem(text)
    places = [(int(line), int(column)) for line, column in re.findall(r"line (\d+), column (\d+)", said or "")]
    if said is None:
        assert text == json.dumps(value), "only text without a trailing comma parses"
        return
    assert len(places) == min(_non_empty_containers(value), TRAILING_COMMAS_NAMED)
    lines = text.split("\n")
    for line, column in places:
        assert lines[line - 1][column - 1] == ","
        lines[line - 1] = lines[line - 1][: column - 1] + " " + lines[line - 1][column:]
    if len(places) < TRAILING_COMMAS_NAMED:
        assert json.loads("\n".join(lines)) == value


def _non_empty_containers(value: object) -> int:
    if isinstance(value, list):
        return bool(value) + sum(_non_empty_containers(item) for item in value)
    if isinstance(value, dict):
        return bool(value) + sum(_non_empty_containers(item) for item in value.values())
    return 0

