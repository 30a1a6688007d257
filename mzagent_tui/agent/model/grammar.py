"""A GBNF grammar for one reply: a `<thought>`, then one `<action>` calling a known tool, or a
`<final_answer>`. llama.cpp servers (llama-server, llama-cpp-python, the bundled model) take it
as the request's `grammar` field and can then only sample replies of that shape, so a small
model cannot invent a tool, forget a tag, or write the observation itself.

Arguments follow the prompt's rule: string literals, numbers, True/False/None, `name=` for the
tool's own parameter names. A file's content is a fenced block (``` on lines of their own), as it
stands: as a raw `r'''...'''` string, the bundled model closed every multi-line docstring of the
HumanEval stubs with `'''` and so ended the content there. The first line that is only ```
(indented or not) ends the block; ```python and the like may stand inside it. Were any line
allowed, the block would never have to end: after `</action>` the model wrote line breaks,
as more content, until its token limit. Other strings are in double or single
quotes with backslash escapes; a raw line break is allowed in them too because the parser reads it:
allowing only `\n` cost the bundled model two held-out HumanEval problems (bench/history.md).

A string may hold `</action>`: forbidding it (thirteenth session) did not make the model close
its string; where it meant to end the call it wrote `</action` and a line break inside the string
and went on with another thought there, and the held-out fix tasks did worse. The parser's
format error shows such a call closed instead. Free text may hold `<` but not `</`, which is how
the tags end. Whitespace between the parts is bounded, as in llama.cpp's own JSON grammar: where
the model's preferred token was not allowed, it wrote spaces until the token limit.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from mzagent_tui.agent.ground.call_syntax import LANGUAGE_CHARS

_TEXT_RULES = r"""
final ::= "<final_answer>" text "</final_answer>"
text ::= ( [^<] | "<" [^/] )*
space ::= [ \t\n]{0,20}
"""
_ACTION_RULES = r"""
root ::= space "<thought>" text "</thought>" space ( action | final )
action ::= "<action>" call "</action>"
value ::= fenced | double | single | number | "True" | "False" | "None"
fenced ::= "```" [LANGUAGE]{0,20} "\n" fenced-line* [ \t]* "```"
fenced-line ::= [ \t]* ( fenced-start [^\n]* )? "\n"
fenced-start ::= [^`\n \t] | "`" [^`\n] | "``" [^`\n] | "```" [LANGUAGE]
double ::= "\"" ( [^"\\] | "\\" [^\x00] )* "\""
single ::= "'" ( [^'\\] | "\\" [^\x00] )* "'"
number ::= "-"? [0-9]+ ( "." [0-9]+ )?
""".replace("LANGUAGE", LANGUAGE_CHARS)
_STRUCTURED_RULES = r"""
structured ::= value | list | dict
list ::= "[" space ( structured ( space "," space structured )* ( space "," )? )? space "]"
dict ::= "{" space ( pair ( space "," space pair )* ( space "," )? )? space "}"
pair ::= ( double | single ) space ":" space structured
"""
"""Lists and dicts, as the parser reads them (Python literals, which JSON's objects are too), only
for the tools that take them (update_plan's steps): the other tools' arguments stay as they were
measured."""


def reply_grammar(signatures: Mapping[str, Sequence[str]], structured: Collection[str] = ()) -> str:
    """The grammar for replies that may call exactly these tools, each with keywords only from
    its own parameters: a small model wrote `write_to_file("x.json", json_string="...")` three
    times in a row, even when asked again with more variety. The tools named in `structured`
    may also be given lists and dicts."""
    calls = []
    rules = []
    for index, name in enumerate(sorted(signatures)):
        params = signatures[name]
        if not params:
            calls.append(f'{_literal(name)} "(" space ")"')
            continue
        calls.append(f'{_literal(name)} "(" space args-{index}? space ")"')
        keywords = " | ".join(_literal(param) for param in params)
        rules.append(f'args-{index} ::= arg-{index} ( space "," space arg-{index} )* ( space "," )?')
        kind = "structured" if name in structured else "value"
        rules.append(f'arg-{index} ::= ( ( {keywords} ) space "=" space )? {kind}')
    extra = [_STRUCTURED_RULES.strip()] if any(name in structured for name in signatures) else []
    lines = [f"call ::= {' | '.join(calls)}", *rules, _ACTION_RULES.strip(), *extra, _TEXT_RULES.strip()]
    return "\n".join(lines) + "\n"


def final_grammar() -> str:
    """The grammar for a reply that can only be a thought and a final answer: the one asked for
    when a run must end (the model repeated itself until it was stuck)."""
    return f'root ::= space "<thought>" text "</thought>" space final\n{_TEXT_RULES.strip()}\n'


def _literal(text: str) -> str:
    """A GBNF string literal (an MCP server names its tools and parameters as it likes)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
