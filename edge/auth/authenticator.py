"""The cached Authenticator: API key -> Principal without a store round trip per request.

- A token that is not a well-formed key (marker, length, checksum) is refused at once.
- Lookups are cached by key, positive and negative alike, in two bounded maps (a flood of
  random well-formed keys cannot evict the real ones), least recently refreshed first out.
  By the key itself, not its hash: this step runs on every request, and a SHA-256 cost
  about 2 % of the CPU instructions of a cached directory page. The process holds each key
  in clear while it reads the request anyway; the cache only keeps it longer, and is never logged or shown. The store is
  asked by hash (`apikeys.key_hash`), on a miss. An entry is trusted for
  `ttl` seconds (`--key-cache-seconds`, default 5): a revoked key, a suspension or a plan
  change takes effect within that bound. The cached principal also carries the account as
  read with the key; /v1/me reads the account afresh instead, so that it shows changes at
  once.
- Concurrent requests for the same expired key share one store lookup.
- Stale-if-error: when a refresh fails, the last known answer for that key keeps being
  served (and the refresh is retried after another `ttl`), so a store outage does not log
  out the keys in use, for at most `stale` seconds after the store last confirmed it
  (`--key-stale-seconds`, default 600): an outage longer than that must not keep a key
  revoked meanwhile working forever. Past that bound, and for a key never seen since
  start, met while the store is down, `authenticate` raises StoreUnavailable and the auth
  middleware answers 503 where the endpoint lists it, else 401 (see docs/accounts.md).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from accounts import apikeys
from edge.auth.principal import NOT_CACHED, NotCached, Principal
from store import accounts
from store.base import KeyRecord, StoreUnavailable
from store.core import AccountStore

DEFAULT_CAPACITY = 10_000


@dataclass(slots=True)
class _Entry:
    principal: Principal | None
    fresh_until: float
    verified_at: float  # when the store last gave this answer


def principal_of(record: KeyRecord) -> Principal:
    """The Principal of an active key (pure)."""
    return Principal(
        key_id=record.key.id,
        account_uid=record.account.uid,
        plan=record.account.plan,
        prefix=record.key.prefix,
        label=record.key.label,
        scopes=record.key.scopes,
        suspended=record.account.suspended,
        account=record.account,
    )


class _Bounded:
    """At most `capacity` entries, the least recently refreshed evicted first.

    Refreshed, not used: a hit moves nothing (it runs on every request), and a key in use
    is put again at each refresh, once per `ttl`; a key evicted while in use costs one
    store lookup."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        # An OrderedDict: its `get` is a dict's, and it drops its oldest entry in O(1).
        self.items: OrderedDict[str, _Entry] = OrderedDict()

    def put(self, key: str, entry: _Entry) -> None:
        items = self.items
        items[key] = entry
        items.move_to_end(key)
        while len(items) > self.capacity:
            items.popitem(last=False)

    def pop(self, key: str) -> None:
        self.items.pop(key, None)

    def __len__(self) -> int:
        return len(self.items)


class CachedAuthenticator:
    """edge.auth.principal.Authenticator over an AccountStore."""

    def __init__(
        self,
        store: AccountStore,
        *,
        ttl: float,
        stale: float = 600.0,
        capacity: int = DEFAULT_CAPACITY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._ttl = ttl
        self._stale = stale
        self._clock = clock
        self._known = _Bounded(capacity)
        self._unknown = _Bounded(capacity)
        self._inflight: dict[str, asyncio.Future[KeyRecord | None]] = {}

    def cached(self, key: str) -> Principal | NotCached | None:
        entry = self._known.items.get(key) or self._unknown.items.get(key)
        if entry is not None and self._clock() < entry.fresh_until:
            return entry.principal
        return NOT_CACHED

    async def authenticate(self, key: str) -> Principal | None:
        entry = self._known.items.get(key) or self._unknown.items.get(key)
        if entry is not None:
            if self._clock() < entry.fresh_until:
                return entry.principal
        elif not apikeys.is_well_formed(key):
            # Only well-formed keys are ever stored, so a cache hit needs no shape and
            # checksum check (the regex and CRC32).
            return None
        try:
            record = await self._lookup(apikeys.key_hash(key))
        except StoreUnavailable:
            now = self._clock()
            if entry is None or now >= entry.verified_at + self._stale:
                raise
            # Serve the last answer, never past the stale bound; do not hammer a failing
            # store on every request.
            entry.fresh_until = min(now + self._ttl, entry.verified_at + self._stale)
            return entry.principal
        principal = None if record is None else principal_of(record)
        now = self._clock()
        fresh = _Entry(principal, now + self._ttl, now)
        if principal is None:
            self._known.pop(key)
            self._unknown.put(key, fresh)
        else:
            self._unknown.pop(key)
            self._known.put(key, fresh)
        return principal

    async def _lookup(self, digest: str) -> KeyRecord | None:
        """One store lookup per key at a time; concurrent callers share it."""
        pending = self._inflight.get(digest)
        if pending is None:
            pending = asyncio.ensure_future(self._store.read(accounts.lookup_key, digest))
            self._inflight[digest] = pending
            pending.add_done_callback(self._settled(digest))
        # shield: one caller going away must not cancel the lookup the others wait for.
        return await asyncio.shield(pending)

    def _settled(self, digest: str) -> Callable[[asyncio.Future[KeyRecord | None]], None]:
        def done(future: asyncio.Future[KeyRecord | None]) -> None:
            self._inflight.pop(digest, None)
            if not future.cancelled():
                future.exception()  # retrieved here even if every waiter went away

        return done

    def forget(self) -> None:
        """Drop every cached answer (tests; an operator signal could call it too)."""
        self._known = _Bounded(self._known.capacity)
        self._unknown = _Bounded(self._unknown.capacity)

    @property
    def size(self) -> int:
        return len(self._known) + len(self._unknown)
