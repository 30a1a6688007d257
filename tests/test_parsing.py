"""The parser contract (docs/parser-spec.md), table-driven, plus a never-raises property."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mzagent_tui.agent.ground.call_syntax import call_source
from mzagent_tui.agent.model.parsing import UNCLOSED_STRING_NOTE, parse_reply

SIGS = {
    "read_file": ["file_path", "start_line"],
    "write_to_file": ["file_path", "content"],
    "run_terminal_command": ["command"],
}

# (reply, expected tool, expected args)
ACTIONS = [
    # The origin's prompt examples.
    ('<thought>I need to read it</thought>\n<action>read_file("/p/main.py")</action>', "read_file", ["/p/main.py"]),
    ('<action>write_to_file("/p/a.py", "print(1)\\n")</action>', "write_to_file", ["/p/a.py", "print(1)\n"]),
    ('<action>run_terminal_command("dir")</action>', "run_terminal_command", ["dir"]),
    ('<action>write_to_file("test.txt", "a\\nb\\tc")</action>', "write_to_file", ["test.txt", "a\nb\tc"]),
    # Quotes and escapes.
    ("<action>read_file('single.py')</action>", "read_file", ["single.py"]),
    ('<action>write_to_file("q.py", "say \\"hi\\"")</action>', "write_to_file", ["q.py", 'say "hi"']),
    ('<action>write_to_file("t.py", """line1\nline2 "quoted" )""")</action>', "write_to_file", ["t.py", 'line1\nline2 "quoted" )']),
    ("<action>write_to_file('t.py', '''a\n'b'\n''')</action>", "write_to_file", ["t.py", "a\n'b'\n"]),
    ('<action>write_to_file("r.py", r"\\d+\\n")</action>', "write_to_file", ["r.py", "\\d+\\n"]),
    ('<action>write_to_file("u.txt", "caf\\u00e9 \\x41")</action>', "write_to_file", ["u.txt", "café A"]),
    ('<action>write_to_file("e.txt", "\\N{BULLET} x")</action>', "write_to_file", ["e.txt", "\u2022 x"]),
    ('<action>write_to_file("re.py", "\\d keeps")</action>', "write_to_file", ["re.py", "\\d keeps"]),
    ('<action>write_to_file("b.txt", "back\\\\slash")</action>', "write_to_file", ["b.txt", "back\\slash"]),
    ('<action>write_to_file("n.txt", "real\nnewline")</action>', "write_to_file", ["n.txt", "real\nnewline"]),
    # Windows paths and invalid escapes kept verbatim.
    ('<action>read_file("C:\\new\\test.txt")</action>', "read_file", ["C:\\new\\test.txt"]),
    ('<action>read_file("C:\\\\dir\\\\")</action>', "read_file", ["C:\\dir\\"]),
    ('<action>read_file("C:\\Users\\new")</action>', "read_file", ["C:\\Users\\new"]),
    ('<action>read_file("bad \\U0000zzzz")</action>', "read_file", ["bad \\U0000zzzz"]),
    # Curly quotes from Chinese input methods.
    ("<action>read_file(\u201c\u4e2d\u6587.txt\u201d)</action>", "read_file", ["\u4e2d\u6587.txt"]),
    # Closing tags inside strings, brackets inside strings, nesting.
    ('<action>write_to_file("x.html", "</action><final_answer>no</final_answer>)")</action>', "write_to_file", ["x.html", "</action><final_answer>no</final_answer>)"]),
    ('<action>write_to_file("p.py", "f(a, (b, [c]))")</action>', "write_to_file", ["p.py", "f(a, (b, [c]))"]),
    ("<action>my_tool([1, 2, {'a': (3, 4)}], None, True, -2.5)</action>", "my_tool", [[1, 2, {"a": (3, 4)}], None, True, -2.5]),
    ('<action>read_file("a.py",)</action>', "read_file", ["a.py"]),
    ('<action>read_file("a.py")  # read it first</action>', "read_file", ["a.py"]),
    ('<action>read_file(  "a.py"  ,  20  )</action>', "read_file", ["a.py", 20]),
    ("<action>list_things()</action>", "list_things", []),
    # Keyword arguments bind to parameter names.
    ('<action>write_to_file(content="x", file_path="/a")</action>', "write_to_file", ["/a", "x"]),
    ('<action>write_to_file("/a", content="y")</action>', "write_to_file", ["/a", "y"]),
    ('<action>unknown_tool(b=1, a=2)</action>', "unknown_tool", [1, 2]),
    # Missing closing tags, fences, backticks, case.
    ('<thought>go</thought><action>read_file("a.py")', "read_file", ["a.py"]),
    ('<action>\n```python\nread_file("a.py")\n```\n</action>', "read_file", ["a.py"]),
    ("<action>`read_file('a.py')`</action>", "read_file", ["a.py"]),
    ('<ACTION>read_file("a.py")</ACTION>', "read_file", ["a.py"]),
    ('<Thought>x</Thought>\n<Action>read_file("a.py")</Action>', "read_file", ["a.py"]),
    # JSON bodies.
    ('<action>{"name": "read_file", "arguments": {"file_path": "a.py"}}</action>', "read_file", ["a.py"]),
    ('<action>{"tool": "write_to_file", "args": ["a.py", "x\\ny"]}</action>', "write_to_file", ["a.py", "x\ny"]),
    ('<action>{"action": "run_terminal_command", "action_input": "ls -la"}</action>', "run_terminal_command", ["ls -la"]),
    ('<action>{"tool_name": "read_file", "parameters": "{\\"file_path\\": \\"b.py\\"}"}</action>', "read_file", ["b.py"]),
    # Fallbacks without <action>.
    ('<tool_call>{"name": "read_file", "arguments": {"file_path": "a.py"}}</tool_call>', "read_file", ["a.py"]),
    ('Thought: I will list.\nAction: run_terminal_command("ls")', "run_terminal_command", ["ls"]),
    # A bare JSON call on a line of its own (Hermes without the tags), fenced or not.
    ('I will read it.\n{"name": "read_file", "arguments": {"file_path": "a.py"}}', "read_file", ["a.py"]),
    ('<thought>look</thought>\n```json\n{"name": "run_terminal_command", "arguments": {"command": "ls"}}\n```', "run_terminal_command", ["ls"]),
    ('Example: {"x": 1}\n{"function": {"name": "read_file", "arguments": "{\\"file_path\\": \\"b.py\\"}"}}', "read_file", ["b.py"]),
    # Reasoning is never executed.
    ('<think>maybe <action>run_terminal_command("rm -rf /")</action></think><action>read_file("a.py")</action>', "read_file", ["a.py"]),
    ('pre-filled reasoning <action>run_terminal_command("rm -rf /")</action></think><action>read_file("a.py")</action>', "read_file", ["a.py"]),
    # Tags quoted inside a thought do not count.
    ('<thought>I must not write <final_answer> yet</thought><action>read_file("a.py")</action>', "read_file", ["a.py"]),
]


@pytest.mark.parametrize(("reply", "tool", "args"), ACTIONS)
def test_actions(reply: str, tool: str, args: list) -> None:
    parsed = parse_reply(reply, SIGS)
    assert parsed.error is None, parsed.error
    assert parsed.final_answer is None
    assert parsed.tool == tool
    assert parsed.args == args


FINALS = [
    ("<thought>done</thought><final_answer>All good.</final_answer>", "All good."),
    ("<final_answer>\n  cut by a stop sequence  ", "cut by a stop sequence"),
    ("<FINAL_ANSWER>Upper</FINAL_ANSWER>", "Upper"),
    ('<final_answer>use <action>x()</action> later</final_answer><action>read_file("a")</action>', "use <action>x()</action> later"),
    ("<think>unclosed reasoning <final_answer>no", None),
]


@pytest.mark.parametrize(("reply", "answer"), FINALS)
def test_final_answers(reply: str, answer: str | None) -> None:
    parsed = parse_reply(reply, SIGS)
    assert parsed.tool is None
    assert parsed.final_answer == answer
    if answer is None:
        assert parsed.error is not None


ERRORS = [
    ("Just some prose with no tags.", "no <action>"),
    ("", "no <action>"),
    ("<action>read_file(a.py)</action>", "bare word"),
    ("<action>read_file(path)</action>", "bare word"),
    ('<action>read_file("a" + "b")</action>', "not a literal"),
    ('<action>read_file(f"{x}.py")</action>', "f-string"),
    ('<action>read_file(b"x")</action>', "bytes"),
    ('<action>write_to_file("a.py", "unterminated)</action>', "unterminated string: it runs on to </action> (write_to_file(\"a.py\", \"unterminated)</action>) without its closing \""),
    # A small model ended a write's code with </action> and no closing quote, twice in a row after the plain message.
    ('<action>write_to_file("s.py", "x = []\n    for n in y:\n        x.append(n)\n    return x</action>', 'without its closing ". End the content with " and then close the call, as in ...")</action>'),
    ("<action>write_to_file('s.py', 'return x</action>", "('s.py', 'return x</action>) without its closing '. End the content with ' and then close the call, as in ...')</action>"),
    # The same three times after that message: the call with its quote put back, to copy (never run as it came).
    ("<action>write_to_file('g.py', 'return f\"Hi {n}!\")</action>", "With ' before the last ), the whole call would be:\nwrite_to_file('g.py', 'return f\"Hi {n}!\"')\nSend that call"),
    # With the grammar, </action> cannot be written inside a string: the reply stops at </action instead.
    ('<action>write_to_file("g.py", "x = 1\\nprint(x))</action\n\nuser', 'whole call would be:\nwrite_to_file("g.py", "x = 1\\nprint(x)")\nSend'),
    ('<action>write_to_file("a.py", "ok"', "not closed"),
    ("<action>read_file</action>", "parentheses"),
    ("<action></action>", "empty"),
    ("<action>   ", "empty"),
    ('<action>write_to_file(nope="x")</action>', "no parameter 'nope'"),
    ('<action>write_to_file("a", file_path="b")</action>', "twice"),
    ('<action>write_to_file(content="x")</action>', "missing argument 'file_path'"),
    ('<action>write_to_file(file_path="a", "x")</action>', "after a keyword"),
    ("<action>read_file(,)</action>", "empty"),
    ("<action>{not json}</action>", "not valid JSON"),
    # json raises a plain ValueError (no `msg`) for a number longer than int() reads: an error, not a crash
    pytest.param('<action>{"name": "read_file", "arguments": {"start_line": ' + "9" * 5000 + "}}</action>", "not valid JSON (Exceeds the limit", id="long-number"),
    ('<action>{"arguments": {}}</action>', "needs a \"name\""),
    ("<action>read_file(\"a\"]</action>", "unbalanced"),
    ("<final_answer>   </final_answer>", "empty"),
    ("<action>123()</action>", "tool call"),
    # A bare JSON object counts only when it names a known tool and carries arguments.
    ('{"name": "rm_everything", "arguments": {}}', "no <action>"),
    ('The config is:\n{"name": "read_file"}', "no <action>"),
    ('{"name": "read_file", "arguments": {"file_path": "a.py"', "no <action>"),
]


@pytest.mark.parametrize(("reply", "fragment"), ERRORS)
def test_format_errors_are_results(reply: str, fragment: str) -> None:
    parsed = parse_reply(reply, SIGS)
    assert parsed.tool is None and parsed.final_answer is None
    assert parsed.error is not None and fragment in parsed.error


def test_unterminated_string_names_the_newline_rule() -> None:
    parsed = parse_reply('<action>write_to_file("a.py", "line1\n', SIGS)
    assert "\\n" in parsed.error


def test_first_action_wins_and_the_rest_is_reported() -> None:
    reply = (
        '<thought>two at once</thought><action>read_file("a.py")</action>\n'
        '<action>run_terminal_command("rm -rf /")</action>\n'
        "<observation>invented</observation>\n<final_answer>premature</final_answer>"
    )
    parsed = parse_reply(reply, SIGS)
    assert (parsed.tool, parsed.args, parsed.final_answer) == ("read_file", ["a.py"], None)
    assert parsed.thought == "two at once"
    joined = " ".join(parsed.notes)
    assert "only the first action" in joined and "observation" in joined and "final answer" in joined


def test_small_model_action_plus_final_answer_runs_the_action() -> None:
    reply = '<thought>write it</thought><action>write_to_file("a.txt", "hi")</action><final_answer>Done!</final_answer>'
    parsed = parse_reply(reply, SIGS)
    assert parsed.tool == "write_to_file" and parsed.final_answer is None
    assert parsed.notes


def test_thought_without_closing_tag_and_leading_prose() -> None:
    parsed = parse_reply('<thought>reading now\n<action>read_file("a")</action>', SIGS)
    assert parsed.thought == "reading now" and parsed.tool == "read_file"
    parsed = parse_reply('Let me look.\n<action>read_file("a")</action>', SIGS)
    assert parsed.thought == "Let me look."


def test_content_is_parsed_once() -> None:
    """`\\\\n` in the reply is a backslash and an n in the file, never a newline."""
    parsed = parse_reply('<action>write_to_file("a.py", "print(\\"a\\\\nb\\")")</action>', SIGS)
    assert parsed.args[1] == 'print("a\\nb")'


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    parsed = parse_reply(text, SIGS)
    assert sum(x is not None for x in (parsed.tool, parsed.final_answer, parsed.error)) == 1


_PIECES = st.sampled_from([
    "<action>", "</action>", "<final_answer>", "</final_answer>", "<thought>", "</thought>", "<think>", "</think>",
    "<tool_call>", "Action:", "read_file(", "write_to_file(", ")", "(", '"', "'", '"""', "\\", "\\n", ",", "=", "[", "]",
    "{", "}", "#", "`", "```python\n", "\u201c", "\u201d", "r", "f", "x", " ", "\n", "content=", '{"name": "read_file"',
])


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_never_raises_on_tag_soup(text: str) -> None:
    parsed = parse_reply(text, SIGS)
    assert sum(x is not None for x in (parsed.tool, parsed.final_answer, parsed.error)) == 1
    if parsed.tool is not None:
        assert isinstance(parsed.args, list)


def test_non_string_input_does_not_raise() -> None:
    assert parse_reply(None).error is not None  # type: ignore[arg-type]


LOOSE = [
    # Content with unescaped quotes of its own kind: read to the quote before the closing ")".
    ('<action>write_to_file("s.py", "def f():\n    """Doc."""\n    return 1\n")</action>', ["s.py", 'def f():\n    """Doc."""\n    return 1\n']),
    ('<action>write_to_file("a.py", "x = "1"\\n")</action>', ["a.py", 'x = "1"\n']),
    ("<action>write_to_file('a.txt', 'it's fine')</action>", ["a.txt", "it's fine"]),
    ('<tool_call>write_to_file("a.py", "s = "q"")</tool_call>', ["a.py", 's = "q"']),
]


@pytest.mark.parametrize(("reply", "args"), LOOSE)
def test_a_last_argument_with_unescaped_quotes_is_read_to_the_closing_parenthesis(reply: str, args: list) -> None:
    parsed = parse_reply(reply, SIGS)
    assert parsed.error is None and parsed.tool == "write_to_file" and parsed.args == args
    assert parsed.notes and "check the result" in parsed.notes[0]


UNCLOSED = [
    # The content's own `')` taken for the string's close: the string runs to the end of the action.
    ("<action>write_to_file(\"serve.py\", 'PORT = 9000\n\nprint(f\\'serving on {PORT}\\')</action>\n\nuser\n", ["serve.py", "PORT = 9000\n\nprint(f'serving on {PORT}')"]),
    ('<action>write_to_file("a.py", "print(\\"hi\\")</action>', ["a.py", 'print("hi")']),
    # No parenthesis in the content to close: the `)` is the call's.
    ("<action>write_to_file('a.py', 'x = \\'a\\')</action>", ["a.py", "x = 'a'"]),
    ('<action>write_to_file("a.txt", "say \\"hi\\" )  </action>', ["a.txt", 'say "hi"']),
]


@pytest.mark.parametrize(("reply", "args"), UNCLOSED)
def test_a_last_string_never_closed_is_read_to_the_end_of_the_action(reply: str, args: list) -> None:
    parsed = parse_reply(reply, SIGS)
    assert parsed.error is None and parsed.tool == "write_to_file" and parsed.args == args
    assert parsed.notes == [UNCLOSED_STRING_NOTE]


@pytest.mark.parametrize(
    "reply",
    [
        '<action>write_to_file("a.py", "x = "1"',  # cut off: no closing parenthesis
        '<action>run_terminal_command("echo "hi" > a")</action>',  # one argument: not read loosely
        '<action>read_file("a" + "b")</action>',
        '<action>write_to_file("a.py", x = "1")</action>',  # the content is not a string
    ],
)
def test_no_loose_reading_where_the_call_is_ambiguous_or_cut(reply: str) -> None:
    parsed = parse_reply(reply, SIGS)
    assert parsed.error is not None and parsed.tool is None


def test_triple_quotes_that_end_a_string_early_are_named() -> None:
    reply = '<action>run_terminal_command("echo \\"def f():\\n    """ Doc. """\\n\\" > a.py\\"")</action>'
    parsed = parse_reply(reply, SIGS)
    assert parsed.error is not None and "the triple quotes (a docstring) inside the content end the string early" in parsed.error


@pytest.mark.parametrize(
    ("call", "content"),
    [
        ('write_to_file("a.py", ```\ndef f():\n    """Doc."""\n    return "\\n".join(x)\n```)', 'def f():\n    """Doc."""\n    return "\\n".join(x)\n'),
        ('write_to_file("a.py", ```python\nx = 1\n```)', "x = 1\n"),
        ('write_to_file("a.py", ```\n```)', ""),
        ('write_to_file("a.md", ```markdown\n# A\n```\ncode </action> )\n```\n```  \n)', "# A\n```\ncode </action> )\n```\n"),
        ('write_to_file(content=```\nC:\\new\\t\n```, file_path="a.txt")', "C:\\new\\t\n"),
        ('write_to_file("a.py", ```\n    x = 1\n    ```\n)', "    x = 1\n"),
    ],
    ids=["docstring and escapes kept", "language name", "empty", "inner fences and tags", "keyword, backslashes as they stand", "indented end"],
)
def test_a_fenced_argument_is_the_text_as_it_stands(call: str, content: str) -> None:
    parsed = parse_reply(f"<thought>t</thought><action>{call}</action>", SIGS)
    assert parsed.error is None and parsed.tool == "write_to_file" and parsed.args[1] == content


@pytest.mark.parametrize(
    ("call", "error"),
    [
        ('write_to_file("a.py", ```x = 1\n```)', "start the content on the line after ```"),
        ('write_to_file("a.py", ```\nx = 1\n)', "without its end: put ``` on a line of its own"),
        ('write_to_file("a.py", ```\nx = 1```)', "without its end"),
    ],
)
def test_a_fenced_argument_without_its_lines_is_a_format_error(call: str, error: str) -> None:
    parsed = parse_reply(f"<action>{call}</action>", SIGS)
    assert parsed.tool is None and error in parsed.error


@given(st.lists(st.sampled_from(["a", "`", "```", "\n", ")", ",", '"', "'", "\\", " "]), max_size=30).map("".join), st.text(max_size=20))
@settings(max_examples=300, deadline=None)
def test_a_call_shown_to_the_model_reads_back_as_the_same_arguments(content: str, path: str) -> None:
    shown = call_source("write_to_file", [path, content])
    assert parse_reply(f"<action>{shown}</action>", SIGS).args == [path, content]
