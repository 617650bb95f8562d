"""The database goes away mid-run: requests answer 503 (or, where the endpoint lists no
503, a 401 with Retry-After; never 500, never later than the timeout), then 200 again once
it is back, with no restart of the edge; an import cut by
the outage is applied wholly or not at all.

These tests stop and start the session's server; every other test sees it running.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg
import pytest
from support.accountkit import Seeded, new_account
from support.pgserver import PgServer

from store import StoreUnavailable, accounts, commissions
from store.base import NewCommission
from store.engines.postgres import PostgresStore

TIMEOUT = 1.0


def rows(count: int, prefix: str = "e", status: str = "paid") -> list[NewCommission]:
    return [
        NewCommission(
            external_id=f"{prefix}{i}",
            status=status,
            raw_status=None,
            commission_amount=f"{i}.{i % 100:02d}",
            currency="EUR",
            transacted_at=f"2026-03-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z",
        )
        for i in range(count)
    ]


async def expect_503(client, seeded: Seeded) -> None:
    started = time.monotonic()
    resp = await client.get("/v1/commissions?limit=5", headers=seeded.auth)
    elapsed = time.monotonic() - started
    assert resp.status == 503, await resp.text()
    assert (await resp.json())["code"] == "unavailable"
    assert resp.headers["Retry-After"] == "7"
    assert elapsed < TIMEOUT + 0.5, elapsed


@contextmanager
def frozen(server: PgServer) -> Iterator[None]:
    """Every server process stopped (SIGSTOP): connections open, nothing ever answers."""
    pids = server.pids()
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


@pytest.mark.parametrize("mode", ["fast", "immediate"])
async def test_a_stopped_server_is_503_then_200_again_without_a_restart(
    edge_client, store, pg_server, clock, mode
):
    seeded = await new_account(store)
    await store.write(commissions.upsert, seeded.uid, "awin", rows(12))
    client = await edge_client(store_timeout=TIMEOUT, retry_after=7)
    before = await client.get("/v1/commissions?limit=5", headers=seeded.auth)
    assert before.status == 200
    expected = await before.json()

    await asyncio.to_thread(pg_server.stop, mode)
    try:
        for _ in range(3):
            await expect_503(client, seeded)
        clock.advance(60)  # the key's cache entry is stale; the refresh fails; it is kept
        assert (await client.get("/v1/programs/nope", headers=seeded.auth)).status == 404
        # /v1/me reads the account itself on every request and lists no 503: a temporary 401.
        me = await client.get("/v1/me", headers=seeded.auth)
        assert me.status == 401, await me.text()
        assert (await me.json())["code"] == "invalid_api_key"
        assert me.headers["Retry-After"] == "7"
    finally:
        await asyncio.to_thread(pg_server.start)

    after = await client.get("/v1/commissions?limit=5", headers=seeded.auth)
    assert after.status == 200, await after.text()
    assert await after.json() == expected
    cursor = expected["page"]["nextCursor"]
    following = await client.get(f"/v1/commissions?limit=5&cursor={cursor}", headers=seeded.auth)
    assert following.status == 200 and len((await following.json())["data"]) == 5


@pytest.mark.parametrize("mode", ["fast", "immediate"])
async def test_a_restart_under_traffic_answers_only_200_or_503(
    edge_client, store, pg_server, clock, mode
):
    """Requests in flight while the server stops and starts again: the connections they
    hold break at any point of the protocol, and each answer is a page or a 503, never a
    500 (asyncpg's InternalClientError, InterfaceError or CannotConnectNowError escaping)."""
    keys = [await new_account(store) for _ in range(4)]
    for seeded in keys:
        await store.write(commissions.upsert, seeded.uid, "awin", rows(60))
    client = await edge_client(store_timeout=TIMEOUT, retry_after=7)
    statuses: dict[str, list[int]] = {"commissions": [], "me": []}
    restarted = asyncio.Event()
    after: list[int] = []

    async def traffic(seeded: Seeded) -> None:
        while not restarted.is_set() or len(after) < 40:
            clock.advance(1)  # keys go stale: lookups reach the store too
            resp = await client.get("/v1/commissions?limit=25", headers=seeded.auth)
            await resp.read()
            statuses["commissions"].append(resp.status)
            if restarted.is_set():
                after.append(resp.status)
            me = await client.get("/v1/me", headers=seeded.auth)
            await me.read()
            statuses["me"].append(me.status)

    tasks = [asyncio.ensure_future(traffic(seeded)) for seeded in keys * 2]
    await asyncio.sleep(0.3)
    try:
        await asyncio.to_thread(pg_server.stop, mode)
        await asyncio.sleep(0.3)
    finally:
        await asyncio.to_thread(pg_server.start)
    restarted.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 60)

    assert set(statuses["commissions"]) <= {200, 503}, statuses["commissions"]
    assert set(statuses["me"]) <= {200, 401}, statuses["me"]  # 503 is not /v1/me's
    assert 503 in statuses["commissions"]  # the outage was met
    assert after[-10:] == [200] * 10  # and is over without restarting the edge


async def test_a_frozen_server_is_503_within_the_timeout_then_200(edge_client, store, pg_server):
    seeded = await new_account(store)
    await store.write(commissions.upsert, seeded.uid, "awin", rows(3))
    client = await edge_client(store_timeout=TIMEOUT, retry_after=7)
    assert (await client.get("/v1/commissions", headers=seeded.auth)).status == 200
    with frozen(pg_server):
        await expect_503(client, seeded)  # a pooled connection that never answers
        await expect_503(client, seeded)  # a new connection whose handshake never ends
    resp = await client.get("/v1/commissions", headers=seeded.auth)
    assert resp.status == 200 and len((await resp.json())["data"]) == 3


async def _wait_until_blocked(url: str) -> None:
    """Until the import's INSERT waits on a row lock (at most ~10 s). A connection of its
    own, outside any transaction: pg_stat_activity is a snapshot per transaction."""
    conn = await asyncpg.connect(url)
    try:
        for _ in range(1000):
            blocked = await conn.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query LIKE '%INSERT INTO commissions%'"
            )
            if blocked:
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the import never reached the locked row")
    finally:
        await conn.close()


async def test_an_import_cut_by_an_outage_is_all_or_nothing(pg_url, pg_server):
    writer = await PostgresStore.open(pg_url, writable=True, timeout=60.0)
    try:
        uid = await writer.write(accounts.create, None, "pro")
        await writer.write(commissions.upsert, uid, "awin", rows(100))
        kept = dict(await _seqs(pg_url))
        # New rows first, then updates of the 100 stored ones: the import writes thousands
        # of rows, then waits for the row this connection locks, and the server dies there.
        batch = rows(5_000, prefix="n") + rows(100, status="approved")
        locker = await asyncpg.connect(pg_url)
        await locker.execute("BEGIN")
        await locker.execute("SELECT 1 FROM commissions WHERE external_id = 'e50' FOR UPDATE")
        task = asyncio.ensure_future(writer.write(commissions.upsert, uid, "awin", batch))
        await _wait_until_blocked(pg_url)
        await asyncio.to_thread(pg_server.stop, "immediate")
        locker.terminate()
        try:
            with pytest.raises(StoreUnavailable):
                await task
        finally:
            await asyncio.to_thread(pg_server.start)

        assert dict(await _seqs(pg_url)) == kept  # nothing of the cut import is visible
        assert await _statuses(pg_url) == {"paid": 100}

        result = await writer.write(
            commissions.upsert, uid, "awin", batch
        )  # the operator re-runs it
        assert (result.inserted, result.updated, result.unchanged) == (5_000, 100, 0)
        seqs = dict(await _seqs(pg_url))
        assert len(seqs) == 5_100 and len(set(seqs.values())) == 5_100
        assert {k: seqs[k] for k in kept} == kept  # re-imported rows keep their ids
        assert await _statuses(pg_url) == {"paid": 5_000, "approved": 100}
    finally:
        await writer.close()


async def _seqs(url: str) -> list[tuple[str, int]]:
    conn = await asyncpg.connect(url)
    try:
        return [tuple(r) for r in await conn.fetch("SELECT external_id, id FROM commissions")]
    finally:
        await conn.close()


async def _statuses(url: str) -> dict[str, int]:
    conn = await asyncpg.connect(url)
    try:
        return dict(
            tuple(r)
            for r in await conn.fetch("SELECT status, count(*) FROM commissions GROUP BY 1")
        )
    finally:
        await conn.close()
