"""The sync worker keeps the months' rankings (sync.rankings): its rounds rebuild every
month a write marked, until stopped, and a store that cannot be written is tried again
later, never a failure of the worker."""

from __future__ import annotations

import asyncio

from store import accounts, commissions, open_store, ranks
from store.base import NewCommission
from sync.rankings import keep_rankings, rebuild_rankings


def commission(external_id: str, day: str) -> NewCommission:
    return NewCommission(
        external_id=external_id,
        status="approved",
        raw_status="approved",
        commission_amount="4.26",
        currency="EUR",
        transacted_at=f"{day}T10:00:00Z",
        sub_id="home",
    )


async def test_the_sync_workers_rounds_rebuild_marked_months_until_stopped(database):
    store = await open_store(database, writable=True, readers=1)
    try:
        await store.write(accounts.create, None, "pro", uid="acc_k")
        rows = [commission("a", "2026-01-05"), commission("b", "2026-02-05")]
        await store.write(commissions.upsert, "acc_k", "awin", rows)
        assert await store.read(ranks.stale_months) == 2
        stop = asyncio.Event()
        rounds = asyncio.create_task(keep_rankings(store, stop, every=0.05))
        for _ in range(100):
            if await store.read(ranks.stale_months) == 0:
                break
            await asyncio.sleep(0.02)
        assert await store.read(ranks.stale_months) == 0
        # A later write is taken by a later round.
        await store.write(commissions.upsert, "acc_k", "awin", [commission("c", "2026-03-05")])
        for _ in range(100):
            if await store.read(ranks.stale_months) == 0:
                break
            await asyncio.sleep(0.02)
        assert await store.read(ranks.stale_months) == 0
        stop.set()
        await asyncio.wait_for(rounds, 5)
    finally:
        await store.close()


async def test_a_store_that_cannot_be_written_is_tried_again_later(database):
    store = await open_store(database, writable=True, readers=1)
    await store.close()
    assert await rebuild_rankings(store) == 0
