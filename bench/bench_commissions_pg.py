#!/usr/bin/env python3
"""Benchmark of GET /v1/commissions on PostgreSQL beside SQLite, in one run (not a test).

    python3 dev.py bench bench_commissions_pg [--database postgresql://...]
                                              [--requests 1000] [--duration 10] [--workers 1]

1. The SQLite store of bench_commissions.py (same generator; its cache in
   bench/out/commissions/ when made with the same parameters, else our own in
   bench/out/commissions_pg/): 1,000,000 commissions of one account among 1,000 accounts.
2. The same rows, same ids, bulk-loaded into PostgreSQL with COPY
   (asyncpg's copy_records_to_table), the commission indexes built after the load, then
   VACUUM ANALYZE. Without `--database`, a private server (tests/support/pgserver.py) in a
   temp dir, deleted at the end; the load then takes a minute or so every run.
3. For each backend in turn, the real edge (`python -m edge`, `--workers` processes,
   rate limits out of reach, access log off): one client over loopback (keep-alive,
   sequential) for p50/p99 of the first page and a page 1,000 pages deep, with and without
   filters, and of a month's summary ranked by programme and by sub-id (set against the
   backend's own first page), then wrk on the first and the deep page. The same deep cursors serve both
   backends (same rows, same ids), and the pages they return are checked to be equal.

Prints both backends side by side with PostgreSQL/SQLite ratios and writes
bench/out/commissions_pg/results.json.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "tests", ROOT / "bench"):  # the project, the pg helper, the generator
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import bench_commissions as base  # noqa: E402  (the SQLite benchmark: generator, measures)

OUT = ROOT / "bench" / "out" / "commissions_pg"
BATCH = 50_000  # rows per COPY batch read from SQLite
# A bigger cache than the tests' server: the whole hot index fits, as on a real server.
BENCH_SETTINGS = {"shared_buffers": "512MB", "max_wal_size": "4GB", "checkpoint_timeout": "30min"}
# The id key too: the public ids (and so the deep cursors) are the same on both backends.
TABLES = ("accounts", "capabilities", "api_keys", "id_key", "commissions")


# --- loading ----------------------------------------------------------------------------


def sqlite_rows(path: Path, table: str, columns: list[str]) -> Iterator[list[tuple[Any, ...]]]:
    """The table's rows in id (rowid) order, in batches."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        cur = conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid")
        while batch := cur.fetchmany(BATCH):
            yield batch
    finally:
        conn.close()


def column_names(path: Path, table: str) -> list[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
    finally:
        conn.close()


async def load(sqlite_path: Path, url: str) -> dict[str, Any]:
    """Copy the SQLite store into an empty PostgreSQL database with the real schema."""
    import asyncpg

    from store.engines.postgres import PostgresStore

    store = await PostgresStore.open(url, writable=True, timeout=60.0)  # migrates
    await store.close()
    conn = await asyncpg.connect(url)
    started = time.monotonic()
    try:
        if await conn.fetchval("SELECT count(*) FROM accounts"):
            sys.exit(f"{url}: the database is not empty; give an empty one")
        # Bulk load, then build each index once: drop them (same definitions kept to
        # recreate them exactly as the migration made them).
        indexes = await conn.fetch(
            "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index "
            "WHERE indrelid = 'commissions'::regclass AND NOT indisprimary"
        )
        constraint = await conn.fetchrow(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = 'commissions'::regclass AND contype = 'u'"
        )
        await conn.execute(f"ALTER TABLE commissions DROP CONSTRAINT {constraint[0]}")
        for name, _ in indexes:
            await conn.execute(f"DROP INDEX IF EXISTS {name}")
        await conn.execute("DELETE FROM id_key")  # the one its first open made: SQLite's instead
        counts = {}
        for table in TABLES:
            columns = column_names(sqlite_path, table)
            bools = {"suspended", "enabled", "configured"} & set(columns)
            flags = [columns.index(c) for c in bools]
            counts[table] = 0
            for batch in sqlite_rows(sqlite_path, table, columns):
                if flags:  # SQLite's 0/1 flags are PostgreSQL booleans
                    batch = [
                        tuple(bool(v) if i in flags else v for i, v in enumerate(row))
                        for row in batch
                    ]
                await conn.copy_records_to_table(table, records=batch, columns=columns)
                counts[table] += len(batch)
                if table == "commissions":
                    print(f"\rbench: copied {counts[table]:,} commissions", end="", flush=True)
        print(flush=True)
        loaded = time.monotonic() - started
        await conn.execute(
            f"ALTER TABLE commissions ADD CONSTRAINT {constraint[0]} {constraint[1]}"
        )
        for name, definition in indexes:
            if not await conn.fetchval("SELECT to_regclass($1) IS NOT NULL", name):
                await conn.execute(definition)
        for table in ("accounts", "commissions"):  # identities go on after the copied ids
            await conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), max(id)) FROM {table}"
            )
        # The months' rankings, as the sync worker keeps them (the copy marked them all).
        await base.rank_months(url)
        await conn.execute("VACUUM ANALYZE")
        size = await conn.fetchval("SELECT pg_size_pretty(pg_database_size(current_database()))")
    finally:
        await conn.close()
    return {
        "rows": counts,
        "copy_seconds": round(loaded, 1),
        "total_seconds": round(time.monotonic() - started, 1),
        "size": size,
    }


async def explain(url: str, uid: str) -> dict[str, str]:
    """The plan of each measured query shape (index used, rows read), for the README."""
    import asyncpg

    from store.base import CommissionQuery
    from store.commissions import commissions_sql
    from store.engines.postgres import numbered

    shapes = {
        "first page": CommissionQuery(uid, base.PAGE + 1),
        "first page, network+status": CommissionQuery(
            uid, base.PAGE + 1, network="awin", status="approved"
        ),
    }
    conn = await asyncpg.connect(url)
    try:
        out = {}
        for name, query in shapes.items():
            sql, params = commissions_sql(query)
            plan = await conn.fetch(
                "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + numbered(sql), *params
            )
            out[name] = "\n".join(r[0] for r in plan)
        return out
    finally:
        await conn.close()


# --- measuring --------------------------------------------------------------------------


def start_edge(
    port: int, database: str, workers: int, redis_url: str | None = None
) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "EDGE_HOST": "127.0.0.1",
        "EDGE_PORT": str(port),
        "EDGE_DIST": str(OUT / "no-dist"),
        "EDGE_DATABASE": database,
        "EDGE_SECRET_KEY": base.SECRET,
        "EDGE_RATE_LIMIT_PRO": f"{10**9}/1",
        "EDGE_RATE_LIMIT_FREE": f"{10**9}/1",
        "EDGE_ACCESS_LOG": "false",
        "EDGE_LOG_LEVEL": "WARNING",
        "EDGE_WORKERS": str(workers),
        # Several workers need the shared limiter (one limit across them).
        **({"EDGE_REDIS_URL": redis_url} if redis_url else {}),
    }
    return subprocess.Popen([sys.executable, "-m", "edge"], cwd=ROOT, env=env)


def page_body(port: int, headers: dict[str, str], path: str) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    try:
        conn.request("GET", path, headers=headers)
        return conn.getresponse().read()
    finally:
        conn.close()


def measure(
    name: str,
    database: str,
    paths: dict[str, str],
    headers: dict[str, str],
    args: argparse.Namespace,
) -> dict[str, Any]:
    port = base.free_port()
    edge = start_edge(port, database, args.workers, getattr(args, "redis_url", None))
    try:
        base.wait_ready(port, "/v1/commissions", headers, edge)
        print(f"bench: {name}: one client ...", flush=True)
        single = {
            label: base.latency(port, path, headers, args.requests) for label, path in paths.items()
        }
        bodies = {label: page_body(port, headers, path) for label, path in paths.items()}
        print(f"bench: {name}: wrk ...", flush=True)
        url = f"http://127.0.0.1:{port}"
        load = {
            label: base.wrk(url + paths[label], headers, args)
            for label in ("first page", f"page {args.depth} deep", "first page, network+status")
        }
    finally:
        base.stop(edge)
    return {"single_client": single, "load": load, "bodies": bodies}


def sqlite_store(wanted: dict[str, int]) -> tuple[Path, Path]:
    """bench_commissions.py's cached store when made with these parameters (never
    overwritten: that benchmark owns it), else one of our own."""
    stamp = base.OUT / "store.json"
    if stamp.exists() and json.loads(stamp.read_text()).get("params") == wanted:
        return base.OUT / "store.sqlite3", stamp
    return OUT / "store.sqlite3", OUT / "store.json"


def run(args: argparse.Namespace) -> dict[str, Any]:
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install -y wrk")
    wanted = base.params(args)
    database, stamp = sqlite_store(wanted)
    meta = json.loads(stamp.read_text()) if stamp.exists() else {}
    if meta.get("params") != wanted or not database.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        print(
            f"bench: generating the SQLite store ({args.commissions:,} commissions) ...", flush=True
        )
        started = time.monotonic()
        made = base.generate(database, args.accounts, args.commissions, args.others, args.seed)
        meta = {"params": wanted, **made, "seconds": round(time.monotonic() - started, 1)}
        stamp.write_text(json.dumps(meta))
    headers = {"Authorization": f"Bearer {meta['key']}"}
    paths = {
        **base.measured_pages(database, args.depth),
        "first page, from+to (one month)": "/v1/commissions?from=2025-06-01&to=2025-06-30",
        "first page, limit=100": "/v1/commissions?limit=100",
        **base.RANKED_SUMMARIES,
    }

    redis = None
    if args.workers > 1:
        from support.redisserver import RedisServer, find_redis_server

        binary = find_redis_server()
        if binary is None:
            sys.exit("--workers > 1 needs redis-server (one rate limit across the workers)")
        redis = RedisServer.create(binary)
        args.redis_url = redis.url
    try:
        return _run(args, wanted, database, meta, headers, paths)
    finally:
        if redis is not None:
            redis.destroy()


def _run(
    args: argparse.Namespace,
    wanted: dict[str, Any],
    database: Path,
    meta: dict[str, Any],
    headers: dict[str, str],
    paths: dict[str, str],
) -> dict[str, Any]:
    from support.pgserver import PgServer, find_bin_dir

    server = None
    url = args.database
    if url is None:
        bin_dir = find_bin_dir()
        if bin_dir is None:
            sys.exit("no PostgreSQL binaries: apt-get install -y postgresql, or pass --database")
        print("bench: starting a private PostgreSQL server ...", flush=True)
        server = PgServer.create(bin_dir, settings=BENCH_SETTINGS)
        server.sql("CREATE DATABASE affdir_bench")
        url = server.url("affdir_bench")
    try:
        print("bench: loading PostgreSQL with COPY ...", flush=True)
        loaded = asyncio.run(load(database, url))
        print(f"bench: loaded in {loaded['total_seconds']} s ({loaded['size']})", flush=True)
        plans = asyncio.run(explain(url, meta["uid"]))
        results = {
            "sqlite": measure("SQLite", str(database), paths, headers, args),
            "postgresql": measure("PostgreSQL", url, paths, headers, args),
        }
    finally:
        if server is not None:
            server.destroy()
    for label in paths:  # same rows, same ids: the same cursor gives the same page
        if results["sqlite"]["bodies"][label] != results["postgresql"]["bodies"][label]:
            sys.exit(f"{label}: PostgreSQL and SQLite answered differently")
    for backend in results.values():
        del backend["bodies"]
    ratios: dict[str, dict[str, float]] = {}
    for label in paths:
        lite, pg = (
            results["sqlite"]["single_client"][label],
            results["postgresql"]["single_client"][label],
        )
        ratios[label] = {
            "p50": round(pg["p50_ms"] / lite["p50_ms"], 2),
            "p99": round(pg["p99_ms"] / lite["p99_ms"], 2),
        }
    # The ranked summaries against each backend's own first page (the 2x bound).
    summaries: dict[str, dict[str, float]] = {}
    for backend, single in ((b, r["single_client"]) for b, r in results.items()):
        for label in base.RANKED_SUMMARIES:
            summaries[f"{backend}: {label} / first page"] = {
                q: round(single[label][f"{q}_ms"] / single["first page"][f"{q}_ms"], 2)
                for q in ("p50", "p99")
            }
    for label, pg in results["postgresql"]["load"].items():
        ratios[f"wrk {label} rps"] = {
            "rps": round(pg["rps"] / results["sqlite"]["load"][label]["rps"], 2)
        }
    out = {
        "params": wanted,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "workers": args.workers,
        "wrk": f"-t{args.threads} -c{args.connections} -d{args.duration}s",
        "postgresql_load": loaded,
        **results,
        "ratios_pg_over_sqlite": ratios,
        "ranked_summaries_over_first_page": summaries,
        "plans": plans,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(out, indent=2))
    return out


def report(results: dict[str, Any]) -> None:
    p = results["params"]
    print(
        f"\n{p['commissions']:,} commissions on the measured account, {p['accounts']:,} accounts, "
        f"Python {results['python']}, {results['cpus']} CPUs, {results['workers']} edge worker(s)"
    )
    load = results["postgresql_load"]
    print(
        f"PostgreSQL load: COPY {load['copy_seconds']} s, with indexes + VACUUM ANALYZE "
        f"{load['total_seconds']} s, {load['size']}\n"
    )
    print(
        f"{'one client, sequential (ms)':<40} {'SQLite p50/p99':>16} {'PG p50/p99':>16} {'PG/SQLite p50':>14}"
    )
    for label, lite in results["sqlite"]["single_client"].items():
        pg = results["postgresql"]["single_client"][label]
        print(
            f"{label:<40} {lite['p50_ms']:>7.3f}/{lite['p99_ms']:<8.3f} "
            f"{pg['p50_ms']:>7.3f}/{pg['p99_ms']:<8.3f} {pg['p50_ms'] / lite['p50_ms']:>14.2f}"
        )
    print(
        f"\n{'wrk ' + results['wrk']:<40} {'SQLite rps':>11} {'PG rps':>9} {'PG p99 ms':>10} {'PG/SQLite':>10}"
    )
    for label, lite in results["sqlite"]["load"].items():
        pg = results["postgresql"]["load"][label]
        print(
            f"{label:<40} {lite['rps']:>11} {pg['rps']:>9} {pg['p99_ms']:>10.2f} "
            f"{pg['rps'] / lite['rps']:>10.2f}"
        )
        if lite["non_2xx"] or pg["non_2xx"]:
            print(f"  non-2xx: SQLite {lite['non_2xx']}, PostgreSQL {pg['non_2xx']}")
    print()
    for label, ratio in results["ranked_summaries_over_first_page"].items():
        print(f"{label:<60} p50 {ratio['p50']:>7.2f}  p99 {ratio['p99']:>7.2f}")
    print()
    for name, plan in results["plans"].items():
        print(f"plan, {name}:\n{plan}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--database", help="an empty PostgreSQL database (default: a private server)"
    )
    parser.add_argument("--commissions", type=int, default=1_000_000)
    parser.add_argument("--accounts", type=int, default=1_000)
    parser.add_argument("--others", type=int, default=100, help="commissions of each other account")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--depth", type=int, default=1000, help="pages deep for the deep page")
    parser.add_argument("--requests", type=int, default=1_000, help="per single-client case")
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--workers", type=int, default=1, help="edge worker processes")
    args = parser.parse_args(argv)
    report(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
