"""The network by domain for one session's commands (issue 58): the proxy
(safety/domain_proxy.py) served on the listening socket of the session's network namespace
(safety/shared_network.py), asking through the approver and recording every attempt.

A command the user gives the network while the user config lists `allowed_domains` runs in the
session's namespace, not the machine's network: its only way out is the proxy, named in its
environment (`HTTPS_PROXY`, `HTTP_PROXY`, their lower-case forms and `ALL_PROXY`; the
namespace's own loopback stays direct through `NO_PROXY`). A host not on the list is asked about
as a tool call `network:HOST`, so "always" and the user config's rules (`allow = ["network:*.pypi.org"]`)
work as for any tool; a "yes" holds until the command ends.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from mzagent_tui.agent.cancel import Cancelled
from mzagent_tui.agent.events import Notice
from mzagent_tui.agent.safety.approval_requests import ToolCallApproval
from mzagent_tui.agent.safety.domain_proxy import Attempt, DomainProxy
from mzagent_tui.agent.safety.shared_network import SharedNetwork
from mzagent_tui.agent.tools.context import ToolContext

LISTED_ATTEMPTS = 5


class DomainNetwork:
    def __init__(self, ctx: ToolContext, allowed: Sequence[str], shared: SharedNetwork) -> None:
        self._ctx = ctx
        self._shared = shared
        self._proxy = DomainProxy(allowed, self._ask, self._record)
        self._port: int | None = None
        self._attempts: list[Attempt] = []
        self._lock = threading.Lock()

    def environment(self) -> dict[str, str]:
        """The proxy's variables for a command, the proxy started on first use ({}: the session
        has no namespace to hand one over, and the command, in a namespace of its own, no network)."""
        if self._port is None:
            listener = self._shared.listener if self._shared.namespaces() is not None else None
            if listener is None:
                return {}
            self._port = self._proxy.serve_on(listener)
        url = f"http://127.0.0.1:{self._port}"
        names = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
        return {
            **{name: url for name in names}, **{name.lower(): url for name in names},
            "NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
        }

    def taken(self) -> str:
        """The line for the command's observation about its connections ("" for none); the
        user's "yes" answers end with it."""
        self._proxy.forget_answers()
        with self._lock:
            attempts, self._attempts = self._attempts, []
        refused = list(dict.fromkeys(f"{a.host} ({a.why})" for a in attempts if not a.allowed))
        reached = list(dict.fromkeys(a.host for a in attempts if a.allowed))
        parts = []
        if reached:
            parts.append("reached " + ", ".join(reached[:LISTED_ATTEMPTS]))
        if refused:
            parts.append("refused " + ", ".join(refused[:LISTED_ATTEMPTS]))
        return f"\nNetwork (only the allowed domains, through mzagent's proxy): {'; '.join(parts)}." if parts else ""

    def close(self) -> None:
        self._proxy.close()

    def _ask(self, host: str, port: int, warning: str) -> bool:
        reason = f"A command connects to {host}:{port}, which is not on your allowed domains."
        request = ToolCallApproval(
            cwd=str(self._ctx.root), reason=f"{warning}. {reason}" if warning else reason,
            tool=f"network:{host}", arguments={"host": host, "port": port}, ask_even_if_allowed=bool(warning),
        )
        try:
            decision = self._ctx.approver.approve(request)
        except Cancelled:
            return False
        return decision.approved and not decision.cancelled

    def _record(self, attempt: Attempt) -> None:
        with self._lock:
            self._attempts.append(attempt)
        self._ctx.session.record("network", host=attempt.host, port=attempt.port, allowed=attempt.allowed, why=attempt.why)
        if not attempt.allowed:
            self._ctx.emit(Notice(f"A command's connection to {attempt.host}:{attempt.port} was refused: {attempt.why}."))
