"""PostgresStore behaviour that the shared account tests do not reach: URLs, the read-only
edge, credentials out of reach of every read path, exact text, seq stability under
concurrent imports, timeouts and pool exhaustion, writes cut off during their COMMIT."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import asyncpg
import pytest
from support.accountkit import execute_sql, fetch_rows, new_account
from support.pgserver import free_port
from support.slowcommit import slow_commits

from store import (
    OutcomeUnknown,
    StoreError,
    StoreUnavailable,
    accounts,
    commissions,
    connections,
    open_store,
)
from store.base import CommissionQuery, NewCommission
from store.engines.postgres import (
    WRITE_BACKSTOP,
    PoolSize,
    PostgresStore,
    numbered,
    parse_url,
    redact,
    session_settings,
)


async def fetch_unchecked(s: Any, sql: str) -> list[Any]:
    """An operation that sends `sql` on the session's asyncpg connection itself, past the
    session's check of read paths (the server's permissions still apply)."""
    return list(await s.conn.fetch(sql))


def commission(
    external_id: str, when: str = "2026-01-02T03:04:05Z", **changes: str
) -> NewCommission:
    values = {
        "status": "paid",
        "raw_status": "Paid",
        "commission_amount": "12.30",
        "currency": "EUR",
        "transacted_at": when,
    } | changes
    return NewCommission(external_id=external_id, **values)  # type: ignore[arg-type]


# --- URLs (no server) -------------------------------------------------------------------


def test_pool_settings_come_off_the_url_and_the_rest_goes_to_asyncpg():
    dsn, size = parse_url("postgresql://u:pw@db:5433/affdir?pool_max=20&sslmode=require&pool_min=2")
    assert size == PoolSize(2, 20)
    assert dsn == "postgresql://u:pw@db:5433/affdir?sslmode=require"
    assert parse_url("postgres://db/x") == ("postgres://db/x", PoolSize(1, 10))
    for bad in ("pool_max=0", "pool_min=5&pool_max=2", "pool_max=many"):
        with pytest.raises(ValueError, match="pool_"):
            parse_url(f"postgresql://db/x?{bad}")


@pytest.mark.parametrize(
    ("timeout", "read_only", "backstop_ms"),
    [
        (2.0, True, "3000"),  # the edge: work it abandoned stops a second after it gave up
        (
            0.2,
            False,
            str(int(WRITE_BACKSTOP * 1000) + 1000),
        ),  # a 10,000-row upsert may take seconds
        (90.0, False, "91000"),
    ],
)
def test_the_server_stops_a_statement_a_second_after_its_bound(timeout, read_only, backstop_ms):
    settings = session_settings(timeout, read_only=read_only)
    assert settings["statement_timeout"] == backstop_ms
    assert settings["idle_in_transaction_session_timeout"] == backstop_ms
    assert (settings.get("default_transaction_read_only") == "on") is read_only


def test_passwords_never_reach_a_message():
    assert redact("postgresql://u:s3cret@db/x") == "postgresql://u:***@db/x"
    assert redact("postgresql://db/x") == "postgresql://db/x"


def test_placeholders_are_numbered_in_order():
    assert numbered("a = ? AND (b, c) < (?, ?) LIMIT ?") == "a = $1 AND (b, c) < ($2, $3) LIMIT $4"


async def test_an_unreachable_server_is_unavailable_quickly_with_no_password_shown():
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match=r"u:\*\*\*@127\.0\.0\.1") as caught:
        await open_store(f"postgresql://u:hunter2@127.0.0.1:{free_port()}/x", timeout=1.0)
    assert "hunter2" not in str(caught.value)
    assert time.monotonic() - started < 1.5


# --- The edge's store -------------------------------------------------------------------


async def test_open_store_routes_both_schemes(pg_url):
    for url in (pg_url, pg_url.replace("postgresql://", "postgres://")):
        opened = await open_store(url)
        assert isinstance(opened, PostgresStore)
        await opened.close()


async def test_the_edge_store_is_read_only(reader, store):
    uid = await store.write(accounts.create, None, "free")
    with pytest.raises(StoreError, match="read-only"):
        await reader.write(accounts.set_plan, uid, "pro")
    # Even a statement slipped into a read path cannot write: the session is read-only.
    with pytest.raises(StoreUnavailable, match="read-only transaction"):
        await reader.read(execute_sql, "UPDATE accounts SET plan = 'pro'")
    assert (await reader.read(accounts.find, uid)).plan == "free"


async def test_a_closed_store_is_unavailable(pg_url):
    opened = await open_store(pg_url)
    await opened.close()
    await opened.close()  # idempotent
    with pytest.raises(StoreUnavailable, match="closed"):
        await opened.read(commissions.page, CommissionQuery("acc_x", 10))


async def test_the_api_reads_work_for_a_role_that_cannot_read_credentials(
    store, pg_url, admin_conn
):
    """What docs/accounts.md recommends: the edge's role has no SELECT on the credentials."""
    await admin_conn.execute(
        "DO $$ BEGIN CREATE ROLE edge_reader LOGIN; "
        "EXCEPTION WHEN duplicate_object THEN NULL; END $$"
    )
    await admin_conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO edge_reader")
    await admin_conn.execute("REVOKE SELECT ON network_credentials FROM edge_reader")
    seeded = await new_account(store)
    await store.write(connections.connect, seeded.uid, "awin", b"ciphertext")
    await store.write(commissions.upsert, seeded.uid, "awin", [commission("e1")])
    seen: list[str] = []
    edge = await open_store(pg_url.replace("postgres@", "edge_reader@"), trace=seen.append)
    try:
        from accounts import apikeys

        record = await edge.read(accounts.lookup_key, apikeys.key_hash(seeded.key))
        assert record is not None and record.account.networks[0].network == "awin"
        assert [
            r.external_id for r in await edge.read(commissions.page, CommissionQuery(seeded.uid, 5))
        ] == ["e1"]
        assert (await edge.read(accounts.find, seeded.uid)).uid == seeded.uid
        assert len(await edge.read(accounts.list_keys, seeded.uid)) == 1
        # The store refuses to send it; the server would refuse it anyway.
        with pytest.raises(StoreUnavailable, match="not authorized on a read path"):
            await edge.read(fetch_rows, "SELECT * FROM network_credentials")
        with pytest.raises(StoreUnavailable, match="permission denied"):
            await edge.read(fetch_unchecked, "SELECT * FROM network_credentials")
    finally:
        await edge.close()
    assert seen and not [s for s in seen[:-1] if "network_credentials" in s]
    assert not [s for s in seen if "OFFSET" in s.upper()]


async def test_text_comes_back_exactly_and_sorts_bytewise(store):
    uid = await store.write(accounts.create, None, "pro")
    # The widest amount the definition allows: 18 digits before the point, 12 after.
    amounts = ["12.30", "-0.5", "0", "100000000000000000.000000000001", "7.000"]
    rows = [
        commission(f"e{i}", f"2026-01-0{i + 1}T00:00:00Z", commission_amount=a, sale_amount=a)
        for i, a in enumerate(amounts)
    ]
    await store.write(commissions.upsert, uid, "awin", rows)
    got = await store.read(commissions.page, CommissionQuery(uid, 10))
    assert [r.commission_amount for r in reversed(got)] == amounts
    assert [r.sale_amount for r in reversed(got)] == amounts
    for network in ("ab", "a_b", "a-b", "b", "a0"):
        await store.write(connections.connect, uid, network, b"x")
    view = await store.read(accounts.find, uid)
    assert [n.network for n in view.networks] == sorted(["ab", "a_b", "a-b", "b", "a0"])


async def test_seq_is_stable_across_reimports_and_updates(store):
    uid = await store.write(accounts.create, None, "pro")
    first = await store.write(commissions.upsert, uid, "awin", [commission("a"), commission("b")])
    assert (first.inserted, first.updated, first.unchanged) == (2, 0, 0)
    before = {
        r.external_id: r.seq for r in await store.read(commissions.page, CommissionQuery(uid, 10))
    }
    again = await store.write(
        commissions.upsert,
        uid,
        "awin",
        [commission("a"), commission("b", status="declined"), commission("c")],
    )
    assert (again.inserted, again.updated, again.unchanged) == (1, 1, 1)
    after = {r.external_id: r for r in await store.read(commissions.page, CommissionQuery(uid, 10))}
    assert {k: after[k].seq for k in before} == before
    assert after["b"].status == "declined"
    assert after["c"].seq > max(before.values())
    # Ties on transacted_at are broken by seq, descending (the public id's order means
    # nothing: store.publicids).
    ordered = await store.read(commissions.page, CommissionQuery(uid, 10))
    assert [r.seq for r in ordered] == sorted((r.seq for r in ordered), reverse=True)


async def test_concurrent_imports_of_one_batch_insert_each_row_once(store):
    uid = await store.write(accounts.create, None, "pro")
    rows = [commission(f"e{i}", f"2026-02-{1 + i % 28:02d}T00:00:00Z") for i in range(300)]
    results = await asyncio.gather(
        *(store.write(commissions.upsert, uid, "awin", rows) for _ in range(4))
    )
    assert sum(r.inserted for r in results) == 300
    assert sum(r.unchanged for r in results) == 900
    stored = await store.read(commissions.page, CommissionQuery(uid, 1000))
    assert len(stored) == 300 and len({r.seq for r in stored}) == 300


async def test_a_duplicate_uid_is_a_conflict(store):
    await store.write(accounts.create, None, "pro", uid="acc_same")
    with pytest.raises(StoreError) as caught:
        await store.write(accounts.create, None, "pro", uid="acc_same")
    assert type(caught.value).__name__ == "Conflict"


# --- Timeouts ---------------------------------------------------------------------------


async def test_a_blocked_query_times_out_and_the_store_recovers(pg_url, store, admin_conn):
    uid = await store.write(accounts.create, None, "pro")
    await store.write(commissions.upsert, uid, "awin", [commission("e1")])
    edge = await PostgresStore.open(pg_url, timeout=0.3)
    try:
        async with admin_conn.transaction():
            await admin_conn.execute("LOCK TABLE commissions IN ACCESS EXCLUSIVE MODE")
            started = time.monotonic()
            with pytest.raises(StoreUnavailable, match=r"did not answer within 0\.3s"):
                await edge.read(commissions.page, CommissionQuery(uid, 10))
            assert time.monotonic() - started < 0.8
        assert len(await edge.read(commissions.page, CommissionQuery(uid, 10))) == 1
        # The abandoned statement is gone from the server too (its connection was dropped).
        await asyncio.sleep(0.2)
        waiting = await admin_conn.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        )
        assert waiting == 0
    finally:
        await edge.close()


async def test_an_exhausted_pool_is_unavailable_not_a_queue_forever(pg_url, store):
    uid = await store.write(accounts.create, None, "pro")
    edge = await PostgresStore.open(pg_url + "?pool_max=1", timeout=0.3)
    try:
        busy = await edge._pool.acquire()  # the only connection, held by a slow call
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="did not answer"):
            await edge.read(commissions.page, CommissionQuery(uid, 10))
        assert time.monotonic() - started < 0.8
        await edge._pool.release(busy)
        assert await edge.read(commissions.page, CommissionQuery(uid, 10)) == []
    finally:
        await edge.close()


async def test_too_many_connections_is_unavailable(pg_url, admin_conn):
    await admin_conn.execute(
        "DO $$ BEGIN CREATE ROLE one_conn LOGIN CONNECTION LIMIT 1; "
        "EXCEPTION WHEN duplicate_object THEN NULL; END $$"
    )
    await admin_conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO one_conn")
    url = pg_url.replace("postgres@", "one_conn@")
    holder = await asyncpg.connect(url)
    try:
        with pytest.raises(StoreUnavailable, match="too many connections"):
            await PostgresStore.open(url)
    finally:
        await holder.close()


# --- Writes cut off during their COMMIT -------------------------------------------------


async def cut_off_write(
    pg_url: str, stop: str, write: Any, *, store_timeout: float = 10.0
) -> asyncio.Future[Any]:
    """Run `write(store)` on a writable store, stopped 0.3 s in: past its `write_timeout`
    (`stop="deadline"`) or by cancelling its caller (`stop="cancel"`). Its outcome."""
    deadline = 0.3 if stop == "deadline" else None
    writer = await PostgresStore.open(
        pg_url, writable=True, timeout=store_timeout, write_timeout=deadline
    )
    try:
        task = asyncio.ensure_future(write(writer))
        if stop == "cancel":
            await asyncio.sleep(0.3)
            task.cancel()
        await asyncio.wait({task})
        return task
    finally:
        await writer.close()


@pytest.mark.parametrize("stop", ["deadline", "cancel"])
@pytest.mark.parametrize("fate", ["committed", "aborted"])
async def test_a_write_cut_off_during_commit_reports_what_the_server_did(
    pg_url, store, admin_conn, stop, fate
):
    # The COMMIT had been sent when the write was stopped: only the server knows whether it
    # went through. A committed import must never be reported as failed.
    uid = await store.write(accounts.create, None, "pro")
    async with slow_commits(admin_conn, seconds=1.0, fail=fate == "aborted"):
        outcome = await cut_off_write(
            pg_url, stop, lambda w: w.write(commissions.upsert, uid, "awin", [commission("e1")])
        )
        rows = await admin_conn.fetchval("SELECT count(*) FROM commissions")
    if fate == "committed":
        assert outcome.result().inserted == 1 and rows == 1
    else:
        assert rows == 0
        if stop == "cancel":
            assert outcome.cancelled()
        else:
            with pytest.raises(StoreUnavailable, match="rolled back: nothing was written"):
                outcome.result()


@pytest.mark.parametrize("stop", ["deadline", "cancel"])
async def test_a_commit_the_server_cannot_account_for_in_time_is_an_unknown_outcome(
    pg_url, store, admin_conn, stop
):
    # Not "failed", not "interrupted" (both claim nothing was written): unknown.
    uid = await store.write(accounts.create, None, "pro")
    async with slow_commits(admin_conn, seconds=60):
        outcome = await cut_off_write(
            pg_url,
            stop,
            lambda w: w.write(commissions.upsert, uid, "awin", [commission("e1")]),
            store_timeout=0.5,
        )
        with pytest.raises(OutcomeUnknown, match="may or may not have been applied"):
            outcome.result()
