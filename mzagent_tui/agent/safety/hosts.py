"""Which hosts the network may reach without a question: the rule web_fetch and the commands'
proxy share (tools/web.py, safety/domain_proxy.py).

A host passes when the user's `allowed_domains` has it or a domain it is under (`python.org`
allows `docs.python.org`), unless it is or resolves to this machine or a private network: then
only a list entry naming it exactly lets it through without a question, so that `*.example.com`
cannot open the way to a service on localhost or a cloud's metadata address through a name
that resolves there.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class HostVerdict:
    address: str | None
    """The address to connect to, the one judged (None: the name does not resolve)."""
    allowed: bool
    """Allowed by the list, without a question."""
    why: str
    warning: str = ""
    """For the question: the host is on this machine or a private network."""


def domain_allowed(host: str, allowed: Sequence[str]) -> bool:
    """`host` is an allowed domain or a subdomain of one (`python.org` allows `docs.python.org`)."""
    host = host.lower().rstrip(".")
    for entry in allowed:
        entry = entry.lower().strip().removeprefix("*.").rstrip(".")
        if entry and (host == entry or host.endswith("." + entry)):
            return True
    return False


def named_exactly(host: str, allowed: Sequence[str]) -> bool:
    return host.lower().rstrip(".") in {entry.lower().strip().rstrip(".") for entry in allowed}


def private_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    return ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_reserved or ip.is_unspecified or ip.is_multicast


def host_verdict(host: str, port: int, allowed: Sequence[str]) -> HostVerdict:
    """The host judged by the list, with the one address a connection may then go to. A name
    that does not resolve keeps the list's verdict (a fetch then fails with a clear error) and
    has no address (the proxy refuses it without a question)."""
    try:
        addresses = [str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]
    except (OSError, UnicodeError):
        addresses = []
    if not addresses:
        return HostVerdict(None, domain_allowed(host, allowed), f"{host} does not resolve")
    private = any(private_address(address) for address in addresses)
    if domain_allowed(host, allowed) and (not private or named_exactly(host, allowed)):
        return HostVerdict(addresses[0], True, "on the allowed domains")
    warning = f"{host} is on this machine or a private network" if private else ""
    return HostVerdict(addresses[0], False, "not on the allowed domains", warning)
