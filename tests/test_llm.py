"""The streaming client against the scripted server: retries, watchdog, faults, fallbacks."""

from __future__ import annotations

import email.utils
import time

import pytest

from mzagent_tui.agent.cancel import Cancelled, CancelToken
from mzagent_tui.agent.events import Notice, ReplyFinished, RetryWait, TextDelta, ThinkingDelta, Usage
from mzagent_tui.agent.model.llm import ChatClient, ContextOverflow, LLMError
from tests.conftest import CancelWhen, Recorder, settings_for
from tests.scripted_server import Fault, Reply

MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "<question>q</question>"}]
KEY = "sk-test-secret-key-1234"
OK = Reply("<thought>t</thought><final_answer>fine</final_answer>")


def client(server, **overrides) -> tuple[ChatClient, Recorder]:  # noqa: ANN001
    recorder = Recorder()
    return ChatClient(settings_for(server, **overrides), recorder), recorder


def complete(server, **overrides):  # noqa: ANN001, ANN201
    chat, recorder = client(server, **overrides)
    return chat.complete(MESSAGES, CancelToken()), recorder


def test_streams_deltas_reasoning_and_usage(server) -> None:
    server.script(Reply("<final_answer>hello world</final_answer>", reasoning="let me think"))
    reply, rec = complete(server)
    assert reply.text == "<final_answer>hello world</final_answer>"
    assert "".join(e.text for e in rec.of(TextDelta)) == reply.text
    assert "".join(e.text for e in rec.of(ThinkingDelta)) == "let me think"
    assert reply.reasoning == "let me think" and reply.finish_reason == "stop"
    assert rec.of(Usage) == [Usage(100, 20, False)]
    sent = server.requests[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["stop"] == ["<observation>"] and sent["model"] == "scripted-model"
    assert sent["_headers"]["authorization"] == f"Bearer {KEY}"


def test_usage_is_estimated_when_the_server_sends_none(server) -> None:
    server.script(Reply("<final_answer>x</final_answer>", usage=None))
    reply, rec = complete(server)
    assert reply.usage_estimated and rec.of(Usage)[0].estimated


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503])
def test_transient_statuses_are_retried_visibly(server, status: int) -> None:
    server.script(Fault("status", status), OK)
    reply, rec = complete(server)
    assert reply.text.endswith("fine</final_answer>")
    waits = rec.of(RetryWait)
    assert len(waits) == 1 and f"HTTP {status}" in waits[0].reason and waits[0].attempt == 1


@pytest.mark.parametrize(("header", "expected"), [({"retry-after": "0.2"}, 0.2), ({"retry-after-ms": "150"}, 0.15)])
def test_retry_after_is_honoured(server, header: dict, expected: float) -> None:
    server.script(Fault("status", 429, headers=header), OK)
    _, rec = complete(server)
    assert rec.of(RetryWait)[0].seconds == pytest.approx(expected, abs=0.01)


def test_retry_after_as_http_date(server) -> None:
    when = email.utils.formatdate(time.time() + 2, usegmt=True)
    server.script(Fault("status", 429, headers={"retry-after": when}), OK)
    chat, rec = client(server)
    token = CancelToken()
    watcher = CancelWhen(token, lambda: bool(rec.of(RetryWait)))
    with pytest.raises(Cancelled):
        chat.complete(MESSAGES, token)
    assert watcher.join()  # cancelled during the wait
    assert 0 < rec.of(RetryWait)[0].seconds <= 2.5


@pytest.mark.parametrize("seconds", ["5", "300"])
def test_long_retry_after_is_reported_at_once(server, seconds: str) -> None:
    server.script(Fault("status", 429, headers={"retry-after": seconds}), OK)
    started = time.monotonic()
    with pytest.raises(LLMError, match=f"wait {seconds} s"):
        complete(server, max_retry_wait=2.0)
    assert time.monotonic() - started < 4  # below the shorter retry-after (5 s)


def test_retries_are_bounded(server) -> None:
    server.script(*[Fault("status", 503)] * 10)
    with pytest.raises(LLMError, match="gave up after 3 attempts"):
        complete(server, max_retries=2)
    assert len(server.requests) == 3


def test_connection_reset_before_headers_is_retried(server) -> None:
    server.script(Fault("reset"), OK)
    reply, rec = complete(server)
    assert reply.finish_reason == "stop" and len(rec.of(RetryWait)) == 1


def test_stalled_stream_is_ended_by_the_watchdog(server) -> None:
    server.script(Fault("stall", text="partial "), OK)
    started = time.monotonic()
    reply, rec = complete(server, idle_timeout=0.5)
    assert time.monotonic() - started < 15
    incomplete = rec.of(ReplyFinished)
    assert incomplete and incomplete[0].incomplete and incomplete[0].text == "partial "
    assert "stalled" in rec.of(RetryWait)[0].reason
    assert reply.text.endswith("fine</final_answer>")


def test_cut_stream_keeps_partial_text_marked_incomplete(server) -> None:
    server.script(Fault("cut", text='<action>write_to_file("a", "half'), OK)
    reply, rec = complete(server)
    assert rec.of(ReplyFinished)[0] == ReplyFinished('<action>write_to_file("a", "half', None, incomplete=True)
    assert reply.text.endswith("fine</final_answer>")


def test_reply_without_done_is_complete_when_finished(server) -> None:
    server.script(Reply("<final_answer>no done</final_answer>", send_done=False))
    reply, rec = complete(server)
    assert reply.text == "<final_answer>no done</final_answer>" and not rec.of(RetryWait)


def test_html_page_is_not_retried(server) -> None:
    server.script(Fault("html"), OK)
    with pytest.raises(LLMError, match="HTML page.*base URL"):
        complete(server)
    assert len(server.requests) == 1


@pytest.mark.parametrize(("status", "fragment"), [(401, "refused the API key"), (403, "refused the API key"), (404, "no model 'scripted-model'")])
def test_auth_and_not_found_are_not_retried_and_never_show_the_key(server, status: int, fragment: str) -> None:
    server.script(Fault("status", status, body={"error": {"message": f"Incorrect API key provided: {KEY}"}}), OK)
    with pytest.raises(LLMError) as info:
        complete(server)
    message = str(info.value)
    assert fragment in message and server.base_url in message
    assert KEY not in message
    assert len(server.requests) == 1


CONTEXT_ERRORS = [
    {"error": {"message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.", "code": "context_length_exceeded"}},
    {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error"}},
    {"object": "error", "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).", "code": 400},
    {"error": {"message": "This endpoint's maximum context length is 16384 tokens. However, you requested about 20000 tokens.", "code": 400}},
]


@pytest.mark.parametrize("body", CONTEXT_ERRORS, ids=["openai", "llama.cpp", "vllm", "openrouter"])
def test_context_overflow_wordings(server, body: dict) -> None:
    server.script(Fault("status", 400, body=body))
    with pytest.raises(ContextOverflow):
        complete(server)


def test_server_rejecting_stream_options_then_stop_falls_back_and_remembers(server) -> None:
    server.script(
        Fault("status", 400, body={"error": {"message": "Unrecognized request argument supplied: stream_options"}}),
        Fault("status", 400, body={"error": {"message": "'stop' is not supported with this model"}}),
        OK,
        OK,
    )
    chat, _ = client(server)
    chat.complete(MESSAGES, CancelToken())
    chat.complete(MESSAGES, CancelToken())
    assert "stream_options" in server.requests[0] and "stop" in server.requests[1]
    assert "stream_options" not in server.requests[2] and "stop" not in server.requests[2]
    assert "stream_options" not in server.requests[3] and "stop" not in server.requests[3]


def test_a_seed_is_sent_only_when_set_and_moves_on_with_each_request(server) -> None:
    server.script(OK, OK, OK, OK)
    complete(server)
    chat, _ = client(server, seed=42)
    chat.complete(MESSAGES, CancelToken())
    chat.complete(MESSAGES, CancelToken())
    again, _ = client(server, seed=42)
    again.complete(MESSAGES, CancelToken())
    assert "seed" not in server.requests[0]
    assert [request["seed"] for request in server.requests[1:]] == [42, 43, 42]


def test_server_rejecting_the_seed_falls_back_once_with_a_notice(server) -> None:
    server.script(Fault("status", 400, body={"error": {"message": "Unrecognized request argument supplied: seed"}}), OK, OK)
    chat, recorder = client(server, seed=3)
    chat.complete(MESSAGES, CancelToken())
    chat.complete(MESSAGES, CancelToken())
    assert server.requests[0]["seed"] == 3
    assert "seed" not in server.requests[1] and "seed" not in server.requests[2] and "stop" in server.requests[2]
    assert [e.text for e in recorder.of(Notice)] == ["the server rejected 'seed'; continuing without it"]


def test_other_400_is_reported_with_url_and_model(server) -> None:
    server.script(Fault("status", 400, body={"error": {"message": "temperature out of range"}}))
    with pytest.raises(LLMError, match="rejected the request for model scripted-model.*temperature"):
        complete(server)


def test_cancel_during_a_slow_stream_is_prompt(server) -> None:
    server.script(Reply("x" * 400, chunk_size=1, delay=0.05))
    chat, rec = client(server)
    token = CancelToken()
    watcher = CancelWhen(token, lambda: bool(rec.of(TextDelta)))
    started = time.monotonic()
    with pytest.raises(Cancelled):
        chat.complete(MESSAGES, token)
    assert watcher.join()  # cancelled while the stream ran
    assert time.monotonic() - started < 10  # the whole stream takes 20 s


def test_unreachable_server_names_the_url(server) -> None:
    chat, rec = client(server, base_url="http://127.0.0.1:9/v1", max_retries=1, connect_timeout=1.0)
    with pytest.raises(LLMError, match="cannot connect to http://127.0.0.1:9/v1"):
        chat.complete(MESSAGES, CancelToken())
    assert len(rec.of(RetryWait)) == 1


def test_a_permanently_stalled_endpoint_holds_a_step_no_longer_than_the_bound(server) -> None:
    """Five attempts of a 2 s idle watchdog used to add up (ten minutes with the defaults); the
    step now ends at max_step_wait, every wait before that shown."""
    server.script(*[Fault("stall", text="x")] * 6)
    chat, recorder = client(server, idle_timeout=2.0, max_retries=5, retry_base_delay=0.2, max_step_wait=3.0)
    started = time.monotonic()
    with pytest.raises(LLMError, match="held this step for the 3 s limit"):
        chat.complete(MESSAGES, CancelToken())
    assert time.monotonic() - started < 8  # the six stalls alone would take 12 s
    assert recorder.of(RetryWait) and all("stalled" in wait.reason for wait in recorder.of(RetryWait))


def test_a_reply_that_keeps_streaming_is_not_cut_by_the_bound(server) -> None:
    server.script(Reply("<final_answer>" + "word " * 40 + "</final_answer>", chunk_size=5, delay=0.05))
    chat, _ = client(server, max_step_wait=0.5)
    reply = chat.complete(MESSAGES, CancelToken())
    assert reply.text.count("word") == 40


def test_the_bundled_model_gets_a_longer_bound() -> None:
    from mzagent_tui.agent.config import Settings

    assert Settings(provider="local").step_wait_limit() == 600 and Settings(provider="openai").step_wait_limit() == 180
    assert Settings(provider="local", max_step_wait=30).step_wait_limit() == 30
