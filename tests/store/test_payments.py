"""Payments in the store, on both engines: lines reconciled to the amount per currency (a
gap is a line of its own), written once with one payment.created event, keyset pages
newest first with their filters, another account's payment unknown, and a payment line
as the evidence that makes a commission paid."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.accountkit import StepClock, new_commission

from contract.payment import NewPayment, NewPaymentLine, reconcile
from store import accounts, commissions, open_store, payments
from store.events import EventQuery, account_events
from store.payments import InvalidPayment, PaymentQuery

UID = "acc_payments"
OTHER = "acc_other"
START = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


def advertiser(program: str, amount: str, currency: str = "EUR") -> NewPaymentLine:
    return NewPaymentLine("advertiser", amount, currency, program_external_id=program)


def payment(external_id: str, amount: str, paid_at: str, *lines: NewPaymentLine) -> NewPayment:
    return NewPayment(external_id, amount, "EUR", paid_at, tuple(lines), method="BACS")


def sums(lines: tuple[NewPaymentLine, ...]) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    for line in lines:
        out[line.currency] = out.get(line.currency, Decimal(0)) + Decimal(line.amount)
    return {currency: total for currency, total in out.items() if total != 0}


AMOUNTS = st.decimals(min_value=-10_000, max_value=10_000, places=2).map(lambda d: format(d, "f"))


@given(
    amount=AMOUNTS,
    lines=st.lists(st.tuples(AMOUNTS, st.sampled_from(["EUR", "GBP", "USD"])), max_size=8),
)
def test_reconciled_lines_sum_to_the_amount_per_currency(amount, lines):
    given_lines = tuple(NewPaymentLine("advertiser", a, c) for a, c in lines)
    done = reconcile(NewPayment("p1", amount, "EUR", "2026-02-15T00:00:00Z", given_lines))
    expected = {"EUR": Decimal(amount)} if Decimal(amount) != 0 else {}
    assert sums(done.lines) == expected
    # The network's lines stay as they came, first and in order; at most one gap a currency.
    assert done.lines[: len(given_lines)] == given_lines
    gaps = [line for line in done.lines if line.kind == "unallocated"]
    assert len({line.currency for line in gaps}) == len(gaps)
    assert all(Decimal(line.amount) != 0 for line in gaps)


def test_reconciling_twice_changes_nothing():
    once = reconcile(payment("p1", "100.00", "2026-02-15T00:00:00Z", advertiser("1", "60.00")))
    assert reconcile(once) == once
    assert [line.amount for line in once.lines] == ["60.00", "40.00"]


@pytest.fixture
async def store(database: str):
    opened = await open_store(database, writable=True, readers=1, clock=StepClock(START))
    await opened.write(accounts.create, None, "free", uid=UID)
    await opened.write(accounts.create, None, "free", uid=OTHER)
    try:
        yield opened
    finally:
        await opened.close()


async def test_a_payment_is_stored_once_with_its_gap_and_one_event(store):
    made = payment(
        "9876543",
        "100.00",
        "2026-02-15T00:00:00Z",
        advertiser("11111", "60.00"),
        advertiser("22222", "25.50"),
        advertiser("33333", "1.00", "GBP"),
    )
    assert await store.write(payments.write, UID, "awin", made) is True
    assert await store.write(payments.write, UID, "awin", made) is False
    [row] = await store.read(payments.page, PaymentQuery(UID, 10))
    detail = await store.read(payments.find, UID, row.seq)
    assert detail is not None
    kinds = [(line.kind, line.amount, line.currency) for line in detail.lines]
    assert kinds == [
        ("advertiser", "60.00", "EUR"),
        ("advertiser", "25.50", "EUR"),
        ("advertiser", "1.00", "GBP"),
        ("unallocated", "14.50", "EUR"),
        ("unallocated", "-1.00", "GBP"),
    ]
    feed = await store.read(account_events, EventQuery(UID, 100, "2000-01-01T00:00:00Z"))
    created = [e for e in feed if e.type == "payment.created"]
    assert len(created) == 1
    data = orjson.loads(store.ids.event_data(created[0].data))
    assert data["id"] == store.ids.payment(row.seq)
    assert (data["amount"], data["currency"], data["externalId"]) == (100.0, "EUR", "9876543")
    assert '"amount":100.00' in created[0].data  # verbatim, never a float's digits
    # Another account: neither its page nor its detail.
    assert await store.read(payments.page, PaymentQuery(OTHER, 10)) == []
    assert await store.read(payments.find, OTHER, row.seq) is None


async def test_pages_newest_first_with_filters(store):
    for n in range(7):
        day = f"2026-0{1 + n % 2}-{10 + n:02d}T00:00:00Z"
        network = "awin" if n % 3 else "skimlinks"
        await store.write(payments.write, UID, network, payment(f"p{n}", "10.00", day))
    everything = await store.read(payments.page, PaymentQuery(UID, 100))
    keys = [(row.paid_at, row.seq) for row in everything]
    assert keys == sorted(keys, reverse=True) and len(keys) == 7
    seen = []
    after = None
    while True:
        page = await store.read(payments.page, PaymentQuery(UID, 3, after=after))
        seen += page
        if len(page) < 3:
            break
        after = (page[-1].paid_at, page[-1].seq)
    assert seen == everything
    awin = await store.read(payments.page, PaymentQuery(UID, 100, network="awin"))
    assert {row.network for row in awin} == {"awin"} and len(awin) == 4
    february = await store.read(
        payments.page,
        PaymentQuery(UID, 100, since=dt.date(2026, 2, 1), until=dt.date(2026, 2, 28)),
    )
    assert [row.external_id for row in february] == ["p5", "p3", "p1"]


async def test_a_line_naming_a_commission_is_its_evidence_of_payment(store):
    await store.write(
        commissions.upsert,
        UID,
        "skimlinks",
        [new_commission("c1", status="approved"), new_commission("c2", status="approved")],
    )
    line = NewPaymentLine("commission", "4.26", "EUR", commission_external_id="c1")
    await store.write(
        payments.write, UID, "skimlinks", payment("inv1", "4.26", "2026-02-01T00:00:00Z", line)
    )
    rows = await store.read(commissions.page, commissions.CommissionQuery(UID, 10))
    assert {row.external_id: row.status for row in rows} == {"c1": "paid", "c2": "approved"}
    # A later answer (or file) of the network that says approved keeps the evidence.
    result = await store.write(
        commissions.upsert,
        UID,
        "skimlinks",
        [new_commission("c1", status="approved"), new_commission("c2", status="pending")],
    )
    assert (result.updated, result.unchanged) == (1, 1)
    rows = await store.read(commissions.page, commissions.CommissionQuery(UID, 10))
    assert {row.external_id: row.status for row in rows} == {"c1": "paid", "c2": "pending"}
    [stored] = await store.read(payments.page, PaymentQuery(UID, 10))
    detail = await store.read(payments.find, UID, stored.seq)
    assert detail is not None and detail.lines[0].commission_seq is not None
    assert [line.kind for line in detail.lines] == ["commission"]


async def test_an_invalid_payment_is_refused_and_nothing_written(store):
    bad = payment("p1", "1e5", "2026-02-01T00:00:00Z")
    with pytest.raises(InvalidPayment, match="amount"):
        await store.write(payments.write, UID, "awin", bad)
    assert await store.read(payments.page, PaymentQuery(UID, 10)) == []
