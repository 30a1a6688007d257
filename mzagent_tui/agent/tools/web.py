"""`web_fetch`: a web page as readable text, from the domains the user allows.

A page's host must pass the rule the commands' proxy uses too (safety/hosts.py: on the user's
`allowed_domains`, and named exactly when it is on this machine or a private network) or be
allowed in a question, answered once or for the session (a rule `web_fetch:HOST`, which the user
config can also hold, globs included, and deny). Each redirect is judged the same way. A
question about a host on this machine or a private network says so, even where a rule would
allow it. The page is untrusted text for the model, like a file's: it never changes a setting or
a tool.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urljoin, urlsplit

import httpx2 as httpx

from mzagent_tui.agent.cancel import Cancelled
from mzagent_tui.agent.ground.errors import ToolError
from mzagent_tui.agent.ground.words import say
from mzagent_tui.agent.safety.approval_requests import ToolCallApproval
from mzagent_tui.agent.safety.hosts import host_verdict
from mzagent_tui.agent.tools.context import ToolContext

MAX_BYTES = 2_000_000
MAX_CHARS = 20_000
MAX_REDIRECTS = 5
TIMEOUT = 20.0
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml", "application/javascript")


class WebTool:
    def __init__(self, ctx: ToolContext, allowed_domains: Sequence[str]) -> None:
        self._ctx = ctx
        self._allowed = tuple(allowed_domains)

    def web_fetch(self, url: str) -> str:
        """Fetch a web page (http or https) and return its text, HTML turned into Markdown, at most 20,000 characters. Use it for documentation the task needs; pages outside the user's allowed domains are asked about."""
        if not isinstance(url, str) or not url.strip():
            raise ToolError("fetch.no_url")
        with httpx.Client(timeout=TIMEOUT, follow_redirects=False, trust_env=False) as client:
            current = url.strip()
            for _ in range(MAX_REDIRECTS + 1):
                self._check(current)
                try:
                    with client.stream("GET", current, headers={"User-Agent": "mzagent web_fetch", "Accept": "text/html, text/plain, */*"}) as response:
                        if response.is_redirect and "location" in response.headers:
                            current = urljoin(current, response.headers["location"])
                            continue
                        return self._page(current, response)
                except httpx.HTTPError as exc:
                    raise ToolError("fetch.failed", url=current, error=exc or type(exc).__name__) from None
        raise ToolError("fetch.redirects", limit=MAX_REDIRECTS, url=url)

    def _check(self, url: str) -> None:
        """The URL's form, its host's leave (list or question) and where its name resolves."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ToolError("fetch.not_http", url=url)
        if parts.username or parts.password:
            raise ToolError("fetch.credentials")
        verdict = host_verdict(parts.hostname, 0, self._allowed)
        if not verdict.allowed:
            self._ask(parts.hostname, url, verdict.warning)

    def _ask(self, host: str, url: str, warning: str) -> None:
        request = ToolCallApproval(
            cwd=str(self._ctx.root), reason=f"{warning}. {self._ctx.thought}" if warning else self._ctx.thought,
            tool=f"web_fetch:{host}", arguments={"url": url}, ask_even_if_allowed=bool(warning),
        )
        decision = self._ctx.approver.approve(request)
        if decision.cancelled:
            raise Cancelled()
        if not decision.approved:
            note = say("fetch.refusal_note", reason=decision.note) if decision.note else ""
            raise ToolError("fetch.refused", host=host, note=note)

    def _page(self, url: str, response: httpx.Response) -> str:
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > MAX_BYTES:
                break
        if kind and not kind.startswith(TEXT_TYPES):
            raise ToolError("fetch.not_text", url=url, kind=kind, size=len(body))
        text = bytes(body[:MAX_BYTES]).decode(response.encoding or "utf-8", errors="replace")
        if kind in ("text/html", "application/xhtml+xml") or (not kind and "<html" in text[:1000].lower()):
            text = _markdown(text)
        cut = len(text) - MAX_CHARS
        shown = text[:MAX_CHARS] + (f"\n[cut: {cut:,} more characters]" if cut > 0 else "")
        return self._ctx.redact.exact(f"{url} ({response.status_code} {kind or 'no content type'}):\n\n{shown.strip()}")


def _markdown(html: str) -> str:
    """Readable Markdown, without what a browser would not show as text."""
    from bs4 import BeautifulSoup  # only when a page is fetched
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for hidden in soup(["script", "style", "noscript", "iframe", "svg", "template", "head"]):
        hidden.decompose()
    text = MarkdownConverter(heading_style="ATX").convert_soup(soup)
    return re.sub(r"\n\s*\n(\s*\n)+", "\n\n", text)
