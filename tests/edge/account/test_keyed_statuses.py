"""The error statuses every keyed account endpoint shares, each in the one error shape: 401
without a key, 429 over the plan's limit, 503 (with Retry-After) when the store is down."""

from __future__ import annotations

import pytest
from support.accountkit import new_account
from support.apierror import assert_api_error

from contract.endpoints import COMMISSION, COMMISSION_SUMMARY, EVENTS
from edge import appkeys

# (endpoint, a path of it, the status of a first request that is let through)
KEYED = [
    pytest.param(COMMISSION_SUMMARY, "/v1/commissions/summary", 200, id="summary"),
    pytest.param(EVENTS, "/v1/events", 200, id="events"),
    pytest.param(COMMISSION, "/v1/commissions/com_3c9e0a57d1b84f26", 404, id="commission"),
]


@pytest.mark.parametrize(("endpoint", "path", "_"), KEYED)
async def test_without_a_key_it_is_401(edge_client, endpoint, path, _):
    client = await edge_client()
    resp = await client.get(path)
    await assert_api_error(resp, 401, "missing_api_key")
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")
    assert 401 in endpoint.statuses


@pytest.mark.parametrize(("endpoint", "path", "first"), KEYED)
async def test_over_the_rate_limit_it_is_429(edge_client, admin_store, endpoint, path, first):
    account = await new_account(admin_store)
    client = await edge_client(rate_limit_pro=(1, 60))
    assert (await client.get(path, headers=account.auth)).status == first
    resp = await client.get(path, headers=account.auth)
    await assert_api_error(resp, 429, "rate_limited")
    assert int(resp.headers["Retry-After"]) >= 1
    assert 429 in endpoint.statuses


@pytest.mark.parametrize(("endpoint", "path", "_"), KEYED)
async def test_a_closed_store_is_503(edge_client, admin_store, clock, endpoint, path, _):
    account = await new_account(admin_store)
    client = await edge_client(retry_after=7)
    assert (await client.get("/v1/me", headers=account.auth)).status == 200
    await client.app[appkeys.STORE].close()
    clock.advance(60)
    resp = await client.get(path, headers=account.auth)
    await assert_api_error(resp, 503, "unavailable")
    assert resp.headers["Retry-After"] == "7"
    assert 503 in endpoint.statuses
