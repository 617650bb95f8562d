"""GET /v1/commissions: shape, keyset pagination against a brute-force reference, exactness."""

from __future__ import annotations

import datetime as dt
import gzip
import itertools
import random
import re
from dataclasses import dataclass

import pytest
from support.accountkit import Seeded, check_resource, new_account, read_all
from support.storedrows import StoredRows
from yarl import URL

from contract.resources import COMMISSION, PAGE_INFO
from contract.vocabulary import COMMISSION_STATUSES
from store import AccountStore, commissions, connections, open_store
from store.base import NewCommission

NETWORKS = ("awin", "cj", "impact")
CURRENCIES = ("EUR", "GBP", "USD", "CHF")
START = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Inserted:
    network: str
    row: NewCommission


def make_rows(
    rng: random.Random, count: int, prefix: str, start: dt.datetime = START
) -> list[Inserted]:
    """Commissions spread over ~100 days, with many exact ties on transactedAt."""
    out = []
    moments = [
        start + dt.timedelta(minutes=rng.randrange(100 * 24 * 60)) for _ in range(count // 3)
    ]
    for index in range(count):
        when = rng.choice(moments)
        out.append(
            Inserted(
                rng.choice(NETWORKS),
                NewCommission(
                    external_id=f"{prefix}-{index}",
                    status=rng.choice(COMMISSION_STATUSES),
                    raw_status=rng.choice(["Pending", "ok", None]),
                    commission_amount=f"{rng.randrange(1, 100000) / 100:.2f}",
                    currency=rng.choice(CURRENCIES),
                    transacted_at=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    sale_amount=None
                    if rng.random() < 0.2
                    else f"{rng.randrange(100, 10**6)}.{rng.randrange(100):02d}",
                    clicked_at=None
                    if rng.random() < 0.3
                    else (when - dt.timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    sub_id=None if rng.random() < 0.5 else f"s{rng.randrange(9)}",
                    program_name=None if rng.random() < 0.1 else "Prog",
                    program_external_id=None if rng.random() < 0.1 else "p1",
                ),
            )
        )
    return out


async def insert(store: AccountStore, uid: str, rows: list[Inserted]) -> None:
    for network in NETWORKS:
        await store.write(
            commissions.upsert, uid, network, [r.row for r in rows if r.network == network]
        )


async def seqs(store: AccountStore, uid: str) -> dict[tuple[str, str], tuple[int, str]]:
    """(network, externalId) -> stored sequence number, read straight from the table, and
    the public id the store makes of it."""

    rows = await read_all(
        store,
        "SELECT network, external_id, c.id FROM commissions c JOIN accounts a "
        "ON a.id = c.account_id WHERE a.uid = ?",
        uid,
    )
    return {(n, e): (i, store.ids.commission(i)) for n, e, i in rows}


def reference(
    rows: list[Inserted], ids: dict[tuple[str, str], tuple[int, str]], **filters
) -> list[str]:
    """Brute force: filter in Python, sort by (transactedAt, row id) descending."""
    kept = []
    for r in rows:
        day = r.row.transacted_at[:10]
        if filters.get("network") and r.network != filters["network"]:
            continue
        if filters.get("status") and r.row.status != filters["status"]:
            continue
        if filters.get("from") and day < filters["from"]:
            continue
        if filters.get("to") and day > filters["to"]:
            continue
        kept.append((r.row.transacted_at, *ids[(r.network, r.row.external_id)]))
    kept.sort(reverse=True)
    return [public for _, _, public in kept]


async def walk(client, auth, params: dict[str, str], limit: int) -> list[str]:
    """Follow nextCursor to the end; check every page on the way."""
    seen: list[str] = []
    query = {**params, "limit": str(limit)}
    while True:
        resp = await client.get("/v1/commissions", params=query, headers=auth)
        assert resp.status == 200, await resp.text()
        body = await resp.json()
        assert list(body) == ["data", "page"]
        page = body["page"]
        check_resource(page, PAGE_INFO)
        assert page["limit"] == limit
        assert len(body["data"]) <= limit
        seen.extend(item["id"] for item in body["data"])
        if not page["hasMore"]:
            assert page["nextCursor"] is None and "Link" not in resp.headers
            # An empty page only when there is nothing at all.
            assert body["data"] or not seen
            return seen
        assert len(body["data"]) == limit  # a page with more to come is full
        link = resp.headers["Link"]
        match = re.fullmatch(r'<([^>]+)>; rel="next"', link)
        assert match, link
        next_url = URL(match[1])
        assert next_url.path == "/v1/commissions"
        assert dict(next_url.query) == {**query, "cursor": page["nextCursor"]}
        query = {**query, "cursor": page["nextCursor"]}


async def write_dataset(store: AccountStore) -> tuple[Seeded, list[Inserted], dict]:
    rng = random.Random(7)
    owner = await new_account(store)
    rows = make_rows(rng, 2400, "c")
    await insert(store, owner.uid, rows)
    stranger = await new_account(store)  # never visible to the owner
    await insert(store, stranger.uid, make_rows(rng, 300, "c"))
    return owner, rows, await seqs(store, owner.uid)


@pytest.fixture(scope="module")
def stored_rows(tmp_path_factory: pytest.TempPathFactory) -> StoredRows:
    """`dataset`'s rows, written once per backend and copied into each test's database."""
    return StoredRows(write_dataset, tmp_path_factory.mktemp("commissions"))


@pytest.fixture
def dataset(stored_rows: StoredRows, account_config) -> tuple[Seeded, list[Inserted], dict]:
    return stored_rows.value(account_config.database)


@pytest.mark.slow
async def test_every_filter_combination_walks_exactly_the_reference(edge_client, dataset):
    owner, rows, ids = dataset
    client = await edge_client()
    combos = itertools.product(
        (None, *NETWORKS),
        (None, *COMMISSION_STATUSES),
        (None, "2025-02-01"),
        (None, "2025-03-15"),
    )
    walked = 0
    for network, status, since, until in combos:
        params = {
            k: v
            for k, v in (("network", network), ("status", status), ("from", since), ("to", until))
            if v
        }
        expected = reference(rows, ids, **params)
        got = await walk(client, owner.auth, params, 100)
        assert got == expected, params
        walked += len(got)
    assert walked > 10_000


@pytest.mark.parametrize(
    ("params", "limit"), [({"network": "cj", "status": "paid", "from": "2025-02-01"}, 1), ({}, 7)]
)
async def test_small_limits_walk_the_same_rows(edge_client, dataset, params, limit):
    owner, rows, ids = dataset
    client = await edge_client()
    assert await walk(client, owner.auth, params, limit) == reference(rows, ids, **params)


async def test_rows_inserted_mid_walk_cause_no_duplicate_or_gap(edge_client, admin_store, dataset):
    owner, rows, ids = dataset
    client = await edge_client()
    expected = reference(rows, ids)
    seen: list[str] = []
    query = {"limit": "100"}
    rng = random.Random(99)
    pages = 0
    while True:
        body = await (await client.get("/v1/commissions", params=query, headers=owner.auth)).json()
        seen.extend(item["id"] for item in body["data"])
        pages += 1
        if pages in (2, 5):
            # Newer rows (the usual case), and rows at already-passed and upcoming moments.
            newer = make_rows(rng, 60, f"new{pages}", start=START + dt.timedelta(days=200))
            anywhere = make_rows(rng, 60, f"any{pages}")
            await insert(admin_store, owner.uid, newer + anywhere)
        if not body["page"]["hasMore"]:
            break
        query["cursor"] = body["page"]["nextCursor"]
    assert len(seen) == len(set(seen)), "a row was returned twice"
    original = set(expected)
    assert [i for i in seen if i in original] == expected  # every original, once, in order
    inserted = {public for _, public in (await seqs(admin_store, owner.uid)).values()} - original
    assert len(inserted) == 240
    assert set(seen) - original <= inserted  # anything else seen is one of the new rows
    assert len(set(seen) & inserted) >= 60  # at least the rows newer than page 2's cursor


async def test_a_cursor_works_with_another_limit(edge_client, dataset):
    owner, rows, ids = dataset
    client = await edge_client()
    expected = reference(rows, ids, network="awin")
    first = await (
        await client.get("/v1/commissions?network=awin&limit=10", headers=owner.auth)
    ).json()
    cursor = first["page"]["nextCursor"]
    second = await (
        await client.get(
            "/v1/commissions",
            params={"network": "awin", "limit": "30", "cursor": cursor},
            headers=owner.auth,
        )
    ).json()
    assert [c["id"] for c in first["data"] + second["data"]] == expected[:40]


@pytest.mark.parametrize(
    ("host", "public_url", "origin"),
    [
        ("books.example:8443", None, ""),
        ('evil.example/x?>; rel="next", <http://ok', None, ""),
        ("user@evil.example", None, ""),
        ("books.example", "https://api.example.com", "https://api.example.com"),
    ],
)
async def test_the_link_is_under_the_public_url_or_relative_never_the_host(
    edge_client, dataset, host, public_url, origin
):
    owner, _, _ = dataset
    client = await edge_client(public_url=public_url)
    resp = await client.get(
        "/v1/commissions?network=awin&limit=5", headers={**owner.auth, "Host": host}
    )
    match = re.fullmatch(r'<([^<>\s]+)>; rel="next"', resp.headers["Link"])
    assert match, resp.headers["Link"]
    url = URL(match[1])
    assert (str(url.origin()) if url.is_absolute() else "") == origin
    assert url.path == "/v1/commissions" and url.query["network"] == "awin"


async def test_commissions_have_every_member_and_headers(edge_client, dataset):
    owner, _, _ = dataset
    client = await edge_client()
    resp = await client.get("/v1/commissions?limit=100", headers=owner.auth)
    body = await resp.json()
    for item in body["data"]:
        check_resource(item, COMMISSION)
    assert {type(i["saleAmount"]) for i in body["data"]} >= {type(None), float}
    assert resp.headers["Cache-Control"] == "private, no-store"
    assert "Authorization" in resp.headers["Vary"]
    default = await (await client.get("/v1/commissions", headers=owner.auth)).json()
    assert default["page"]["limit"] == 25 and len(default["data"]) == 25
    head = await client.head("/v1/commissions", headers=owner.auth)
    assert head.status == 200 and await head.read() == b""


async def test_an_account_without_commissions_gets_one_empty_last_page(edge_client, admin_store):
    nobody = await new_account(admin_store)
    client = await edge_client()
    body = await (await client.get("/v1/commissions", headers=nobody.auth)).json()
    assert body == {"data": [], "page": {"limit": 25, "hasMore": False, "nextCursor": None}}


async def test_amounts_come_back_exactly_as_written(edge_client, admin_store, seeded):
    amounts = ["0.1", "12.30", "1234567.89", "-0.50", "100", "0.000001", "99999999999999.99"]
    rows = [
        NewCommission(
            external_id=f"x{i}",
            status="approved",
            raw_status=None,
            commission_amount=a,
            sale_amount=a,
            currency="JPY" if a == "100" else "EUR",
            transacted_at=f"2026-01-01T00:00:{i:02d}Z",
        )
        for i, a in enumerate(amounts)
    ]
    await admin_store.write(commissions.upsert, seeded.uid, "awin", rows)
    client = await edge_client()
    text = await (await client.get("/v1/commissions?limit=100", headers=seeded.auth)).text()
    for a in amounts:
        assert f'"commissionAmount":{a},' in text, a
        assert f'"saleAmount":{a},' in text, a


def commission(external_id: str, status: str = "pending", day: int = 1) -> NewCommission:
    return NewCommission(
        external_id=external_id,
        status=status,
        raw_status=status,
        commission_amount="1.50",
        currency="EUR",
        transacted_at=f"2026-01-{day:02d}T10:00:00Z",
    )


async def test_updated_since_returns_what_changed_at_or_after_it_in_the_usual_order(
    edge_client, account_config, seeded
):
    moment = [dt.datetime(2026, 2, 1, 12, 0, 0, tzinfo=dt.UTC)]
    store = await open_store(account_config.database, writable=True, clock=lambda: moment[0])
    try:
        await store.write(connections.connect, seeded.uid, "awin", b"sealed")
        await store.write(
            commissions.upsert,
            seeded.uid,
            "awin",
            [commission(f"t{i}", day=i) for i in range(1, 8)],
        )
        moment[0] += dt.timedelta(hours=1)  # 13:00: a late approval, a new row, one unchanged
        await store.write(
            commissions.upsert,
            seeded.uid,
            "awin",
            [commission("t2", "approved", 2), commission("t9", day=9), commission("t5", day=5)],
        )
    finally:
        await store.close()
    client = await edge_client()

    async def external_ids(since: str, **filters: str) -> list[str]:
        found: list[str] = []
        query = {"updatedSince": since, "limit": "1", **filters}
        while True:
            response = await client.get("/v1/commissions", params=query, headers=seeded.auth)
            assert response.status == 200, await response.text()
            body = await response.json()
            found.extend(row["externalId"] for row in body["data"])
            if not body["page"]["hasMore"]:
                return found
            query = {**query, "cursor": body["page"]["nextCursor"]}

    assert await external_ids("2026-02-01T13:00:00Z") == ["t9", "t2"]
    # Offsets and fractions name the same instant; a change in the same second is included.
    assert await external_ids("2026-02-01T14:00:00.9+01:00") == ["t9", "t2"]
    assert await external_ids("2026-02-01T13:00:01Z") == []
    assert len(await external_ids("2026-02-01T12:00:00Z")) == 8
    assert await external_ids("2026-02-01T13:00:00Z", status="approved") == ["t2"]


async def test_a_cursor_is_bound_to_its_updated_since(edge_client, admin_store, seeded):
    await admin_store.write(connections.connect, seeded.uid, "awin", b"sealed")
    await admin_store.write(
        commissions.upsert, seeded.uid, "awin", [commission("a"), commission("b")]
    )
    client = await edge_client()
    first = await client.get(
        "/v1/commissions?limit=1&updatedSince=2000-01-01T00:00:00Z", headers=seeded.auth
    )
    token = (await first.json())["page"]["nextCursor"]
    moved = await client.get(
        f"/v1/commissions?limit=1&updatedSince=2000-01-02T00:00:00Z&cursor={token}",
        headers=seeded.auth,
    )
    assert moved.status == 400 and (await moved.json())["code"] == "invalid_cursor"


@pytest.mark.parametrize(
    "value",
    [
        "2026-02-01",
        "2026-02-01T12:00:00",
        "2026-02-01 12:00:00Z",
        "2026-02-30T12:00:00Z",
        "2026-02-01T25:00:00Z",
        "2026-02-01T12:00:00+24:00",
        "0001-01-01T00:00:00+01:00",
        "yesterday",
        "1769947200",
    ],
)
async def test_a_bad_updated_since_is_an_invalid_parameter(edge_client, seeded, value):
    client = await edge_client()
    response = await client.get(
        "/v1/commissions", params={"updatedSince": value}, headers=seeded.auth
    )
    assert response.status == 400
    body = await response.json()
    assert (body["code"], body["param"]) == ("invalid_parameter", "updatedSince")
    assert "RFC 3339" in body["message"]


@pytest.mark.parametrize(
    "params",
    [
        {"programExternalId": "1234"},
        {"programExternalId": "1234", "status": "approved"},
        {"programExternalId": ""},
        {"programExternalId": "x" * 201, "network": "awin"},
        {"subId": ""},
        {"subId": "a\x01b"},
    ],
)
async def test_a_bad_programme_or_sub_id_filter_names_its_parameter(edge_client, seeded, params):
    """A programme id is each network's own: alone it is refused, not answered for all."""
    client = await edge_client()
    response = await client.get("/v1/commissions", params=params, headers=seeded.auth)
    assert response.status == 400
    body = await response.json()
    assert (body["code"], body["param"]) == ("invalid_parameter", next(iter(params)))


@pytest.mark.parametrize(
    ("accept", "coded"),
    [
        ("gzip", True),
        ("gzip, deflate, br", True),
        ("*", True),
        ("identity", False),
        ("gzip;q=0", False),
        ("", False),
    ],
)
async def test_a_page_is_gzipped_when_the_client_accepts_it(edge_client, dataset, accept, coded):
    owner, _, _ = dataset
    client = await edge_client()
    plain = await client.get(
        "/v1/commissions?limit=50", headers={**owner.auth, "Accept-Encoding": "identity"}
    )
    resp = await client.get(
        "/v1/commissions?limit=50",
        headers={**owner.auth, "Accept-Encoding": accept},
        auto_decompress=False,
    )
    assert resp.status == plain.status == 200
    raw = await resp.read()
    assert resp.headers.get("Content-Encoding") == ("gzip" if coded else None)
    body = gzip.decompress(raw) if coded else raw
    assert body == await plain.read()
    assert len(raw) < len(body) or not coded
    # Whatever the coding: the answer varies on it (and on Accept, which may ask for an
    # export), no validator, the same Link.
    for answer in (plain, resp):
        assert {v.strip() for v in answer.headers["Vary"].split(",")} == {
            "Authorization",
            "Accept",
            "Accept-Encoding",
        }
        assert "ETag" not in answer.headers
    assert resp.headers["Link"] == plain.headers["Link"]


async def test_a_small_page_is_not_gzipped(edge_client, admin_store):
    account = await new_account(admin_store)
    client = await edge_client()
    resp = await client.get("/v1/commissions", headers={**account.auth, "Accept-Encoding": "gzip"})
    assert resp.status == 200 and "Content-Encoding" not in resp.headers
    assert "Accept-Encoding" in resp.headers["Vary"]
