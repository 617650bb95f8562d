"""The demo account reads as a real one would: nothing dated in the future, every connection
in the state a real sync leaves it in, and one live demo key however often it is seeded."""

from __future__ import annotations

import datetime as dt

from accounts import apikeys
from accounts.demo import DEMO_KEY_LABEL, DEMO_NETWORKS, DEMO_UID, seed_store
from store import AccountStore, CommissionQuery, accounts, commissions

SECRET = b"demo-test-secret-" + b"d" * 40


async def test_no_demo_commission_is_dated_after_the_seeding_moment(
    admin_store: AccountStore,
) -> None:
    # Just after midnight, with the demo's full 5,000 rows (the seeding is deterministic):
    # a history ending later that day would put some of them ahead of the clock.
    now = dt.datetime(2026, 3, 1, 0, 30, tzinfo=dt.UTC)
    await seed_store(admin_store, SECRET, 5000, now=now)
    rows = await admin_store.read(commissions.page, CommissionQuery(DEMO_UID, 5000))
    assert len(rows) == 5000
    latest = max(r.transacted_at for r in rows)
    assert latest <= now.strftime("%Y-%m-%dT%H:%M:%SZ")


async def test_each_demo_connection_shows_what_a_real_sync_of_its_outcome_shows(
    admin_store: AccountStore,
) -> None:
    now = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
    await seed_store(admin_store, SECRET, 200, now=now)
    account = await admin_store.read(accounts.find, DEMO_UID)
    assert account is not None
    shown = {n.network: n for n in account.networks}
    assert {n: shown[n].status for n, _ in DEMO_NETWORKS} == dict(DEMO_NETWORKS)
    for network, status in DEMO_NETWORKS:
        view = shown[network]
        if status == "never":
            assert view.complete_through is None and view.reason_code is None
            continue
        # Every synced connection is complete through some day of the past.
        assert view.complete_through is not None
        assert view.complete_through <= "2026-03-01T00:00:00Z"
        assert view.last_attempt_at is not None
        # `ok` carries no reason; every other outcome says why.
        assert (view.reason_code is None) is (status == "ok"), network
    assert shown["effiliation"].reason_code == "auth_rejected"
    assert shown["cj"].complete_through < shown["awin"].complete_through


async def test_seeding_again_rotates_the_demo_key(admin_store: AccountStore) -> None:
    keys = [await seed_store(admin_store, SECRET, 50) for _ in range(3)]
    live = [
        k
        for k in await admin_store.read(accounts.list_keys, DEMO_UID)
        if k.label == DEMO_KEY_LABEL and k.revoked_at is None
    ]
    assert len(live) == 1
    assert live[0].prefix == apikeys.prefix_of(keys[-1])
    for old in keys[:-1]:
        assert await admin_store.read(accounts.lookup_key, apikeys.key_hash(old)) is None
