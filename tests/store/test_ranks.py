"""Each month's ranking by programme and by sub-id (store.ranks), on both stores: after
random writes and a rebuild it equals a brute force over the rows; a summary of one month
reads it only when it is up to date (a write marks its month stale in the same
transaction), and answers the same either way, page by page."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import random
from typing import Any

import asyncpg
import pytest
from support.rawdb import raw_execute, raw_fetch

from contract.vocabulary import EXCLUDED_FROM_TOTALS
from store import accounts, commissions, open_store, ranks, summary
from store.base import NewCommission
from store.limbs import COMMISSION_LIMBS, SALE_LIMBS, split
from store.summary import SummaryQuery, amount_units, joined

AMOUNTS = ("12.30", "4.26", "-3.5", "100", "0.000000000001", "999999999999999999.999999999999")
STATUSES = ("pending", "approved", "declined", "paid", "unknown")
MONTHS = (("2026-01-01", "2026-01-31"), ("2026-02-01", "2026-02-28"))
PROGRAMS = (None, "", "10", "11", "x y")
SUB_IDS = (None, "", "home", "blog", "a,b")


def random_row(rng: random.Random, external_id: str) -> NewCommission:
    day = rng.choice(("2026-01-01", "2026-01-17", "2026-01-31", "2026-02-01", "2026-02-20"))
    return NewCommission(
        external_id=external_id,
        status=rng.choice(STATUSES),
        raw_status="x",
        commission_amount=rng.choice(AMOUNTS),
        currency=rng.choice(("EUR", "USD")),
        transacted_at=f"{day}T{rng.choice(('00:00:00', '23:59:59'))}Z",
        sale_amount=rng.choice((None, "10", "0.5")),
        program_external_id=rng.choice(PROGRAMS),
        program_name=rng.choice(("Shop", "Shop 2")),
        sub_id=rng.choice(SUB_IDS),
    )


def key_of(dimension: str, network: str, program: str | None, sub_id: str | None) -> tuple:
    value = program if dimension == "program" else sub_id
    return (network if dimension == "program" else "", "" if value is None else "=" + value)


async def brute_force(database: str) -> dict[tuple[Any, ...], tuple[int, int, int, int]]:
    """(account, month, dimension, currency, network, key) -> totals, from the rows."""
    rows = await raw_fetch(
        database,
        "SELECT account_id, transacted_at, network, status, currency, program_external_id, "
        "sub_id, commission_amount, sale_amount FROM commissions",
    )
    out: dict[tuple[Any, ...], list[int]] = {}
    for account, at, network, status, currency, program, sub_id, commission, sale in rows:
        if status == EXCLUDED_FROM_TOTALS:
            continue
        for dimension in ranks.DIMENSIONS:
            key = (
                account,
                at[:7],
                dimension,
                currency,
                *key_of(dimension, network, program, sub_id),
            )
            totals = out.setdefault(key, [0, 0, 0, 0])
            totals[0] += 1
            totals[1] += amount_units(commission)
            if sale is not None:
                totals[2] += 1
                totals[3] += amount_units(sale)
    return {key: (t[0], t[1], t[2], t[3]) for key, t in out.items()}


async def stored_ranking(database: str) -> dict[tuple[Any, ...], tuple[int, int, int, int]]:
    rows = await raw_fetch(
        database,
        "SELECT account_id, month, dimension, currency, network, dim_key, order_hi, "
        f"order_mid, order_lo, row_count, {', '.join(COMMISSION_LIMBS)}, sale_rows, "
        f"{', '.join(SALE_LIMBS)} FROM commission_ranks",
    )
    out = {}
    for row in rows:
        commission = joined(*row[10:13])
        # The order limbs are the negated sum's, normalised.
        assert tuple(int(v) for v in row[6:9]) == split(-commission), row
        out[tuple(row[:6])] = (int(row[9]), commission, int(row[13]), joined(*row[14:17]))
    return out


def reference(
    totals: dict[tuple[Any, ...], tuple[int, int, int, int]],
    account: int,
    month: str,
    dimension: str,
) -> list[tuple[Any, ...]]:
    """The month's rows in rank order: (currency, network, key, count, commission)."""
    rows = [
        (k[3], k[4], k[5], t[0], t[1])
        for k, t in totals.items()
        if k[0] == account and k[1] == month and k[2] == dimension
    ]
    return sorted(rows, key=lambda r: (r[0], -r[4], r[1], r[2]))


def answered(rows: list[summary.SummaryRow], dimension: str) -> list[tuple[Any, ...]]:
    out = []
    for row in rows:
        value = row.program_external_id if dimension == "program" else row.sub_id
        network = row.network if dimension == "program" else ""
        key = "" if value is None else "=" + value
        out.append((row.currency, network, key, row.count, amount_units(row.commission)))
    return out


def month_query(uid: str, dimension: str, since: str, until: str, **more: Any) -> SummaryQuery:
    return SummaryQuery(
        uid,
        (dimension,),
        since=dt.date.fromisoformat(since),
        until=dt.date.fromisoformat(until),
        excluded=(EXCLUDED_FROM_TOTALS,),
        **more,
    )


async def pages(store: Any, query: SummaryQuery, size: int) -> list[summary.SummaryRow]:
    """Every row of a ranked query, `size` at a time, each page after the last's rank."""
    seen: list[summary.SummaryRow] = []
    after = None
    while True:
        page = await store.read(
            summary.totals, dataclasses.replace(query, limit=size + 1, after=after)
        )
        seen += page[:size]
        if len(page) <= size:
            return seen
        after = page[size - 1].rank(query.columns)


async def write_randomly(store: Any, database: str, rng: random.Random, uids: list[str]) -> None:
    for _ in range(12):
        uid = rng.choice(uids)
        if rng.random() < 0.85:
            ids = rng.sample([f"c{n}" for n in range(30)], rng.randint(1, 8))
            rows = [random_row(rng, i) for i in ids]
            await store.write(commissions.upsert, uid, rng.choice(("awin", "cj")), rows)
        else:
            await raw_execute(
                database,
                "DELETE FROM commissions WHERE id IN (SELECT id FROM commissions "
                f"ORDER BY id LIMIT 1 OFFSET {rng.randint(0, 5)})",
            )


async def assert_months_exact(store: Any, truth: dict[tuple[Any, ...], Any], ids: dict) -> None:
    """Every month of both accounts by each dimension, whole and page by page, equals the
    brute force."""
    for uid in ("acc_r1", "acc_r2"):
        for dimension in ranks.DIMENSIONS:
            for since, until in MONTHS:
                query = month_query(uid, dimension, since, until)
                want = reference(truth, ids[uid], since[:7], dimension)
                assert answered(await store.read(summary.totals, query), dimension) == want
                assert answered(await pages(store, query, 3), dimension) == want


async def test_a_rebuilt_ranking_equals_a_brute_force_and_answers_as_the_totals(
    writable, database: str
):
    store = writable
    rng = random.Random(11)
    uids = ["acc_r1", "acc_r2", "acc_gone"]
    for uid in uids:
        await store.write(accounts.create, None, "pro", uid=uid)
    ids = dict(await raw_fetch(database, "SELECT uid, id FROM accounts"))
    for round_ in range(3):
        await write_randomly(store, database, rng, uids)
        # Stale: every answer is the totals' own, and exact.
        assert await store.read(ranks.stale_months) > 0
        truth = await brute_force(database)
        await assert_months_exact(store, truth, ids)
        rebuilt = await ranks.refresh(store)
        assert rebuilt > 0 and await store.read(ranks.stale_months) == 0, round_
        assert await stored_ranking(database) == truth, round_
        await assert_months_exact(store, truth, ids)
    # An account's deletion takes its ranking; its marks are dropped by the next rebuild.
    await raw_execute(database, "DELETE FROM accounts WHERE uid = 'acc_gone'")
    await ranks.refresh(store)
    assert await stored_ranking(database) == await brute_force(database)
    assert await store.read(ranks.stale_months) == 0


async def tamper(database: str, uid: str, month: str) -> None:
    """Add 1,000 to the count of every ranking row of the month: what only the ranking says."""
    await raw_execute(
        database,
        "UPDATE commission_ranks SET row_count = row_count + 1000 WHERE month = "
        f"'{month}' AND account_id = (SELECT id FROM accounts WHERE uid = '{uid}')",
    )


async def test_a_month_reads_its_ranking_only_while_it_is_up_to_date(writable, database: str):
    store = writable
    await store.write(accounts.create, None, "pro", uid="acc_t")
    rng = random.Random(5)
    rows = [
        dataclasses.replace(random_row(rng, f"t{n}"), transacted_at="2026-01-17T12:00:00Z")
        for n in range(40)
    ]
    await store.write(commissions.upsert, "acc_t", "awin", rows)
    await ranks.refresh(store)
    await tamper(database, "acc_t", "2026-01")
    whole = month_query("acc_t", "subId", "2026-01-01", "2026-01-31")
    counts = [row.count for row in await store.read(summary.totals, whole)]
    assert counts and all(count > 1000 for count in counts)  # read from the ranking
    # A month to date reads it only when nothing of the month lies after the period.
    late = [
        dataclasses.replace(
            rows[0], external_id="late", status="approved", transacted_at="2026-01-31T10:00:00Z"
        )
    ]
    to_date = month_query("acc_t", "subId", "2026-01-01", "2026-01-30")
    await store.write(commissions.upsert, "acc_t", "cj", late)
    await ranks.refresh(store)
    await tamper(database, "acc_t", "2026-01")
    assert all(row.count < 1000 for row in await store.read(summary.totals, to_date))
    assert all(row.count > 1000 for row in await store.read(summary.totals, whole))
    # A declined commission after the period is not counted: the ranking answers.
    await raw_execute(
        database, "UPDATE commissions SET status = 'declined' WHERE external_id = 'late'"
    )
    await ranks.refresh(store)
    await tamper(database, "acc_t", "2026-01")
    assert all(row.count > 1000 for row in await store.read(summary.totals, to_date))
    # From the 1st with no end, or ending in a later month: the ranking answers while no
    # counted commission lies after the month.
    open_ended = dataclasses.replace(whole, until=None)
    to_march = month_query("acc_t", "subId", "2026-01-01", "2026-03-31")
    assert all(row.count > 1000 for row in await store.read(summary.totals, open_ended))
    assert all(row.count > 1000 for row in await store.read(summary.totals, to_march))
    february = [
        dataclasses.replace(
            rows[1], external_id="feb", status="pending", transacted_at="2026-02-03T10:00:00Z"
        )
    ]
    await store.write(commissions.upsert, "acc_t", "cj", february)
    await ranks.refresh(store)
    await tamper(database, "acc_t", "2026-01")
    assert all(row.count < 1000 for row in await store.read(summary.totals, open_ended))
    assert all(row.count < 1000 for row in await store.read(summary.totals, to_march))
    assert all(row.count > 1000 for row in await store.read(summary.totals, whole))
    # A write marks the month in its own transaction: the next read adds the totals up.
    await raw_execute(
        database, "UPDATE commissions SET commission_amount = '1' WHERE external_id = 't0'"
    )
    assert all(row.count < 1000 for row in await store.read(summary.totals, whole))
    # A period not from the 1st, past a month that has commissions, with a filter or with
    # the declined counted never reads it.
    await ranks.refresh(store)
    await tamper(database, "acc_t", "2026-01")
    for query in (
        month_query("acc_t", "subId", "2026-01-02", "2026-01-31"),
        month_query("acc_t", "subId", "2026-01-01", "2026-02-28"),
        month_query("acc_t", "subId", "2026-01-01", "2026-01-31", network="awin"),
        dataclasses.replace(whole, excluded=()),
        month_query("acc_t", "program", "2026-01-01", "2026-01-31", sub_id="home"),
    ):
        assert all(row.count < 1000 for row in await store.read(summary.totals, query)), query


@pytest.mark.postgresql
async def test_a_rebuild_leaves_a_month_a_writer_holds_for_later(pg_url: str):
    """PostgreSQL: a month marked by a transaction still open is skipped, not waited for,
    and stays marked: the rebuild after its commit sees what it wrote."""
    store = await open_store(pg_url, writable=True, readers=1)
    try:
        await store.write(accounts.create, None, "pro", uid="acc_w")
        rng = random.Random(3)
        await store.write(
            commissions.upsert, "acc_w", "awin", [random_row(rng, f"w{n}") for n in range(10)]
        )
        await ranks.refresh(store)
        conn = await asyncpg.connect(pg_url)
        try:
            writing = conn.transaction()
            await writing.start()
            await conn.execute(
                "UPDATE commissions SET commission_amount = '777' WHERE external_id = 'w1'"
            )
            assert await asyncio.wait_for(ranks.refresh(store), 10) == 0
            await writing.commit()
        finally:
            await conn.close()
        assert await store.read(ranks.stale_months) == 1
        assert await ranks.refresh(store) == 1
        assert await stored_ranking(pg_url) == await brute_force(pg_url)
    finally:
        await store.close()
