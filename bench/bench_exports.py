#!/usr/bin/env python3
"""Benchmark of the CSV export of GET /v1/commissions (not a test).

    python3 dev.py bench bench_exports [--runs 3] [--from 2025-01-01]

1. The SQLite store of bench_commissions.py (its cache in bench/out/commissions/, made
   with the same parameters: run bench_commissions first, or this makes it).
2. Starts the real edge (`python -m edge`, one worker, rate limits out of reach).
3. Times, `--runs` times each, a CSV export of the measured account's commissions from
   `--from` (all of them by default) read to the end by one client: the time to the first
   byte, the total time, the rows per second and the edge's resident memory growth; and
   the same rows as `sqlite3 -csv` writes them from the same file (the database's own
   export: its first byte and its rows per second).

Prints the figures and the ratios (edge / sqlite3) and writes bench/out/exports/results.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import bench_commissions as base  # noqa: E402  (the store, the edge's start and stop)

OUT = ROOT / "bench" / "out" / "exports"


def rss_kib(pid: int) -> int:
    """The process's resident memory (VmRSS), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def edge_export(port: int, headers: dict[str, str], since: str, pid: int) -> dict[str, Any]:
    """One CSV export read to the end: first byte, total, rows, memory growth."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    before = rss_kib(pid)
    peak = before
    started = time.perf_counter()
    conn.request("GET", f"/v1/commissions?format=csv&from={since}", headers=headers)
    resp = conn.getresponse()
    if resp.status != 200:
        sys.exit(f"export: {resp.status} {resp.read()[:200]!r}")
    first = resp.read(1)
    first_byte = time.perf_counter() - started
    lines = first.count(b"\n")
    while chunk := resp.read(1 << 16):
        lines += chunk.count(b"\n")
        peak = max(peak, rss_kib(pid))
    total = time.perf_counter() - started
    conn.close()
    rows = lines - 1  # the header
    return {
        "rows": rows,
        "first_byte_ms": round(first_byte * 1000, 1),
        "total_s": round(total, 3),
        "rows_per_s": round(rows / total),
        "rss_growth_mib": round((peak - before) / 1024, 1),
    }


def sqlite_export(database: Path, since: str) -> dict[str, Any]:
    """The same rows by `sqlite3 -csv`: first byte, total, rows."""
    sql = (
        "SELECT id, network, external_id, program_name, program_external_id, status, "
        "raw_status, sale_amount, commission_amount, currency, clicked_at, transacted_at, "
        "sub_id FROM commissions WHERE account_id = 1 "
        f"AND transacted_at >= '{since}T00:00:00Z' ORDER BY transacted_at DESC, id DESC"
    )
    started = time.perf_counter()
    proc = subprocess.Popen(
        ["sqlite3", "-csv", "-header", "-readonly", str(database), sql], stdout=subprocess.PIPE
    )
    assert proc.stdout is not None
    first = proc.stdout.read(1)
    first_byte = time.perf_counter() - started
    lines = first.count(b"\n")
    while chunk := proc.stdout.read(1 << 16):
        lines += chunk.count(b"\n")
    proc.wait()
    total = time.perf_counter() - started
    rows = lines - 1
    return {
        "rows": rows,
        "first_byte_ms": round(first_byte * 1000, 1),
        "total_s": round(total, 3),
        "rows_per_s": round(rows / total),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    database = base.OUT / "store.sqlite3"
    stamp = base.OUT / "store.json"
    wanted = base.params(args)
    meta = json.loads(stamp.read_text()) if stamp.exists() else {}
    if meta.get("params") != wanted or not database.exists():
        print(f"bench: generating {args.commissions:,} commissions ...", flush=True)
        made = base.generate(database, args.accounts, args.commissions, args.others, args.seed)
        meta = {"params": wanted, **made}
        stamp.write_text(json.dumps(meta))
    headers = {"Authorization": f"Bearer {meta['key']}"}
    port = base.free_port()
    edge = base.start_edge(port, database)
    try:
        base.wait_ready(port, "/v1/commissions", headers, edge)
        edge_runs = [edge_export(port, headers, args.since, edge.pid) for _ in range(args.runs)]
    finally:
        base.stop(edge)
    sqlite_runs = [sqlite_export(database, args.since) for _ in range(args.runs)]
    if {r["rows"] for r in edge_runs} != {r["rows"] for r in sqlite_runs}:
        sys.exit(f"row counts differ: {edge_runs} {sqlite_runs}")

    def median(runs: list[dict[str, Any]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    results = {
        "params": wanted,
        "since": args.since,
        "edge": edge_runs,
        "sqlite3 -csv": sqlite_runs,
        "ratios": {
            "edge rows/s / sqlite3 rows/s": round(
                median(edge_runs, "rows_per_s") / median(sqlite_runs, "rows_per_s"), 3
            ),
            "edge first byte / sqlite3 first byte": round(
                median(edge_runs, "first_byte_ms") / max(median(sqlite_runs, "first_byte_ms"), 0.1),
                3,
            ),
        },
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    return results


def report(results: dict[str, Any]) -> None:
    print(f"\nCSV export of {results['edge'][0]['rows']:,} commissions (from {results['since']})\n")
    print(f"{'':<14} {'first byte ms':>14} {'total s':>9} {'rows/s':>10} {'RSS +MiB':>9}")
    for name in ("edge", "sqlite3 -csv"):
        for r in results[name]:
            growth = r.get("rss_growth_mib", "")
            print(
                f"{name:<14} {r['first_byte_ms']:>14} {r['total_s']:>9} {r['rows_per_s']:>10} "
                f"{growth:>9}"
            )
    print()
    for name, value in results["ratios"].items():
        print(f"{name:<44} {value:>8}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commissions", type=int, default=1_000_000)
    parser.add_argument("--accounts", type=int, default=1_000)
    parser.add_argument("--others", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--from", dest="since", default="2025-01-01")
    args = parser.parse_args(argv)
    report(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
