"""The sync over the real account stores, a SQLite file and PostgreSQL: rows, outcomes and
reasons as stored, leases that keep two workers off one connection, and fenced writes."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from fakes import FAKES
from support.clock import FakeClock
from sync_support import ACCOUNT, FLIPPING, NETWORKS, Canned, connection, expected, stamp_change

from store import (
    AccountStore,
    CommissionQuery,
    Conflict,
    commissions,
    connections,
    open_store,
)
from sync.model import Outcome, Position, Window
from sync.storage import AccountSyncStore, credential_opener, credential_sealer
from sync.worker import Worker, WorkerConfig

STORED_FIELDS = {
    "status": "status",
    "rawStatus": "raw_status",
    "commissionAmount": "commission_amount",
    "saleAmount": "sale_amount",
    "currency": "currency",
    "subId": "sub_id",
    "transactedAt": "transacted_at",
}


def find(networks, network: str, external_id: str) -> dict:
    id_field = FAKES[network].id_field
    (record,) = [r for r in networks[network].records if str(r[id_field]) == external_id]
    return record


async def stored_rows(store: AccountStore, network: str) -> dict[str, dict]:
    rows = await store.read(commissions.page, CommissionQuery(ACCOUNT, limit=1000, network=network))
    return {
        r.external_id: {"seq": r.seq, **{k: getattr(r, a) for k, a in STORED_FIELDS.items()}}
        for r in rows
    }


def run_sync_real(leased_run, real_store):
    async def run(network: str, worker: str = "w1"):
        return await leased_run(network, AccountSyncStore(real_store, worker), worker)

    return run


@pytest.fixture
def sync_real(leased_run, real_store):
    """`await sync_real(network)`: one leased sync into the real store."""
    return run_sync_real(leased_run, real_store)


@pytest.mark.parametrize("network", NETWORKS)
async def test_every_connector_stores_its_recorded_rows(network, networks, real_store, sync_real):
    report = await sync_real(network)
    assert report.outcome is Outcome.OK, report.reason
    rows = await stored_rows(real_store, network)
    wanted = expected(network)
    assert set(rows) == set(wanted)
    for external_id, fields in wanted.items():
        shown = {k: rows[external_id][k] for k in fields if k in STORED_FIELDS}
        assert shown == {k: v for k, v in fields.items() if k in STORED_FIELDS}, external_id
    view = await real_store.read(connections.find, ACCOUNT, network)
    assert view is not None
    assert (view.status, view.reason_code, view.transactions) == ("ok", None, len(wanted))
    assert view.position == "2026-03-15T12:00:00Z"
    assert view.lease_owner is None


@pytest.mark.parametrize("network", NETWORKS)
async def test_a_rerun_changes_nothing(network, networks, real_store, sync_real):
    await sync_real(network)
    before = await stored_rows(real_store, network)
    again = await sync_real(network)
    assert (again.counts.inserted, again.counts.updated) == (0, 0)
    assert await stored_rows(real_store, network) == before


@pytest.mark.parametrize("network", FLIPPING)
async def test_a_flipped_status_updates_its_row(
    network, networks, real_store, clock: FakeClock, sync_real
):
    await sync_real(network)
    before = await stored_rows(real_store, network)
    flip = FAKES[network].flip
    assert flip is not None
    external_id, raw, status = flip.external_id, flip.raw, flip.status
    record = find(networks, network, external_id)
    record[flip.member] = raw
    stamp_change(network, record, "status", clock.now())
    clock.advance(6 * 3600)
    report = await sync_real(network)
    assert report.outcome is Outcome.OK
    assert report.counts.updated == 1
    after = await stored_rows(real_store, network)
    assert set(after) == set(before)
    assert (after[external_id]["status"], after[external_id]["rawStatus"]) == (status, raw)
    assert after[external_id]["seq"] == before[external_id]["seq"]  # the same row, updated


@pytest.mark.parametrize("network", NETWORKS)
async def test_a_reversal_and_a_poison_row_are_stored_as_the_network_meant(
    network, networks, real_store, clock: FakeClock, sync_real
):
    """The conformance cases that end in rows, on the real stores: a reversal as the
    network reports it, and a row refused with its reason while the others are kept."""
    fake = FAKES[network]
    await sync_real(network)
    fake.reversal.apply(
        networks[network].records, find(networks, network, fake.reversal.target), clock.now()
    )
    poisoned = next(
        str(r[fake.id_field])
        for r in networks[network].records
        if str(r[fake.id_field]) not in (fake.reversal.target, fake.reversal.external_id)
    )
    before = (await stored_rows(real_store, network))[poisoned]
    fake.set_commission(find(networks, network, poisoned), "12abc")
    clock.advance(6 * 3600)
    report = await sync_real(network)
    rows = await stored_rows(real_store, network)
    reversed_row = rows[fake.reversal.external_id]
    assert (reversed_row["status"], reversed_row["commissionAmount"]) == (
        fake.reversal.status,
        fake.reversal.amount,
    )
    # The poisoned record is refused only where this run read it again (a feed or the
    # re-scan); its stored row is never overwritten by the worse value.
    assert rows[poisoned] == before
    view = await real_store.read(connections.find, ACCOUNT, network)
    assert view is not None and view.status == report.outcome.value
    if report.outcome is Outcome.PARTIAL:
        assert view.reason_code == "records_refused"
        assert poisoned in view.reason_message


FAILURES = {
    "401": (
        lambda st: st.inject.append(Canned(401, b"{}")),
        {"auth_failed"},
        "auth_rejected",
    ),
    "own bad credentials": (
        lambda st: setattr(st, "reject_auth", True),
        {"auth_failed"},
        "auth_rejected",
    ),
    "truncated": (
        lambda st: st.inject.append(Canned(200, b'[{"id": 15919')),
        {"partial", "error"},
        "malformed_response",
    ),
    "retry-after too long": (
        lambda st: st.inject.append(Canned(429, b"", {"Retry-After": "86400"})),
        {"partial", "error"},
        "rate_limited",
    ),
    "5xx for ever": (
        lambda st: st.inject.extend([Canned(500, b"down")] * 200),
        {"error"},
        "network_unavailable",
    ),
}


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("network", ["effiliation", "kwanko"])
async def test_outcomes_and_reasons_are_stored_with_the_connection(
    network, failure, networks, real_store, sync_real
):
    if network == "effiliation" and failure == "truncated":
        networks[network].inject.append(
            Canned(200, b"id_transaction|commission\nEF-1|2,00|Valide", content_type="text/csv")
        )
    else:
        FAILURES[failure][0](networks[network])
    report = await sync_real(network)
    _, statuses, code = FAILURES[failure]
    view = await real_store.read(connections.find, ACCOUNT, network)
    assert view is not None
    assert view.status in statuses and view.status == report.outcome.value
    assert view.reason_code == code
    assert view.reason_message == report.reason.message


async def test_a_lease_keeps_a_second_worker_off_and_ends_no_earlier_than_asked(
    networks, real_store, clock: FakeClock
):
    # The lease is taken at a fraction of a second: its end must round up, not down.
    clock.advance(0.6)
    first, second = AccountSyncStore(real_store, "w1"), AccountSyncStore(real_store, "w2")
    conn = connection("awin")
    assert await first.claim(conn, "w1", 1.0)
    assert not await second.claim(conn, "w2", 60.0)
    clock.advance(0.9)  # 0.1 s of the lease is left
    assert not await second.claim(conn, "w2", 60.0)
    assert conn not in await second.due_connections(clock.now(), 50)
    clock.advance(0.5)
    assert await second.claim(conn, "w2", 60.0)
    view = await real_store.read(connections.find, ACCOUNT, "awin")
    assert view is not None and view.lease_owner == "w2"


async def test_a_renewal_extends_its_holders_lease_only_and_is_no_new_attempt(
    networks, real_store, clock: FakeClock
):
    first, second = AccountSyncStore(real_store, "w1"), AccountSyncStore(real_store, "w2")
    conn = connection("awin")
    assert await first.claim(conn, "w1", 30.0)
    claimed = await real_store.read(connections.find, ACCOUNT, "awin")
    clock.advance(20)
    assert await first.renew(conn, "w1", 30.0)
    assert not await second.renew(conn, "w2", 30.0)  # another worker's lease: untouched
    renewed = await real_store.read(connections.find, ACCOUNT, "awin")
    assert claimed is not None and renewed is not None
    assert renewed.last_attempt_at == claimed.last_attempt_at
    assert renewed.lease_owner == "w1" and renewed.lease_expires_at > claimed.lease_expires_at
    clock.advance(20)  # past the claimed end, within the renewed one
    assert not await second.claim(conn, "w2", 30.0)
    await first.release(conn, "w1")
    assert not await first.renew(conn, "w1", 30.0)  # a released lease is not taken again


async def test_a_connection_left_by_a_dead_worker_is_due_once_its_lease_ends(
    networks, real_store, clock: FakeClock
):
    dead, alive = AccountSyncStore(real_store, "w1"), AccountSyncStore(real_store, "w2")
    conn = connection("awin")
    since = clock.now() - dt.timedelta(hours=6)
    assert conn in await dead.due_connections(since, 50)
    assert await dead.claim(conn, "w1", 30.0)
    # w1 dies without releasing: the connection is not due while the lease lasts...
    clock.advance(10)
    assert conn not in await alive.due_connections(clock.now() - dt.timedelta(hours=6), 50)
    # ...and is, with the attempt that never ended, once it has run out.
    clock.advance(21)
    assert conn in await alive.due_connections(clock.now() - dt.timedelta(hours=6), 50)
    assert await alive.claim(conn, "w2", 30.0)
    await alive.release(conn, "w2")
    # A released connection waits for its interval.
    assert conn not in await alive.due_connections(clock.now() - dt.timedelta(hours=6), 50)


async def test_a_worker_that_lost_its_lease_writes_nothing(networks, real_store, clock):
    first, second = AccountSyncStore(real_store, "w1"), AccountSyncStore(real_store, "w2")
    conn = connection("awin")
    window = Window(clock.now() - dt.timedelta(days=1), clock.now())
    assert await first.claim(conn, "w1", 30.0)
    clock.advance(31)  # w1 stalled past its lease; w2 takes over
    assert await second.claim(conn, "w2", 30.0)
    with pytest.raises(Conflict):
        await first.write_window(conn, window, [], Position(clock.now()))
    view = await real_store.read(connections.find, ACCOUNT, "awin")
    assert view is not None and view.position is None
    await second.write_window(conn, window, [], Position(clock.now()))
    assert await first.load_position(conn) == Position(clock.now().replace(microsecond=0))


async def test_a_due_list_older_than_another_workers_whole_sync_claims_nothing(
    networks, real_store, clock, leased_run
):
    late, quick = AccountSyncStore(real_store, "w1"), AccountSyncStore(real_store, "w2")
    since = clock.now() - dt.timedelta(hours=6)
    listed = await late.due_connections(since, 50)
    assert connection("awin") in listed
    report = await leased_run("awin", quick, "w2")
    assert report.outcome is Outcome.OK
    clock.advance(1)
    assert not await late.claim(connection("awin"), "w1", 3600.0)
    assert connection("awin") not in await late.due_connections(since, 50)
    await quick.release(connection("awin"), "w2")


class Recording(AccountSyncStore):
    """The store adapter, noting which connection each recorded outcome was for."""

    def __init__(
        self, store: AccountStore, worker_id: str, synced: list[str], all_done: asyncio.Event
    ) -> None:
        super().__init__(store, worker_id)
        self.synced = synced
        self.all_done = all_done

    async def record_outcome(self, connection, report) -> None:
        await super().record_outcome(connection, report)
        self.synced.append(connection.network)
        if len(self.synced) >= len(NETWORKS):
            self.all_done.set()


async def test_two_workers_on_one_store_sync_each_connection_once(
    database, networks, real_store, clock, settings, map_status, keyring
):
    other = await open_store(
        database, writable=True, readers=1, timeout=10.0, clock=lambda: clock.now()
    )
    synced: list[str] = []
    all_done = asyncio.Event()
    try:
        workers = [
            Worker(
                Recording(store, name, synced, all_done),
                credential_opener(keyring),
                map_status,
                WorkerConfig(worker_id=name, concurrency=3, poll_seconds=0.01),
                settings,
                clock,
                seal=credential_sealer(keyring),
            )
            for store, name in ((real_store, "w1"), (other, "w2"))
        ]
        stop = asyncio.Event()
        running = [asyncio.create_task(w.run(stop)) for w in workers]
        async with asyncio.timeout(60):
            await all_done.wait()
            await asyncio.sleep(0.2)  # time for a wrongly doubled sync to show
        stop.set()
        await asyncio.gather(*running)
    finally:
        await other.close()
    assert sorted(synced) == sorted(NETWORKS)
    assert all(r.outcome is Outcome.OK for w in workers for r in w.reports)
    views = await real_store.read(connections.find_all, ACCOUNT)
    assert {(v.status, v.lease_owner) for v in views} == {("ok", None)}
    for network in NETWORKS:
        assert len(await stored_rows(real_store, network)) == len(expected(network))
