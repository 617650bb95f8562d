"""Commission totals: the per-day aggregates equal a brute-force recomputation from the rows
after random writes (imports, syncs, corrections, status and currency changes, deletions,
an account's cascade) on both stores; the summary's totals are exact, per currency; a
database of the previous version gains its aggregates when it upgrades."""

from __future__ import annotations

import calendar
import datetime as dt
import random
import sqlite3
from collections.abc import Iterable, Sequence
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.rawdb import raw_execute, raw_fetch

from store import accounts, commissions, open_store, summary
from store.base import AMOUNT_RE, NewCommission
from store.engines.sqlite import migrate
from store.limbs import COMMISSION_LIMBS, SALE_LIMBS
from store.summary import (
    GRAINS,
    Grain,
    SummaryQuery,
    amount_units,
    joined,
    spans,
    units_amount,
)

AMOUNTS = (
    "0",
    "12.30",
    "4.26",
    "-3.5",
    "100",
    "0.000000000001",
    "-0.000000000001",
    "999999999999999999.999999999999",
    "-999999999999999999.999999999999",
    "123456789012.345678901234",
    "7",
)
CURRENCIES = ("EUR", "USD", "GBP")
STATUSES = ("pending", "approved", "declined", "paid", "unknown")
NETWORKS = ("awin", "cj")
DAYS = ("2026-01-30", "2026-01-31", "2026-02-01", "2026-03-15")
GROUPINGS = (
    (),
    ("network",),
    ("status",),
    ("day",),
    ("month",),
    ("month", "network"),
    ("network", "status", "day"),
    ("status", "month", "network", "day"),
)


def random_commission(rng: random.Random, external_id: str) -> NewCommission:
    return NewCommission(
        external_id=external_id,
        status=rng.choice(STATUSES),
        raw_status="x",
        commission_amount=rng.choice(AMOUNTS),
        currency=rng.choice(CURRENCIES),
        transacted_at=f"{rng.choice(DAYS)}T{rng.choice(('00:00:00', '12:30:00', '23:59:59'))}Z",
        sale_amount=rng.choice((None, *AMOUNTS)),
    )


Totals = tuple[int, int, int, int]  # count, commission units, rows with a sale, sale units


def brute_force(rows: Iterable[Sequence[Any]], grain: Grain) -> dict[tuple[Any, ...], Totals]:
    """Key of `grain` (account_id, day or month, ...) -> totals, from the rows."""
    out: dict[tuple[Any, ...], list[int]] = {}
    for account, transacted, network, status, currency, commission, sale in rows:
        values = {"account_id": account, grain.name: transacted[: grain.width]}
        values.update(network=network, status=status, currency=currency)
        key = tuple(values[name] for name in grain.key)
        totals = out.setdefault(key, [0] * 4)
        totals[0] += 1
        totals[1] += amount_units(commission)
        if sale is not None:
            totals[2] += 1
            totals[3] += amount_units(sale)
    return {key: (t[0], t[1], t[2], t[3]) for key, t in out.items()}


async def stored_totals(database: str, grain: Grain) -> dict[tuple[Any, ...], Totals]:
    rows = await raw_fetch(
        database,
        f"SELECT {', '.join(grain.key)}, row_count, "
        f"{', '.join(COMMISSION_LIMBS)}, sale_rows, {', '.join(SALE_LIMBS)} "
        f"FROM {grain.table}",
    )
    return {
        tuple(row[:5]): (int(row[5]), joined(*row[6:9]), int(row[9]), joined(*row[10:13]))
        for row in rows
    }


async def rows_of(database: str) -> list[tuple[Any, ...]]:
    return await raw_fetch(
        database,
        "SELECT account_id, transacted_at, network, status, currency, commission_amount, "
        "sale_amount FROM commissions",
    )


async def assert_aggregates_exact(database: str) -> None:
    rows = await rows_of(database)
    for grain in GRAINS:
        assert await stored_totals(database, grain) == brute_force(rows, grain), grain.name


def expected_summary(
    rows: Iterable[Sequence[Any]], account: int, group_by: Sequence[str]
) -> list[tuple[Any, ...]]:
    """(keys..., currency, count, commission, sale) of the account's rows, with Decimal
    sums: an independent computation of the summary."""
    with localcontext() as exact:
        exact.prec = 60  # 28 digits by default: a sum of 30-digit amounts would round
        return _expected(rows, account, group_by)


def _expected(
    rows: Iterable[Sequence[Any]], account: int, group_by: Sequence[str]
) -> list[tuple[Any, ...]]:
    groups: dict[tuple[str, ...], list[Any]] = {}
    for owner, transacted, network, status, currency, commission, sale in rows:
        if owner != account:
            continue
        values = {"network": network, "status": status, "day": transacted[:10]}
        values["month"] = transacted[:7]
        key = (*(values[name] for name in group_by), currency)
        totals = groups.setdefault(key, [0, Decimal(0), None])
        totals[0] += 1
        totals[1] += Decimal(commission)
        if sale is not None:
            totals[2] = (totals[2] or Decimal(0)) + Decimal(sale)
    return [
        (*key, count, Decimal(commission), None if sale is None else Decimal(sale))
        for key, (count, commission, sale) in sorted(groups.items())
    ]


async def assert_summaries_exact(store: Any, database: str, uid: str, account: int) -> None:
    rows = await rows_of(database)
    for group_by in GROUPINGS:
        answer = await store.read(summary.totals, SummaryQuery(uid, group_by))
        got = []
        for row in answer:
            values = {"network": row.network, "status": row.status, "day": row.day}
            values["month"] = row.month
            assert all(values[name] is None for name in values if name not in group_by)
            assert AMOUNT_RE.fullmatch(row.commission)
            got.append(
                (
                    *(values[name] for name in group_by),
                    row.currency,
                    row.count,
                    Decimal(row.commission),
                    None if row.sale is None else Decimal(row.sale),
                )
            )
        assert got == expected_summary(rows, account, group_by), group_by


async def test_random_writes_keep_the_aggregates_exact(writable, database: str):
    store = writable
    rng = random.Random(24)
    uids = ["acc_a", "acc_b", "acc_gone"]
    for uid in uids:
        await store.write(accounts.create, None, "pro", uid=uid)
    for step in range(40):
        uid = rng.choice(uids)
        network = rng.choice(NETWORKS)
        action = rng.random()
        if action < 0.8:
            # New rows and corrections of stored ones: amounts, statuses, currencies, days.
            ids = rng.sample([f"c{n}" for n in range(12)], rng.randint(1, 6))
            await store.write(
                commissions.upsert, uid, network, [random_commission(rng, i) for i in ids]
            )
        else:
            await raw_execute(
                database,
                f"DELETE FROM commissions WHERE id IN "
                f"(SELECT id FROM commissions ORDER BY id LIMIT 1 OFFSET {rng.randint(0, 5)})",
            )
        if step % 10 == 9:
            await assert_aggregates_exact(database)
    account_ids = dict(await raw_fetch(database, "SELECT uid, id FROM accounts"))
    for uid in ("acc_a", "acc_b"):
        await assert_summaries_exact(store, database, uid, account_ids[uid])
    # An account's deletion cascades to its commissions and to their totals.
    await raw_execute(database, "DELETE FROM accounts WHERE uid = 'acc_gone'")
    await assert_aggregates_exact(database)
    for grain in GRAINS:
        stored = await stored_totals(database, grain)
        assert not [key for key in stored if key[0] == account_ids["acc_gone"]]


async def test_filters_and_updated_since(writable, database: str):
    store = writable
    await store.write(accounts.create, None, "pro", uid="acc_f")
    rng = random.Random(7)
    await store.write(
        commissions.upsert, "acc_f", "awin", [random_commission(rng, f"a{n}") for n in range(30)]
    )
    await store.write(
        commissions.upsert, "acc_f", "cj", [random_commission(rng, f"c{n}") for n in range(30)]
    )
    (account,) = (r[0] for r in await raw_fetch(database, "SELECT id FROM accounts"))
    rows = [r for r in await rows_of(database) if r[0] == account]
    since, until = dt.date(2026, 1, 31), dt.date(2026, 2, 1)
    chosen = [
        r
        for r in rows
        if r[2] == "cj" and r[3] == "approved" and "2026-01-31" <= r[1][:10] <= "2026-02-01"
    ]
    query = SummaryQuery(
        "acc_f", ("day",), network="cj", status="approved", since=since, until=until
    )
    answer = await store.read(summary.totals, query)
    assert [(r.day, r.currency, r.count) for r in answer] == [
        (day, currency, count)
        for day, currency, count, _, _ in expected_summary(chosen, account, ("day",))
    ]
    # updatedSince: only the rows changed since then, summed exactly the same way.
    everything = await store.read(
        summary.totals, SummaryQuery("acc_f", ("network",), updated_since="2000-01-01T00:00:00Z")
    )
    assert everything == await store.read(summary.totals, SummaryQuery("acc_f", ("network",)))
    assert not await store.read(
        summary.totals, SummaryQuery("acc_f", ("network",), updated_since="2999-01-01T00:00:00Z")
    )
    assert not await store.read(summary.totals, SummaryQuery("acc_nobody", ()))


PERIODS = (
    ("2026-01-01", "2026-01-31"),  # a whole month
    ("2026-01-15", "2026-01-31"),  # a part-month with nothing of its month outside it
    ("2026-01-31", "2026-01-31"),  # a part-month: the 30th lies outside it
    ("2026-01-30", "2026-02-10"),  # a whole head, a tail with nothing after it
    ("2026-01-31", "2026-03-14"),  # a head missing the 30th, a tail missing the 15th
    ("2026-03-01", "2026-03-14"),  # nothing inside, something after
    ("2026-03-01", "2026-03-20"),  # a month to date
    ("2026-02-02", "2026-02-27"),  # nothing at all
)


@pytest.mark.parametrize("network", [None, "cj"])
async def test_periods_sum_exactly_the_days_they_cover(writable, database: str, network):
    """Every period, whole months or parts (read from the monthly totals when nothing of
    the month lies outside the part, from the daily ones otherwise), equals the brute-force
    sum of the rows it covers."""
    store = writable
    await store.write(accounts.create, None, "pro", uid="acc_p")
    rng = random.Random(11)
    for net in NETWORKS:
        rows = [random_commission(rng, f"{net}{n}") for n in range(25)]
        await store.write(commissions.upsert, "acc_p", net, rows)
    (account,) = (r[0] for r in await raw_fetch(database, "SELECT id FROM accounts"))
    stored = [r for r in await rows_of(database) if r[0] == account]
    for since, until in PERIODS:
        covered = [
            r
            for r in stored
            if since <= r[1][:10] <= until and (network is None or r[2] == network)
        ]
        for group_by in (("month", "network"), ("network", "status"), ()):
            query = SummaryQuery(
                "acc_p",
                group_by,
                network=network,
                since=dt.date.fromisoformat(since),
                until=dt.date.fromisoformat(until),
            )
            got = [
                (
                    *(getattr(row, name) for name in group_by),
                    row.currency,
                    row.count,
                    Decimal(row.commission),
                    None if row.sale is None else Decimal(row.sale),
                )
                for row in await store.read(summary.totals, query)
            ]
            assert got == expected_summary(covered, account, group_by), (since, until, group_by)


DATES = st.one_of(st.none(), st.dates(dt.date(2023, 11, 1), dt.date(2024, 4, 30)))


@given(DATES, DATES)
def test_a_period_is_whole_months_and_part_months_exactly(since, until):
    """spans() covers each day of the period once, and no other (a day per month key)."""
    if since is not None and until is not None and since > until:
        return
    first, last = dt.date(2023, 10, 1), dt.date(2024, 5, 31)  # beyond the drawn dates
    covered: list[dt.date] = []
    for grain, lower, upper in spans(since, until):
        day = first
        while day <= last:
            key = day.isoformat()[: grain.width]
            inside = (lower is None or key >= lower) and (upper is None or key <= upper)
            if inside and (grain.name == "day" or day.day == 1):  # a month's days once
                covered += [day] if grain.name == "day" else month_days(day)
            day += dt.timedelta(days=1)
    wanted = [
        first + dt.timedelta(days=n)
        for n in range((last - first).days + 1)
        if (since is None or first + dt.timedelta(days=n) >= since)
        and (until is None or first + dt.timedelta(days=n) <= until)
    ]
    assert sorted(covered) == wanted


CALENDAR_ENDS = [
    (dt.date(1, 1, 1), dt.date(1, 4, 30)),
    (dt.date(9999, 9, 1), dt.date(9999, 12, 31)),
]


@pytest.mark.parametrize(("first", "last"), CALENDAR_ENDS, ids=["year-1", "year-9999"])
def test_a_period_at_either_end_of_the_calendar_is_covered_exactly(first, last):
    """The same as above where no day lies before or after the drawn ones: 0001-01-01 and
    9999-12-31 have no neighbour to step to."""
    near = st.one_of(st.none(), st.dates(first, last))

    @given(near, near)
    def run(since, until):
        if since is not None and until is not None and since > until:
            return
        covered: list[dt.date] = []
        for grain, lower, upper in spans(since, until):
            day = first
            while True:
                key = day.isoformat()[: grain.width]
                inside = (lower is None or key >= lower) and (upper is None or key <= upper)
                if inside and (grain.name == "day" or day.day == 1):
                    covered += [day] if grain.name == "day" else month_days(day)
                if day == last:
                    break
                day += dt.timedelta(days=1)
        days = [first + dt.timedelta(days=n) for n in range((last - first).days + 1)]
        wanted = [
            d for d in days if (since is None or d >= since) and (until is None or d <= until)
        ]
        assert sorted(covered) == wanted

    run()


@given(
    st.one_of(st.none(), st.dates()),
    st.one_of(st.none(), st.dates()),
    st.sampled_from([(), ("month",), ("day",), ("month", "network"), ("status", "day")]),
)
def test_the_summary_statement_is_made_for_any_period_of_the_calendar(since, until, group_by):
    if since is not None and until is not None and since > until:
        return
    query = SummaryQuery("acc_x", group_by, since=since, until=until)
    sql, params = summary.summary_json_sql(query)
    assert sql and all(isinstance(p, str | int) for p in params)


def month_days(start: dt.date) -> list[dt.date]:
    length = calendar.monthrange(start.year, start.month)[1]
    return [start.replace(day=n) for n in range(1, length + 1)]


@given(st.integers(min_value=-(10**30) + 1, max_value=10**30 - 1))
def test_units_and_amount_text_round_trip(units: int):
    text = units_amount(units)
    assert AMOUNT_RE.fullmatch(text)
    assert not text.endswith(".") and ("." not in text or not text.endswith("0"))
    assert amount_units(text) == units
    with localcontext() as exact:
        exact.prec = 60
        assert Decimal(text) == Decimal(units).scaleb(-12)


@pytest.mark.parametrize(
    ("text", "units"),
    [("12.30", 12_300_000_000_000), ("-0.5", -500_000_000_000), ("7", 7 * 10**12)],
)
def test_amount_units(text: str, units: int):
    assert amount_units(text) == units


def version_3_sqlite(path: Path) -> None:
    """A SQLite file as the previous version left it: steps 1 to 3 and two rows."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        migrate(conn, lambda: dt.datetime(2026, 1, 1, tzinfo=dt.UTC), upto=3)
        conn.execute("BEGIN")
        for statement in OLD_ROWS:
            conn.execute(statement.replace("false", "0"))
        conn.execute("COMMIT")
    finally:
        conn.close()


OLD_ROWS = (
    "INSERT INTO accounts (id, uid, email, plan, suspended, created_at) "
    "VALUES (1, 'acc_old', NULL, 'free', false, '2026-01-01T00:00:00Z')",
    "INSERT INTO commissions (account_id, network, external_id, status, raw_status, "
    "commission_amount, sale_amount, currency, transacted_at, imported_at, updated_at) VALUES "
    "(1, 'awin', 'A', 'pending', 'pending', '4.26', '85.20', 'EUR', '2026-01-03T10:12:00Z', "
    "'2026-01-05T00:00:00Z', '2026-01-05T00:00:00Z')",
    "INSERT INTO commissions (account_id, network, external_id, status, raw_status, "
    "commission_amount, sale_amount, currency, transacted_at, imported_at, updated_at) VALUES "
    "(1, 'awin', 'B', 'pending', 'pending', '0.74', NULL, 'EUR', '2026-01-03T23:00:00Z', "
    "'2026-01-05T00:00:00Z', '2026-01-05T00:00:00Z')",
)


async def check_backfilled(database: str) -> None:
    store = await open_store(database, writable=True, readers=1)
    try:
        (row,) = await store.read(summary.totals, SummaryQuery("acc_old", ("day",)))
        assert (row.day, row.currency, row.count, row.commission, row.sale) == (
            "2026-01-03",
            "EUR",
            2,
            "5",
            "85.2",
        )
        await assert_aggregates_exact(database)
    finally:
        await store.close()


async def test_a_version_3_sqlite_database_gains_its_totals(tmp_path: Path):
    path = tmp_path / "old.sqlite3"
    version_3_sqlite(path)
    await check_backfilled(str(path))


async def test_a_version_3_postgresql_database_gains_its_totals(pg_fresh_url: str):
    from store.engines.postgres import parse_url
    from store.schema import statements

    dsn, _ = parse_url(pg_fresh_url)
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            await conn.execute(
                "CREATE TABLE schema_migrations "
                "(version integer PRIMARY KEY, applied_at text NOT NULL)"
            )
            for number, step in enumerate(statements("postgres", upto=3), 1):
                for statement in step:
                    await conn.execute(statement)
                await conn.execute(
                    "INSERT INTO schema_migrations VALUES ($1, '2026-01-01T00:00:00Z')", number
                )
            for statement in OLD_ROWS:
                await conn.execute(
                    statement.replace("(id, uid", "(uid").replace("(1, 'acc", "('acc")
                )
    finally:
        await conn.close()
    await check_backfilled(pg_fresh_url)


RANK_AMOUNTS = (
    "999999999999999999.999999999999",
    "-999999999999999999.999999999999",
    "0.000000000001",
    "-0.000000000001",
    "9999999999.99999999",
    "-10000000000",
    "0.00000000001",
    "1",
)


@pytest.mark.parametrize("seed", [1, 2])
async def test_ranked_groups_come_in_the_exact_order_of_their_sums(writable, database, seed):
    """Ranked in the database: the sums whose limbs carry across ten digits, of either sign,
    order exactly as their decimal values; the pages after each cursor continue it."""
    store = writable
    uid = f"acc_rank{seed}"
    await store.write(accounts.create, None, "pro", uid=uid)
    rng = random.Random(seed)
    rows = [
        NewCommission(
            external_id=f"r{n}",
            status="approved",
            raw_status=None,
            commission_amount=rng.choice(RANK_AMOUNTS),
            currency=rng.choice(("EUR", "USD")),
            transacted_at="2026-01-05T00:00:00Z",
            sub_id=rng.choice((None, "", *(f"s{k}" for k in range(12)))),
        )
        for n in range(120)
    ]
    await store.write(commissions.upsert, uid, "awin", rows)
    sums: dict[tuple[Any, str], Decimal] = {}
    with localcontext() as exact:
        exact.prec = 60
        for row in rows:
            key = (row.sub_id, row.currency)
            sums[key] = sums.get(key, Decimal(0)) + Decimal(row.commission_amount)
        # Negated in the same context: 28 digits would round the 31-digit sums together.
        wanted = sorted(sums, key=lambda k: (k[1], -sums[k], k[0] is not None, k[0] or ""))
    query = SummaryQuery(uid, ("subId",))
    got = await store.read(summary.totals, query)
    assert [(row.sub_id, row.currency, Decimal(row.commission)) for row in got] == [
        (*k, sums[k]) for k in wanted
    ]
    assert all(Decimal(row.commission) == sums[row.sub_id, row.currency] for row in got)
    seen: list[tuple[Any, str]] = []
    after = None
    while True:
        page = await store.read(summary.totals, SummaryQuery(uid, ("subId",), limit=4, after=after))
        seen += [(row.sub_id, row.currency) for row in page[:3]]
        if len(page) <= 3:
            break
        after = page[2].rank(query.columns)
    assert seen == wanted
