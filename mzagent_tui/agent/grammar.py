"""A GBNF grammar for one reply: a `<thought>`, then one `<action>` calling a known tool, or a
`<final_answer>`. llama.cpp servers (llama-server, llama-cpp-python, the bundled model) take it
as the request's `grammar` field and can then only sample replies of that shape, so a small
model cannot invent a tool, forget a tag, or write the observation itself.

Arguments follow the prompt's rule: string literals (double or single quotes; a raw line break
is allowed because the parser reads it; only Python's own escapes, so a model cannot put a
backslash before `$` in a bash script: the parser would keep it, and the script would print it),
numbers, True/False/None, `name=` for keywords. Free text may hold `<` but not `</`, which is
how the tags end.
"""

from __future__ import annotations

from collections.abc import Iterable

_TEXT_RULES = r"""
final ::= "<final_answer>" text "</final_answer>"
text ::= ( [^<] | "<" [^/] )*
space ::= [ \t\n]*
"""
_ACTION_RULES = r"""
root ::= space "<thought>" text "</thought>" space ( action | final )
action ::= "<action>" name "(" space arguments? space ")" "</action>"
arguments ::= argument ( space "," space argument )* ( space "," )?
argument ::= ( keyword space "=" space )? value
keyword ::= [a-zA-Z_] [a-zA-Z0-9_]*
value ::= double | single | number | "True" | "False" | "None"
double ::= "\"" ( [^"\\] | "\\" escaped )* "\""
single ::= "'" ( [^'\\] | "\\" escaped )* "'"
escaped ::= [\\"'abfnrtvxuUN0-7\n]
number ::= "-"? [0-9]+ ( "." [0-9]+ )?
"""


def reply_grammar(tool_names: Iterable[str]) -> str:
    """The grammar for replies that may call exactly these tools."""
    names = " | ".join(f'"{name}"' for name in sorted(tool_names))
    return f"name ::= {names}\n{_ACTION_RULES.strip()}\n{_TEXT_RULES.strip()}\n"


def final_grammar() -> str:
    """The grammar for a reply that can only be a thought and a final answer: the one asked for
    when a run must end (the model repeated itself until it was stuck)."""
    return f'root ::= space "<thought>" text "</thought>" space final\n{_TEXT_RULES.strip()}\n'

