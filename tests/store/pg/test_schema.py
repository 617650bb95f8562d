"""The PostgreSQL schema is the SQLite schema: same versions, tables, columns, keys, indexes;
migrations apply once under concurrency; the keyset queries seek the intended indexes."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from store import StoreError, StoreUnavailable, accounts
from store.base import CommissionQuery
from store.commissions import commissions_sql
from store.engines.postgres import PostgresStore, numbered
from store.engines.sqlite import SqliteStore
from store.schema import LATEST

Schema = dict[str, Any]


def sqlite_schema(path: Path) -> Schema:
    """Tables -> columns (name, not null), unique keys, foreign keys; named indexes."""
    conn = sqlite3.connect(path)
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        out: Schema = {"tables": {}, "indexes": {}}
        for table in tables:
            info = conn.execute(f"PRAGMA table_info({table})").fetchall()
            columns = [(name, bool(notnull or pk)) for _, name, _, notnull, _, pk in info]
            pk = tuple(r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
            uniques = {pk}
            for _, index, unique, origin, _ in conn.execute(f"PRAGMA index_list({table})"):
                if unique and origin == "u":
                    uniques.add(tuple(r[2] for r in conn.execute(f"PRAGMA index_info({index})")))
            fks: dict[int, list[Any]] = {}
            for fid, seq, parent, src, dst, _, on_delete, _ in conn.execute(
                f"PRAGMA foreign_key_list({table})"
            ):
                fks.setdefault(fid, [parent, [], [], on_delete])
                fks[fid][1].append((seq, src))
                fks[fid][2].append((seq, dst))
            out["tables"][table] = {
                "columns": columns,
                "uniques": uniques,
                "fks": {
                    (p, tuple(c for _, c in sorted(s)), tuple(c for _, c in sorted(d)), od)
                    for p, s, d, od in fks.values()
                },
            }
        for name, table in conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        ):
            keys = [
                f"{col}{' DESC' if desc else ''}"
                for _, _, col, desc, _, key in conn.execute(f"PRAGMA index_xinfo({name})")
                if key
            ]
            out["indexes"][name] = (table, keys)
        return out
    finally:
        conn.close()


async def pg_schema(conn: asyncpg.Connection) -> Schema:
    out: Schema = {"tables": {}, "indexes": {}}
    tables = [
        r[0]
        for r in await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        )
    ]
    on_delete = {"c": "CASCADE", "a": "NO ACTION"}
    for table in tables:
        columns = [
            (r[0], r[1] == "NO")
            for r in await conn.fetch(
                "SELECT column_name, is_nullable FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
                table,
            )
        ]
        constraints = await conn.fetch(
            """SELECT c.contype::text, c.confdeltype::text, p.relname,
                   ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n
                         ORDER BY k.i),
                   ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                         JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n
                         ORDER BY k.i)
               FROM pg_constraint c LEFT JOIN pg_class p ON p.oid = c.confrelid
               WHERE c.conrelid = $1::regclass""",
            table,
        )
        out["tables"][table] = {
            "columns": columns,
            "uniques": {tuple(r[3]) for r in constraints if r[0] in ("p", "u")},
            "fks": {
                (r[2], tuple(r[3]), tuple(r[4]), on_delete[r[1]])
                for r in constraints
                if r[0] == "f"
            },
        }
    for name, table, definition in await conn.fetch(
        """SELECT i.relname, t.relname, pg_get_indexdef(x.indexrelid)
           FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
           JOIN pg_class t ON t.oid = x.indrelid
           WHERE t.relnamespace = current_schema()::regnamespace
             AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)"""
    ):
        keys = re.search(r"\((.*)\)$", definition)
        assert keys is not None, definition
        out["indexes"][name] = (table, [k.strip() for k in keys.group(1).split(",")])
    return out


async def test_the_schema_matches_the_sqlite_one_table_for_table(tmp_path: Path, store, admin_conn):
    lite = await SqliteStore.open(tmp_path / "s.sqlite3", writable=True)
    await lite.close()
    expected = sqlite_schema(tmp_path / "s.sqlite3")
    actual = await pg_schema(admin_conn)
    assert sorted(actual["tables"]) == sorted(expected["tables"])
    for table, shape in expected["tables"].items():
        assert actual["tables"][table] == shape, table
    assert actual["indexes"] == expected["indexes"]


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
