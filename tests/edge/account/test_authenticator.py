"""The cached Authenticator: bounded, time-limited, stale-if-error, one lookup at a time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.clock import FakeClock

from accounts import apikeys
from edge.auth.authenticate import NOT_CACHED
from edge.auth.authenticator import CachedAuthenticator
from store import accounts
from store.base import (
    AccountView,
    CapabilityView,
    KeyRecord,
    KeyView,
    StoreUnavailable,
)


def record(key_id: str = "key_1", suspended: bool = False) -> KeyRecord:
    account = AccountView(
        uid="acc_1",
        email=None,
        plan="free",
        suspended=suspended,
        created_at="2026-01-01T00:00:00Z",
        capabilities={
            c: CapabilityView(False, False, None) for c in ("acquisition", "monetisation")
        },
        networks=(),
    )
    key = KeyView(key_id, "acc_1", "afk_12345678", "label", ("read",), "2026-01-01T00:00:00Z", None)
    return KeyRecord(key=key, account=account)


class FakeStore:
    """Answers lookup_key from a dict of hash -> record; can fail or stall on demand."""

    def __init__(self) -> None:
        self.records: dict[str, KeyRecord] = {}
        self.calls = 0
        self.down = False
        self.gate: asyncio.Event | None = None

    async def read(self, fn: Any, key_hash: str) -> KeyRecord | None:
        assert fn is accounts.lookup_key  # the one operation the authenticator runs
        self.calls += 1
        if self.gate is not None:
            await self.gate.wait()
        if self.down:
            raise StoreUnavailable("down")
        return self.records.get(key_hash)


@pytest.fixture
def parts():
    store, clock = FakeStore(), FakeClock()
    key = apikeys.generate_key()
    store.records[key.key_hash] = record()
    return store, clock, key, CachedAuthenticator(store, ttl=5, clock=clock)


async def test_malformed_keys_never_reach_the_store(parts):
    store, _, key, auth = parts
    assert await auth.authenticate(key.key[:-1] + ("A" if key.key[-1] != "A" else "B")) is None
    assert await auth.authenticate("Bearer nonsense") is None
    assert store.calls == 0


async def test_a_known_key_is_looked_up_once_per_ttl(parts):
    store, clock, key, auth = parts
    principal = await auth.authenticate(key.key)
    assert principal is not None and principal.key_id == "key_1"
    assert principal.account is not None and principal.account.uid == "acc_1"
    for _ in range(50):
        assert await auth.authenticate(key.key) == principal
    assert store.calls == 1
    clock.advance(5)
    await auth.authenticate(key.key)
    assert store.calls == 2


async def test_revocation_shows_within_the_ttl(parts):
    store, clock, key, auth = parts
    assert await auth.authenticate(key.key) is not None
    del store.records[key.key_hash]  # revoked
    clock.advance(4.9)
    assert await auth.authenticate(key.key) is not None  # still cached: the documented bound
    clock.advance(0.1)
    assert await auth.authenticate(key.key) is None


async def test_unknown_keys_are_cached_too(parts):
    store, clock, _, auth = parts
    stranger = apikeys.generate_key().key
    for _ in range(10):
        assert await auth.authenticate(stranger) is None
    assert store.calls == 1
    store.records[apikeys.key_hash(stranger)] = record("key_2")  # issued meanwhile
    clock.advance(5)
    principal = await auth.authenticate(stranger)
    assert principal is not None and principal.key_id == "key_2"


async def test_the_cache_is_bounded(parts):
    store, _, key, _ = parts
    auth = CachedAuthenticator(store, ttl=5, capacity=3, clock=FakeClock())
    await auth.authenticate(key.key)
    strangers = [apikeys.generate_key().key for _ in range(10)]
    for stranger in strangers:
        await auth.authenticate(stranger)
    assert auth.size == 4  # 1 known + 3 unknown: unknown keys cannot push out known ones
    calls = store.calls
    await auth.authenticate(key.key)
    assert store.calls == calls
    await auth.authenticate(strangers[0])  # evicted: looked up again
    assert store.calls == calls + 1


async def test_a_store_outage_keeps_known_answers_and_retries_later(parts):
    store, clock, key, auth = parts
    principal = await auth.authenticate(key.key)
    stranger = apikeys.generate_key().key
    assert await auth.authenticate(stranger) is None
    store.down = True
    clock.advance(10)
    assert await auth.authenticate(key.key) == principal  # stale but served
    assert await auth.authenticate(stranger) is None  # known unknown stays unknown
    calls = store.calls
    assert await auth.authenticate(key.key) == principal
    assert store.calls == calls  # no retry before another ttl
    with pytest.raises(StoreUnavailable):  # never seen: cannot be verified
        await auth.authenticate(apikeys.generate_key().key)
    store.down = False
    clock.advance(5)
    del store.records[key.key_hash]
    assert await auth.authenticate(key.key) is None  # back: the truth wins again


@pytest.mark.parametrize("stale", [0.0, 8.0, 600.0])
async def test_a_known_answer_outlives_its_check_by_the_stale_bound_only(stale):
    store, clock = FakeStore(), FakeClock()
    key = apikeys.generate_key()
    store.records[key.key_hash] = record()
    auth = CachedAuthenticator(store, ttl=5, stale=stale, clock=clock)
    checked = clock()
    principal = await auth.authenticate(key.key)
    store.down = True
    served_until = 0.0  # seconds after the check
    while served_until < stale + 10:
        clock.advance(1)
        try:
            assert await auth.authenticate(key.key) == principal
        except StoreUnavailable:
            break
        assert auth.cached(key.key) in (principal, NOT_CACHED)
        served_until = clock() - checked
    # Served while the cache entry is fresh (the ttl) or within the stale bound, not after.
    assert served_until == max(4.0, stale - 1)
    assert auth.cached(key.key) is NOT_CACHED
    store.down = False  # back: verified again, and the bound starts over
    assert await auth.authenticate(key.key) == principal


async def test_concurrent_lookups_of_one_key_share_one_store_call(parts):
    store, _, key, auth = parts
    store.gate = asyncio.Event()
    waiting = [asyncio.ensure_future(auth.authenticate(key.key)) for _ in range(20)]
    await asyncio.sleep(0)
    store.gate.set()
    results = await asyncio.gather(*waiting)
    assert store.calls == 1
    assert all(r is not None and r.key_id == "key_1" for r in results)


async def test_one_waiter_going_away_does_not_cancel_the_shared_lookup(parts):
    store, _, key, auth = parts
    store.gate = asyncio.Event()
    first = asyncio.ensure_future(auth.authenticate(key.key))
    second = asyncio.ensure_future(auth.authenticate(key.key))
    await asyncio.sleep(0)
    first.cancel()
    store.gate.set()
    assert (await second) is not None
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_cached_answers_without_waiting_only_while_fresh(parts):
    """`cached`, the auth step's first call: the cached answer while it is fresh, else
    NOT_CACHED (then `authenticate` asks the store); it never calls the store itself."""
    store, clock, key, auth = parts
    stranger = apikeys.generate_key().key
    assert auth.cached(key.key) is NOT_CACHED
    assert auth.cached("not a key") is NOT_CACHED
    principal = await auth.authenticate(key.key)
    assert await auth.authenticate(stranger) is None
    assert store.calls == 2
    assert auth.cached(key.key) == principal
    assert auth.cached(stranger) is None  # known to be unknown
    clock.advance(5)
    assert auth.cached(key.key) is NOT_CACHED
    assert auth.cached(stranger) is NOT_CACHED
    assert store.calls == 2
