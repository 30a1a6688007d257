"""Streaming chat completions through the openai SDK, with our own retries and watchdog.

The SDK's own retries are off (`max_retries=0`): every wait must be an event the user sees,
a long Retry-After must be reported at once, and a cancel must interrupt a wait. The stream
is read on a helper thread so the caller can enforce an idle watchdog and notice a cancel
between chunks even when the server sends nothing.
"""

from __future__ import annotations

import email.utils
import functools
import queue
import random
import re
import ssl
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx2 as httpx
import openai

from mzagent_tui.agent.cancel import Cancelled, CancelToken
from mzagent_tui.agent.config import Settings
from mzagent_tui.agent.events import EventSink, Notice, ReplyFinished, RetryWait, TextDelta, ThinkingDelta, Usage
from mzagent_tui.agent.ground.providers import PROVIDERS
from mzagent_tui.agent.model.native import NativeCall
from mzagent_tui.agent.safety.secrets import Redactor

STOP_SEQUENCE = "<observation>"
LLAMA_CPP_PROVIDERS = {"local", "llamacpp"}
"""Presets that are llama.cpp servers, which take a GBNF `grammar` field."""
LLAMA_CPP_OWNERS = {"llamacpp", "me"}
"""`owned_by` in the model list of llama-server ("llamacpp") and llama-cpp-python ("me")."""
WINDOW_LOOKUP_TIMEOUT = 3.0
_RETRY_STATUS = {408, 409, 429}
_BACKOFF_CAP = 30.0
_CONTEXT_OVERFLOW = re.compile(
    r"context[_ ]length|maximum context|context size|context window|too many tokens|prompt is too long|exceed_context",
    re.IGNORECASE,
)


class LLMError(Exception):
    """A failure the user must act on; the message names the base URL and model, never the key."""


class ContextOverflow(LLMError):
    """The conversation no longer fits the model's context window."""


@dataclass
class Reply:
    text: str
    reasoning: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    usage_estimated: bool
    tool_calls: list[NativeCall] = field(default_factory=list)
    """Native tool calls, in the order the model made them."""


class _Transient(Exception):
    """A fault worth retrying; `partial` is text received before it happened."""

    def __init__(self, reason: str, retry_after: float | None = None, partial: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.partial = partial


class _Unsupported(Exception):
    """The server rejected an optional request field; retry without it."""

    def __init__(self, field_name: str) -> None:
        super().__init__(field_name)
        self.field_name = field_name


_HEAD_BYTES = 512
_HTML_START = re.compile(rb"^\s*(<!doctype html|<html|<head|<body)", re.IGNORECASE)


class _SniffingTransport(httpx.BaseTransport):
    """Keeps the first bytes of every response body, so a page sent under a JSON or event-stream
    content type (a proxy's login page, nginx's welcome) is recognised by what it is."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        head = bytearray()
        response.extensions["mzagent_head"] = head
        response.stream = _SniffedStream(response.stream, head)  # type: ignore[arg-type]
        return response

    def close(self) -> None:
        self._inner.close()


class _SniffedStream(httpx.SyncByteStream):
    def __init__(self, inner: Any, head: bytearray) -> None:
        self._inner = inner
        self._head = head

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if len(self._head) < _HEAD_BYTES:
                self._head += chunk[: _HEAD_BYTES - len(self._head)]
            yield chunk

    def close(self) -> None:
        self._inner.close()


def _looks_like_html(response: httpx.Response) -> bool:
    return bool(_HTML_START.match(bytes(response.extensions.get("mzagent_head", b""))))


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The trusted certificates, loaded once per process and shared by every client (they are
    read-only once loaded): loading them took most of a client's creation, 30-80 ms."""
    return httpx.create_ssl_context()


class ChatClient:
    """One endpoint + model. `complete` is blocking and meant for a worker thread."""

    def __init__(self, settings: Settings, emit: EventSink) -> None:
        self.base_url, self.model, self._key = settings.endpoint()
        self._settings = settings
        self._emit = emit
        self._scrub = Redactor([self._key])
        self._client = openai.OpenAI(
            api_key=self._key,
            base_url=self.base_url,
            max_retries=0,
            timeout=openai.Timeout(settings.idle_timeout, connect=settings.connect_timeout),
            http_client=openai.DefaultHttpxClient(transport=_SniffingTransport(httpx.HTTPTransport(verify=_tls_context()))),
        )
        self.send_stream_options = True
        self.send_stop = settings.stop_sequence
        self.send_seed = settings.seed >= 0
        self._requests = 0
        self.send_grammar = settings.grammar == "on" or (settings.grammar == "auto" and settings.provider in LLAMA_CPP_PROVIDERS)
        """Constrain replies with a grammar: on for llama.cpp servers, off once one rejects it."""

    def may_be_llama_cpp(self) -> bool:
        """In grammar `auto`, whether the model list is worth reading to find out: not for a
        hosted preset (never llama.cpp), not once grammars are on."""
        preset = PROVIDERS.get(self._settings.provider)
        return self._settings.grammar == "auto" and not self.send_grammar and not (preset is not None and preset.needs_key)

    def model_names(self) -> list[str]:
        """The models the server lists, in its order ([] when it lists none or the list fails:
        a short, single attempt, as for `probe`). An editor offers them as the session's models."""
        try:
            listing = self._client.with_options(timeout=WINDOW_LOOKUP_TIMEOUT, max_retries=0).models.list()
        except Exception:  # noqa: BLE001 - a missing or odd /models endpoint is normal
            return []
        return [model.id for model in listing.data if isinstance(getattr(model, "id", None), str) and model.id]

    def probe(self) -> int:
        """Read the server's model list once: return the context window it states (or 0), and
        turn grammars on (in `auto`) when the list says the server is llama.cpp.

        OpenRouter says `context_length`, vLLM `max_model_len`; most servers say nothing. A
        short, single attempt: this only refines the status line and the grammar, so any failure is 0.
        """
        try:
            listing = self._client.with_options(timeout=WINDOW_LOOKUP_TIMEOUT, max_retries=0).models.list()
        except Exception:  # noqa: BLE001 - a missing or odd /models endpoint is normal
            return 0
        window = 0
        for model in listing.data:
            if self._settings.grammar == "auto" and getattr(model, "owned_by", None) in LLAMA_CPP_OWNERS:
                self.send_grammar = True
            if model.id == self.model:
                extra = model.model_extra or {}
                for key in ("context_length", "max_model_len", "context_window"):
                    value = extra.get(key)
                    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                        window = value
        return window

    def complete(
        self, messages: list[dict[str, Any]], cancel: CancelToken, grammar: str | None = None, tools: list[dict[str, Any]] | None = None,
    ) -> Reply:
        """Stream one reply, retrying transient faults with visible, cancellable waits, and giving
        up once a stalled or failing endpoint has held the step for `step_wait_limit` seconds
        (a reply that keeps streaming is never cut)."""
        attempt = 0
        limit = self._settings.max_retries
        bound = self._settings.step_wait_limit()
        deadline = time.monotonic() + bound
        while True:
            cancel.check()
            try:
                return self._attempt(messages, cancel, deadline, grammar, tools)
            except _Unsupported as exc:
                if exc.field_name == "grammar":
                    self.send_grammar = False  # an optional aid: no notice, the reply is read the same way
                    continue
                if exc.field_name == "stream_options":
                    self.send_stream_options = False
                elif exc.field_name == "seed":
                    self.send_seed = False
                else:
                    self.send_stop = False
                self._emit(Notice(f"the server rejected '{exc.field_name}'; continuing without it"))
            except _Transient as exc:
                if exc.partial:
                    self._emit(ReplyFinished(exc.partial, None, incomplete=True))
                attempt += 1
                if attempt > limit:
                    raise LLMError(f"{exc.reason} — gave up after {attempt} attempts ({self._where()})") from None
                wait = exc.retry_after if exc.retry_after is not None else self._backoff(attempt)
                if wait > self._settings.max_retry_wait:
                    raise LLMError(
                        f"{exc.reason}: the server asks to wait {wait:.0f} s, longer than the "
                        f"{self._settings.max_retry_wait:.0f} s limit; try again later ({self._where()})"
                    ) from None
                if time.monotonic() + wait >= deadline:
                    raise LLMError(
                        f"{exc.reason} — the endpoint has held this step for the {bound:.0f} s limit "
                        f"(max_step_wait); gave up after {attempt} attempt{'s' if attempt > 1 else ''} ({self._where()})"
                    ) from None
                self._emit(RetryWait(round(wait, 2), attempt, limit, exc.reason))
                if cancel.wait(wait):
                    raise Cancelled() from None

    def _backoff(self, attempt: int) -> float:
        ceiling = min(_BACKOFF_CAP, self._settings.retry_base_delay * 2 ** (attempt - 1))
        return ceiling * random.uniform(0.5, 1.0)

    def _where(self) -> str:
        return f"{self.base_url}, model {self.model}"

    def _attempt(
        self, messages: list[dict[str, Any]], cancel: CancelToken, deadline: float, grammar: str | None, tools: list[dict[str, Any]] | None,
    ) -> Reply:
        params: dict[str, Any] = {
            "model": self.model,
            # The SDK type-walks `messages` on every request, which costs ~1 ms per message
            # (0.2 s per step at 200 messages). Our messages are plain role/content strings,
            # so they go in extra_body, which the SDK merges into the JSON body untouched.
            "messages": [],
            "extra_body": {"messages": messages},
            "stream": True,
            "temperature": self._settings.temperature,
            "max_tokens": self._settings.max_tokens,
        }
        if self.send_stop:
            params["stop"] = [STOP_SEQUENCE]
        if self.send_seed:
            params["seed"] = self._settings.seed + self._requests
        self._requests += 1
        if grammar and self.send_grammar:
            params["extra_body"]["grammar"] = grammar
        if tools:
            params["extra_body"]["tools"] = tools
        if self.send_stream_options:
            params["stream_options"] = {"include_usage": True}
        idle = max(0.1, min(self._settings.idle_timeout, deadline - time.monotonic()))
        try:
            stream = self._client.chat.completions.create(**params, timeout=openai.Timeout(idle, connect=min(idle, self._settings.connect_timeout)))
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from None
        except openai.APITimeoutError:
            raise _Transient(f"no answer within {idle:.0f} s") from None
        except openai.APIConnectionError:
            raise _Transient(f"cannot connect to {self.base_url}") from None
        content_type = stream.response.headers.get("content-type", "")
        if "html" in content_type.lower():
            stream.close()
            raise LLMError(self._html_message())
        return self._consume(stream, messages, cancel, deadline)

    def _html_message(self) -> str:
        return f"{self.base_url} answered with an HTML page, not the API; check the base URL (it usually ends in /v1)"

    def _consume(self, stream: Any, messages: list[dict[str, Any]], cancel: CancelToken, deadline: float) -> Reply:
        inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()

        def read() -> None:
            try:
                for chunk in stream:
                    inbox.put(("chunk", chunk))
                inbox.put(("end", None))
            except Exception as exc:  # noqa: BLE001 - forwarded to the consumer
                inbox.put(("error", exc))

        threading.Thread(target=read, name="mzagent-stream", daemon=True).start()
        text: list[str] = []
        reasoning: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage: Any = None
        chunks = 0
        last = time.monotonic()
        try:
            while True:
                cancel.check()
                try:
                    kind, item = inbox.get(timeout=0.05)
                except queue.Empty:
                    now = time.monotonic()
                    if now - last > self._settings.idle_timeout or (now > deadline and now - last > 1.0):
                        raise _Transient(f"the stream stalled (no data for {now - last:.0f} s)", partial="".join(text)) from None
                    continue
                last = time.monotonic()
                if kind == "end":
                    break
                if kind == "error":
                    raise self._stream_error(item, "".join(text)) from None
                chunks += 1
                if getattr(item, "usage", None):
                    usage = item.usage
                for choice in (item.choices or [])[:1]:
                    delta = choice.delta
                    thinking = whole_characters(_reasoning_of(delta))
                    if thinking:
                        reasoning.append(thinking)
                        self._emit(ThinkingDelta(thinking))
                    if delta is not None and delta.content:
                        piece = whole_characters(delta.content)
                        text.append(piece)
                        self._emit(TextDelta(piece))
                    for call in (delta.tool_calls or []) if delta is not None else []:
                        _add_call_delta(calls, call)
                    if choice.finish_reason:
                        finish = choice.finish_reason
        finally:
            _close_quietly(stream)
        full = "".join(text)
        if finish is None:
            if chunks == 0:
                if _looks_like_html(stream.response):
                    raise LLMError(self._html_message())
                raise LLMError(f"{self.base_url} sent an empty reply stream; check the base URL and model ({self._where()})")
            raise _Transient("the reply stream ended before the reply was complete", partial=full)
        tool_calls = [NativeCall(c["id"] or f"call_{i}", whole_characters(c["name"]), whole_characters(c["arguments"])) for i, c in sorted(calls.items()) if c["name"]]
        return self._reply(full, "".join(reasoning), finish, usage, messages, tool_calls)

    def _reply(self, text: str, reasoning: str, finish: str, usage: Any, messages: list[dict[str, Any]], tool_calls: list[NativeCall]) -> Reply:
        if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
            prompt, completion, estimated = usage.prompt_tokens, usage.completion_tokens or 0, False
        else:
            prompt = sum(len(m["content"] or "") + len(str(m.get("tool_calls", ""))) for m in messages) // 4
            completion = (len(text) + len(reasoning)) // 4
            estimated = True
        self._emit(Usage(prompt, completion, estimated))
        return Reply(text, reasoning, finish, prompt, completion, estimated, tool_calls)

    def _status_error(self, exc: openai.APIStatusError) -> Exception:
        status = exc.status_code
        message = self._scrub(_error_message(exc.body) or exc.message or "")[:400]
        if status in _RETRY_STATUS or status >= 500:
            return _Transient(f"HTTP {status} from {self.base_url}", retry_after=_retry_after(exc.response.headers))
        if status == 400 or status == 413 or status == 422:
            if _CONTEXT_OVERFLOW.search(message):
                return ContextOverflow(f"the conversation is too long for {self.model}: {message}")
            lowered = message.lower()
            if self.send_grammar and "grammar" in lowered:
                return _Unsupported("grammar")
            if self.send_stream_options and ("stream_options" in lowered or "include_usage" in lowered):
                return _Unsupported("stream_options")
            if self.send_seed and re.search(r"\bseed\b", lowered):
                return _Unsupported("seed")
            if self.send_stop and re.search(r"\bstop\b", lowered):
                return _Unsupported("stop")
        if status in (401, 403) and self._settings.key_withheld:
            return LLMError(f"{self.base_url} asks for an API key (HTTP {status}), and yours was withheld: {self._settings.key_withheld}. {message}")
        if status in (401, 403):
            return LLMError(f"{self.base_url} refused the API key (HTTP {status}); check the key for this provider. {message}")
        if status == 404:
            return LLMError(f"{self.base_url} has no model '{self.model}' or the URL is wrong (HTTP 404). {message}")
        return LLMError(f"{self.base_url} rejected the request for model {self.model} (HTTP {status}): {message}")

    def _stream_error(self, exc: Exception, partial: str) -> Exception:
        if isinstance(exc, openai.APITimeoutError):
            return _Transient(f"the stream stalled (no data for {self._settings.idle_timeout:.0f} s)", partial=partial)
        if isinstance(exc, openai.APIConnectionError):
            return _Transient("the connection broke during the reply", partial=partial)
        if isinstance(exc, openai.APIError):
            message = self._scrub(exc.message or "")
            if _CONTEXT_OVERFLOW.search(message):
                return ContextOverflow(f"the conversation is too long for {self.model}: {message}")
            return _Transient(f"the server reported an error mid-stream: {message[:200]}", partial=partial)
        return _Transient(f"the reply stream failed ({type(exc).__name__})", partial=partial)


def _add_call_delta(calls: dict[int, dict[str, str]], delta: Any) -> None:
    """Stream pieces of tool calls, joined by their index: the id and name come once, the arguments in parts."""
    index = getattr(delta, "index", None)
    slot = calls.setdefault(index if isinstance(index, int) else len(calls), {"id": "", "name": "", "arguments": ""})
    if getattr(delta, "id", None):
        slot["id"] = delta.id
    function = getattr(delta, "function", None)
    if function is not None:
        if getattr(function, "name", None) and function.name != slot["name"]:
            slot["name"] += function.name
        if getattr(function, "arguments", None):
            slot["arguments"] += function.arguments


_SURROGATE = re.compile("[\ud800-\udfff]")


def whole_characters(text: str) -> str:
    """A surrogate pair joined into its character, a lone surrogate made U+FFFD. JSON may carry
    `\\ud800` alone, and the SDK hands it on as a lone surrogate, which no UTF-8 writer takes:
    the session log, a file or a command would fail on it."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _reasoning_of(delta: Any) -> str:
    if delta is None:
        return ""
    value = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
    if not value:
        extra = getattr(delta, "model_extra", None) or {}
        value = extra.get("reasoning_content") or extra.get("reasoning")
    return value if isinstance(value, str) else ""


def _error_message(body: object) -> str:
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            return str(inner.get("message") or inner.get("code") or "")
        return str(body.get("message") or inner)
    return str(body) if body else ""


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from `retry-after-ms`, `retry-after` (seconds or an HTTP date), else None."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _close_quietly(stream: Any) -> None:
    try:
        stream.close()
    except Exception:  # noqa: BLE001 - closing a broken connection may fail; nothing to do
        pass
