"""Failed authentications, limited per client address (`AuthFailures`).

Each key the key cache does not know costs a store lookup, and a refused key answers 401
before the per-key rate limit (which counts keys, and a refused key is none). Without this,
one client could make the store look up keys as fast as it can send them, or try keys for
ever. So every request whose key is refused (unknown, revoked or malformed) counts against
its client address, by GCRA (the per-key limiter's `edge.http.limiter.MemoryLimiter`): past
`--auth-failure-limit` an address gets 429 `rate_limited` instead of a lookup, until its
bucket refills. A key the cache knows is served from any address, blocked or not: it costs
nothing. A request without a key costs nothing either and is not counted.

Bounded memory: at most `capacity` addresses are remembered, least recently failed out
first (after the ones whose bucket is full again). An address pushed out merely starts
again with a whole allowance. Counted in each process's memory: with N workers an address
gets up to N times the limit, still bounded.

The client address is the connection's peer, or, when the peer is one of
`--trusted-proxies`, the nearest address of `X-Forwarded-For` that is not a trusted proxy
(a client can write anything in that header; only what a trusted proxy appended is
believed). IPv6 addresses count per /64, the block one host usually holds.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable, Sequence

from aiohttp import web

from edge.http.limiter import MemoryLimiter, RateState

DEFAULT_CAPACITY = 10_000  # client addresses remembered
IPV6_HOST_PREFIX = 64

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_networks(text: str) -> tuple[Network, ...]:
    """Comma-separated addresses or CIDR blocks (`10.0.0.0/8, ::1`); ValueError naming the
    first that is neither."""
    networks = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"{part!r} is not an IP address or CIDR block") from None
    return tuple(networks)


def _address(text: str | None) -> Address | None:
    if not text:
        return None
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def client_address(
    peer: str | None, forwarded_for: Sequence[str], trusted: Sequence[Network]
) -> Address | None:
    """The client's address: `peer`, or when `peer` is a trusted proxy, the last address of
    the X-Forwarded-For values that is not one (each proxy appends the address it saw). A
    malformed entry stops the walk at the last trusted hop: what lies before it is the
    client's own writing."""
    current = _address(peer)
    if current is None or not trusted:
        return current
    hops = [hop for value in forwarded_for for hop in value.split(",")]
    while any(current in network for network in trusted) and hops:
        previous = _address(hops.pop())
        if previous is None:
            break
        current = previous
    return current


def address_key(address: Address | None) -> str:
    """What an address is counted under: itself (IPv4), its /64 (IPv6)."""
    if address is None:
        return "unknown"  # a Unix socket, a test transport: one shared count
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # ::ffff:a.b.c.d is the IPv4 client a.b.c.d
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/{IPV6_HOST_PREFIX}", strict=False))
    return str(address)


class AuthFailures:
    """At most `limit` failed authentications per `window` seconds per client address."""

    def __init__(
        self,
        limit: int,
        window: int,
        trusted_proxies: Sequence[Network] = (),
        *,
        capacity: int = DEFAULT_CAPACITY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self.trusted_proxies = tuple(trusted_proxies)
        self.capacity = capacity
        self._limiter = MemoryLimiter(capacity, clock)

    def __len__(self) -> int:
        """How many addresses are remembered (never more than `capacity`)."""
        return len(self._limiter)

    def key_of(self, request: web.BaseRequest) -> str:
        """The counted address of `request`."""
        forwarded = request.headers.getall("X-Forwarded-For", ()) if self.trusted_proxies else ()
        return address_key(client_address(request.remote, forwarded, self.trusted_proxies))

    def blocked(self, key: str) -> RateState | None:
        """The refusal when the address `key` has no failure left, else None; counts nothing."""
        return self._limiter.peek_denied(key, self.limit, self.window)

    def failed(self, key: str) -> RateState:
        """Count one failure of the address `key`; `allowed` is False once over the limit."""
        return self._limiter.hit_now(key, self.limit, self.window)
