"""GET /v1/commissions/summary?include=outcomes through a served edge, on both stores: each
row is the plain summary's row with its realised terms (a wholly declined group as a row of
count 0), exact per status against a brute force over the rows after status changes; pages
walk every row once; bad include values and include on an export name the parameter."""

from __future__ import annotations

import datetime as dt
import json
import random
from decimal import Decimal
from typing import Any

import pytest
from support.accountkit import check_resource, new_account
from support.apierror import assert_api_error

from contract.resources import COMMISSION_TOTAL
from contract.vocabulary import COMMISSION_STATUSES
from store import commissions
from store.base import NewCommission

PATH = "/v1/commissions/summary"
NETWORKS = ("awin", "cj")


def make_rows(rng: random.Random, count: int) -> list[tuple[str, NewCommission]]:
    out = []
    for index in range(count):
        when = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=rng.randrange(1000))
        out.append(
            (
                rng.choice(NETWORKS),
                NewCommission(
                    external_id=f"o-{index}",
                    status=rng.choice(("pending", "approved", "declined")),
                    raw_status=None,
                    commission_amount=f"{rng.randrange(1, 10000) / 100:.2f}",
                    currency=rng.choice(("EUR", "USD")),
                    transacted_at=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    sale_amount=rng.choice((None, "10.5")),
                    program_external_id=rng.choice(("1", "2", "3", None)),
                    program_name="Shop",
                    sub_id=rng.choice(("home", "blog", None)),
                ),
            )
        )
    return out


@pytest.fixture
async def moved(admin_store):
    """An account's rows, then a second answer of their networks moving some statuses:
    pending to approved or declined, approved to declined (a reversal) or paid."""
    rng = random.Random(8)
    owner = await new_account(admin_store)
    first = make_rows(rng, 150)
    for network in NETWORKS:
        await admin_store.write(
            commissions.upsert, owner.uid, network, [r for n, r in first if n == network]
        )
    moves = {"pending": ("approved", "declined"), "approved": ("declined", "paid")}
    second = []
    for network, row in first:
        if row.status in moves and rng.random() < 0.6:
            row = NewCommission(**{**_fields(row), "status": rng.choice(moves[row.status])})
        second.append((network, row))
    for network in NETWORKS:
        await admin_store.write(
            commissions.upsert, owner.uid, network, [r for n, r in second if n == network]
        )
    return owner, first, second


def _fields(row: NewCommission) -> dict[str, Any]:
    return {name: getattr(row, name) for name in NewCommission.__dataclass_fields__}


def expected(
    first: list[tuple[str, NewCommission]],
    second: list[tuple[str, NewCommission]],
    group_by: tuple[str, ...],
) -> dict[tuple[Any, ...], dict[str, Any]]:
    """group -> its byStatus counts and sums, decided, approved, everApproved, reversed:
    from the two states each commission went through."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for (network, before), (_, now) in zip(first, second, strict=True):
        values = {
            "network": network,
            "program": (network, now.program_external_id),
            "subId": now.sub_id,
            "month": now.transacted_at[:7],
        }
        key = (*(values[name] for name in group_by), now.currency)
        group = out.setdefault(
            key,
            {
                "by": {s: [0, Decimal(0)] for s in COMMISSION_STATUSES},
                "ever": 0,
                "reversed": 0,
            },
        )
        group["by"][now.status][0] += 1
        group["by"][now.status][1] += Decimal(now.commission_amount)
        approved = {"approved", "paid"}
        group["ever"] += before.status in approved or now.status in approved
        group["reversed"] += now.status == "declined" and before.status in approved
    return out


async def get(client, auth: dict[str, str], **params: str) -> dict[str, Any]:
    resp = await client.get(PATH, params=params, headers=auth)
    assert resp.status == 200, await resp.text()
    text = await resp.text()
    for item in json.loads(text)["data"]:
        check_resource(item, COMMISSION_TOTAL)
    return json.loads(text, parse_float=Decimal)


@pytest.mark.parametrize("group_by", ["network", "program", "subId", "month,network"])
async def test_outcomes_are_exact_per_group(edge_client, moved, group_by):
    owner, first, second = moved
    client = await edge_client()
    grouped = tuple(group_by.split(","))
    wanted = expected(first, second, grouped)
    plain = await get(client, owner.auth, groupBy=group_by, **_all(grouped))
    body = await get(client, owner.auth, groupBy=group_by, include="outcomes", **_all(grouped))
    rows = body["data"]
    moments = [dt.datetime.fromisoformat(r.transacted_at) for _, r in second]
    now = dt.datetime.now(dt.UTC)
    soonest, latest = (now - max(moments)).days - 1, (now - min(moments)).days
    # The plain rows, each with outcomes; beside them only wholly declined groups (count 0).
    assert [{k: v for k, v in r.items() if k != "outcomes"} for r in rows if r["count"]] == plain[
        "data"
    ]
    assert len(rows) == len(wanted)
    for row in rows:
        values = {
            "network": row["network"],
            "program": (row["network"], row["programExternalId"]),
            "subId": row["subId"],
            "month": row["month"],
        }
        group = wanted[(*(values[name] for name in grouped), row["currency"])]
        got = row["outcomes"]
        for status in COMMISSION_STATUSES:
            count, commission = group["by"][status]
            assert got["byStatus"][status]["count"] == count
            assert Decimal(got["byStatus"][status]["commission"]) == commission
        counts = {s: group["by"][s][0] for s in COMMISSION_STATUSES}
        decided = counts["approved"] + counts["paid"] + counts["declined"]
        approved = counts["approved"] + counts["paid"]
        assert (got["decided"], got["approved"]) == (decided, approved)
        assert (got["everApproved"], got["reversed"]) == (group["ever"], group["reversed"])
        if decided:
            assert abs(got["approvalRate"] - Decimal(approved) / decided) <= Decimal("0.00005")
        else:
            assert got["approvalRate"] is None
        if group["ever"]:
            assert abs(got["reversalRate"] - Decimal(group["reversed"]) / group["ever"]) <= Decimal(
                "0.00005"
            )
        else:
            assert got["reversalRate"] is None
        # Every change was recorded just now: the days since the sales, whole days down.
        assert (got["decisionsTimed"] == 0) == (got["medianDaysToDecision"] is None)
        if got["medianDaysToDecision"] is not None:
            assert soonest <= got["medianDaysToDecision"] <= latest
    assert any(r["outcomes"]["reversed"] for r in rows)


def _all(group_by: tuple[str, ...]) -> dict[str, str]:
    return {"limit": "100"} if {"program", "subId"} & set(group_by) else {}


async def test_pages_with_outcomes_walk_every_row_once(edge_client, moved):
    owner, _, _ = moved
    client = await edge_client()
    whole = await get(client, owner.auth, groupBy="program,subId", include="outcomes", limit="100")
    seen, params = [], {"groupBy": "program,subId", "include": "outcomes", "limit": "4"}
    while True:
        body = await get(client, owner.auth, **params)
        seen += body["data"]
        if not body["page"]["hasMore"]:
            break
        params["cursor"] = body["page"]["nextCursor"]
    assert seen == whole["data"]
    # A cursor of the pages with outcomes is no cursor of the pages without.
    first = await get(client, owner.auth, groupBy="program,subId", include="outcomes", limit="2")
    resp = await client.get(
        PATH,
        params={"groupBy": "program,subId", "limit": "2", "cursor": first["page"]["nextCursor"]},
        headers=owner.auth,
    )
    await assert_api_error(resp, 400, "invalid_cursor", "cursor")


@pytest.mark.parametrize(
    "query",
    [
        "include=",
        "include=terms",
        "include=Outcomes",
        "include=outcomes,outcomes",
        "include=outcomes&include=outcomes",
        "include=outcomes&format=csv",
        "include=outcomes&format=ndjson",
    ],
)
async def test_bad_include_names_the_parameter(edge_client, seeded, query):
    client = await edge_client()
    resp = await client.get(f"{PATH}?{query}", headers=seeded.auth)
    await assert_api_error(resp, 400, "invalid_parameter", "include")


async def test_no_commission_no_row(edge_client, admin_store):
    owner = await new_account(admin_store)
    client = await edge_client()
    body = await get(client, owner.auth, groupBy="network", include="outcomes")
    assert body["data"] == []
