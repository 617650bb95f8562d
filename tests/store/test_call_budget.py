"""The requests every sync worker counts per connection (store.connections.reserve_call), on
SQLite and PostgreSQL: a request is counted only when it fits every documented rate over a
rolling period, the answer says how long until one fits, and workers racing for the last
request of a period never both get it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from support.accountkit import new_account
from support.clock import FakeClock

from store import AccountStore, connections, open_store

PER_QUARTER = [(3, 900.0)]


@pytest.fixture
async def store(database: str, clock: FakeClock) -> AsyncIterator[AccountStore]:
    opened = await open_store(
        database, writable=True, readers=1, timeout=10.0, clock=lambda: clock.now()
    )
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def uid(store: AccountStore) -> str:
    account = await new_account(store, plan="pro")
    await store.write(connections.connect, account.uid, "timeone", b"sealed")
    return account.uid


async def test_a_request_is_counted_only_while_it_fits_every_rate(
    store: AccountStore, uid: str, clock: FakeClock
):
    for _ in range(3):
        assert await store.write(connections.reserve_call, uid, "timeone", PER_QUARTER) == 0.0
        clock.advance(10)
    # The first of the three leaves the quarter 900 s after it was made: 870 s from now.
    assert await store.write(connections.reserve_call, uid, "timeone", PER_QUARTER) == 870.0
    clock.advance(869.5)
    assert await store.write(connections.reserve_call, uid, "timeone", PER_QUARTER) == 0.5
    clock.advance(0.5)
    assert await store.write(connections.reserve_call, uid, "timeone", PER_QUARTER) == 0.0


async def test_every_rate_holds_the_longest_wait_wins(
    store: AccountStore, uid: str, clock: FakeClock
):
    rates = [(2, 60.0), (3, 86400.0)]
    waits = []
    for _ in range(4):
        waits.append(await store.write(connections.reserve_call, uid, "timeone", rates))
        clock.advance(1)
    # Two, then the minute's wait (58 s), then the third after the minute.
    assert waits[:2] == [0.0, 0.0] and waits[2] == 58.0 and waits[3] == 57.0
    clock.advance(57)
    assert await store.write(connections.reserve_call, uid, "timeone", rates) == 0.0
    # The day's three are spent (at 0, 1 and 61 s): the next fits when the first leaves it.
    wait = await store.write(connections.reserve_call, uid, "timeone", rates)
    assert wait == 86400.0 - 61.0


async def test_counts_are_per_connection(store: AccountStore, uid: str):
    other = await new_account(store, plan="free")
    await store.write(connections.connect, other.uid, "timeone", b"sealed")
    await store.write(connections.connect, uid, "sovrn", b"sealed")
    for _ in range(3):
        assert await store.write(connections.reserve_call, uid, "timeone", PER_QUARTER) == 0.0
    assert await store.write(connections.reserve_call, uid, "timeone", PER_QUARTER) > 0
    assert await store.write(connections.reserve_call, other.uid, "timeone", PER_QUARTER) == 0
    assert await store.write(connections.reserve_call, uid, "sovrn", PER_QUARTER) == 0


async def test_a_disconnect_and_reconnect_keeps_the_count_the_network_keeps(
    store: AccountStore, uid: str
):
    for _ in range(3):
        await store.write(connections.reserve_call, uid, "timeone", PER_QUARTER)
    await store.write(connections.disconnect, uid, "timeone")
    await store.write(connections.connect, uid, "timeone", b"sealed again")
    assert await store.write(connections.reserve_call, uid, "timeone", PER_QUARTER) > 0


async def test_racing_workers_never_share_out_more_than_the_limit(
    database: str, store: AccountStore, uid: str, clock: FakeClock
):
    """Two processes' stores, forty requests at once for a limit of three: three counted."""
    other = await open_store(
        database, writable=True, readers=1, timeout=10.0, clock=lambda: clock.now()
    )
    try:
        answers = await asyncio.gather(
            *(
                s.write(connections.reserve_call, uid, "timeone", PER_QUARTER)
                for _ in range(20)
                for s in (store, other)
            )
        )
    finally:
        await other.close()
    assert answers.count(0.0) == 3
    assert all(a == 900.0 for a in answers if a)


@pytest.mark.parametrize("rates", [[], [(0, 60.0)], [(3, 0.0)], [(3, -1.0)]])
async def test_rates_that_count_nothing_are_refused(store: AccountStore, uid: str, rates):
    with pytest.raises(ValueError, match="rates"):
        await store.write(connections.reserve_call, uid, "timeone", rates)
