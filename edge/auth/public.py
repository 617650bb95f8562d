"""The public: who calls the directory without a key, one principal per client address.

A request without an Authorization header is counted under its client address
(`edge.http.clientaddress`). Reading that address (the peer, or what a trusted proxy
appended to `X-Forwarded-For`) and making its principal is done once per address and kept,
so that a repeat costs what a keyed request's cached key costs: one dict lookup.
"""

from __future__ import annotations

from collections.abc import Sequence

from aiohttp import web

from edge.auth.principal import Principal, anonymous
from edge.http.clientaddress import Network, address_key, client_address

DEFAULT_CAPACITY = 10_000  # client addresses remembered


class PublicCallers:
    """The principal of each client address seen without a key, at most `capacity` kept."""

    def __init__(
        self, trusted_proxies: Sequence[Network] = (), capacity: int = DEFAULT_CAPACITY
    ) -> None:
        self.trusted_proxies = tuple(trusted_proxies)
        self.capacity = capacity
        self._known: dict[tuple[str | None, tuple[str, ...]], Principal] = {}

    def __len__(self) -> int:
        return len(self._known)

    def of(self, request: web.BaseRequest) -> Principal:
        """The principal of `request`'s client address."""
        trusted = self.trusted_proxies
        forwarded = tuple(request.headers.getall("X-Forwarded-For", ())) if trusted else ()
        seen = (request.remote, forwarded)
        principal = self._known.get(seen)
        if principal is None:
            if len(self._known) >= self.capacity:
                # Forgetting costs a new lookup, never a wrong count: the limiter keeps the
                # counts, by address.
                self._known.clear()
            address = client_address(request.remote, forwarded, trusted)
            principal = self._known[seen] = anonymous(address_key(address))
        return principal
