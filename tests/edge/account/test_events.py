"""GET /v1/events through a served edge, on both stores: the account's events in feed
order in the Event shape; a client catches up from its last cursor without a gap or a
repeat while events are written between its pages; the type filter; the retention
horizon; bad values name their parameter; 401, 429 and 503 in the one error shape."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from support.accountkit import Seeded, check_resource, new_account
from support.apierror import assert_api_error

from contract.resources import BY_NAME, EVENT, EVENT_DATA, PAGE_INFO
from contract.vocabulary import EVENT_TYPES
from store import AccountStore, commissions, connections, open_store
from store import events as events_store
from store.base import NewCommission

PATH = "/v1/events"


def commission(external_id: str, status: str = "pending", amount: str = "4.20") -> NewCommission:
    return NewCommission(
        external_id=external_id,
        status=status,
        raw_status=None,
        commission_amount=amount,
        currency="EUR",
        transacted_at="2026-01-03T10:12:00Z",
        sale_amount="42.00",
    )


async def get_events(client: Any, account: Seeded, **params: str) -> dict[str, Any]:
    resp = await client.get(PATH, params=params, headers=account.auth)
    assert resp.status == 200, await resp.text()
    assert resp.headers["Cache-Control"] == "private, no-store"
    body = await resp.json()
    assert list(body) == ["data", "page"]
    check_resource(body["page"], PAGE_INFO)
    for event in body["data"]:
        check_resource(event, EVENT)
        check_resource(event["data"], BY_NAME[EVENT_DATA[event["type"]]], event["type"])
    assert ("Link" in resp.headers) == body["page"]["hasMore"]
    return body


async def read_on(client: Any, account: Seeded, cursor: str | None, **params: str) -> tuple:
    """Every event after `cursor`, page by page; the events and the last cursor."""
    events: list[dict[str, Any]] = []
    while True:
        query = dict(params) if cursor is None else {**params, "cursor": cursor}
        body = await get_events(client, account, **query)
        events += body["data"]
        cursor = body["page"]["nextCursor"]
        if not body["page"]["hasMore"]:
            return events, cursor


async def test_the_accounts_events_in_feed_order(edge_client, admin_store: AccountStore):
    account = await new_account(admin_store)
    other = await new_account(admin_store)
    await admin_store.write(connections.connect, account.uid, "awin", b"sealed")
    await admin_store.write(
        commissions.upsert, account.uid, "awin", [commission("A"), commission("B")]
    )
    await admin_store.write(commissions.upsert, other.uid, "awin", [commission("X")])
    await admin_store.write(
        connections.record_outcome, account.uid, "awin", "error", ("network_down", "down")
    )
    await admin_store.write(commissions.upsert, account.uid, "awin", [commission("A", "approved")])
    await admin_store.write(connections.record_outcome, account.uid, "awin", "ok", None)
    client = await edge_client()
    body = await get_events(client, account)
    assert [e["type"] for e in body["data"]] == [
        "commission.created",
        "commission.created",
        "connection.sync_failed",
        "commission.updated",
        "connection.recovered",
    ]
    # Feed order is the row order; the public ids show none (store.publicids).
    ids = [e["id"] for e in body["data"]]
    assert len(set(ids)) == 5
    assert [admin_store.ids.event_seq(i) for i in ids] == sorted(
        admin_store.ids.event_seq(i) or 0 for i in ids
    )
    listed = (await (await client.get("/v1/commissions", headers=account.auth)).json())["data"]
    created = body["data"][0]["data"]
    # An event records the commission as written: the directory link is resolved on reads.
    read = next(c for c in listed if c["id"] == created["id"])
    assert "programSlug" not in created and "programSlug" in read
    assert created == {k: v for k, v in read.items() if k != "programSlug"} | {"status": "pending"}
    updated = body["data"][3]["data"]
    assert updated["status"] == "approved" and updated["previous"]["status"] == "pending"
    assert body["data"][2]["data"]["reasonCode"] == "network_down"
    # The other account's event is its own.
    theirs = await get_events(client, other)
    assert [e["data"]["externalId"] for e in theirs["data"]] == ["X"]


async def test_amounts_are_the_stored_decimals(edge_client, admin_store: AccountStore):
    account = await new_account(admin_store)
    await admin_store.write(
        commissions.upsert, account.uid, "awin", [commission("A", amount="0.10")]
    )
    client = await edge_client()
    text = await (await client.get(PATH, headers=account.auth)).text()
    assert '"commissionAmount":0.10,' in text and '"saleAmount":42.00,' in text


async def test_a_client_catches_up_from_its_last_cursor(edge_client, admin_store: AccountStore):
    account = await new_account(admin_store)
    client = await edge_client()
    # An empty feed: no cursor yet, and reading again from nothing starts at the start.
    empty = await get_events(client, account)
    assert empty["data"] == [] and empty["page"]["nextCursor"] is None

    written = 0
    seen: list[str] = []
    cursor = None
    for batch in range(4):
        await admin_store.write(
            commissions.upsert, account.uid, "awin", [commission(f"C{batch}-{n}") for n in range(3)]
        )
        written += 3
        # Events written between two pages of one read are read on, not skipped.
        first = await get_events(
            client, account, limit="2", **({} if cursor is None else {"cursor": cursor})
        )
        seen += [e["id"] for e in first["data"]]
        await admin_store.write(
            commissions.upsert, account.uid, "awin", [commission(f"C{batch}-0", "paid")]
        )
        written += 1
        more, cursor = await read_on(client, account, first["page"]["nextCursor"], limit="2")
        seen += [e["id"] for e in more]
        # The last page carries the position too: reading on from it now gives nothing.
        assert cursor is not None
        again = await get_events(client, account, cursor=cursor)
        assert again["data"] == [] and again["page"]["nextCursor"] == cursor
    everything, _ = await read_on(client, account, None, limit="100")
    assert seen == [e["id"] for e in everything]
    assert len(seen) == written == len(set(seen))


async def test_the_type_filter(edge_client, admin_store: AccountStore):
    account = await new_account(admin_store)
    await admin_store.write(connections.connect, account.uid, "cj", b"sealed")
    for n in range(3):
        await admin_store.write(commissions.upsert, account.uid, "cj", [commission(f"T{n}")])
        await admin_store.write(
            commissions.upsert, account.uid, "cj", [commission(f"T{n}", "declined")]
        )
        await admin_store.write(
            connections.record_outcome, account.uid, "cj", "auth_failed", ("auth", "no")
        )
        await admin_store.write(connections.record_outcome, account.uid, "cj", "ok", None)
    client = await edge_client()
    everything, _ = await read_on(client, account, None)
    for chosen in ("commission.updated", "connection.recovered,commission.created"):
        wanted = chosen.split(",")
        events, _ = await read_on(client, account, None, type=chosen, limit="2")
        assert events == [e for e in everything if e["type"] in wanted]
        assert events
    # A cursor is bound to its filter, whatever the order the types are written in.
    first = await get_events(
        client, account, type="commission.updated,commission.created", limit="1"
    )
    token = first["page"]["nextCursor"]
    same = await get_events(
        client, account, type="commission.created,commission.updated", cursor=token
    )
    assert same["data"][0]["id"] != first["data"][0]["id"]
    assert same["data"][0]["id"] in [e["id"] for e in everything]
    resp = await client.get(
        PATH, params={"type": "commission.created", "cursor": token}, headers=account.auth
    )
    await assert_api_error(resp, 400, "invalid_cursor", "cursor")
    resp = await client.get(PATH, params={"cursor": token}, headers=account.auth)
    await assert_api_error(resp, 400, "invalid_cursor", "cursor")


async def test_a_rare_type_is_found_past_a_long_run_of_others(
    edge_client, admin_store: AccountStore, monkeypatch
):
    monkeypatch.setattr(events_store, "SCAN_MAX", 4)  # pages read 4 events of the feed
    account = await new_account(admin_store)
    await admin_store.write(connections.connect, account.uid, "awin", b"sealed")
    await admin_store.write(
        commissions.upsert, account.uid, "awin", [commission(f"R{n}") for n in range(10)]
    )
    await admin_store.write(
        connections.record_outcome, account.uid, "awin", "error", ("network_down", "down")
    )
    client = await edge_client()
    first = await get_events(client, account, type="connection.sync_failed")
    # Nothing of the type among the first 4: an empty page that still moves on.
    assert first["data"] == [] and first["page"]["hasMore"] is True
    events, cursor = await read_on(
        client, account, first["page"]["nextCursor"], type="connection.sync_failed"
    )
    assert [e["type"] for e in events] == ["connection.sync_failed"]
    again = await get_events(client, account, type="connection.sync_failed", cursor=cursor)
    assert again["data"] == [] and again["page"]["hasMore"] is False


@pytest.mark.parametrize(
    ("query", "code", "param"),
    [
        ("type=commission.deleted", "invalid_parameter", "type"),
        ("type=", "invalid_parameter", "type"),
        ("type=commission.created,commission.created", "invalid_parameter", "type"),
        ("type=commission.created&type=commission.created", "invalid_parameter", "type"),
        ("type=" + ",".join((*EVENT_TYPES, "x")), "invalid_parameter", "type"),
        ("type=Commission.Created", "invalid_parameter", "type"),
        ("limit=0", "invalid_parameter", "limit"),
        ("limit=101", "invalid_parameter", "limit"),
        ("cursor=abc", "invalid_cursor", "cursor"),
        ("since=2026-01-01", "unknown_parameter", "since"),
    ],
)
async def test_bad_queries_in_the_one_shape(edge_client, seeded, query, code, param):
    client = await edge_client()
    resp = await client.get(f"{PATH}?{query}", headers=seeded.auth)
    await assert_api_error(resp, 400, code, param)


async def test_a_commissions_cursor_is_refused(edge_client, admin_store: AccountStore):
    account = await new_account(admin_store)
    await admin_store.write(
        commissions.upsert, account.uid, "awin", [commission("A"), commission("B")]
    )
    client = await edge_client()
    page = await (await client.get("/v1/commissions?limit=1", headers=account.auth)).json()
    resp = await client.get(
        PATH, params={"cursor": page["page"]["nextCursor"]}, headers=account.auth
    )
    await assert_api_error(resp, 400, "invalid_cursor", "cursor")


async def test_events_older_than_the_retention_are_never_answered(
    edge_client, admin_store: AccountStore, account_config
):
    account = await new_account(admin_store)
    past = dt.datetime.now(dt.UTC) - dt.timedelta(days=40)
    old = await open_store(account_config.database, writable=True, readers=1, clock=lambda: past)
    try:
        await old.write(commissions.upsert, account.uid, "awin", [commission("old")])
    finally:
        await old.close()
    await admin_store.write(commissions.upsert, account.uid, "awin", [commission("new")])
    client = await edge_client()
    body = await get_events(client, account)
    assert [e["data"]["externalId"] for e in body["data"]] == ["new"]
    longer = await edge_client(events_retention_days=60)
    body = await get_events(longer, account)
    assert [e["data"]["externalId"] for e in body["data"]] == ["old", "new"]


async def test_large_pages_are_gzip_coded(edge_client, admin_store: AccountStore):
    account = await new_account(admin_store)
    await admin_store.write(
        commissions.upsert, account.uid, "awin", [commission(f"G{n}") for n in range(60)]
    )
    client = await edge_client()
    resp = await client.get(
        PATH, params={"limit": "100"}, headers={**account.auth, "Accept-Encoding": "gzip"}
    )
    assert resp.status == 200 and resp.headers["Content-Encoding"] == "gzip"
    assert len(json.loads(await resp.read())["data"]) == 60
