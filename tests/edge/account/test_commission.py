"""GET /v1/commissions/{id}: one commission of the key's account with its statusHistory,
through a served edge on SQLite and PostgreSQL; every other id answers 404 alike, and the
endpoint answers only the statuses its table lists. /v1/me's coverage members."""

from __future__ import annotations

import datetime as dt

import pytest
from support.accountkit import check_resource, new_account
from support.apierror import assert_api_error

from accounts.crypto import encrypt_credentials
from contract.endpoints import COMMISSION
from contract.resources import ACCOUNT, COMMISSION_DETAIL
from store import commissions, connections, open_store
from store.base import NewCommission


@pytest.fixture
async def timed_store(account_config, clock):
    """A writable store on the edge's database whose writes are stamped by the test clock."""
    store = await open_store(
        account_config.database, writable=True, readers=1, clock=lambda: clock.now()
    )
    yield store
    await store.close()


def row(external_id: str, status: str = "pending", amount: str = "4.26", **extra) -> NewCommission:
    return NewCommission(
        external_id=external_id,
        status=status,
        raw_status=status,
        commission_amount=amount,
        currency="EUR",
        transacted_at="2026-01-03T10:12:00Z",
        sale_amount="85.20",
        **extra,
    )


async def listed(client, account) -> dict[str, dict]:
    resp = await client.get("/v1/commissions", headers=account.auth)
    assert resp.status == 200
    return {c["externalId"]: c for c in (await resp.json())["data"]}


async def test_one_commission_with_the_states_it_went_through(edge_client, timed_store, clock):
    admin_store = timed_store
    account = await new_account(admin_store)
    await admin_store.write(commissions.upsert, account.uid, "awin", [row("A"), row("B")])
    clock.advance(3600)
    await admin_store.write(
        commissions.upsert, account.uid, "awin", [row("A", "approved"), row("B", amount="2.13")]
    )
    clock.advance(3600)
    await admin_store.write(
        commissions.upsert, account.uid, "awin", [row("A", "paid"), row("B", amount="2.13")]
    )
    client = await edge_client()
    items = await listed(client, account)
    resp = await client.get(f"/v1/commissions/{items['A']['id']}", headers=account.auth)
    assert resp.status == 200
    assert resp.headers["Cache-Control"] == "private, no-store"
    assert "Authorization" in resp.headers["Vary"]
    body = await resp.json()
    assert list(body) == ["data"]
    data = body["data"]
    check_resource(data, COMMISSION_DETAIL)
    # The list's members, the same values, then the history.
    assert {k: v for k, v in data.items() if k != "statusHistory"} == items["A"]
    assert data["status"] == "paid"
    history = data["statusHistory"]
    assert [(h["status"], h["commissionAmount"]) for h in history] == [
        ("pending", 4.26),
        ("approved", 4.26),
    ]
    assert history[0]["replacedAt"] == history[1]["recordedAt"]
    assert history[0]["recordedAt"] < history[0]["replacedAt"] < history[1]["replacedAt"]
    amended = await (
        await client.get(f"/v1/commissions/{items['B']['id']}", headers=account.auth)
    ).json()
    assert [(h["status"], h["commissionAmount"]) for h in amended["data"]["statusHistory"]] == [
        ("pending", 4.26)
    ]
    assert amended["data"]["commissionAmount"] == 2.13
    # Query parameters are ignored: 400 is not among the endpoint's statuses.
    again = await client.get(f"/v1/commissions/{items['A']['id']}?x=1", headers=account.auth)
    assert again.status == 200 and (await again.json()) == body
    head = await client.head(f"/v1/commissions/{items['A']['id']}", headers=account.auth)
    assert head.status == 200 and await head.read() == b""


@pytest.mark.parametrize(
    "which", ["another account's", "unknown", "malformed", "upper case", "past any row", "zero"]
)
async def test_every_other_id_is_404_alike(which, edge_client, admin_store):
    mine = await new_account(admin_store)
    other = await new_account(admin_store)
    await admin_store.write(commissions.upsert, other.uid, "awin", [row("X")])
    client = await edge_client()
    theirs = (await listed(client, other))["X"]["id"]
    ids = {
        "another account's": theirs,
        "unknown": admin_store.ids.commission(10**9),
        "malformed": "com_123",
        "upper case": theirs.upper().replace("COM_", "com_"),
        "past any row": "com_ffffffffffffffff",
        "zero": admin_store.ids.commission(0),
    }
    resp = await client.get(f"/v1/commissions/{ids[which]}", headers=mine.auth)
    body = await assert_api_error(resp, 404, "not_found")
    assert body["message"] == "the account has no commission with this id"
    assert 404 in COMMISSION.statuses


async def test_me_tells_stale_from_empty(edge_client, timed_store, clock):
    admin_store = timed_store
    account = await new_account(admin_store)
    for network in ("awin", "cj", "kwanko"):
        sealed = encrypt_credentials(b"k" * 40, account.uid, network, b"secret")
        await admin_store.write(connections.connect, account.uid, network, sealed)
    # awin: a successful run; then a later attempt refused by the network.
    assert await admin_store.write(connections.claim, account.uid, "awin", "w1", 60)
    await admin_store.write(
        connections.write_window, account.uid, "awin", [row("A")], "2026-03-01T00:00:00Z", "w1"
    )
    ok = await admin_store.write(connections.record_outcome, account.uid, "awin", "ok", None)
    await admin_store.write(connections.release, account.uid, "awin", "w1")
    clock.advance(6 * 3600)
    assert await admin_store.write(connections.claim, account.uid, "awin", "w1", 60)
    failed = await admin_store.write(
        connections.record_outcome,
        account.uid,
        "awin",
        "auth_failed",
        ("auth_rejected", "awin refused the credentials"),
    )
    await admin_store.write(connections.release, account.uid, "awin", "w1")
    # cj: attempted, nothing committed yet (a run under way or one that died).
    assert await admin_store.write(connections.claim, account.uid, "cj", "w1", 60)
    client = await edge_client()
    data = (await (await client.get("/v1/me", headers=account.auth)).json())["data"]
    check_resource(data, ACCOUNT)
    networks = {n["network"]: n for n in data["networks"]}
    awin = networks["awin"]
    assert awin["status"] == "auth_failed" and awin["reasonCode"] == "auth_rejected"
    assert awin["lastSuccessAt"] == ok.last_sync_at
    assert awin["lastAttemptAt"] == failed.last_attempt_at
    assert awin["lastSuccessAt"] < awin["lastAttemptAt"]
    assert awin["completeThrough"] == "2026-03-01T00:00:00Z"
    assert networks["cj"]["lastAttemptAt"] is not None
    assert (networks["cj"]["lastSuccessAt"], networks["cj"]["completeThrough"]) == (None, None)
    assert networks["kwanko"] == {
        "network": "kwanko",
        "status": "never",
        "connectedAt": networks["kwanko"]["connectedAt"],
        "lastSyncAt": None,
        "accounts": 0,
        "programs": 0,
        "transactions": 0,
        "lastAttemptAt": None,
        "lastSuccessAt": None,
        "reasonCode": None,
        "completeThrough": None,
        "nextAttemptAt": None,
        "collection": "sync",
        "lastImportAt": None,
        "importedFrom": None,
        "importedThrough": None,
    }
    assert dt.datetime.fromisoformat(awin["lastAttemptAt"].replace("Z", "+00:00"))
