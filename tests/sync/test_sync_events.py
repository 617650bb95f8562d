"""Real syncs into the real stores write the event feed: a created event per new record, an
updated one per record the network changed, nothing for a rerun, and a failed then
recovered connection as two events with the outcome's reason."""

from __future__ import annotations

import orjson
import pytest
from support.clock import FakeClock
from sync_support import ACCOUNT, Canned, expected, stamp_change

from store import AccountStore, CommissionQuery, commissions
from store.events import EventQuery, EventRow, account_events
from sync.model import Outcome
from sync.storage import AccountSyncStore


@pytest.fixture
def sync_real(leased_run, real_store):
    """`await sync_real(network)`: one sync as a worker runs it, claimed and released."""

    async def run(network: str):
        return await leased_run(network, AccountSyncStore(real_store, "w1"))

    return run


async def feed(store: AccountStore, after: int | None = None) -> list[EventRow]:
    return await store.read(account_events, EventQuery(ACCOUNT, 1000, "0000", after=after))


async def test_a_sync_writes_its_rows_changes_and_outcomes_as_events(
    networks, real_store, clock: FakeClock, sync_real
):
    network = "awin"
    report = await sync_real(network)
    assert report.outcome is Outcome.OK
    created = await feed(real_store)
    assert {e.type for e in created} == {"commission.created"}
    listed = await real_store.read(
        commissions.page, CommissionQuery(ACCOUNT, 1000, network=network)
    )
    rows = {r.external_id: r for r in listed}
    assert sorted(orjson.loads(e.data)["externalId"] for e in created) == sorted(expected(network))
    assert len(created) == len(rows)

    # A rerun that finds every record as stored writes none.
    clock.advance(6 * 3600)
    await sync_real(network)
    assert await feed(real_store, created[-1].seq) == []

    # The network flips a status: one update, with what it replaced.
    external_id, field, raw, status = "1591984036", "commissionStatus", "approved", "approved"
    (record,) = [r for r in networks[network].records if str(r["id"]) == external_id]
    before = rows[external_id]
    record[field] = raw
    stamp_change(network, record, "status", clock.now())
    clock.advance(6 * 3600)
    await sync_real(network)
    (updated,) = await feed(real_store, created[-1].seq)
    shown = orjson.loads(updated.data)
    assert (updated.type, shown["externalId"], shown["status"]) == (
        "commission.updated",
        external_id,
        status,
    )
    assert shown["previous"]["status"] == before.status != status

    # The network refuses the key: a failure; the next clean run: a recovery.
    networks[network].inject.append(Canned(401, b"{}"))
    clock.advance(6 * 3600)
    failed = await sync_real(network)
    assert failed.outcome is Outcome.AUTH_FAILED
    clock.advance(6 * 3600)
    assert (await sync_real(network)).outcome is Outcome.OK
    failure, recovery = await feed(real_store, updated.seq)
    assert failure.type == "connection.sync_failed"
    assert orjson.loads(failure.data) == {
        "network": network,
        "status": "auth_failed",
        "previousStatus": "ok",
        "reasonCode": "auth_rejected",
        "lastSuccessAt": orjson.loads(failure.data)["lastSuccessAt"],
    }
    assert recovery.type == "connection.recovered"
    assert orjson.loads(recovery.data)["previousStatus"] == "auth_failed"
    assert orjson.loads(recovery.data)["lastSuccessAt"] == recovery.occurred_at
