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

The client address is `edge.http.clientaddress`'s: the peer, or what a trusted proxy says.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from aiohttp import web

from edge.http.clientaddress import Network, client_key
from edge.http.limiter import MemoryLimiter, RateState

DEFAULT_CAPACITY = 10_000  # client addresses remembered


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
        return client_key(request, self.trusted_proxies)

    def blocked(self, key: str) -> RateState | None:
        """The refusal when the address `key` has no failure left, else None; counts nothing."""
        return self._limiter.peek_denied(key, self.limit, self.window)

    def failed(self, key: str) -> RateState:
        """Count one failure of the address `key`; `allowed` is False once over the limit."""
        return self._limiter.hit_now(key, self.limit, self.window)
