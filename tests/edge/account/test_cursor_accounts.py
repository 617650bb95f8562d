"""A cursor carries the account it was issued to: another account's key presenting it gets
invalid_cursor, on the commissions list and on the event feed, and its own key reads on."""

from __future__ import annotations

import pytest
from support.accountkit import new_account
from support.apierror import assert_api_error

from store import AccountStore, commissions
from store.base import NewCommission


def rows(prefix: str, count: int) -> list[NewCommission]:
    return [
        NewCommission(f"{prefix}{n}", "pending", None, "1.50", "EUR", f"2026-01-0{1 + n % 9}T10:00:00Z")
        for n in range(count)
    ]  # fmt: skip


@pytest.mark.parametrize("path", ["/v1/commissions", "/v1/events"])
async def test_another_accounts_cursor_is_invalid(edge_client, admin_store: AccountStore, path):
    owner = await new_account(admin_store, email="owner@example.com")
    other = await new_account(admin_store, email="other@example.com")
    await admin_store.write(commissions.upsert, owner.uid, "awin", rows("A", 4))
    await admin_store.write(commissions.upsert, other.uid, "awin", rows("B", 4))
    client = await edge_client()
    first = await client.get(path, params={"limit": "2"}, headers=owner.auth)
    assert first.status == 200
    token = (await first.json())["page"]["nextCursor"]
    assert token is not None

    stolen = await client.get(path, params={"limit": "2", "cursor": token}, headers=other.auth)
    body = await assert_api_error(stolen, 400, "invalid_cursor", "cursor")
    assert "another account" in body["message"]

    own = await client.get(path, params={"limit": "2", "cursor": token}, headers=owner.auth)
    assert own.status == 200 and (await own.json())["data"]
