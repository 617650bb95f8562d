"""Awin's payments collected by the sync into the real stores (SQLite and PostgreSQL),
from a fake written from the Public API's published shapes: each payment stored once with
its per-advertiser lines (paged breakdowns), reconciled to its amount, one
payment.created event each; a re-sync reads the list's first page only and duplicates
nothing; a breakdown that fails leaves its payment for the next run; and no commission
is paid without the network's evidence."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sync_support import ACCOUNT

from accounts.statusmap import load_status_map
from store import CommissionQuery, commissions, payments
from store.events import EventQuery, account_events
from store.payments import PaymentQuery
from sync.model import Outcome
from sync.storage import AccountSyncStore

pytestmark = pytest.mark.usefixtures("networks")


@pytest.fixture
def sync_real(leased_run, real_store):
    """`await sync_real(network)`: one leased sync into the real store."""

    async def run(network: str):
        return await leased_run(network, AccountSyncStore(real_store, "w1"), "w1")

    return run


def plant(networks, payment_id: str, day: str, amount: str, breakdown: list[tuple[int, str]]):
    awin = networks["awin"]
    awin.payments.append(
        {
            "paymentId": payment_id,
            "processingDate": f"{day}T00:00:00",
            "amount": Decimal(amount),
            "currency": "EUR",
            "paymentMethod": "BACS",
        }
    )
    awin.breakdowns[payment_id] = [
        {"advertiserId": adv, "advertiserName": f"Shop {adv}", "payment": Decimal(net)}
        for adv, net in breakdown
    ]


async def stored(store) -> dict[str, list[tuple[str, str | None, str]]]:
    rows = await store.read(payments.page, PaymentQuery(ACCOUNT, 100))
    out = {}
    for row in rows:
        detail = await store.read(payments.find, ACCOUNT, row.seq)
        out[row.external_id] = [
            (line.kind, line.program_external_id, line.amount) for line in detail.lines
        ]
    return out


async def created_events(store) -> int:
    feed = await store.read(account_events, EventQuery(ACCOUNT, 1000, "2000-01-01T00:00:00Z"))
    return sum(1 for event in feed if event.type == "payment.created")


def payment_requests(networks) -> list[str]:
    return [seen.path for seen in networks["awin"].seen if "/payments" in seen.path]


async def test_payments_are_stored_once_with_reconciled_lines(networks, real_store, sync_real):
    # 130 advertisers: two pages of the breakdown (100 a page).
    many = [(10_000 + n, "0.50") for n in range(130)]
    plant(networks, "9876543", "2026-02-15", "65.00", many)
    plant(networks, "9876544", "2026-03-01", "100.00", [(11111, "60.00"), (22222, "35.00")])
    report = await sync_real("awin")
    assert report.outcome is Outcome.OK, report.reason
    assert report.counts.payments == 2
    found = await stored(real_store)
    assert len(found["9876543"]) == 130 and {k for k, _, _ in found["9876543"]} == {"advertiser"}
    assert sum(Decimal(a) for _, _, a in found["9876543"]) == Decimal("65.00")
    # Short by 5.00: the gap is a line of its own.
    assert found["9876544"] == [
        ("advertiser", "11111", "60.00"),
        ("advertiser", "22222", "35.00"),
        ("unallocated", None, "5.00"),
    ]
    assert await created_events(real_store) == 2
    # Newest first, as the API lists them.
    rows = await real_store.read(payments.page, PaymentQuery(ACCOUNT, 100))
    assert [r.external_id for r in rows] == ["9876544", "9876543"]

    before = len(payment_requests(networks))
    again = await sync_real("awin")
    assert again.outcome is Outcome.OK and again.counts.payments == 0
    assert await stored(real_store) == found
    assert await created_events(real_store) == 2
    # Only the list's first page: every payment on it is stored, so is every older one.
    assert len(payment_requests(networks)) - before == 1

    plant(networks, "9876545", "2026-03-10", "1.00", [(11111, "1.00")])
    third = await sync_real("awin")
    assert third.counts.payments == 1
    assert set(await stored(real_store)) == {"9876543", "9876544", "9876545"}
    assert await created_events(real_store) == 3


async def test_a_failed_breakdown_leaves_the_payment_for_the_next_run(
    networks, real_store, sync_real
):
    plant(networks, "9876543", "2026-02-15", "10.00", [(11111, "10.00")])
    networks["awin"].failing_breakdowns.add("9876543")
    report = await sync_real("awin")
    assert report.outcome is Outcome.PARTIAL
    assert report.reason is not None and "payments not read" in report.reason.message
    assert await stored(real_store) == {}
    assert await created_events(real_store) == 0
    networks["awin"].failing_breakdowns.clear()
    later = await sync_real("awin")
    assert later.outcome is Outcome.OK, later.reason
    assert await stored(real_store) == {"9876543": [("advertiser", "11111", "10.00")]}


async def test_a_payment_outside_the_definition_is_refused_with_its_reason(
    networks, real_store, sync_real
):
    plant(networks, "9876543", "2026-02-15", "10.00", [(11111, "10.00")])
    networks["awin"].payments[0]["processingDate"] = "yesterday"
    report = await sync_real("awin")
    assert report.outcome is Outcome.PARTIAL
    assert report.reason is not None and report.reason.code == "records_refused"
    assert await stored(real_store) == {}


async def test_a_token_without_the_payments_role_still_syncs_commissions(
    networks, real_store, sync_real
):
    plant(networks, "9876543", "2026-02-15", "10.00", [(11111, "10.00")])
    networks["awin"].payments_forbidden = True
    report = await sync_real("awin")
    # Not auth_failed: the same token read every transaction.
    assert report.outcome is Outcome.PARTIAL
    assert report.reason is not None and report.reason.code == "payments_forbidden"
    assert report.counts.inserted == len(networks["awin"].records)
    assert await stored(real_store) == {}


async def test_no_commission_is_paid_without_evidence(networks, real_store, sync_real):
    plant(networks, "9876543", "2026-02-15", "4.26", [(11111, "4.26")])
    report = await sync_real("awin")
    assert report.outcome is Outcome.OK, report.reason
    rows = await real_store.read(
        commissions.page, CommissionQuery(ACCOUNT, limit=1000, network="awin")
    )
    records = {str(r["id"]): r for r in networks["awin"].records}
    words = load_status_map()
    paid = {row.external_id for row in rows if row.status == "paid"}
    assert paid, "the recording has a paid transaction"
    for external_id in paid:
        record = records[external_id]
        evidence = (
            record.get("paidToPublisher") is True
            or (record.get("paymentId") or 0) > 0
            or words("awin", record.get("commissionStatus")) == "paid"
        )
        assert evidence, f"{external_id} is paid without evidence"
    # An advertiser line is no commission's evidence: nothing else became paid.
    assert paid == {
        str(r["id"])
        for r in networks["awin"].records
        if r.get("paidToPublisher") is True or (r.get("paymentId") or 0) > 0
    }
