"""The account store failing: 503 with Retry-After where listed, never a 500 or a hang."""

from __future__ import annotations

import asyncio
import time

import pytest
from support.accountkit import execute_sql, new_account, sleep_in

from accounts import apikeys
from contract.endpoints import COMMISSIONS, ENDPOINTS
from edge import appkeys


async def expect(resp, status: int, code: str, retry_after: int | None) -> None:
    assert resp.status == status, await resp.text()
    body = await resp.json()
    assert (body["code"], body["status"], body["param"]) == (code, status, None)
    if retry_after is not None:
        assert resp.headers["Retry-After"] == str(retry_after)


async def test_a_closed_store_answers_503_or_a_temporary_401(
    edge_client, admin_store, clock, account_config
):
    known = await new_account(admin_store)
    client = await edge_client(retry_after=7)
    assert (await client.get("/v1/me", headers=known.auth)).status == 200
    await client.app[appkeys.STORE].close()
    clock.advance(60)  # the cached entry is stale: a refresh is tried, fails, the entry is kept

    await expect(await client.get("/v1/commissions", headers=known.auth), 503, "unavailable", 7)
    # /v1/me reads the account itself: it cannot answer, and lists no 503.
    me = await client.get("/v1/me", headers=known.auth)
    await expect(me, 401, "invalid_api_key", 7)
    assert "retry later" in (await me.json())["message"]

    # A key never seen since start cannot be verified: 503 where listed, else 401.
    stranger = {"Authorization": f"Bearer {apikeys.generate_key().key}"}
    await expect(await client.get("/v1/commissions", headers=stranger), 503, "unavailable", 7)
    await expect(await client.get("/v1/me", headers=stranger), 401, "invalid_api_key", 7)
    await expect(
        await client.get("/v1/programs/some-slug", headers=stranger), 401, "invalid_api_key", 7
    )
    programs = await client.get("/v1/programs", headers=stranger)
    assert programs.status == 503 and programs.headers["Retry-After"] == "7"
    # Malformed keys never needed the store.
    await expect(
        await client.get("/v1/commissions", headers={"Authorization": "Bearer afk_nope"}),
        401,
        "invalid_api_key",
        None,
    )


async def test_a_broken_schema_is_503_not_500(edge_client, admin_store, seeded):
    client = await edge_client()
    assert (await client.get("/v1/commissions", headers=seeded.auth)).status == 200
    await admin_store.write(execute_sql, "ALTER TABLE commissions RENAME TO gone")
    await expect(await client.get("/v1/commissions", headers=seeded.auth), 503, "unavailable", 5)


async def test_payments_whose_store_breaks_are_503(edge_client, admin_store, seeded):
    client = await edge_client()
    assert (await client.get("/v1/payments", headers=seeded.auth)).status == 200
    await admin_store.write(execute_sql, "ALTER TABLE payment_lines RENAME TO gone_lines")
    await admin_store.write(execute_sql, "ALTER TABLE payments RENAME TO gone_payments")
    await expect(await client.get("/v1/payments", headers=seeded.auth), 503, "unavailable", 5)
    one = f"/v1/payments/{client.app[appkeys.STORE].ids.payment(1)}"  # read, not refused
    await expect(await client.get(one, headers=seeded.auth), 503, "unavailable", 5)


@pytest.mark.sqlite_only  # PostgreSQL: tests/store/pg/test_outage.py (a frozen server), test_store.py
async def test_a_stuck_store_answers_503_within_the_timeout(edge_client, seeded):
    client = await edge_client(store_timeout=0.3)
    assert (await client.get("/v1/commissions", headers=seeded.auth)).status == 200
    store = client.app[appkeys.STORE].store  # the open store behind the handle
    # Keep every read connection busy (as a long lock or a slow disk would).
    hogs = [asyncio.ensure_future(store.read(sleep_in, 1.0)) for _ in range(2)]
    await asyncio.sleep(0.05)
    started = time.monotonic()
    await expect(await client.get("/v1/commissions", headers=seeded.auth), 503, "unavailable", 5)
    assert time.monotonic() - started < 0.9
    for hog in hogs:
        with pytest.raises(Exception, match="did not answer"):
            await hog
    await asyncio.sleep(1.0)  # the sleeping threads return their connections
    assert (await client.get("/v1/commissions", headers=seeded.auth)).status == 200


def test_only_endpoints_that_list_503_can_answer_it():
    assert 503 in COMMISSIONS.statuses
    assert [e.name for e in ENDPOINTS if 503 not in e.statuses] == ["program", "me"]
