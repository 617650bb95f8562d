"""The PostgreSQL schema is the SQLite schema: same versions, tables, columns, types, keys,
checks and indexes (tests/store/schema_shapes.py), built from empty or upgraded from an
earlier release; migrations apply once under concurrency; the keyset queries seek the
intended indexes."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from schema_shapes import Shape, differences, pg_shape, sqlite_shape

from store import StoreError, StoreUnavailable, accounts
from store.base import CommissionQuery
from store.commissions import commissions_sql
from store.engines.postgres import PostgresStore, migrate, numbered
from store.engines.sqlite import SqliteStore
from store.schema import LATEST
from store.schema.status import schema_status


async def sqlite_built_from_empty(path: Path) -> Shape:
    lite = await SqliteStore.open(path, writable=True, readers=1)
    await lite.close()
    return sqlite_shape(path)


async def test_the_schema_is_the_sqlite_one_table_for_table(tmp_path: Path, store, admin_conn):
    expected = await sqlite_built_from_empty(tmp_path / "s.sqlite3")
    actual = await pg_shape(admin_conn)
    assert differences(expected, actual) == []
    # What is compared is there to compare: types, defaults, checks, keys.
    accounts = actual["tables"]["accounts"]
    assert ("suspended", "flag", True, "0") in accounts["columns"]
    assert accounts["checks"] == [["plan"]]
    assert ("status", "text", True, "'never'") in actual["tables"]["networks"]["columns"]
    assert ("ciphertext", "bytes", True, None) in actual["tables"]["webhook_secrets"]["columns"]


@pytest.mark.parametrize("version", range(1, LATEST))
async def test_a_database_of_an_earlier_release_upgrades_to_the_same_schema(
    tmp_path: Path, pg_fresh_url: str, version: int
):
    conn = await asyncpg.connect(pg_fresh_url)
    try:
        # As the release whose schema was `version` left it: its steps, by the runner.
        assert await migrate(conn, upto=version) == version
        status = await schema_status(pg_fresh_url)
        assert [m.version for m in status.pending] == list(range(version + 1, LATEST + 1))
        opened = await PostgresStore.open(pg_fresh_url, writable=True)  # the current code
        await opened.close()
        assert (await schema_status(pg_fresh_url)).current == LATEST
        expected = await sqlite_built_from_empty(tmp_path / "s.sqlite3")
        assert differences(expected, await pg_shape(conn)) == []
        triggers = await conn.fetch(
            "SELECT tgname, tgrelid::regclass::text FROM pg_trigger WHERE NOT tgisinternal "
            "ORDER BY tgname"
        )
        assert [tuple(t) for t in triggers] == [
            ("commission_dims_delete", "commissions"),
            ("commission_dims_insert", "commissions"),
            ("commission_dims_update", "commissions"),
            ("commission_history_write", "commissions"),
            ("commission_ranks_delete", "commissions"),
            ("commission_ranks_insert", "commissions"),
            ("commission_ranks_update", "commissions"),
            ("commission_totals_delete", "commissions"),
            ("commission_totals_insert", "commissions"),
            ("commission_totals_update", "commissions"),
            ("events_commission_created", "commissions"),
            ("events_commission_updated", "commissions"),
            ("events_connection", "networks"),
        ]
    finally:
        await conn.close()


async def test_migrations_are_recorded_once_even_when_workers_start_together(pg_fresh_url):
    stores = await asyncio.gather(*(PostgresStore.open(pg_fresh_url) for _ in range(6)))
    for opened in stores:
        await opened.close()
    conn = await asyncpg.connect(pg_fresh_url)
    try:
        versions = [r[0] for r in await conn.fetch("SELECT version FROM schema_migrations")]
        assert versions == list(range(1, LATEST + 1))
    finally:
        await conn.close()
    # Opening again is a read: no lock taken, nothing applied.
    again = await PostgresStore.open(pg_fresh_url)
    await again.close()


async def test_a_schema_newer_than_the_code_is_refused(pg_fresh_url):
    first = await PostgresStore.open(pg_fresh_url)
    await first.close()
    conn = await asyncpg.connect(pg_fresh_url)
    try:
        await conn.execute("INSERT INTO schema_migrations VALUES (99, '2030-01-01T00:00:00Z')")
    finally:
        await conn.close()
    with pytest.raises(StoreError, match="newer than this code"):
        await PostgresStore.open(pg_fresh_url)


async def test_a_role_without_ddl_rights_opens_a_current_schema_but_cannot_migrate(
    pg_fresh_url, pg_server
):
    conn = await asyncpg.connect(pg_fresh_url)
    try:
        await conn.execute(
            "DO $$ BEGIN CREATE ROLE schema_reader LOGIN; "
            "EXCEPTION WHEN duplicate_object THEN NULL; END $$"
        )
        await conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        reader_url = pg_fresh_url.replace("postgres@", "schema_reader@")
        with pytest.raises(StoreUnavailable, match="permission denied"):
            await PostgresStore.open(reader_url)
        migrated = await PostgresStore.open(pg_fresh_url)
        await migrated.close()
        await conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO schema_reader")
        opened = await PostgresStore.open(reader_url)
        await opened.close()
    finally:
        await conn.close()


def _plan_nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = [plan]
    for child in plan.get("Plans", []):
        nodes.extend(_plan_nodes(child))
    return nodes


PAGE_QUERIES: list[tuple[dict[str, Any], str]] = [
    ({}, "commissions_page"),
    ({"after": ("2025-03-01T00:00:00Z", 500)}, "commissions_page"),
    ({"since": dt.date(2025, 2, 1), "until": dt.date(2025, 2, 28)}, "commissions_page"),
    ({"network": "awin"}, "commissions_network_page"),
    ({"network": "awin", "after": ("2025-03-01T00:00:00Z", 500)}, "commissions_network_page"),
    ({"status": "paid"}, "commissions_status_page"),
    ({"status": "paid", "after": ("2025-03-01T00:00:00Z", 500)}, "commissions_status_page"),
]


async def test_every_page_query_seeks_an_index_and_never_sorts(store, admin_conn):
    # 40 accounts x 500 commissions: enough rows that a scan would be the wrong plan.
    uids = [await store.write(accounts.create, None, "pro") for _ in range(40)]
    ids = dict(await admin_conn.fetch("SELECT uid, id FROM accounts"))
    statuses = ("pending", "approved", "declined", "paid", "unknown")
    records = [
        (
            ids[uid],
            ("awin", "cj", "impact")[n % 3],
            f"e{n}",
            statuses[n % 5],
            "1.00",
            "EUR",
            f"2025-{1 + n % 12:02d}-{1 + n % 28:02d}T{n % 24:02d}:00:00Z",
            "2025-01-01T00:00:00Z",
            "2025-01-01T00:00:00Z",
        )
        for uid in uids
        for n in range(500)
    ]
    await admin_conn.copy_records_to_table(
        "commissions",
        records=records,
        columns=[
            "account_id", "network", "external_id", "status", "commission_amount", "currency",
            "transacted_at", "imported_at", "updated_at",
        ],
    )  # fmt: skip
    await admin_conn.execute("ANALYZE commissions")
    for filters, index in PAGE_QUERIES:
        sql, params = commissions_sql(CommissionQuery(account_uid=uids[7], limit=26, **filters))
        plan = await admin_conn.fetchval("EXPLAIN (FORMAT JSON) " + numbered(sql), *params)
        nodes = _plan_nodes(json.loads(plan)[0]["Plan"])
        used = {n.get("Index Name") for n in nodes if "Index" in n["Node Type"]}
        assert index in used, (filters, nodes)
        # A sort anywhere, or a scan of the commissions, is the wrong plan; the accounts
        # table is looked up once (its uid), and a planner may scan a table of 40 rows.
        slow = [
            n
            for n in nodes
            if n["Node Type"] in ("Sort", "Incremental Sort")
            or (n["Node Type"] == "Seq Scan" and n.get("Relation Name") == "commissions")
        ]
        assert not slow, (filters, nodes)
        # The seek is in the index condition, not a filter over the account's rows.
        scan = next(n for n in nodes if n.get("Index Name") == index)
        if "after" in filters:
            assert "ROW(transacted_at, id) <" in scan["Index Cond"], (filters, scan)
