"""Realised terms: a summary row's outcomes equal a brute-force computation from the stored
status histories, after random imports, syncs, status changes and corrections, for every
grouping and filter, on both stores; and the pure parts (rates, median, a commission's fate)
by their definitions."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
import statistics
from collections.abc import Sequence
from decimal import Decimal, localcontext
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.accountkit import StepClock
from support.rawdb import raw_fetch

from store import accounts, commissions, open_store, outcomes
from store.base import NewCommission, median, rate
from store.summary import SummaryQuery

STATUSES = ("pending", "approved", "declined", "paid", "unknown")
AMOUNTS = ("0", "12.30", "-3.5", "100", "0.000000000001", "999999999999999999.999999999999")
CURRENCIES = ("EUR", "USD")
NETWORKS = ("awin", "cj")
PROGRAMS = (None, "", "p1", "p2")
SUB_IDS = (None, "", "home", "blog")
# transacted_at: before the clock's start, and after it (a decision "before" the sale).
MOMENTS = (
    "2026-01-30T23:59:59Z",
    "2026-01-31T08:00:00Z",
    "2026-02-01T00:00:00Z",
    "2026-02-27T12:00:00Z",
    "2026-03-05T00:00:00Z",
)
GROUPINGS: tuple[tuple[str, ...], ...] = (
    (),
    ("network",),
    ("status",),
    ("month",),
    ("program",),
    ("subId",),
    ("program", "subId"),
    ("month", "network", "status"),
    ("day",),
)
# The directory's links: two networks' programmes folded into one slug, one of each alone;
# "p2" at CJ and the commissions without a programme are linked to none.
LINKS = {("awin", "p1"): "shop", ("cj", "p1"): "shop", ("awin", "p2"): "other"}
DECIDED = {"approved", "paid", "declined"}
APPROVED = {"approved", "paid"}


def random_row(rng: random.Random, external_id: str) -> NewCommission:
    return NewCommission(
        external_id=external_id,
        status=rng.choice(STATUSES),
        raw_status=rng.choice(("a", "b")),
        commission_amount=rng.choice(AMOUNTS),
        currency=rng.choice(CURRENCIES),
        transacted_at=rng.choice(MOMENTS),
        program_name=rng.choice((None, "Shop", "Shop v2")),
        program_external_id=rng.choice(PROGRAMS),
        sale_amount=rng.choice((None, *AMOUNTS)),
        sub_id=rng.choice(SUB_IDS),
    )


def a_status_change(rng: random.Random, row: NewCommission) -> NewCommission:
    """The network's next answer for a stored row: a new status, nothing else."""
    return dataclasses.replace(row, status=rng.choice(STATUSES))


def instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


async def brute_force(database: str, uid: str, query: SummaryQuery) -> dict[tuple[Any, ...], Any]:
    """group key -> (count, commission, sale of the totals, then per status (count,
    commission, sale), decided, approved, ever approved, reversed, timed, median), straight
    from the rows and their histories."""
    rows = await raw_fetch(
        database,
        "SELECT c.id, c.network, c.status, c.transacted_at, c.imported_at, c.currency, "
        "c.commission_amount, c.sale_amount, c.program_external_id, c.sub_id, c.updated_at "
        f"FROM commissions c JOIN accounts a ON a.id = c.account_id WHERE a.uid = '{uid}'",
    )
    history: dict[int, list[tuple[int, str, str]]] = {}
    for commission_id, hid, status, changed in await raw_fetch(
        database, "SELECT commission_id, id, status, changed_at FROM commission_history"
    ):
        history.setdefault(commission_id, []).append((hid, status, changed))
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for (
        seq,
        network,
        status,
        moment,
        imported,
        currency,
        commission,
        sale,
        program,
        sub,
        updated,
    ) in rows:
        day = moment[:10]
        if query.network is not None and network != query.network:
            continue
        if query.status is not None and status != query.status:
            continue
        if query.program_external_id is not None and program != query.program_external_id:
            continue
        if query.sub_id is not None and sub != query.sub_id:
            continue
        if query.since is not None and day < query.since.isoformat():
            continue
        if query.until is not None and day > query.until.isoformat():
            continue
        if query.updated_since is not None and updated < query.updated_since:
            continue
        values = {
            "network": network,
            "status": status,
            "day": day,
            "month": day[:7],
            "program": (network, program),  # a programme id is its network's own
            "subId": sub,
            "programSlug": None if program is None else LINKS.get((network, program)),
        }
        key = (*(values[name] for name in query.group_by), currency)
        group = groups.setdefault(
            key, {"total": [0, Decimal(0), None], "by": {}, "ever": 0, "rev": 0, "days": []}
        )
        if status not in query.excluded:
            group["total"][0] += 1
            group["total"][1] += Decimal(commission)
            if sale is not None:
                group["total"][2] = (group["total"][2] or Decimal(0)) + Decimal(sale)
        by = group["by"].setdefault(status, [0, Decimal(0), None])
        by[0] += 1
        by[1] += Decimal(commission)
        if sale is not None:
            by[2] = (by[2] or Decimal(0)) + Decimal(sale)
        changes = sorted(history.get(seq, []))
        states = [(imported, changes[0][1] if changes else status)]
        for n, (_, _, changed) in enumerate(changes):
            states.append((changed, changes[n + 1][1] if n + 1 < len(changes) else status))
        group["ever"] += any(s in APPROVED for _, s in states)
        group["rev"] += status == "declined" and any(s in APPROVED for _, s in states[:-1])
        decisions = [n for n, (_, s) in enumerate(states) if s in DECIDED]
        if decisions and decisions[0] > 0:
            elapsed = instant(states[decisions[0]][0]) - instant(moment)
            group["days"].append(max(0, elapsed.days))
    out = {}
    for key, group in groups.items():
        by = group["by"]
        counts = {s: by.get(s, [0])[0] for s in STATUSES}
        decided = sum(counts[s] for s in DECIDED)
        approved = sum(counts[s] for s in APPROVED)
        out[key] = (
            *group["total"],
            tuple((s, *by.get(s, (0, Decimal(0), None))) for s in STATUSES),
            decided,
            approved,
            group["ever"],
            group["rev"],
            None if not decided else round(Decimal(approved) / Decimal(decided), 4),
            None if not group["ever"] else round(Decimal(group["rev"]) / Decimal(group["ever"]), 4),
            len(group["days"]),
            None if not group["days"] else Decimal(str(statistics.median(group["days"]))),
        )
    return out


def answered(query: SummaryQuery, rows: Sequence[Any]) -> dict[tuple[Any, ...], Any]:
    out = {}
    for row in rows:
        found = row.outcomes
        assert found is not None
        values = {
            "network": row.network,
            "status": row.status,
            "day": row.day,
            "month": row.month,
            "program": (row.network, row.program_external_id),
            "subId": row.sub_id,
            "programSlug": row.program_slug,
        }
        key = (*(values[name] for name in query.group_by), row.currency)
        assert key not in out
        out[key] = (
            row.count,
            Decimal(row.commission),
            None if row.sale is None else Decimal(row.sale),
            tuple(
                (s, t.count, Decimal(t.commission), None if t.sale is None else Decimal(t.sale))
                for s, t in found.by_status
            ),
            found.decided,
            found.approved,
            found.ever_approved,
            found.reversed,
            None if found.approval_rate is None else Decimal(found.approval_rate),
            None if found.reversal_rate is None else Decimal(found.reversal_rate),
            found.timed,
            None if found.median_days is None else Decimal(found.median_days),
        )
    return out


def queries(uid: str) -> list[SummaryQuery]:
    out = []
    for group_by in GROUPINGS:
        excluded = () if "status" in group_by else ("declined",)
        period = (
            {"since": dt.date(2026, 1, 31), "until": dt.date(2026, 2, 27)}
            if "day" in group_by
            else {}
        )
        out.append(SummaryQuery(uid, group_by, excluded=excluded, **period))
    out += [
        SummaryQuery(uid, ("program",), network="cj", excluded=("declined",)),
        SummaryQuery(uid, ("programSlug",), excluded=("declined",), program_links=LINKS),
        SummaryQuery(uid, ("programSlug", "network"), excluded=("declined",), program_links=LINKS),
        SummaryQuery(uid, ("subId",), status="approved"),
        SummaryQuery(uid, (), network="awin", program_external_id="p1", excluded=("declined",)),
        SummaryQuery(uid, ("network",), sub_id="", excluded=("declined",)),
        SummaryQuery(
            uid,
            ("month",),
            since=dt.date(2026, 2, 1),
            until=dt.date(2026, 3, 31),
            excluded=("declined",),
        ),
        SummaryQuery(
            uid, ("network",), updated_since="2026-03-02T00:00:00Z", excluded=("declined",)
        ),
    ]
    return out


async def pages_of(store: Any, query: SummaryQuery, limit: int) -> list[Any]:
    """Every page of a ranked grouping with outcomes, `limit` rows each, one after another."""
    out: list[Any] = []
    after = None
    while True:
        page = await store.read(
            outcomes.summary_with_outcomes,
            dataclasses.replace(query, limit=limit, after=after),
        )
        out += page
        if len(page) < limit:
            return out
        after = page[-1].rank(query.keys)


@pytest.mark.parametrize("seed", [3, 17, 58])
async def test_outcomes_equal_a_brute_force_from_the_histories(database: str, seed: int):
    clock = StepClock()
    store = await open_store(database, writable=True, readers=1, clock=clock)
    rng = random.Random(seed)
    try:
        uids = ["acc_one", "acc_two"]
        for uid in uids:
            await store.write(accounts.create, None, "pro", uid=uid)
        stored: dict[tuple[str, str, str], NewCommission] = {}
        for _ in range(30):
            clock.advance(rng.choice((60, 3600, 86_400 * rng.randint(1, 40))))
            uid, network = rng.choice(uids), rng.choice(NETWORKS)
            action = rng.random()
            known = [row for (u, n, _), row in stored.items() if (u, n) == (uid, network)]
            if action < 0.4 or not known:
                # An import or a sync's page: new rows and whole corrections of stored ones.
                ids = rng.sample([f"c{n}" for n in range(15)], rng.randint(1, 6))
                batch = [random_row(rng, i) for i in ids]
            else:
                # The network's answer moves statuses only.
                batch = [a_status_change(rng, row) for row in rng.sample(known, min(4, len(known)))]
            if rng.random() < 0.5:
                await store.write(commissions.upsert, uid, network, batch)
            else:
                half = len(batch) // 2
                await store.write(
                    commissions.upsert_stream, uid, network, iter((batch[:half], batch[half:]))
                )
            for row in batch:
                stored[uid, network, row.external_id] = row
        seen = []
        for uid in uids:
            for query in queries(uid):
                with localcontext() as exact:
                    exact.prec = 60
                    wanted = await brute_force(database, uid, query)
                got = await store.read(outcomes.summary_with_outcomes, query)
                assert answered(query, got) == wanted, query
                if query.ranked:
                    # Pages read only their groups' commissions: they add up to the whole.
                    assert await pages_of(store, query, 2) == got, query
                seen += got
        # The draws reach every case the formulas tell apart.
        assert any(row.outcomes.reversed for row in seen)
        assert any(row.outcomes.timed > 1 for row in seen)
        assert any(row.count == 0 for row in seen)
    finally:
        await store.close()


async def test_ranked_pages_with_outcomes_cover_every_group_once(database: str):
    """A grouping by program with outcomes pages every group (those wholly declined too)
    once, largest commission first within each currency."""
    clock = StepClock()
    store = await open_store(database, writable=True, readers=1, clock=clock)
    rng = random.Random(5)
    try:
        await store.write(accounts.create, None, "pro", uid="acc_pages")
        rows = [random_row(rng, f"c{n}") for n in range(40)]
        await store.write(commissions.upsert, "acc_pages", "awin", rows)
        whole = SummaryQuery("acc_pages", ("program", "subId"), excluded=("declined",))
        everything = await store.read(outcomes.summary_with_outcomes, whole)
        seen = []
        after = None
        while True:
            query = SummaryQuery(
                "acc_pages", ("program", "subId"), excluded=("declined",), limit=4, after=after
            )
            page = await store.read(outcomes.summary_with_outcomes, query)
            seen += page[:3]
            if len(page) <= 3:
                break
            after = page[2].rank(whole.columns)
        assert seen == everything
        ranks = [row.rank(whole.columns) for row in everything]
        assert ranks == sorted(ranks)
    finally:
        await store.close()


@given(st.integers(0, 50), st.integers(0, 50))
def test_a_rate_is_the_ratio_rounded_half_to_even(part: int, extra: int):
    whole = part + extra
    got = rate(part, whole)
    if whole == 0:
        assert got is None
        return
    assert got is not None
    assert len(got.partition(".")[2]) == 4
    assert abs(Decimal(got) - Decimal(part) / Decimal(whole)) <= Decimal("0.00005")


@given(st.lists(st.integers(0, 400), max_size=30))
def test_the_median_is_exact(values: list[int]):
    got = median(values)
    if not values:
        assert got is None
    else:
        assert got is not None
        assert Decimal(got) == Decimal(str(statistics.median(values)))


def test_a_fate_follows_the_states():
    """Imported pending, approved a day and a half after the sale, then declined: reversed,
    timed at one whole day; a commission first stored decided is not timed."""
    sale = "2026-01-01T00:00:00Z"
    history = [("pending", "2026-01-02T12:00:00Z"), ("approved", "2026-01-10T00:00:00Z")]
    fate = outcomes.fate("declined", sale, "2026-01-01T06:00:00Z", history)
    assert fate == outcomes.Fate(ever_approved=True, reversed=True, days=1)
    assert outcomes.fate("paid", sale, "2026-03-01T00:00:00Z", []) == outcomes.Fate(
        ever_approved=True, reversed=False, days=None
    )
    # Decided, then pending again: its first decision still counts; not reversed.
    back = outcomes.fate(
        "pending",
        sale,
        sale,
        [("pending", "2026-01-05T00:00:00Z"), ("declined", "2026-01-06T00:00:00Z")],
    )
    assert back == outcomes.Fate(ever_approved=False, reversed=False, days=4)
    # Recorded before the sale's stated instant: 0 days, never fewer.
    early = outcomes.fate("approved", "2026-02-01T00:00:00Z", sale, [("pending", sale)])
    assert early.days == 0
