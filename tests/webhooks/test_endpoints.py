"""Endpoints in the store: their secrets never on a read connection, re-encrypted under a new
service secret (`webhook reencrypt`) without losing one, and so many an account."""

from __future__ import annotations

import datetime as dt

import pytest
from webhookkit import LOOPBACK

from accounts.keyring import Keyring
from admin.webhooks import reencrypt, register, rotate
from store import Conflict, StoreUnavailable, accounts
from store.webhooks import MAX_ENDPOINTS_PER_ACCOUNT, sealed_secrets
from webhooks import signing

OLD = Keyring((b"old-service-secret-" + b"o" * 40,))
NEW = Keyring.of(b"new-service-secret-" + b"n" * 40, OLD.secrets)
NEW_ONLY = Keyring((NEW.current,))


async def test_every_secret_moves_under_the_current_service_secret(store):
    now = dt.datetime.now(dt.UTC)
    account = await store.write(accounts.create, None, "pro")
    rotated, first = await register(store, OLD, account, "https://a.example.com/", LOOPBACK, now)
    _, second = await rotate(store, OLD, rotated.id, dt.timedelta(hours=1), now)
    plain, only = await register(store, OLD, account, "https://b.example.com/", LOOPBACK, now)

    result = await reencrypt(store, NEW, batch=1)
    assert (result["reencrypted"], result["alreadyCurrent"]) == (2, 0)
    assert result["remainingUnderOldSecrets"] == 0
    # The old service secret can go: both of the rotated endpoint's secrets still open.
    sealed = await store.write(sealed_secrets, rotated.id)
    assert signing.signing_secrets(NEW_ONLY, sealed, now) == (second, first)
    sealed = await store.write(sealed_secrets, plain.id)
    assert signing.signing_secrets(NEW_ONLY, sealed, now) == (only,)

    again = await reencrypt(store, NEW)
    assert (again["reencrypted"], again["alreadyCurrent"]) == (0, 2)


async def test_a_secret_no_configured_one_opens_is_counted_and_kept(store):
    now = dt.datetime.now(dt.UTC)
    account = await store.write(accounts.create, None, "pro")
    view, _ = await register(store, OLD, account, "https://a.example.com/", LOOPBACK, now)
    before = await store.write(sealed_secrets, view.id)
    result = await reencrypt(store, NEW_ONLY)
    assert result["remainingUnderOldSecrets"] == 1 and "rotate those" in result["text"]
    assert await store.write(sealed_secrets, view.id) == before


async def test_no_read_connection_selects_the_secrets(store):
    now = dt.datetime.now(dt.UTC)
    account = await store.write(accounts.create, None, "pro")
    view, _ = await register(store, OLD, account, "https://a.example.com/", LOOPBACK, now)
    with pytest.raises(StoreUnavailable):
        await store.read(sealed_secrets, view.id)
    assert (await store.write(sealed_secrets, view.id)).endpoint_uid == view.id


async def test_an_account_has_at_most_so_many_endpoints(store):
    now = dt.datetime.now(dt.UTC)
    account = await store.write(accounts.create, None, "pro")
    for n in range(MAX_ENDPOINTS_PER_ACCOUNT):
        await register(store, OLD, account, f"https://h{n}.example.com/", LOOPBACK, now)
    with pytest.raises(Conflict, match="the most an account may have"):
        await register(store, OLD, account, "https://one-more.example.com/", LOOPBACK, now)
    other = await store.write(accounts.create, None, "pro")
    await register(store, OLD, other, "https://h0.example.com/", LOOPBACK, now)
