"""GET /v1/commissions/summary through a served edge, on both stores: exact totals against a
brute-force sum over the rows, per currency, for every grouping and filter; no row mixes
currencies; bad values name their parameter; 401, 429 and 503 in the one error shape."""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import json
import random
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any

import pytest
from support.accountkit import Seeded, check_resource, new_account
from support.apierror import assert_api_error
from support.distwriter import publish, random_programme
from support.storedrows import StoredRows

from contract.resources import (
    COMMISSION_TERMS,
    COMMISSION_TOTAL,
    RANKED_GROUPS,
    SUMMARY_GROUPS,
    compact,
)
from contract.vocabulary import COMMISSION_STATUSES
from store import AccountStore, commissions, open_store, ranks
from store.base import NewCommission

NETWORKS = ("awin", "cj", "impact")
CURRENCIES = ("EUR", "GBP", "USD")
START = dt.datetime(2025, 12, 20, tzinfo=dt.UTC)
PATH = "/v1/commissions/summary"
PROGRAMS = (None, "10", "11", "12", "x y")
SUB_IDS = (None, "", "home", "blog", "news", "a,b")
# Whole months and a month to date: what a month's ranking answers.
MONTHS = (
    ("2025-12-01", "2025-12-31"),
    ("2026-01-01", "2026-01-31"),
    ("2026-02-01", "2026-02-28"),
    ("2026-01-01", "2026-01-20"),
)
# The query names of the filters on a row's fields besides network and status.
DIMENSIONS = {"programExternalId": "program_external_id", "subId": "sub_id"}


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
                    # A few programmes (one without an id), names that change over time,
                    # sub-ids with none and an empty one among them.
                    program_external_id=rng.choice(PROGRAMS),
                    program_name=rng.choice((None, "Shop", f"Shop {rng.randrange(3)}")),
                    sub_id=rng.choice(SUB_IDS),
                ),
            )
        )
    return out


async def insert(store: AccountStore, uid: str, rows: list[tuple[str, NewCommission]]) -> None:
    for network in NETWORKS:
        await store.write(commissions.upsert, uid, network, [r for n, r in rows if n == network])


def latest_names(rows: list[tuple[str, NewCommission]]) -> dict[tuple[str, Any], Any]:
    """Each programme's name on its newest commission (transactedAt, then insertion)."""
    names: dict[tuple[str, Any], tuple[str, Any]] = {}
    for network, r in rows:
        key = (network, r.program_external_id)
        if key not in names or r.transacted_at >= names[key][0]:
            names[key] = (r.transacted_at, r.program_name)
    return {key: name for key, (_, name) in names.items()}


def reference(
    rows: list[tuple[str, NewCommission]],
    group_by: tuple[str, ...],
    links: dict[tuple[str, str], str] | None = None,
    **filters: str,
) -> list[dict[str, Any]]:
    """Brute force over the rows: filter, group, sum with exact decimals; rows of a grouping
    by program, subId or programSlug by currency, largest commission first, then the keys.
    `links`: (network, programExternalId) -> programSlug of the served build."""
    groups: dict[tuple[Any, ...], list[Any]] = {}
    names = latest_names(rows)
    with localcontext() as exact:
        exact.prec = 60
        for network, r in rows:
            day = r.transacted_at[:10]
            values: dict[str, Any] = {
                "network": network,
                "status": r.status,
                "day": day,
                "month": day[:7],
                "program": (network, r.program_external_id),
                "subId": r.sub_id,
                "programSlug": (links or {}).get((network, r.program_external_id)),
            }
            if any(values.get(k) != v for k, v in filters.items() if k in values):
                continue
            if any(getattr(r, f) != filters[k] for k, f in DIMENSIONS.items() if k in filters):
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
    for key, (count, commission, sale) in groups.items():
        item: dict[str, Any] = dict.fromkeys((*SUMMARY_GROUPS, "programExternalId"))
        del item["program"]
        item["programName"] = None
        for name, value in zip(group_by, key, strict=False):
            if name == "program":
                item["network"], item["programExternalId"] = value
                item["programName"] = names[value]
            else:
                item[name] = value
        item.update(currency=key[-1], count=count, commission=commission, sale=sale)
        out.append((key, item))

    def none_first(value: Any) -> Any:
        if isinstance(value, tuple):
            return tuple(none_first(v) for v in value)
        return (value is not None, value or "")

    if any(name in RANKED_GROUPS for name in group_by):
        out.sort(key=lambda p: (p[1]["currency"], -p[1]["commission"], none_first(p[0][:-1])))
    else:
        out.sort(key=lambda p: p[0])
    return [item for _, item in out]


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
    ranked = any(name in params.get("groupBy", "").split(",") for name in RANKED_GROUPS)
    assert list(body) == (["data", "page"] if ranked else ["data"])
    for item in body["data"]:
        numbers = {k: None if item[k] is None else 1.0 for k in ("commission", "sale")}
        check_resource({**item, **numbers}, COMMISSION_TOTAL)
    return body


async def write_dataset(store: AccountStore) -> tuple[Seeded, list[tuple[str, NewCommission]]]:
    rng = random.Random(24)
    owner = await new_account(store)
    rows = make_rows(rng, 600, "c")
    await insert(store, owner.uid, rows)
    stranger = await new_account(store)  # never counted in the owner's totals
    await insert(store, stranger.uid, make_rows(rng, 200, "c"))
    return owner, rows


@pytest.fixture(scope="module")
def stored_rows(tmp_path_factory: pytest.TempPathFactory) -> StoredRows:
    """`dataset`'s rows, written once per backend and copied into each test's database."""
    return StoredRows(write_dataset, tmp_path_factory.mktemp("summary"))


@pytest.fixture
def dataset(
    stored_rows: StoredRows, account_config
) -> tuple[Seeded, list[tuple[str, NewCommission]]]:
    return stored_rows.value(account_config.database)


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
    ("program",),
    ("subId",),
    ("month", "program"),
    ("program", "subId"),
    ("subId", "status"),
    ("network", "program"),
    ("program", "day"),
]


async def test_totals_are_exact_per_group_and_currency(edge_client, dataset):
    owner, rows = dataset
    client = await edge_client()
    period = {"from": "2025-12-25", "to": "2026-02-10"}
    for group_by in GROUPINGS:
        params = {"groupBy": ",".join(group_by)} if group_by else {}
        if "day" in group_by:
            params.update(period)
        filters = period if "day" in group_by else {}
        if any(name in RANKED_GROUPS for name in group_by):
            got = await every_page(client, owner.auth, **params)
            assert got == reference(rows, group_by, **filters), group_by
            continue
        body = await summary(client, owner.auth, **params)
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
        {"network": "awin", "programExternalId": "10"},
        {"network": "cj", "programExternalId": "x y", "from": "2025-12-25"},
        {"subId": "home"},
        {"subId": "a,b", "status": "pending", "to": "2026-01-15"},
        {"network": "impact", "programExternalId": "11", "subId": "blog"},
    ],
)
async def test_filters_match_the_list(edge_client, dataset, filters):
    owner, rows = dataset
    client = await edge_client()
    body = await summary(client, owner.auth, groupBy="month,status", **filters)
    assert exact(body) == reference(rows, ("month", "status"), **filters)
    ranked = await every_page(client, owner.auth, groupBy="program,subId", **filters)
    assert ranked == reference(rows, ("program", "subId"), **filters)
    # The list takes the same filters: its rows are the ones summed.
    listed = await list_all(client, owner.auth, **filters)
    assert sorted(listed) == sorted(
        f"{n}:{r.external_id}"
        for n, r in rows
        if all(
            {"network": n, "status": r.status, **{k: getattr(r, f) for k, f in DIMENSIONS.items()}}[
                k
            ]
            == v
            for k, v in filters.items()
            if k not in ("from", "to")
        )
        and filters.get("from", "0") <= r.transacted_at[:10] <= filters.get("to", "9")
    )


async def list_all(client, auth: dict[str, str], **params: str) -> list[str]:
    """network:externalId of every commission /v1/commissions lists, page by page."""
    out: list[str] = []
    cursor = None
    while True:
        query = {**params, "limit": "100", **({"cursor": cursor} if cursor else {})}
        resp = await client.get("/v1/commissions", params=query, headers=auth)
        assert resp.status == 200, await resp.text()
        body = await resp.json()
        out += [f"{c['network']}:{c['externalId']}" for c in body["data"]]
        cursor = body["page"]["nextCursor"]
        if cursor is None:
            return out


async def every_page(client, auth: dict[str, str], limit: int = 100, **params: str):
    """The rows of a ranked summary, page after page, as `exact` gives them."""
    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = {**params, "limit": str(limit), **({"cursor": cursor} if cursor else {})}
        body = await summary(client, auth, **query)
        assert body["page"]["limit"] == limit and len(body["data"]) <= limit
        seen += exact(body)
        cursor = body["page"]["nextCursor"]
        assert (cursor is not None) == body["page"]["hasMore"]
        if cursor is None:
            return seen


@pytest.mark.parametrize("group_by", ["program", "subId", "subId,month", "status,program"])
async def test_ranked_pages_walk_every_row_once(edge_client, dataset, group_by):
    owner, rows = dataset
    client = await edge_client()
    seen = await every_page(client, owner.auth, limit=7, groupBy=group_by)
    assert seen == reference(rows, tuple(group_by.split(",")))


async def test_a_cursor_is_bound_to_its_grouping_and_filters(edge_client, dataset):
    owner, _ = dataset
    client = await edge_client()
    body = await summary(client, owner.auth, groupBy="subId", limit="2")
    cursor = body["page"]["nextCursor"]
    for other in ({"groupBy": "program"}, {"groupBy": "subId", "network": "cj"}):
        resp = await client.get(PATH, params={**other, "cursor": cursor}, headers=owner.auth)
        await assert_api_error(resp, 400, "invalid_cursor", "cursor")


async def test_random_writes_keep_the_dimension_totals_exact(edge_client, admin_store):
    """Imports, corrections (amount, currency, programme, sub-id, day moved) and status
    changes in random order: the totals equal the brute-force sum after each round."""
    rng = random.Random(34)
    owner = await new_account(admin_store)
    rows = make_rows(rng, 150, "r")
    await insert(admin_store, owner.uid, rows)
    client = await edge_client()
    for round_ in range(4):
        for index in rng.sample(range(len(rows)), 40):
            network, old = rows[index]
            new = make_rows(rng, 1, "n")[0][1]
            change = rng.choice(("status", "amount", "program", "sub", "all"))
            fields = {
                "status": {"status": new.status},
                "amount": {"commission_amount": new.commission_amount, "currency": new.currency},
                "program": {
                    "program_external_id": new.program_external_id,
                    "program_name": new.program_name,
                },
                "sub": {"sub_id": new.sub_id},
                "all": {
                    f.name: getattr(new, f.name)
                    for f in dataclasses.fields(new)
                    if f.name != "external_id"
                },
            }[change]
            rows[index] = (network, dataclasses.replace(old, **fields))
        fresh = make_rows(rng, 20, f"i{round_}")
        rows += fresh
        await insert(admin_store, owner.uid, rows)
        for group_by in (("program",), ("subId", "status"), ("month", "program", "subId")):
            got = await every_page(client, owner.auth, groupBy=",".join(group_by))
            assert got == reference(rows, group_by), (round_, group_by)
        # A month by programme or sub-id: from the totals while the month is stale, from
        # its ranking once rebuilt (store.ranks), page by page, to the same rows.
        for rebuilt in (False, True):
            if rebuilt:
                await ranks.refresh(admin_store)
            for name, (since, until) in itertools.product(("program", "subId"), MONTHS):
                got = await every_page(
                    client, owner.auth, limit=7, groupBy=name, **{"from": since, "to": until}
                )
                want = reference(rows, (name,), **{"from": since, "to": until})
                assert got == want, (round_, rebuilt, name, since, until)
        body = await summary(client, owner.auth, groupBy="network,status")
        assert exact(body) == reference(rows, ("network", "status"))


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
            "programExternalId": None,
            "programName": None,
            "subId": None,
            "programSlug": None,
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
        ("limit=10", "invalid_parameter", "limit"),
        ("groupBy=month&limit=10", "invalid_parameter", "limit"),
        ("groupBy=network&cursor=abc", "invalid_parameter", "cursor"),
        ("groupBy=program&cursor=abc", "invalid_cursor", "cursor"),
        ("groupBy=program&limit=0", "invalid_parameter", "limit"),
        ("groupBy=subId&limit=101", "invalid_parameter", "limit"),
        ("programExternalId=10", "invalid_parameter", "programExternalId"),
        ("programExternalId=10&groupBy=program", "invalid_parameter", "programExternalId"),
        ("subId=", "invalid_parameter", "subId"),
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


# --- The directory's programmes: programSlug, read through the served build's links ------

# (network, programExternalId) -> slug, as a build's api/program-links.json gives them: two
# pairs of one programme, a programme id that is another network's too, one with a space.
LINKS = {
    ("awin", "10"): "alpha",
    ("cj", "10"): "alpha",
    ("impact", "11"): "beta",
    ("cj", "x y"): "beta",
    ("awin", "12"): "gamma",
}
LINKED = ("alpha", "beta", "gamma", "delta")  # delta lists no network


@pytest.fixture
def linked_build(account_config) -> dict[str, dict[str, Any]]:
    """A build of LINKED with LINKS in the edge's dist/, before the edge starts."""
    programmes = [random_programme(random.Random(n), slug) for n, slug in enumerate(LINKED)]
    publish(Path(account_config.dist), programmes, "links-1", links=LINKS)
    return {p["slug"]: p for p in programmes}


SLUG_GROUPINGS = [
    ("programSlug",),
    ("programSlug", "status"),
    ("month", "programSlug"),
    ("network", "programSlug"),
    ("program", "programSlug"),
    ("programSlug", "subId"),
]


async def test_program_slug_totals_are_exact_per_currency(edge_client, dataset, linked_build):
    owner, rows = dataset
    client = await edge_client()
    for group_by in SLUG_GROUPINGS:
        got = await every_page(client, owner.auth, groupBy=",".join(group_by))
        assert got == reference(rows, group_by, LINKS), group_by
    # Unlinked commissions (no programme id, or a pair no programme lists) make one row a
    # currency, with programSlug null.
    got = await every_page(client, owner.auth, groupBy="programSlug")
    assert {row["programSlug"] for row in got} == {"alpha", "beta", "gamma", None}


@pytest.mark.parametrize(
    "filters",
    [
        {"programSlug": "alpha"},
        {"programSlug": "beta", "network": "cj"},
        {"programSlug": "alpha", "status": "approved", "from": "2026-01-01"},
        {"programSlug": "gamma", "subId": "home", "to": "2026-01-20"},
        {"programSlug": "delta"},  # lists no network: nothing
        {"programSlug": "no-such-programme"},  # no published programme: nothing
    ],
)
async def test_the_program_slug_filter_matches_the_list(
    edge_client, dataset, linked_build, filters
):
    owner, rows = dataset
    client = await edge_client()
    body = await summary(client, owner.auth, groupBy="month,status", **filters)
    assert exact(body) == reference(rows, ("month", "status"), LINKS, **filters)
    ranked = await every_page(client, owner.auth, limit=3, groupBy="programSlug,subId", **filters)
    assert ranked == reference(rows, ("programSlug", "subId"), LINKS, **filters)
    listed = await list_all(client, owner.auth, **filters)
    expected = [
        f"{n}:{r.external_id}"
        for n, r in rows
        if LINKS.get((n, r.program_external_id)) == filters["programSlug"]
        and all(
            {"network": n, "status": r.status, "subId": r.sub_id}[k] == v
            for k, v in filters.items()
            if k in ("network", "status", "subId")
        )
        and filters.get("from", "0") <= r.transacted_at[:10] <= filters.get("to", "9")
    ]
    assert sorted(listed) == sorted(expected)


@pytest.mark.parametrize("limit", [1, 2, 5])
async def test_program_slug_pages_walk_every_row_once(edge_client, dataset, linked_build, limit):
    owner, rows = dataset
    client = await edge_client()
    seen = await every_page(client, owner.auth, limit=limit, groupBy="programSlug")
    assert seen == reference(rows, ("programSlug",), LINKS)
    keys = [(row["currency"], row["programSlug"]) for row in seen]
    assert len(set(keys)) == len(keys)


async def test_without_a_build_nothing_is_linked(edge_client, dataset):
    owner, rows = dataset
    client = await edge_client()
    got = await every_page(client, owner.auth, groupBy="programSlug")
    assert got == reference(rows, ("programSlug",), {})
    assert {row["programSlug"] for row in got} == {None}
    body = await summary(client, owner.auth, programSlug="alpha", groupBy="status")
    assert body["data"] == []


async def test_include_terms_puts_the_advertised_terms_beside_each_row(
    edge_client, dataset, linked_build
):
    owner, _ = dataset
    client = await edge_client()
    body = await summary(client, owner.auth, groupBy="programSlug", include="terms", limit="100")
    assert body["data"]
    for row in body["data"]:
        slug = row["programSlug"]
        if slug is None:
            assert row["terms"] is None
            continue
        programme = linked_build[slug]
        assert row["terms"] == {
            "name": programme["name"],
            "url": f"/v1/programs/{slug}",
            "commission": programme["commission"],
            "commissionTerms": json.loads(
                json.dumps(compact(programme["commissionTerms"], COMMISSION_TERMS)),
                parse_float=Decimal,
            ),
            "cookieDays": programme["cookieDays"],
            "holdbackDays": programme["holdbackDays"],
            "currency": programme["currency"],
        }
    # The same rows as without include, the terms aside.
    plain = await summary(client, owner.auth, groupBy="programSlug", limit="100")
    assert [{k: v for k, v in row.items() if k != "terms"} for row in body["data"]] == plain["data"]


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ({"include": "terms"}, "include"),  # needs groupBy=programSlug
        ({"include": "terms", "groupBy": "program"}, "include"),
        ({"include": "nothing", "groupBy": "programSlug"}, "include"),
        ({"include": "terms,terms", "groupBy": "programSlug"}, "include"),
        ({"include": "terms", "groupBy": "programSlug", "format": "csv"}, "include"),
        ({"programSlug": "Alpha"}, "programSlug"),
        ({"programSlug": "a" * 65}, "programSlug"),
        ({"programSlug": "a--b"}, "programSlug"),
    ],
)
async def test_bad_program_slug_and_include_name_their_parameter(edge_client, seeded, query, param):
    client = await edge_client()
    resp = await client.get(PATH, params=query, headers=seeded.auth)
    await assert_api_error(resp, 400, "invalid_parameter", param)
    if "include" not in query:
        resp = await client.get("/v1/commissions", params=query, headers=seeded.auth)
        await assert_api_error(resp, 400, "invalid_parameter", param)
