#!/usr/bin/env python3
"""Benchmark of GET /v1/commissions (not a test): keyset pages on a big account.

    python3 dev.py bench bench_commissions [--commissions 1000000] [--accounts 1000]
                                           [--requests 1000] [--duration 10] [--fresh]

1. Generates (seeded) one SQLite account store: `--accounts` accounts, one of which has
   `--commissions` commissions and the others `--others` each, written straight into the
   real schema with executemany (indexes rebuilt after the load). Kept in
   bench/out/commissions/ between runs with the same parameters (`--fresh` remakes it).
2. Starts the real edge (`python -m edge`, one worker, rate limits out of reach, access log
   off) and, as its own process with the same server settings, a bare aiohttp handler that
   returns constant bytes: the floor of aiohttp itself.
3. One client over loopback (keep-alive, sequential): p50/p99 of the first page and of a
   page 1,000 pages deep (its cursor built directly from the row where that page starts,
   and checked against following 1,000 cursors), with no filter and with network+status,
   of a 100-row page, of /v1/commissions/summary by month and network and of a month by
   programme and by sub-id (40 programmes, 5,000 sub-ids; the totals tables,
   kept by the triggers, filled after the bulk load as the indexes are built), and
   of /v1/me (same middlewares, no store call).
4. Concurrent load with wrk: the first page, the deep page, /v1/me, and the bare handler
   before and after.

Prints the figures and the ratios (deep/first, summary/first, edge/bare) and writes
bench/out/commissions/results.json.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

OUT = ROOT / "bench" / "out" / "commissions"
SECRET = "bench-secret-" + "c" * 40
NETWORKS = ("awin", "cj", "impact", "tradedoubler", "effiliation")
STATUSES = ("pending", "approved", "declined", "paid")
CURRENCIES = ("EUR", "EUR", "EUR", "GBP", "USD", "CHF")
BARE_BODY = b'{"data":[],"page":{"limit":25,"hasMore":false,"nextCursor":null}}'
PAGE = 25
# The measured account's programmes (40, as a publisher with a few networks has) and
# sub-ids (5,000: one per page of a large site; a fifth of the commissions carry none).
PROGRAMMES = 40
SUB_IDS = 5_000
SUMMARY_PROGRAM = "summary, groupBy=program, one month"
SUMMARY_SUB_ID = "summary, groupBy=subId, one month"
SUMMARY_SUB_ID_TO_DATE = "summary, groupBy=subId, month to date"
SUMMARY = "summary, groupBy=month,network"  # the whole history: 18 months
SUMMARY_QUARTER = "summary, groupBy=month,network, one quarter"
# "What did I earn last month, per network": a whole month, from the monthly totals.
SUMMARY_MONTH = "summary, groupBy=network, one month"
# "... and this month so far, and how much is pending": a part-month, from the daily totals.
SUMMARY_TO_DATE = "summary, groupBy=network,status, month to date"
# A month ranked by programme and by sub-id (the first page of 25 rows); the generated
# history ends on 2026-06-24: May is the last whole month. bench_commissions_pg too.
RANKED_SUMMARIES = {
    SUMMARY_PROGRAM: "/v1/commissions/summary?groupBy=program&from=2026-05-01&to=2026-05-31",
    SUMMARY_SUB_ID: "/v1/commissions/summary?groupBy=subId&from=2026-05-01&to=2026-05-31",
    # June to its last commission's day: nothing of the month after the period.
    SUMMARY_SUB_ID_TO_DATE: "/v1/commissions/summary?groupBy=subId&from=2026-06-01&to=2026-06-24",
}
# The summaries set against the first page, as the ratios name them.
SUMMARY_RATIOS = (
    ("month x network", SUMMARY),
    ("one quarter", SUMMARY_QUARTER),
    ("one month", SUMMARY_MONTH),
    ("month to date", SUMMARY_TO_DATE),
    ("by program, one month", SUMMARY_PROGRAM),
    ("by subId, one month", SUMMARY_SUB_ID),
    ("by subId, month to date", SUMMARY_SUB_ID_TO_DATE),
)


# --- the store -------------------------------------------------------------------------


def generate(path: Path, accounts: int, commissions: int, others: int, seed: int) -> dict:
    """Write the account store; return what the benchmark needs (uid, key)."""
    from accounts import apikeys
    from store.engines.sqlite import migrate
    from store.schema import statements

    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    migrate(conn)
    indexes = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'commissions' "
        "AND sql IS NOT NULL"
    ).fetchall()
    # The totals too: summed once from the loaded rows (migration 4's backfills), not row
    # by row by the triggers, which are recreated after the load.
    triggers = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
        "AND (name LIKE 'commission_totals_%' OR name LIKE 'commission_dims_%' "
        "OR name LIKE 'commission_ranks_%')"
    ).fetchall()
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    for name, _ in indexes:  # a bulk load then one index build is much faster
        conn.execute(f"DROP INDEX {name}")
    for name, _ in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    now = "2026-06-01T00:00:00Z"
    conn.executemany(
        "INSERT INTO accounts (id, uid, email, plan, suspended, created_at) VALUES (?, ?, ?, ?, 0, ?)",
        [
            (i, f"acc_bench{i:011d}", f"a{i}@example.com", "pro", now)
            for i in range(1, accounts + 1)
        ],
    )
    conn.executemany(
        "INSERT INTO capabilities (account_id, name) VALUES (?, ?)",
        [(i, c) for i in range(1, accounts + 1) for c in ("acquisition", "monetisation")],
    )
    issued = apikeys.generate_key()
    conn.execute(
        "INSERT INTO api_keys (id, account_id, key_hash, prefix, label, scopes, created_at) "
        "VALUES ('key_bench', ?, ?, ?, 'bench', 'read', ?)",
        (1, issued.key_hash, issued.prefix, now),
    )
    start = 1_735_689_600  # 2025-01-01
    span = 540 * 86_400

    def rows(account: int, count: int):
        for n in range(count):
            when = start + rng.randrange(span)
            amount = rng.randrange(1, 50_000)
            yield (
                account,
                NETWORKS[n % len(NETWORKS)],
                f"t{n}",
                f"Programme {n % PROGRAMMES}",
                f"p{n % PROGRAMMES}",
                rng.choice(STATUSES),
                "raw",
                f"{amount * 10 // 100}.{amount % 100:02d}",
                f"{amount // 100}.{amount % 100:02d}",
                rng.choice(CURRENCIES),
                None,
                time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when)),
                None if rng.random() < 0.2 else f"s{rng.randrange(SUB_IDS)}",
                now,
                now,
            )

    insert = (
        "INSERT INTO commissions (account_id, network, external_id, program_name, "
        "program_external_id, status, raw_status, sale_amount, commission_amount, currency, "
        "clicked_at, transacted_at, sub_id, imported_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    conn.executemany(insert, rows(1, commissions))
    for account in range(2, accounts + 1):
        conn.executemany(insert, rows(account, others))
    for _, sql in indexes:
        conn.execute(sql)
    # Steps 4, 7 and 11: the totals, those by programme and sub-id, and every month marked
    # to rank.
    for step in (3, 6, 10):
        for statement in statements("sqlite")[step]:
            if statement.startswith("INSERT INTO commission_"):  # the backfills
                conn.execute(statement)
    for _, sql in triggers:
        conn.execute(sql)
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()
    asyncio.run(rank_months(str(path)))
    return {"uid": "acc_bench00000000001", "key": issued.key}


async def rebuild_month(database: str, month: str) -> float:
    """Mark `month` of the measured account stale and rebuild it; the rebuild's ms."""
    from store import open_store, ranks

    conn = sqlite3.connect(database, isolation_level=None)
    try:
        conn.execute(
            "INSERT INTO commission_ranks_stale (account_id, month) VALUES (1, ?) "
            "ON CONFLICT DO NOTHING",
            (month,),
        )
    finally:
        conn.close()
    store = await open_store(database, writable=True, readers=1, timeout=60.0)
    try:
        started = time.perf_counter()
        await ranks.refresh(store)
        return (time.perf_counter() - started) * 1000
    finally:
        await store.close()


async def rank_months(database: str) -> int:
    """Rank every marked month (store.ranks), as the sync worker does after writes."""
    from store import open_store, ranks

    store = await open_store(database, writable=True, readers=1, timeout=600.0)
    try:
        return await ranks.refresh(store)
    finally:
        await store.close()


def deep_position(path: Path, depth_rows: int, network: str | None, status: str | None) -> list:
    """The (transactedAt, public id) of the last row before a deep page starts, as a cursor
    carries it (bench only); the store's id key made here if no store opened it yet."""
    import secrets

    from store.publicids import KEY_BYTES, PublicIds

    where, params = ["account_id = 1"], []
    if network:
        where.append("network = ?")
        params.append(network)
    if status:
        where.append("status = ?")
        params.append(status)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        row = conn.execute(
            f"SELECT transacted_at, id FROM commissions WHERE {' AND '.join(where)} "
            "ORDER BY transacted_at DESC, id DESC LIMIT 1 OFFSET ?",
            (*params, depth_rows - 1),
        ).fetchone()
        conn.execute(
            "INSERT INTO id_key (id, key, created_at) VALUES (1, ?, '2026-01-01T00:00:00Z') "
            "ON CONFLICT (id) DO NOTHING",
            (secrets.token_bytes(KEY_BYTES),),
        )
        (key,) = conn.execute("SELECT key FROM id_key WHERE id = 1").fetchone()
    finally:
        conn.close()
    if row is None:
        sys.exit(f"fewer than {depth_rows} matching rows: lower --depth or raise --commissions")
    return [row[0], PublicIds.from_key(key).commission(row[1])]


# --- servers ---------------------------------------------------------------------------


def serve_bare(port: int) -> None:
    from aiohttp import web

    async def constant(request: web.Request) -> web.Response:
        return web.Response(body=BARE_BODY, content_type="application/json")

    app = web.Application()
    app.router.add_get("/v1/commissions", constant)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_edge(port: int, database: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "EDGE_HOST": "127.0.0.1",
        "EDGE_PORT": str(port),
        "EDGE_DIST": str(OUT / "no-dist"),
        "EDGE_DATABASE": str(database),
        "EDGE_SECRET_KEY": SECRET,
        "EDGE_RATE_LIMIT_PRO": f"{10**9}/1",
        "EDGE_RATE_LIMIT_FREE": f"{10**9}/1",
        "EDGE_ACCESS_LOG": "false",
        "EDGE_LOG_LEVEL": "WARNING",
        "EDGE_WORKERS": "1",
    }
    return subprocess.Popen([sys.executable, "-m", "edge"], cwd=ROOT, env=env)


def start_bare(port: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, "--serve-bare", str(port)], cwd=ROOT)


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_ready(port: int, path: str, headers: dict[str, str], proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"server exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path, headers=headers)
            if conn.getresponse().status == 200:
                conn.close()
                return
            conn.close()
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit("server did not start")


# --- measuring -------------------------------------------------------------------------


def latency(port: int, path: str, headers: dict[str, str], n: int) -> dict[str, Any]:
    """Sequential requests on one keep-alive connection: p50/p99 in ms."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    samples = []
    body = b""
    for i in range(n + n // 10):
        started = time.perf_counter()
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        elapsed = time.perf_counter() - started
        if resp.status != 200:
            sys.exit(f"{path}: {resp.status} {body[:200]!r}")
        if i >= n // 10:  # the first tenth warms up
            samples.append(elapsed * 1000)
    conn.close()
    samples.sort()
    data = json.loads(body)["data"]
    rows = len(data) if isinstance(data, list) else 1
    return {
        "path": path,
        "rows": rows,
        "p50_ms": round(statistics.median(samples), 3),
        "p99_ms": round(samples[int(len(samples) * 0.99) - 1], 3),
        "mean_ms": round(statistics.fmean(samples), 3),
    }


def wrk(url: str, headers: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    cmd = ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.duration}s", "--latency"]
    for name, value in headers.items():
        cmd += ["-H", f"{name}: {value}"]
    out = subprocess.run([*cmd, url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", out)[1])
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)

    def pct(p: str) -> float:
        value, unit = re.search(rf"\s{p}%\s+([0-9.]+)(us|ms|s)", out).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]

    return {
        "url": url.split("?")[0].rsplit(":", 1)[-1],
        "rps": round(rps),
        "p50_ms": pct("50"),
        "p99_ms": pct("99"),
        "non_2xx": int(non_2xx[1]) if non_2xx else 0,
    }


def follow(port: int, headers: dict[str, str], pages: int) -> list[str]:
    """The ids of page `pages + 1`, reached by following nextCursor from the first page."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    path = "/v1/commissions"
    for _ in range(pages):
        conn.request("GET", path, headers=headers)
        body = json.loads(conn.getresponse().read())
        path = f"/v1/commissions?cursor={body['page']['nextCursor']}"
    conn.request("GET", path, headers=headers)
    ids = [c["id"] for c in json.loads(conn.getresponse().read())["data"]]
    conn.close()
    return ids


def page_ids(port: int, headers: dict[str, str], path: str) -> list[str]:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("GET", path, headers=headers)
    ids = [c["id"] for c in json.loads(conn.getresponse().read())["data"]]
    conn.close()
    return ids


def params(args: argparse.Namespace) -> dict[str, int]:
    """What the generated store depends on: a cached one made otherwise is remade (an
    older schema too, whose migration would otherwise run inside the timed edge)."""
    from store.schema import LATEST

    return {
        "accounts": args.accounts,
        "commissions": args.commissions,
        "others": args.others,
        "seed": args.seed,
        "schema": LATEST,
        "programmes": PROGRAMMES,
        "sub_ids": SUB_IDS,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:

    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install -y wrk")
    database = OUT / "store.sqlite3"
    stamp = OUT / "store.json"
    wanted = params(args)
    meta = json.loads(stamp.read_text()) if stamp.exists() and not args.fresh else {}
    if meta.get("params") != wanted or not database.exists():
        started = time.monotonic()
        print(
            f"bench: generating {args.commissions:,} + {(args.accounts - 1) * args.others:,} commissions ...",
            flush=True,
        )
        made = generate(database, args.accounts, args.commissions, args.others, args.seed)
        meta = {"params": wanted, **made, "seconds": round(time.monotonic() - started, 1)}
        stamp.write_text(json.dumps(meta))
        print(f"bench: generated in {meta['seconds']} s", flush=True)
    headers = {"Authorization": f"Bearer {meta['key']}"}
    paths = {
        **measured_pages(database, args.depth),
        "first page, limit=100": "/v1/commissions?limit=100",
        "/v1/me (no store call)": "/v1/me",
    }
    # What the sync worker pays after writes to a month of the big account: its ranking
    # rebuilt (the month marked, then store.ranks.refresh), three times.
    rebuild_ms = [asyncio.run(rebuild_month(str(database), "2026-05")) for _ in range(3)]
    edge_port, bare_port = free_port(), free_port()
    edge, bare = start_edge(edge_port, database), start_bare(bare_port)
    try:
        wait_ready(edge_port, "/v1/commissions", headers, edge)
        wait_ready(bare_port, "/v1/commissions", {}, bare)
        # The directly built deep cursor lands exactly where following cursors does.
        deep_path = paths[f"page {args.depth} deep"]
        if follow(edge_port, headers, args.depth) != page_ids(edge_port, headers, deep_path):
            sys.exit("the built deep cursor does not match the followed one")
        single = {
            name: latency(edge_port, path, headers, args.requests) for name, path in paths.items()
        }
        single["bare handler"] = latency(bare_port, "/v1/commissions", {}, args.requests)
        base_e, base_b = f"http://127.0.0.1:{edge_port}", f"http://127.0.0.1:{bare_port}"
        load = {
            "bare (before)": wrk(f"{base_b}/v1/commissions", {}, args),
            "/v1/me (same middlewares, no store call)": wrk(f"{base_e}/v1/me", headers, args),
            "first page": wrk(f"{base_e}/v1/commissions", headers, args),
            f"page {args.depth} deep": wrk(
                base_e + paths[f"page {args.depth} deep"], headers, args
            ),
            "bare (after)": wrk(f"{base_b}/v1/commissions", {}, args),
        }
    finally:
        stop(edge)
        stop(bare)
    first, deep_row = single["first page"], single[f"page {args.depth} deep"]
    ffirst = single["first page, network+status"]
    fdeep = single[f"page {args.depth} deep, network+status"]
    bare_rps = (load["bare (before)"]["rps"] + load["bare (after)"]["rps"]) / 2
    results = {
        "params": wanted,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "single_client": single,
        "load": load,
        "wrk": f"-t{args.threads} -c{args.connections} -d{args.duration}s",
        "rebuild of May's ranking (ms)": [round(ms, 1) for ms in rebuild_ms],
        "ratios": {
            "deep/first p50": round(deep_row["p50_ms"] / first["p50_ms"], 3),
            "deep/first p99": round(deep_row["p99_ms"] / first["p99_ms"], 3),
            "filtered deep/first p50": round(fdeep["p50_ms"] / ffirst["p50_ms"], 3),
            "filtered deep/first p99": round(fdeep["p99_ms"] / ffirst["p99_ms"], 3),
            # The bound: at most 2 on both.
            **{
                f"summary {label} / first page {q}": round(
                    single[case][f"{q}_ms"] / first[f"{q}_ms"], 3
                )
                for label, case in SUMMARY_RATIOS
                for q in ("p50", "p99")
            },
            "first page rps / bare rps": round(load["first page"]["rps"] / bare_rps, 3),
            "first page rps / /v1/me rps": round(
                load["first page"]["rps"] / load["/v1/me (same middlewares, no store call)"]["rps"],
                3,
            ),
            "deep page rps / first page rps": round(
                load[f"page {args.depth} deep"]["rps"] / load["first page"]["rps"], 3
            ),
        },
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    return results


def report(results: dict[str, Any]) -> None:
    p = results["params"]
    print(
        f"\n{p['commissions']:,} commissions on the measured account, {p['accounts']:,} accounts, "
        f"Python {results['python']}, {results['cpus']} CPUs\n"
    )
    print(f"{'one client, sequential':<44} {'rows':>5} {'p50 ms':>8} {'p99 ms':>8}")
    for name, r in results["single_client"].items():
        print(f"{name:<44} {r['rows']:>5} {r['p50_ms']:>8.3f} {r['p99_ms']:>8.3f}")
    rebuilds = results["rebuild of May's ranking (ms)"]
    print(f"\nrebuild of May's ranking (ms): {rebuilds}")
    print(f"\n{'wrk ' + results['wrk']:<44} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for name, r in results["load"].items():
        print(f"{name:<44} {r['rps']:>8} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f}")
    print()
    for name, value in results["ratios"].items():
        print(f"{name:<44} {value:>8}")


def measured_pages(database: Path, depth: int) -> dict[str, str]:
    """The pages both commission benchmarks time: {label: path}, deep cursors made directly."""
    from edge.request import cursor

    secret = SECRET.encode()

    def deep(filters: dict[str, str | None]) -> str:
        position = deep_position(
            database, depth * PAGE, filters.get("network"), filters.get("status")
        )
        full = {"network": None, "status": None, "from": None, "to": None, **filters}
        # Bound to the account the benchmark's key belongs to, as the edge binds its own.
        return cursor.encode(secret, "commissions", full, position, "acc_bench00000000001")

    filtered = "network=awin&status=approved"
    return {
        SUMMARY: "/v1/commissions/summary?groupBy=month,network",
        SUMMARY_QUARTER: "/v1/commissions/summary?groupBy=month,network"
        "&from=2025-04-01&to=2025-06-30",
        # The generated history ends on 2026-06-24: May is the last whole month.
        SUMMARY_MONTH: "/v1/commissions/summary?groupBy=network&from=2026-05-01&to=2026-05-31",
        SUMMARY_TO_DATE: "/v1/commissions/summary?groupBy=network,status"
        "&from=2026-06-01&to=2026-06-24",
        # The top 25 of a month: every programme's or sub-id's total of May, ranked.
        **RANKED_SUMMARIES,
        # Part-months at both ends: daily totals beside the monthly ones.
        "summary, groupBy=month,network, 2025-04-15 to 2025-07-14": (
            "/v1/commissions/summary?groupBy=month,network&from=2025-04-15&to=2025-07-14"
        ),
        "first page": "/v1/commissions",
        f"page {depth} deep": f"/v1/commissions?cursor={deep({})}",
        "first page, network+status": f"/v1/commissions?{filtered}",
        f"page {depth} deep, network+status": f"/v1/commissions?{filtered}&cursor="
        + deep({"network": "awin", "status": "approved"}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commissions", type=int, default=1_000_000)
    parser.add_argument("--accounts", type=int, default=1_000)
    parser.add_argument("--others", type=int, default=100, help="commissions of each other account")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--depth", type=int, default=1000, help="pages deep for the deep page")
    parser.add_argument("--requests", type=int, default=1_000, help="per single-client case")
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--fresh", action="store_true", help="regenerate the store")
    parser.add_argument("--serve-bare", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_bare:
        serve_bare(args.serve_bare)
        return 0
    report(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
