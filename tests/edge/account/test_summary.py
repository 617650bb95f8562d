"""GET /v1/commissions/summary through a served edge, on both stores: exact totals against a
brute-force sum over the rows, per currency, for every grouping and filter; no row mixes
currencies; bad values name their parameter; 401, 429 and 503 in the one error shape."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import random
from decimal import Decimal, localcontext
from typing import Any

import pytest
from support.accountkit import Seeded, check_resource, new_account
from support.apierror import assert_api_error

from contract.resources import COMMISSION_TOTAL, SUMMARY_GROUPS
from contract.vocabulary import COMMISSION_STATUSES
from store import AccountStore, commissions, open_store
from store.base import NewCommission

NETWORKS = ("awin", "cj", "impact")
CURRENCIES = ("EUR", "GBP", "USD")
START = dt.datetime(2025, 12, 20, tzinfo=dt.UTC)
PATH = "/v1/commissions/summary"


def make_rows(rng: random.Random, count: int, prefix: str) -> list[tuple[str, NewCommission]]:
    """Commissions over some 70 days (two month boundaries), three currencies."""
    out = []
    for index in range(count):
        when = START + dt.timedelta(minutes=rng.randrange(70 * 24 * 60))
        out.append(
            (
                rng.choice(NETWORKS),
                NewCommission(
                    external_id=f"{prefix}-{index}",
                    status=rng.choice(COMMISSION_STATUSES),
                    raw_status=None,
                    commission_amount=rng.choice(
                        (f"{rng.randrange(1, 100000) / 100:.2f}", "0.000000000001", "-1.5")
                    ),
                    currency=rng.choice(CURRENCIES),
                    transacted_at=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    sale_amount=None if rng.random() < 0.3 else f"{rng.randrange(10**6)}.5",
                ),
            )
        )
    return out


async def insert(store: AccountStore, uid: str, rows: list[tuple[str, NewCommission]]) -> None:
    for network in NETWORKS:
        await store.write(commissions.upsert, uid, network, [r for n, r in rows if n == network])


def reference(
    rows: list[tuple[str, NewCommission]], group_by: tuple[str, ...], **filters: str
) -> list[dict[str, Any]]:
    """Brute force over the rows: filter, group, sum with exact decimals."""
    groups: dict[tuple[str, ...], list[Any]] = {}
    with localcontext() as exact:
        exact.prec = 60
        for network, r in rows:
            day = r.transacted_at[:10]
            values = {"network": network, "status": r.status, "day": day, "month": day[:7]}
            if any(values.get(k) != v for k, v in filters.items() if k in values):
                continue
            # Neither filtered nor grouped by status: declined money is not in the totals.
            if r.status == "declined" and "status" not in filters and "status" not in group_by:
                continue
            if "from" in filters and day < filters["from"]:
                continue
            if "to" in filters and day > filters["to"]:
                continue
            key = (*(values[name] for name in group_by), r.currency)
            totals = groups.setdefault(key, [0, Decimal(0), None])
            totals[0] += 1
            totals[1] += Decimal(r.commission_amount)
            if r.sale_amount is not None:
                totals[2] = (totals[2] or Decimal(0)) + Decimal(r.sale_amount)
    out = []
    for key in sorted(groups):
        count, commission, sale = groups[key]
        item: dict[str, Any] = dict.fromkeys(SUMMARY_GROUPS)
        item.update(zip(group_by, key, strict=False))
        item.update(currency=key[-1], count=count, commission=commission, sale=sale)
        out.append(item)
    return out


def exact(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer's rows with amounts as Decimals (parsed from the JSON text exactly)."""
    return [
        {
            **item,
            "commission": Decimal(item["commission"]),
            "sale": None if item["sale"] is None else Decimal(item["sale"]),
        }
        for item in body["data"]
    ]


async def summary(client, auth: dict[str, str], **params: str) -> dict[str, Any]:
    resp = await client.get(PATH, params=params, headers=auth)
    assert resp.status == 200, await resp.text()
    assert resp.headers["Cache-Control"] == "private, no-store"
    assert resp.headers["X-Request-Id"]
    # Decimals, not floats: the sums are compared exactly.
    body = await resp.json(loads=lambda text: json.loads(text, parse_float=Decimal))
    assert list(body) == ["data"]
    for item in body["data"]:
        numbers = {k: None if item[k] is None else 1.0 for k in ("commission", "sale")}
        check_resource({**item, **numbers}, COMMISSION_TOTAL)
    return body


@pytest.fixture
async def dataset(admin_store) -> tuple[Seeded, list[tuple[str, NewCommission]]]:
    rng = random.Random(24)
    owner = await new_account(admin_store)
    rows = make_rows(rng, 600, "c")
    await insert(admin_store, owner.uid, rows)
    stranger = await new_account(admin_store)  # never counted in the owner's totals
    await insert(admin_store, stranger.uid, make_rows(rng, 200, "c"))
    return owner, rows


GROUPINGS = [
    (),
    ("network",),
    ("status",),
    ("month",),
    ("month", "network"),
    ("network", "month"),
    ("status", "network", "month"),
    ("day",),
    ("day", "status"),
]


async def test_totals_are_exact_per_group_and_currency(edge_client, dataset):
    owner, rows = dataset
    client = await edge_client()
    period = {"from": "2025-12-25", "to": "2026-02-10"}
    for group_by in GROUPINGS:
        params = {"groupBy": ",".join(group_by)} if group_by else {}
        if "day" in group_by:
            params.update(period)
        body = await summary(client, owner.auth, **params)
        filters = period if "day" in group_by else {}
        assert exact(body) == reference(rows, group_by, **filters), group_by
        keys = [tuple(item[k] for k in (*group_by, "currency")) for item in body["data"]]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)  # one currency a row


@pytest.mark.parametrize(
    "filters",
    [
        {"network": "cj"},
        {"status": "approved"},
        {"from": "2026-01-01"},
        {"to": "2025-12-31"},
        {"network": "awin", "status": "paid", "from": "2026-01-10", "to": "2026-01-20"},
        {"network": "nowhere"},
        # Part-months at either end (daily totals) around whole months (monthly totals).
        {"from": "2025-12-25", "to": "2026-02-10"},
        {"from": "2025-12-15"},
        {"to": "2026-01-30"},
        {"from": "2025-12-01", "to": "2026-01-31"},
    ],
)
async def test_filters_match_the_list(edge_client, dataset, filters):
    owner, rows = dataset
    client = await edge_client()
    body = await summary(client, owner.auth, groupBy="month,status", **filters)
    assert exact(body) == reference(rows, ("month", "status"), **filters)


class Clock:
    def __init__(self) -> None:
        self.moment = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.moment


async def test_updated_since_sums_only_the_rows_changed_since(
    edge_client, admin_store, account_config
):
    owner = await new_account(admin_store)
    clock = Clock()
    writer = await open_store(account_config.database, writable=True, readers=1, clock=clock)
    try:
        first = [(n, r) for n, r in make_rows(random.Random(1), 40, "a")]
        await insert(writer, owner.uid, first)
        clock.moment += dt.timedelta(hours=1)
        moment = clock.moment.strftime("%Y-%m-%dT%H:%M:%SZ")
        changed = [(n, r) for n, r in make_rows(random.Random(2), 20, "b")]
        await insert(writer, owner.uid, changed)
    finally:
        await writer.close()
    client = await edge_client()
    body = await summary(client, owner.auth, groupBy="network", updatedSince=moment)
    assert exact(body) == reference(changed, ("network",))
    everything = await summary(client, owner.auth, groupBy="network")
    assert exact(everything) == reference(first + changed, ("network",))


async def test_corrections_and_status_changes_move_the_totals(edge_client, admin_store):
    owner = await new_account(admin_store)
    row = NewCommission("x", "pending", None, "10.10", "EUR", "2026-01-05T10:00:00Z")
    await admin_store.write(commissions.upsert, owner.uid, "awin", [row])
    client = await edge_client()
    fixed = NewCommission("x", "approved", None, "12.3", "USD", "2026-01-05T10:00:00Z")
    await admin_store.write(commissions.upsert, owner.uid, "awin", [fixed])
    body = await summary(client, owner.auth, groupBy="status")
    assert body["data"] == [
        {
            "network": None,
            "status": "approved",
            "day": None,
            "month": None,
            "currency": "USD",
            "count": 1,
            "commission": Decimal("12.3"),
            "sale": None,
        }
    ]


async def test_an_account_without_commissions_has_no_rows(edge_client, seeded):
    client = await edge_client()
    assert (await summary(client, seeded.auth, groupBy="network"))["data"] == []


BAD_GROUP_BY = ["currency", "Network", "network,network", "network,", ",", "a,b,c,d,e", "x" * 300]


@pytest.mark.parametrize("value", BAD_GROUP_BY)
async def test_bad_group_by_names_the_parameter(edge_client, seeded, value):
    client = await edge_client()
    resp = await client.get(PATH, params={"groupBy": value}, headers=seeded.auth)
    await assert_api_error(resp, 400, "invalid_parameter", "groupBy")


@pytest.mark.parametrize(
    ("query", "code", "param"),
    [
        ("groupBy=network&groupBy=network", "invalid_parameter", "groupBy"),
        ("groupBy=", "invalid_parameter", "groupBy"),
        ("groupBy=day", "invalid_parameter", "groupBy"),
        ("groupBy=day&from=2025-01-01&to=2026-01-02", "invalid_parameter", "groupBy"),
        ("status=nope&groupBy=nope", "invalid_parameter", "status"),
        ("from=2026-02-01&to=2026-01-01", "invalid_date_range", None),
        ("limit=10", "unknown_parameter", "limit"),
        ("cursor=abc", "unknown_parameter", "cursor"),
        ("updatedSince=2026-01-01", "invalid_parameter", "updatedSince"),
    ],
)
async def test_bad_queries_in_the_one_shape(edge_client, seeded, query, code, param):
    client = await edge_client()
    resp = await client.get(f"{PATH}?{query}", headers=seeded.auth)
    await assert_api_error(resp, 400, code, param)


async def test_a_day_summary_of_366_days_is_answered(edge_client, seeded):
    client = await edge_client()
    body = await summary(
        client, seeded.auth, groupBy="day", **{"from": "2024-01-01", "to": "2024-12-31"}
    )
    assert body["data"] == []


async def test_large_answers_are_gzip_coded(edge_client, dataset):
    owner, _ = dataset
    client = await edge_client()
    resp = await client.get(
        PATH,
        params={"groupBy": "day,network,status", "from": "2025-12-20", "to": "2026-02-28"},
        headers={**owner.auth, "Accept-Encoding": "gzip"},
    )
    assert resp.status == 200 and resp.headers["Content-Encoding"] == "gzip"


def test_every_grouping_order_is_valid():
    from contract.endpoints import COMMISSION_SUMMARY
    from edge.request.query import parse_query

    for size in range(1, len(SUMMARY_GROUPS) + 1):
        for order in itertools.permutations(SUMMARY_GROUPS, size):
            parsed = parse_query(COMMISSION_SUMMARY, [("groupBy", ",".join(order))])
            assert parsed["groupBy"] == order
            # The same list sent as the parameter repeated (a generated client's array), or
            # split anywhere between the two forms, means the same.
            repeated = parse_query(COMMISSION_SUMMARY, [("groupBy", name) for name in order])
            assert repeated["groupBy"] == order
            mixed = [("groupBy", ",".join(order[:1])), *(("groupBy", n) for n in order[1:])]
            assert parse_query(COMMISSION_SUMMARY, mixed)["groupBy"] == order


@pytest.mark.parametrize(
    "items",
    [
        [("groupBy", "month"), ("groupBy", "month")],
        [("groupBy", "month"), ("groupBy", "")],
        [("groupBy", "month,network"), ("groupBy", "network")],
        [("groupBy", "month"), ("groupBy", "currency")],
        [("groupBy", n) for n in ("network", "status", "day", "month", "network")],
    ],
)
def test_a_repeated_group_by_is_checked_as_one_list(items):
    from contract.endpoints import COMMISSION_SUMMARY
    from edge.http.errors import ApiError
    from edge.request.query import parse_query

    with pytest.raises(ApiError) as refused:
        parse_query(COMMISSION_SUMMARY, items)
    assert (refused.value.code, refused.value.param) == ("invalid_parameter", "groupBy")


async def test_a_repeated_group_by_is_answered_as_the_comma_list(edge_client, dataset):
    owner, _ = dataset
    client = await edge_client()
    comma = await client.get(PATH, params={"groupBy": "month,network"}, headers=owner.auth)
    repeated = await client.get(
        PATH, params=[("groupBy", "month"), ("groupBy", "network")], headers=owner.auth
    )
    assert comma.status == repeated.status == 200
    assert await comma.read() == await repeated.read()


async def test_a_total_not_split_by_status_leaves_declined_commissions_out(
    edge_client, admin_store
):
    """One total per currency reads as earnings: a declined commission is not in it, and is
    there when asked for by status."""
    owner = await new_account(admin_store)
    rows = [
        NewCommission(f"d-{status}", status, None, amount, "EUR", "2026-01-05T10:00:00Z")
        for status, amount in (("pending", "10"), ("approved", "5.5"), ("declined", "100"))
    ]
    await admin_store.write(commissions.upsert, owner.uid, "awin", rows)
    client = await edge_client()

    def totals(body: dict[str, Any]) -> list[tuple[str | None, int, Decimal]]:
        return [(r["status"], r["count"], r["commission"]) for r in body["data"]]

    assert totals(await summary(client, owner.auth)) == [(None, 2, Decimal("15.5"))]
    assert totals(await summary(client, owner.auth, groupBy="status")) == [
        ("approved", 1, Decimal("5.5")),
        ("declined", 1, Decimal("100")),
        ("pending", 1, Decimal("10")),
    ]
    assert totals(await summary(client, owner.auth, status="declined")) == [
        (None, 1, Decimal("100"))
    ]
