#!/usr/bin/env python3
"""Benchmark of realised terms (not a test): what `include=outcomes` adds to a month's
summary ranked by programme and by sub-id, on SQLite and on PostgreSQL, in process.

    python3 dev.py bench bench_outcomes [--database postgresql://...] [--repeat 5]

Reads the SQLite store bench_commissions.py generates (1,000,000 commissions of one account
among 1,000 accounts; run it first) and, with `--database`, the same rows in PostgreSQL
(a database bench_commissions_pg.py's `load` filled). For each store and grouping, through
the store's read door (`store.read`, no HTTP): the first page of 25 of May 2026 without
outcomes (`summary.totals`), with them (`outcomes.summary_with_outcomes`), and the page
where the wholly declined groups may rank (the last page of the first currency, where a
group of commission 0 could fall: every group is read and ranked). Median of `--repeat`
runs, interleaved, each case against the plain page of the same store in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime as dt
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import bench_commissions as base  # the generated store and its account (this folder)

UID = "acc_bench00000000001"
PAGE = 25


def query(group_by: str) -> Any:
    from contract.vocabulary import EXCLUDED_FROM_TOTALS
    from store.summary import SummaryQuery

    return SummaryQuery(
        UID,
        (group_by,),
        since=dt.date(2026, 5, 1),
        until=dt.date(2026, 5, 31),
        excluded=(EXCLUDED_FROM_TOTALS,),
        limit=PAGE + 1,
    )


async def last_page_of_first_currency(store: Any, first: Any) -> Any:
    """The query of the page after the first currency's last row but PAGE: the page where a
    wholly declined group (commission 0) may rank."""
    from store import summary

    rows = await store.read(summary.totals, dataclasses.replace(first, limit=None))
    currency = rows[0].currency
    mine = [row for row in rows if row.currency == currency]
    before = mine[max(0, len(mine) - PAGE) - 1]
    return dataclasses.replace(first, after=before.rank(first.columns))


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await fn()
    return (time.perf_counter() - started) * 1000


async def measure(database: str, repeat: int) -> dict[str, dict[str, float]]:
    from store import open_store, outcomes, summary

    store = await open_store(database, writable=False, readers=1, timeout=60.0)
    out: dict[str, dict[str, float]] = {}
    try:
        for group_by in ("program", "subId"):
            first = query(group_by)
            last = await last_page_of_first_currency(store, first)
            cases = {
                "page": lambda q=first: store.read(summary.totals, q),
                "page + outcomes": lambda q=first: store.read(outcomes.summary_with_outcomes, q),
                "declined page + outcomes": lambda q=last: store.read(
                    outcomes.summary_with_outcomes, q
                ),
            }
            times: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(repeat):
                for name, fn in cases.items():
                    times[name].append(await timed(fn))
            out[group_by] = {name: statistics.median(t) for name, t in times.items()}
    finally:
        await store.close()
    return out


def report(name: str, results: dict[str, dict[str, float]]) -> None:
    print(f"\n{name}: median ms (x the page without outcomes)")
    for group_by, figures in results.items():
        plain = figures["page"]
        shown = ", ".join(f"{case} {ms:.1f} ({ms / plain:.1f}x)" for case, ms in figures.items())
        print(f"  by {group_by}: {shown}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", help="PostgreSQL holding the same rows (optional)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    sqlite = base.OUT / "store.sqlite3"
    if not sqlite.exists():
        sys.exit(f"{sqlite} is missing: run `python3 dev.py bench bench_commissions` first")
    report("SQLite", asyncio.run(measure(str(sqlite), args.repeat)))
    if args.database:
        report("PostgreSQL", asyncio.run(measure(args.database, args.repeat)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
