"""A commission's history: every stored change of its status (with the network's word) or of
its amounts keeps the state it replaced, in the upsert's own transaction, on both stores;
an unchanged row, or a change of another field, writes none. A database migrated by an
older version upgrades in place, its rows and outcomes kept."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import asyncpg
import pytest
from support.accountkit import StepClock, new_commission

from contract.resources import HISTORY_MAX
from store import StatusChange, accounts, commissions, open_store
from store.engines.sqlite import migrate
from store.schema import LATEST, statements

START = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


commission = new_commission


@pytest.fixture
async def history_store(database: str):
    clock = StepClock(START)
    store = await open_store(database, writable=True, readers=1, clock=clock)
    await store.write(accounts.create, None, "free", uid="acc_history")
    try:
        yield store, clock
    finally:
        await store.close()


async def seq_of(store, external_id: str) -> int:
    from store import CommissionQuery

    rows = await store.read(commissions.page, CommissionQuery("acc_history", limit=100))
    return next(r.seq for r in rows if r.external_id == external_id)


async def test_changes_of_status_or_amount_keep_what_they_replaced(history_store):
    store, clock = history_store
    rows = [commission("A"), commission("B"), commission("C")]
    await store.write(commissions.upsert, "acc_history", "awin", rows)
    first = "2026-03-01T12:00:00Z"
    approved_at = clock.advance(3600)
    result = await store.write(
        commissions.upsert,
        "acc_history",
        "awin",
        [
            commission("A", status="approved", raw_status="approved"),  # a status change
            commission("B", commission_amount="2.13"),  # an amendment
            commission("C", sub_id="b"),  # another field: no history
        ],
    )
    assert (result.inserted, result.updated, result.unchanged) == (0, 3, 0)
    paid_at = clock.advance(3600)
    await store.write(
        commissions.upsert,
        "acc_history",
        "awin",
        [
            commission("A", status="paid", raw_status="approved"),
            commission("B", commission_amount="2.13"),  # unchanged: no history
            commission("C", sub_id="b"),
        ],
    )
    a = await store.read(commissions.find, "acc_history", await seq_of(store, "A"))
    assert a is not None and a.row.status == "paid"
    assert a.history == (
        StatusChange("pending", "pending", "4.26", "85.20", "EUR", first, approved_at),
        StatusChange("approved", "approved", "4.26", "85.20", "EUR", approved_at, paid_at),
    )
    b = await store.read(commissions.find, "acc_history", await seq_of(store, "B"))
    assert b is not None and b.row.commission_amount == "2.13"
    assert b.history == (
        StatusChange("pending", "pending", "4.26", "85.20", "EUR", first, approved_at),
    )
    c = await store.read(commissions.find, "acc_history", await seq_of(store, "C"))
    assert c is not None and c.row.sub_id == "b" and c.history == ()


async def test_a_commission_is_read_only_by_its_own_account(history_store):
    store, _ = history_store
    await store.write(accounts.create, None, "free", uid="acc_other")
    await store.write(commissions.upsert, "acc_other", "awin", [commission("X")])
    other = await seq_of_account(store, "acc_other", "X")
    assert await store.read(commissions.find, "acc_other", other) is not None
    assert await store.read(commissions.find, "acc_history", other) is None
    assert await store.read(commissions.find, "acc_history", 2**63) is None  # past any identity
    assert await store.read(commissions.find, "acc_history", 0) is None


async def seq_of_account(store, account: str, external_id: str) -> int:
    from store import CommissionQuery

    rows = await store.read(commissions.page, CommissionQuery(account, limit=100))
    return next(r.seq for r in rows if r.external_id == external_id)


async def test_the_history_lists_the_latest_states_with_their_exact_start(history_store):
    store, clock = history_store
    words = ["pending", "approved"]
    await store.write(commissions.upsert, "acc_history", "awin", [commission("F")])
    times = []
    for n in range(HISTORY_MAX + 2):
        times.append(clock.advance(60))
        word = words[(n + 1) % 2]
        await store.write(
            commissions.upsert,
            "acc_history",
            "awin",
            [commission("F", status=word, raw_status=word)],
        )
    detail = await store.read(commissions.find, "acc_history", await seq_of(store, "F"))
    assert detail is not None and len(detail.history) == HISTORY_MAX
    assert detail.history[-1].replaced_at == times[-1]
    # The first shown began when the one before it (not shown) was replaced.
    assert detail.history[0].recorded_at == times[1]
    assert all(
        a.replaced_at == b.recorded_at
        for a, b in zip(detail.history, detail.history[1:], strict=False)
    )


def old_sqlite(path: Path) -> None:
    """A SQLite file as the previous version left it: steps 1 and 2, an account with a
    synced connection and a commission."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        migrate(conn, lambda: dt.datetime(2026, 1, 1, tzinfo=dt.UTC), upto=2)
        conn.execute("BEGIN")
        for statement in OLD_ROWS:
            conn.execute(statement.replace("false", "0"))
        conn.execute("COMMIT")
    finally:
        conn.close()


OLD_ROWS = (
    "INSERT INTO accounts (id, uid, email, plan, suspended, created_at) "
    "VALUES (1, 'acc_old', NULL, 'free', false, '2026-01-01T00:00:00Z')",
    "INSERT INTO networks (account_id, network, status, connected_at, last_sync_at, "
    "transactions, sync_position) VALUES (1, 'awin', 'ok', '2026-01-01T00:00:00Z', "
    "'2026-02-01T00:00:00Z', 1, '2026-02-01T00:00:00Z')",
    "INSERT INTO networks (account_id, network, status, connected_at, last_sync_at) "
    "VALUES (1, 'cj', 'error', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z')",
    "INSERT INTO commissions (account_id, network, external_id, status, raw_status, "
    "commission_amount, currency, transacted_at, imported_at, updated_at) VALUES "
    "(1, 'awin', 'A', 'pending', 'pending', '4.26', 'EUR', '2026-01-03T10:12:00Z', "
    "'2026-01-05T00:00:00Z', '2026-01-05T00:00:00Z')",
)


async def check_upgraded(database: str) -> None:
    clock = StepClock(START)
    store = await open_store(database, writable=True, readers=1, clock=clock)
    try:
        account = await store.read(accounts.find, "acc_old")
        assert account is not None
        networks = {n.network: n for n in account.networks}
        assert networks["awin"].last_success_at == "2026-02-01T00:00:00Z"
        assert networks["awin"].complete_through == "2026-02-01T00:00:00Z"
        assert networks["cj"].last_success_at is None
        seq = await seq_of_account(store, "acc_old", "A")
        await store.write(
            commissions.upsert,
            "acc_old",
            "awin",
            [commission("A", status="approved", raw_status="approved")],
        )
        detail = await store.read(commissions.find, "acc_old", seq)
        assert detail is not None
        assert [(h.status, h.recorded_at) for h in detail.history] == [
            ("pending", "2026-01-05T00:00:00Z")
        ]
    finally:
        await store.close()


async def test_an_old_sqlite_database_upgrades_in_place(tmp_path: Path):
    path = tmp_path / "old.sqlite3"
    old_sqlite(path)
    await check_upgraded(str(path))
    conn = sqlite3.connect(path)
    try:
        versions = [v for (v,) in conn.execute("SELECT version FROM schema_migrations")]
    finally:
        conn.close()
    assert versions == list(range(1, LATEST + 1))


async def test_an_old_postgresql_database_upgrades_in_place(pg_fresh_url: str):
    from store.engines.postgres import parse_url

    dsn, _ = parse_url(pg_fresh_url)
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            await conn.execute(
                "CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at text NOT NULL)"
            )
            for number, step in enumerate(statements("postgres", upto=2), 1):
                for statement in step:
                    await conn.execute(statement)
                await conn.execute(
                    "INSERT INTO schema_migrations VALUES ($1, '2026-01-01T00:00:00Z')", number
                )
            await conn.execute(
                "INSERT INTO accounts (uid, email, plan, suspended, created_at) "
                "VALUES ('acc_old', NULL, 'free', false, '2026-01-01T00:00:00Z')"
            )
            for statement in OLD_ROWS[1:]:
                await conn.execute(
                    statement.replace("(1, ", "((SELECT id FROM accounts WHERE uid = 'acc_old'), ")
                )
    finally:
        await conn.close()
    await check_upgraded(pg_fresh_url)
