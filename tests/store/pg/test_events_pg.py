"""The event feed under concurrent PostgreSQL writers: an id taken by a transaction that
has not committed never lets a higher id of the same account be seen first, so a reader
resuming after the last event it saw misses none; other accounts' writes do not wait."""

from __future__ import annotations

import asyncio

import asyncpg

from store import accounts, commissions
from store.base import NewCommission
from store.engines.postgres import PostgresStore
from store.events import EventQuery, account_events

NOW = "2026-03-01T12:00:00Z"
INSERT = (
    "INSERT INTO commissions (account_id, network, external_id, status, commission_amount, "
    "currency, transacted_at, imported_at, updated_at) "
    "VALUES ((SELECT id FROM accounts WHERE uid = $1), 'awin', $2, 'pending', '1.00', 'EUR', "
    f"'{NOW}', '{NOW}', '{NOW}')"
)


async def ids(store: PostgresStore, uid: str, after: int | None = None) -> list[int]:
    rows = await store.read(account_events, EventQuery(uid, 100, "0000", after=after))
    return [row.seq for row in rows]


async def test_an_accounts_events_become_visible_in_id_order(store: PostgresStore, pg_url):
    await store.write(accounts.create, None, "free", uid="acc_a")
    await store.write(accounts.create, None, "free", uid="acc_b")
    first, second = await asyncpg.connect(pg_url), await asyncpg.connect(pg_url)
    try:
        one = first.transaction()
        await one.start()
        await first.execute(INSERT, "acc_a", "A1")  # takes its event id, not committed
        two = second.transaction()
        await two.start()
        # Another account's write goes through and commits at once.
        await second.execute(INSERT, "acc_b", "B1")
        await two.commit()
        assert len(await ids(store, "acc_b")) == 1

        # The same account's second writer waits for the first to end before it takes an
        # id: it cannot commit a higher id while the lower one is still invisible.
        two = second.transaction()
        await two.start()
        waiting = asyncio.ensure_future(second.execute(INSERT, "acc_a", "A2"))
        done, _ = await asyncio.wait({waiting}, timeout=0.5)
        assert not done
        seen = await ids(store, "acc_a")
        assert seen == []  # a reader now keeps no cursor past an id still to come
        await one.commit()
        await waiting
        assert len(await ids(store, "acc_a")) == 1  # the first one, the second uncommitted
        cursor = (await ids(store, "acc_a"))[-1]
        await two.commit()
        later = await ids(store, "acc_a", after=cursor)
        assert len(later) == 1 and later[0] > cursor
    finally:
        await first.close()
        await second.close()


async def test_a_rolled_back_writer_lets_the_next_one_through(store: PostgresStore, pg_url):
    await store.write(accounts.create, None, "free", uid="acc_a")
    first, second = await asyncpg.connect(pg_url), await asyncpg.connect(pg_url)
    try:
        one = first.transaction()
        await one.start()
        await first.execute(INSERT, "acc_a", "A1")
        two = second.transaction()
        await two.start()
        waiting = asyncio.ensure_future(second.execute(INSERT, "acc_a", "A2"))
        done, _ = await asyncio.wait({waiting}, timeout=0.5)
        assert not done
        await one.rollback()
        await waiting
        await two.commit()
        (only,) = await store.read(account_events, EventQuery("acc_a", 100, "0000"))
        assert '"externalId":"A2"' in only.data
    finally:
        await first.close()
        await second.close()


async def test_concurrent_syncs_of_one_account_leave_a_feed_without_gaps(store: PostgresStore):
    """Many writers of one account at once, a reader paging on meanwhile: the reader's
    pages, joined, are every event exactly once, in id order."""
    await store.write(accounts.create, None, "free", uid="acc_a")

    async def writer(network: str) -> None:
        for n in range(15):
            row = NewCommission(
                external_id=f"{network}-{n}",
                status="pending",
                raw_status=None,
                commission_amount="1",
                currency="EUR",
                transacted_at="2026-01-01T00:00:00Z",
            )
            await store.write(commissions.upsert, "acc_a", network, [row])

    read: list[int] = []
    writing = asyncio.gather(*(writer(network) for network in ("awin", "cj", "tradedoubler")))

    async def reader() -> None:
        while not writing.done():
            page = await ids(store, "acc_a", after=read[-1] if read else None)
            read.extend(page)
            await asyncio.sleep(0)

    await asyncio.gather(writing, reader())
    read.extend(await ids(store, "acc_a", after=read[-1] if read else None))
    assert len(read) == 45
    assert read == sorted(set(read))
