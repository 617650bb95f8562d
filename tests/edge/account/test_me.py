"""GET /v1/me: the Account exactly as the spec lists it, the 403 trigger, no parameters."""

from __future__ import annotations

import dataclasses
import gzip

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from support.accountfixtures import UNLIMITED
from support.accountkit import check_resource, new_account, new_commission
from support.apierror import assert_api_error

from accounts.crypto import encrypt_credentials
from contract.endpoints import ME
from contract.resources import ACCOUNT
from edge import appkeys
from edge.auth.authenticate import Principal
from edge.config import Config
from edge.handlers.account import me
from store import accounts, connections


async def test_the_account_has_every_member_in_spec_order(edge_client, admin_store, account_config):
    account = await new_account(admin_store, plan="pro", label="ci key")
    await admin_store.write(accounts.set_capability, account.uid, "acquisition", True)
    for network, status in (("awin", "ok"), ("cj", "auth_failed"), ("kwanko", None)):
        sealed = encrypt_credentials(b"k" * 40, account.uid, network, b"secret")
        await admin_store.write(connections.connect, account.uid, network, sealed)
        if status:
            await admin_store.write(
                connections.record_sync,
                account.uid,
                network,
                status,
                accounts=1,
                programs=20,
                transactions=300,
            )
    client = await edge_client(rate_limit_pro=(1234, 30))
    resp = await client.get("/v1/me", headers=account.auth)
    assert resp.status == 200
    body = await resp.json()
    assert list(body) == ["data"]
    data = body["data"]
    check_resource(data, ACCOUNT)
    assert data["uid"] == account.uid and data["plan"] == "pro"
    assert data["email"] == "pub@example.com"
    assert data["key"] == {"prefix": account.prefix, "label": "ci key", "scopes": ["read"]}
    assert data["rateLimit"] == {"limit": 1234, "windowSeconds": 30}
    acquisition, monetisation = (
        data["capabilities"]["acquisition"],
        data["capabilities"]["monetisation"],
    )
    assert acquisition["enabled"] and acquisition["configured"] and acquisition["enabledAt"]
    assert monetisation == {"enabled": False, "configured": False, "enabledAt": None}
    networks = {n["network"]: n for n in data["networks"]}
    assert networks["awin"]["status"] == "ok" and networks["awin"]["transactions"] == 300
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
    assert resp.headers["Cache-Control"] == "private, no-store"
    assert "Authorization" in resp.headers["Vary"]
    assert resp.headers["Content-Type"].startswith("application/json")


async def test_an_import_only_network_shows_its_imports_not_a_sync_that_never_came(
    edge_client, admin_store
):
    """Connected for file imports only: never synchronised (status never, as the spec's
    enum says), shown as import_only with its latest import and the period it covers."""
    account = await new_account(admin_store, plan="pro")
    assert await admin_store.write(connections.connect_import_only, account.uid, "amazon")
    client = await edge_client()

    async def amazon() -> dict:
        resp = await client.get("/v1/me", headers=account.auth)
        data = (await resp.json())["data"]
        check_resource(data, ACCOUNT)
        return next(n for n in data["networks"] if n["network"] == "amazon")

    before = await amazon()
    assert (before["status"], before["collection"]) == ("never", "import_only")
    assert (before["lastImportAt"], before["importedFrom"], before["importedThrough"]) == (
        None,
        None,
        None,
    )
    rows = [
        dataclasses.replace(new_commission("a1"), transacted_at="2026-01-03T10:12:00Z"),
        dataclasses.replace(new_commission("a2"), transacted_at="2026-02-27T08:00:00Z"),
        dataclasses.replace(new_commission("a3"), transacted_at="2026-01-20T23:59:59Z"),
    ]
    await admin_store.write(connections.import_commissions, account.uid, "amazon", [rows])
    after = await amazon()
    assert after == {
        **before,
        "transactions": 3,
        "lastImportAt": after["lastImportAt"],
        "importedFrom": "2026-01-03T10:12:00Z",
        "importedThrough": "2026-02-27T08:00:00Z",
    }
    assert after["lastImportAt"] is not None and after["lastImportAt"] >= after["connectedAt"]
    assert after["lastSyncAt"] is None and after["completeThrough"] is None


async def test_a_run_a_limit_cut_short_shows_when_the_next_attempt_comes(edge_client, admin_store):
    account = await new_account(admin_store, plan="pro")
    sealed = encrypt_credentials(b"k" * 40, account.uid, "awin", b"secret")
    await admin_store.write(connections.connect, account.uid, "awin", sealed)
    await admin_store.write(
        connections.record_outcome,
        account.uid,
        "awin",
        "partial",
        ("rate_limited", "awin: its documented limit is reached"),
        "2026-03-15T13:00:00Z",
    )
    client = await edge_client()
    data = (await (await client.get("/v1/me", headers=account.auth)).json())["data"]
    check_resource(data, ACCOUNT)
    (awin,) = data["networks"]
    assert (awin["status"], awin["reasonCode"], awin["nextAttemptAt"], awin["collection"]) == (
        "partial",
        "rate_limited",
        "2026-03-15T13:00:00Z",
        "sync",
    )
    await admin_store.write(connections.record_outcome, account.uid, "awin", "ok", None)
    data = (await (await client.get("/v1/me", headers=account.auth)).json())["data"]
    assert data["networks"][0]["nextAttemptAt"] is None


async def test_nullable_email_and_head(edge_client, admin_store):
    account = await new_account(admin_store, plan="free", email=None)
    client = await edge_client()
    data = (await (await client.get("/v1/me", headers=account.auth)).json())["data"]
    check_resource(data, ACCOUNT)
    assert data["email"] is None and data["plan"] == "free" and data["networks"] == []
    head = await client.head("/v1/me", headers=account.auth)
    assert head.status == 200 and await head.read() == b""


@pytest.mark.parametrize(
    "query", ["?limit=abc", "?foo=bar", "?cursor=x&cursor=y", "?=", "?uid=someone-else"]
)
async def test_query_parameters_are_ignored_since_400_is_not_listed(edge_client, seeded, query):
    client = await edge_client()
    resp = await client.get("/v1/me" + query, headers=seeded.auth)
    assert resp.status == 200
    assert (await resp.json())["data"]["uid"] == seeded.uid


async def test_a_suspended_account_gets_403_here_and_401_elsewhere(
    edge_client, admin_store, seeded, clock, account_config
):
    client = await edge_client()
    assert (await client.get("/v1/me", headers=seeded.auth)).status == 200
    await admin_store.write(accounts.set_suspended, seeded.uid, True)
    clock.advance(account_config.key_cache_seconds)
    resp = await client.get("/v1/me", headers=seeded.auth)
    assert resp.status == 403
    body = await resp.json()
    assert (body["code"], body["param"], body["status"]) == ("forbidden", None, 403)
    assert "suspended" in body["message"]
    for path in ("/v1/commissions", "/v1/programs/anything"):
        other = await client.get(path, headers=seeded.auth)
        await assert_api_error(other, 401, "invalid_api_key")
    await admin_store.write(accounts.set_suspended, seeded.uid, False)
    clock.advance(account_config.key_cache_seconds)
    assert (await client.get("/v1/me", headers=seeded.auth)).status == 200


async def test_me_shows_account_changes_at_once(edge_client, admin_store, seeded):
    """Only the key's verification is cached: plan, capabilities and networks are read
    on every request (the clock never moves here)."""
    client = await edge_client()

    async def data() -> dict:
        return (await (await client.get("/v1/me", headers=seeded.auth)).json())["data"]

    before = await data()
    assert before["plan"] == "pro" and before["networks"] == []
    await admin_store.write(accounts.set_plan, seeded.uid, "free")
    await admin_store.write(accounts.set_capability, seeded.uid, "acquisition", True)
    await admin_store.write(connections.connect, seeded.uid, "awin", b"sealed")
    await admin_store.write(
        connections.record_outcome, seeded.uid, "awin", "auth_failed", ("auth_rejected", "no")
    )
    after = await data()
    assert after["plan"] == "free"
    assert after["rateLimit"]["limit"] == UNLIMITED[0]  # the free plan's, as configured here
    assert after["capabilities"]["acquisition"]["enabled"] is True
    assert [(n["network"], n["status"]) for n in after["networks"]] == [("awin", "auth_failed")]
    # The reason's code tells stale from empty; its message is for operators.
    (network,) = after["networks"]
    assert network["reasonCode"] == "auth_rejected"
    assert not {"reason", "reasonMessage"} & set(network)


def test_statuses_of_me_are_the_spec_ones():
    assert ME.statuses == (401, 403, 429)


async def test_rate_limit_falls_back_to_the_plan_when_no_limiter_ran(seeded, admin_store):
    # Without RATE_STATE (no limiter in front), the account's plan limit is reported.
    app = web.Application()
    app[appkeys.CONFIG] = dataclasses.replace(Config(), rate_limit_pro=(7, 9))
    app[appkeys.STORE] = admin_store
    request = make_mocked_request("GET", "/v1/me", app=app)
    request[appkeys.PRINCIPAL] = Principal(
        "key_x", seeded.uid, "pro", seeded.prefix, "tests", ("read",)
    )
    data = orjson.loads((await me(request)).body)["data"]
    check_resource(data, ACCOUNT)
    assert data["rateLimit"] == {"limit": 7, "windowSeconds": 9}


@pytest.mark.parametrize("accept", ["gzip", "identity"])
async def test_me_is_gzipped_when_accepted_and_large_enough(edge_client, admin_store, accept):
    account = await new_account(admin_store, plan="pro")
    for network in ("awin", "cj", "kwanko", "effiliation"):
        sealed = encrypt_credentials(b"k" * 40, account.uid, network, b"secret")
        await admin_store.write(connections.connect, account.uid, network, sealed)
    client = await edge_client()
    plain = await client.get("/v1/me", headers={**account.auth, "Accept-Encoding": "identity"})
    resp = await client.get(
        "/v1/me", headers={**account.auth, "Accept-Encoding": accept}, auto_decompress=False
    )
    raw, expected = await resp.read(), await plain.read()
    assert len(expected) >= 512  # large enough to be worth compressing
    if accept == "gzip":
        assert resp.headers["Content-Encoding"] == "gzip"
        assert gzip.decompress(raw) == expected
    else:
        assert "Content-Encoding" not in resp.headers and raw == expected
    assert "Accept-Encoding" in resp.headers["Vary"] and "Authorization" in resp.headers["Vary"]
    assert "ETag" not in resp.headers
