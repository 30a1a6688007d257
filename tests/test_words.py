"""The model's words in one place (`ground/words.py`): every message the code names exists, every
call gives exactly the fields its template has, and no template is left unused."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from mzagent_tui.agent.ground.errors import ToolError
from mzagent_tui.agent.ground.words import WORDS, fields_of, say

PACKAGE = Path(__file__).resolve().parents[1] / "mzagent_tui"
SPEAKERS = ("say", "ToolError")
"""The calls that name a message: its name first, its fields as keywords."""
PASSING_ON = PACKAGE / "agent/ground/errors.py"
"""ToolError hands the name it was given to `say`."""


def calls_in(source: str) -> Iterator[ast.Call]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SPEAKERS:
            yield node


def speaking_calls() -> Iterator[tuple[str, ast.Call]]:
    for path in PACKAGE.rglob("*.py"):
        if path != PASSING_ON:
            yield from ((f"{path.relative_to(PACKAGE)}:{call.lineno}", call) for call in calls_in(path.read_text()))


def problem(call: ast.Call) -> str | None:
    """What is wrong with one call: a name not a constant, not in WORDS, or fields not exactly the template's."""
    if not (call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
        return "the name is not a constant string"
    name = call.args[0].value
    given = {keyword.arg for keyword in call.keywords}
    if name not in WORDS:
        return f"no message {name!r}"
    if len(call.args) > 1 or None in given or given != fields_of(name):
        return f"{name} takes {sorted(fields_of(name))}, given {sorted(map(str, given))}"
    return None


def test_every_call_names_a_message_by_a_constant_and_gives_exactly_its_fields() -> None:
    """A name built at run time could be checked neither here nor by searching the code."""
    assert [f"{where}: {problem(call)}" for where, call in speaking_calls() if problem(call)] == []


@pytest.mark.parametrize(
    ("source", "wrong"),
    [
        ('raise ToolError("edit.same")', "edit.same takes ['rel'], given []"),
        ('say("edit.same", rel=rel, path=path)', "edit.same takes ['rel'], given ['path', 'rel']"),
        ('say("edit.same", **fields)', "edit.same takes ['rel'], given ['None']"),
        ('ToolError("edit.sam", rel=rel)', "no message 'edit.sam'"),
        ("ToolError(reason, rel=rel)", "the name is not a constant string"),
        ('ToolError(f"{rel} is wrong")', "the name is not a constant string"),
    ],
)
def test_the_check_finds_a_wrong_call(source: str, wrong: str) -> None:
    """The check above, shown to fail where it should."""
    assert [problem(call) for call in calls_in(source)] == [wrong]
    assert problem(next(calls_in('ToolError("edit.same", rel=rel)'))) is None


def test_no_message_is_left_unused() -> None:
    used = {call.args[0].value for _, call in speaking_calls()}  # type: ignore[attr-defined]
    assert sorted(set(WORDS) - used) == []


@pytest.mark.parametrize("name", sorted(WORDS))
def test_each_message_renders_with_its_fields(name: str) -> None:
    """Every field filled (a number where the template formats one), nothing left in braces."""
    numeric = {"byte", "size", "limit", "count", "number", "offset", "position"}
    fields = {field: (7 if field in numeric else f"<{field}>") for field in fields_of(name)}
    text = say(name, **fields)
    assert all(str(value) in text or repr(value) in text for value in fields.values())
    assert "{" not in text.replace('{"step"', "")


def test_a_missing_or_extra_field_is_refused_at_once() -> None:
    with pytest.raises(TypeError, match="edit.same takes the fields"):
        say("edit.same")
    with pytest.raises(TypeError, match="given"):
        say("edit.same", rel="a.py", path="a.py")
    with pytest.raises(KeyError):
        say("no.such.message")


def test_a_tool_error_keeps_its_reason_and_fields_and_reads_as_the_text() -> None:
    error = ToolError("edit.same", rel="src/a.py")
    assert (error.reason, error.fields) == ("edit.same", {"rel": "src/a.py"})
    assert str(error) == "old_text and new_text are the same, so src/a.py would not change; nothing was edited"


def test_a_field_may_be_called_name() -> None:
    """`name` is a field of some messages: the message's own name is positional only."""
    assert str(ToolError("write.not_a_string", name="content", kind="int")) == "content must be a string, got int"
