"""Late changes: an approval, a decline, a reversal and an amendment of a transaction older
than any re-scan reach the store on the next run wherever the network reports them through
a change filter of its own, and, where it has none, the table's word is kept: only the
re-scan catches them, so a change to an older transaction is not seen.

The fake networks answer each change filter as the research describes it (Awin dateType,
CJ locking date and correction records, Impact locking and last-update dates, Admitad
status_updated, Partnerize date_type=last_modified); `stamp_change` dates a change where
the network's filter reads it."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest
from fakes import FAKES
from fakes.base import Late
from support.clock import FakeClock
from sync_support import ACCOUNT, NETWORKS, FakeNetworks, MemoryStore, connection, stamp_change

from accounts.statusmap import load_status_map
from store import AccountStore, CommissionQuery, commissions
from sync.connectors import CONNECTORS
from sync.model import Outcome
from sync.storage import AccountSyncStore, credential_opener

DAY = 86400.0
TABLE = load_status_map()
KINDS = ("approval", "decline", "reversal", "amendment")


# The networks the scenario is planted on (a fake that declares its `late`).
LATE = tuple(n for n in NETWORKS if FAKES[n].late is not None)


def late(network: str) -> Late:
    found = FAKES[network].late
    assert found is not None
    return found


def caught(network: str) -> frozenset[str]:
    found = FAKES[network].late
    return frozenset() if found is None else found.caught


def word(network: str, status: str) -> str:
    """A word the network sends for `status`: the first its status table maps to it."""
    return next(w for w, s in TABLE.tables[network].items() if s == status)


def status_member(network: str) -> str:
    flip = FAKES[network].flip
    assert flip is not None, f"{network} sends no status word"
    return flip.member


def _external_id(network: str, n: int) -> Any:
    fake = FAKES[network]
    if isinstance(fake.records()[0][fake.id_field], int):
        return 990000 + n
    # CJ's watermark orders ids as numbers.
    return str(2299990000 + n) if network == "cj" else f"LATE-{n}"


def plant(networks: FakeNetworks, network: str, now: dt.datetime) -> dict[str, dict[str, Any]]:
    """Four new transactions five days old: three pending, the fourth approved."""
    fake, shape = FAKES[network], late(network)
    st = networks[network]
    planted = {}
    for n, kind in enumerate(KINDS):
        record = copy.deepcopy(st.records[0])
        record[fake.id_field] = _external_id(network, n)
        record[status_member(network)] = word(
            network, "approved" if kind == "reversal" else "pending"
        )
        for member in shape.dates:
            record[member] = shape.dated(now - dt.timedelta(days=5))
        if network == "cj":
            record["eventDate"] = record["postingDate"]
            record["originalActionId"] = record["commissionId"]
        record.update(shape.extra)
        st.records.append(record)
        planted[kind] = record
    return planted


def change(network: str, planted: dict[str, dict[str, Any]], now: dt.datetime, st) -> None:
    """The four late changes, dated as the network dates them."""
    fake, member = FAKES[network], status_member(network)
    approval, decline, reversal, amendment = (planted[k] for k in KINDS)
    approval[member] = word(network, "approved")
    stamp_change(network, approval, "status", now)
    if network == "cj":
        # Corrections are new records posted now, signed, naming their original.
        for n, (record, reason, amount) in enumerate(
            [
                (decline, "DUPLICATED_ORDER", f"-{decline['pubCommissionAmountPubCurrency']}"),
                (
                    reversal,
                    "RETURNED_MERCHANDISE",
                    f"-{reversal['pubCommissionAmountPubCurrency']}",
                ),
                (amendment, "RETURNED_MERCHANDISE", "-1.00"),
            ],
            start=10,
        ):
            fix = copy.deepcopy(record)
            fix.update(
                commissionId=str(2299990000 + n),
                original=False,
                originalActionId=str(record["commissionId"]),
                correctionReason=reason,
                pubCommissionAmountPubCurrency=amount,
                postingDate=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            )
            st.records.append(fix)
        return
    decline[member] = word(network, "declined")
    stamp_change(network, decline, "status", now)
    reversal[member] = word(network, "declined")
    stamp_change(network, reversal, "reversal", now)
    fake.set_commission(amendment, fake.amended[0])
    stamp_change(network, amendment, "amount", now)


async def scenario(network: str, networks: FakeNetworks, clock: FakeClock, run) -> None:
    """Plant, sync, let 150 days of monthly runs pass, change, sync once more."""
    planted = plant(networks, network, clock.now())
    assert (await run(network)).outcome is Outcome.OK
    for _ in range(5):  # 150 days: past every re-scan, with runs keeping the position up
        clock.advance(30 * DAY)
        assert (await run(network)).outcome is Outcome.OK
    change(network, planted, clock.now() - dt.timedelta(hours=1), networks[network])
    clock.advance(6 * 3600)
    report = await run(network)
    assert report.outcome is Outcome.OK, report.reason


def expectations(network: str) -> dict[str, tuple[str, str | None]]:
    """external id -> (status, commission) the store should hold after the scenario; a
    commission of None: the one first stored."""
    wanted: dict[str, tuple[str, str | None]] = {}
    for n, kind in enumerate(KINDS):
        external_id = str(_external_id(network, n))
        first = "approved" if kind == "reversal" else "pending"
        if kind not in caught(network):
            wanted[external_id] = (first, None)
        elif kind == "amendment":
            wanted[external_id] = ("pending", FAKES[network].amended[1])
        else:
            wanted[external_id] = ({"approval": "approved"}.get(kind, "declined"), None)
    return wanted


@pytest.mark.parametrize("network", LATE)
async def test_late_changes_reach_the_store_where_the_network_reports_them(
    network, networks, store: MemoryStore, clock: FakeClock, run_sync
):
    await scenario(network, networks, clock, run_sync)
    rows = store.rows_of(network)
    first = rows[str(_external_id(network, 0))].commission_amount
    for external_id, (status, commission) in expectations(network).items():
        assert rows[external_id].status == status, (external_id, rows[external_id])
        assert rows[external_id].commission_amount == (commission or first), external_id
    if network == "cj":
        corrections = {
            r.external_id: r for r in rows.values() if r.external_id.startswith("22999900")
        }
        corrections = {k: r for k, r in corrections.items() if r.original_id}
        originals = {r.original_id for r in corrections.values()}
        assert originals == {"2299990001", "2299990002", "2299990003"}
        assert all(r.commission_amount.startswith("-") for r in corrections.values())


def test_the_table_claims_exactly_what_the_fakes_show():
    """A network whose fake catches late changes claims its change feeds in docs/sync.md;
    one whose fake catches none says it has no change filter."""
    for network in LATE:
        claimed = CONNECTORS[network].spec.late_changes_caught()
        if caught(network):
            assert CONNECTORS[network].spec.change_feeds and "any transaction" in claimed
        else:
            assert not CONNECTORS[network].spec.change_feeds
            assert "no change filter is published" in claimed


@pytest.mark.parametrize("network", LATE)
async def test_late_changes_on_the_real_stores(
    network, networks, leased_run, real_store: AccountStore, clock: FakeClock
):
    sync_store = AccountSyncStore(real_store, "w1")

    async def run(name: str):
        return await leased_run(name, sync_store)

    await scenario(network, networks, clock, run)
    stored = {
        r.external_id: r
        for r in await real_store.read(
            commissions.page, CommissionQuery(ACCOUNT, limit=1000, network=network)
        )
    }
    first = stored[str(_external_id(network, 0))].commission_amount
    for n, (external_id, (status, commission)) in enumerate(expectations(network).items()):
        assert stored[external_id].status == status, external_id
        assert stored[external_id].commission_amount == (commission or first), external_id
        # A caught change kept the state it replaced; a missed one left no trace.
        detail = await real_store.read(commissions.find, ACCOUNT, stored[external_id].seq)
        assert detail is not None
        before = "approved" if KINDS[n] == "reversal" else "pending"
        if KINDS[n] in caught(network):
            assert [(h.status, h.commission_amount) for h in detail.history] == [(before, first)], (
                external_id
            )
        else:
            assert detail.history == (), external_id


@pytest.mark.parametrize("absent", ["omitted", "null"])
async def test_an_answer_without_a_member_keeps_the_stored_value_and_history_is_kept(
    absent, networks, run_sync, real_store: AccountStore, keyring, clock: FakeClock
):
    """The saleAmount case: a later answer that omits it, or sends it null, leaves the
    stored one; the status change it brings is stored, with the state it replaced."""
    sync_store = AccountSyncStore(real_store, "w1")

    async def run():

        conn = connection("awin")
        assert await sync_store.claim(conn, "w1", 3600.0)
        try:
            report = await run_sync("awin", store=sync_store, decrypt=credential_opener(keyring))
        finally:
            await sync_store.release(conn, "w1")
        assert report.outcome is Outcome.OK, report.reason
        return {
            r.external_id: r
            for r in await real_store.read(
                commissions.page, CommissionQuery(ACCOUNT, limit=1000, network="awin")
            )
        }

    before = (await run())["1591984035"]
    assert (before.status, before.sale_amount, before.clicked_at) == (
        "approved",
        "85.20",
        "2026-01-03T09:55:00Z",
    )
    (record,) = [r for r in networks["awin"].records if r["id"] == 1591984035]
    if absent == "omitted":
        del record["saleAmount"], record["clickDate"]
    else:
        record["saleAmount"] = record["clickDate"] = None
    record["commissionStatus"] = "declined"
    stamp_change("awin", record, "status", clock.now())
    clock.advance(6 * 3600)
    after = (await run())["1591984035"]
    assert (after.status, after.sale_amount, after.clicked_at) == (
        "declined",
        "85.20",
        "2026-01-03T09:55:00Z",
    )
    detail = await real_store.read(commissions.find, ACCOUNT, after.seq)
    assert detail is not None
    assert [(h.status, h.raw_status, h.sale_amount) for h in detail.history] == [
        ("approved", "approved", "85.20")
    ]
    assert detail.history[0].replaced_at == "2026-03-15T18:00:00Z"  # the second sync
