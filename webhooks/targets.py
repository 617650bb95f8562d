"""Which URLs the worker may send to, and the connector that keeps it to them.

By default HTTPS only, to public addresses only: a host name is resolved and every address
it gives must be global unicast, none loopback, private, link-local, multicast, reserved,
unspecified or otherwise not globally reachable; an IP literal is checked the same way.
The connection then goes to an address that was checked (the resolver below is the one
the connector connects with), so a name that resolves differently a moment later
(DNS rebinding) cannot slip through. `allow_loopback` (development, tests) also allows
loopback addresses and plain http://; never private or link-local ones.
"""

from __future__ import annotations

import ipaddress
import socket
import urllib.parse
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class TargetRefused(OSError):  # noqa: N818 - reads as the outcome it reports
    """A URL or an address the worker will not contact; the message says why."""


@dataclass(frozen=True, slots=True)
class TargetPolicy:
    allow_loopback: bool = False

    @property
    def schemes(self) -> tuple[str, ...]:
        return ("https", "http") if self.allow_loopback else ("https",)


def address_refusal(address: IPAddress, policy: TargetPolicy) -> str | None:
    """Why `address` may not be contacted, or None if it may."""
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:  # ::ffff:10.0.0.1 is 10.0.0.1
        address = mapped
    if address.is_loopback:
        return None if policy.allow_loopback else f"{address} is a loopback address"
    for kind in ("unspecified", "link_local", "multicast", "private", "reserved"):
        if getattr(address, f"is_{kind}"):
            article = "an" if kind[0] in "aeiou" else "a"
            return f"{address} is {article} {kind.replace('_', '-')} address"
    if not address.is_global:
        return f"{address} is not a public address"
    return None


def url_refusal(url: str, policy: TargetPolicy) -> str | None:
    """Why `url` is not a target, from its text alone (an IP literal checked too); None if
    it may be one, its host name still to be resolved and checked."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        return "not a URL"
    if parts.scheme not in policy.schemes:
        return (
            "only https:// URLs are allowed"
            if not policy.allow_loopback
            else "only https:// and http:// URLs are allowed"
        )
    if not host:
        return "the URL names no host"
    if parts.username is not None or parts.password is not None:
        return "the URL carries credentials; the signature authenticates the requests"
    if parts.fragment:
        return "the URL has a fragment, which is never sent"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    return address_refusal(address, policy)


class CheckedResolver(AbstractResolver):
    """Resolves with the system's resolver and refuses the whole answer when any address
    in it may not be contacted (TargetRefused, which aiohttp reports as a connection
    error). The connector connects only to what this returns."""

    def __init__(self, policy: TargetPolicy) -> None:
        self.policy = policy
        self._inner = aiohttp.ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        for result in found:
            refusal = address_refusal(ipaddress.ip_address(result["host"]), self.policy)
            if refusal is not None:
                raise TargetRefused(f"{host} resolves to {refusal}")
        return found

    async def close(self) -> None:
        await self._inner.close()


def connector(policy: TargetPolicy, **options: Any) -> aiohttp.TCPConnector:
    """A connector that resolves through CheckedResolver, without a DNS cache: each new
    connection is checked on what the name resolves to then."""
    return aiohttp.TCPConnector(resolver=CheckedResolver(policy), use_dns_cache=False, **options)
