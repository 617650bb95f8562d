"""TradeTracker's payments collected by the sync into the real stores (SQLite and
PostgreSQL), from a fake written from the published Payment shape (getPayments: invoiceNumber,
currency, subTotal, VAT, endTotal, billDate, payDate): each paid invoice stored once, its
whole amount one `unallocated` line (no breakdown is published), one payment.created event
each; an invoice not paid yet waits for the run after its payDate; a re-sync writes
nothing; a record outside the definition is refused with its reason; a session that ends
before the payments is opened again; and no commission is paid by a payment."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from fakes.tradetracker import load_payments
from sync_support import ACCOUNT

from accounts.statusmap import load_status_map
from store import CommissionQuery, commissions, payments
from store.events import EventQuery, account_events
from store.payments import PaymentQuery
from sync.model import Outcome
from sync.storage import AccountSyncStore

pytestmark = pytest.mark.usefixtures("networks")

NETWORK = "tradetracker"


@pytest.fixture
def sync_real(leased_run, real_store):
    """`await sync_real()`: one leased TradeTracker sync into the real store."""

    async def run():
        return await leased_run(NETWORK, AccountSyncStore(real_store, "w1"), "w1")

    return run


@pytest.fixture
def invoices(networks):
    """The recorded invoices, planted as the fake's getPayments answer."""
    st = networks[NETWORK]
    st.payments[:] = load_payments()
    return st.payments


async def stored(store) -> dict[str, tuple[str, str, str, list[tuple[str, str, str]]]]:
    rows = await store.read(payments.page, PaymentQuery(ACCOUNT, 100))
    out = {}
    for row in rows:
        assert row.network == NETWORK
        detail = await store.read(payments.find, ACCOUNT, row.seq)
        out[row.external_id] = (
            row.amount,
            row.currency,
            row.paid_at,
            [(line.kind, line.amount, line.currency) for line in detail.lines],
        )
    return out


async def created_events(store) -> int:
    feed = await store.read(account_events, EventQuery(ACCOUNT, 1000, "2000-01-01T00:00:00Z"))
    return sum(1 for event in feed if event.type == "payment.created")


async def test_paid_invoices_are_stored_once_each_wholly_unallocated(
    networks, real_store, sync_real, invoices
):
    report = await sync_real()
    assert report.outcome is Outcome.OK, report.reason
    # The third invoice has no payDate yet: not a payment.
    assert report.counts.payments == 2
    found = await stored(real_store)
    assert found == {
        "TT-2026-0001": (
            "121.00",
            "EUR",
            "2026-02-13T23:00:00Z",
            [("unallocated", "121.00", "EUR")],
        ),
        "TT-2026-0002": ("42.50", "GBP", "2026-03-13T23:00:00Z", [("unallocated", "42.50", "GBP")]),
    }
    assert await created_events(real_store) == 2

    again = await sync_real()
    assert again.outcome is Outcome.OK, again.reason
    assert again.counts.payments == 0
    assert await stored(real_store) == found
    assert await created_events(real_store) == 2

    # Once the third invoice is paid, the next run stores it, and only it.
    invoices[2]["payDate"] = "2026-03-15T09:00:00+01:00"
    third = await sync_real()
    assert third.counts.payments == 1
    assert (await stored(real_store))["TT-2026-0003"] == (
        "12.10",
        "EUR",
        "2026-03-15T08:00:00Z",
        [("unallocated", "12.10", "EUR")],
    )
    assert await created_events(real_store) == 3


async def test_a_pay_date_still_ahead_waits_for_the_run_after_it(
    networks, real_store, sync_real, invoices, clock
):
    invoices[2]["payDate"] = "2026-03-31T00:00:00+02:00"  # the clock reads 2026-03-15
    report = await sync_real()
    assert report.outcome is Outcome.OK, report.reason
    assert set(await stored(real_store)) == {"TT-2026-0001", "TT-2026-0002"}
    clock.advance(dt.timedelta(days=16).total_seconds())
    later = await sync_real()
    assert later.counts.payments == 1
    assert "TT-2026-0003" in await stored(real_store)


@pytest.mark.parametrize(
    ("member", "value", "reason"),
    [
        ("endTotal", "12,10", "endTotal: not a number"),
        ("endTotal", None, "endTotal: missing"),
        ("currency", "EURO", "currency: not an ISO 4217 currency code"),
        ("currency", None, "currency: missing"),
        ("invoiceNumber", "", "invoiceNumber: missing"),
        ("payDate", "next week", "payDate: not a date"),
    ],
)
async def test_an_invoice_outside_the_definition_is_refused_with_its_reason(
    networks, real_store, sync_real, invoices, member, value, reason
):
    invoices[0][member] = value
    report = await sync_real()
    assert report.outcome is Outcome.PARTIAL
    assert report.reason is not None and report.reason.code == "records_refused"
    assert "1 record(s) refused" in report.reason.message
    assert f"payment: {reason}" in report.reason.message
    # The others are stored all the same; the refused one is not.
    assert set(await stored(real_store)) == {"TT-2026-0002"}


async def test_a_session_that_ends_before_the_payments_is_opened_again(
    networks, real_store, sync_real, invoices
):
    st = networks[NETWORK]
    original_fake = st.fake
    original = original_fake.serve

    async def session_ends_at_get_payments(request, state):
        body = await request.read()
        if b"getPayments" in body and "ended" not in state.tokens:
            state.tokens.append("ended")
        return await original(request, state)

    st.fake = dataclasses.replace(original_fake, serve=session_ends_at_get_payments)
    report = await sync_real()
    assert report.outcome is Outcome.OK, report.reason
    assert set(await stored(real_store)) == {"TT-2026-0001", "TT-2026-0002"}
    assert st.tokens == ["sess0", "ended", "sess2"]


async def test_no_commission_is_paid_by_a_payment(networks, real_store, sync_real, invoices):
    report = await sync_real()
    assert report.outcome is Outcome.OK, report.reason
    assert report.counts.payments == 2
    rows = await real_store.read(
        commissions.page, CommissionQuery(ACCOUNT, limit=1000, network=NETWORK)
    )
    records = {str(r["ID"]): r for r in networks[NETWORK].records}
    words = load_status_map()
    paid = {row.external_id for row in rows if row.status == "paid"}
    assert paid, "the recording has a paid-out transaction"
    # Paid only by the transaction's own paidOut (or a status word meaning paid).
    for external_id in paid:
        record = records[external_id]
        assert record.get("paidOut") in ("true", "1", True) or (
            words(NETWORK, record.get("transactionStatus")) == "paid"
        ), f"{external_id} is paid without evidence"
    assert paid == {i for i, r in records.items() if r.get("paidOut") in ("true", "1", True)}
