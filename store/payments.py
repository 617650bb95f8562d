"""Operations on payments: the sync's write of a payment with its lines, the API's pages
and details, and the `paid` status a payment's line gives the commission it names.

Run them through the store's doors: `await store.write(payments.write, uid, network,
payment)`, `await store.read(payments.page, query)`. The tables are schema step 10
(store/schema/v010_payments.py).

A payment is written once, with its lines reconciled (contract.payment.reconcile: they
sum exactly to its amount per currency, any difference a line of kind `unallocated`) and
its `payment.created` event, in one transaction; the network's id finds it again, and a
payment already stored is left as it is (a re-sync writes nothing, emits nothing).

A commission becomes `paid` on evidence only: its network's own word or payment flag
(the sync's mapping), or a payment line naming it (here). A line's evidence outlasts a
later answer of the network that says less (`keep_paid`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from contract.commission import NewCommission
from contract.commission import latest_instant as commission_latest
from contract.payment import NewPayment, problem, reconcile
from contract.vocabulary import EVENT_TYPES
from store.accounts import account_id
from store.base import check_network, utc_now
from store.core import Session
from store.events import EVENTS_LOCK

PAYMENT_CREATED = "payment.created"
assert PAYMENT_CREATED in EVENT_TYPES
PAID = "paid"
# The largest identity both databases hold: a public id decoding past it names no payment.
MAX_PAYMENT_SEQ = 2**63 - 1

PAYMENT_COLUMNS = "id, network, external_id, amount, currency, paid_at, method"


class InvalidPayment(ValueError):  # noqa: N818 - reads as what it reports
    """A payment outside contract.payment's definition: `field` and why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PaymentQuery:
    """One page of one account's payments, newest first, filters already validated."""

    account_uid: str
    limit: int  # rows to return; callers ask for page size + 1 to learn hasMore
    network: str | None = None
    since: dt.date | None = None  # inclusive, on the UTC date of paid_at
    until: dt.date | None = None  # inclusive
    after: tuple[str, int] | None = None  # (paid_at, seq) of the last row already seen


@dataclass(frozen=True, slots=True)
class PaymentRow:
    seq: int
    network: str
    external_id: str
    amount: str
    currency: str
    paid_at: str
    method: str | None


@dataclass(frozen=True, slots=True)
class PaymentLineRow:
    kind: str
    program_external_id: str | None
    program_name: str | None
    commission_external_id: str | None
    commission_seq: int | None  # the stored commission the line names, if the store has it
    amount: str
    currency: str


@dataclass(frozen=True, slots=True)
class PaymentDetail:
    row: PaymentRow
    lines: tuple[PaymentLineRow, ...]


def check_payment(payment: NewPayment, latest: str | None = None) -> None:
    """InvalidPayment naming the first field of `payment` at fault."""
    found = problem(payment, latest or commission_latest(utc_now()))
    if found is not None:
        raise InvalidPayment(*found)


def _event_data(seq: int, network: str, payment: NewPayment) -> str:
    """The payment.created data: the Payment as /v1/payments lists it, its id the row id
    (PublicIds.event_data puts the public id in, as for commissions)."""
    return orjson.dumps(
        {
            "id": f"pay_{seq:016x}",
            "network": network,
            "externalId": payment.external_id,
            "amount": orjson.Fragment(payment.amount),
            "currency": payment.currency,
            "paidAt": payment.paid_at,
            "method": payment.method,
        }
    ).decode()


async def stored_ids(
    s: Session, account_uid: str, network: str, external_ids: Sequence[str]
) -> set[str]:
    """Which of `external_ids` the account already holds as payments of `network`."""
    if not external_ids:
        return set()
    found: set[str] = set()
    for n in range(0, len(external_ids), 500):
        chunk = list(external_ids[n : n + 500])
        rows = await s.fetch(
            "SELECT external_id FROM payments WHERE account_id = "
            "(SELECT id FROM accounts WHERE uid = ?) AND network = ? "
            f"AND external_id IN ({', '.join('?' * len(chunk))})",
            account_uid,
            network,
            *chunk,
        )
        found.update(row[0] for row in rows)
    return found


async def write(s: Session, account_uid: str, network: str, payment: NewPayment) -> bool:
    """Store `payment` with its reconciled lines and its payment.created event, and mark
    the commissions its lines name `paid`; False (nothing written) when the account holds
    it already. InvalidPayment for a payment outside the definition."""
    check_network(network)
    check_payment(payment)
    payment = reconcile(payment)
    row_id = await account_id(s, account_uid)
    if s.dialect.concurrent_writes:
        # The event's id is taken, and committed, in the account's order (store.events).
        await s.execute(EVENTS_LOCK, row_id)
    now = s.now()
    seq = await s.fetchval(
        "INSERT INTO payments (account_id, network, external_id, amount, currency, paid_at, "
        "method, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (account_id, network, external_id) DO NOTHING RETURNING id",
        row_id,
        network,
        payment.external_id,
        payment.amount,
        payment.currency,
        payment.paid_at,
        payment.method,
        now,
    )
    if seq is None:
        return False
    await s.executemany(
        "INSERT INTO payment_lines (payment_id, position, kind, program_external_id, "
        "program_name, commission_external_id, amount, currency) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                seq,
                n,
                line.kind,
                line.program_external_id,
                line.program_name,
                line.commission_external_id,
                line.amount,
                line.currency,
            )
            for n, line in enumerate(payment.lines)
        ],
    )
    await s.execute(
        "INSERT INTO events (account_id, type, occurred_at, data) VALUES (?, ?, ?, ?)",
        row_id,
        PAYMENT_CREATED,
        now,
        _event_data(int(seq), network, payment),
    )
    named = sorted(
        {line.commission_external_id for line in payment.lines if line.commission_external_id}
    )
    for n in range(0, len(named), 500):
        chunk = named[n : n + 500]
        # The status only: the network's word stays as it said it (rawStatus).
        await s.execute(
            "UPDATE commissions SET status = 'paid', updated_at = ? "
            "WHERE account_id = ? AND network = ? AND status <> 'paid' "
            f"AND external_id IN ({', '.join('?' * len(chunk))})",
            now,
            row_id,
            network,
            *chunk,
        )
    return True


async def keep_paid(
    s: Session, account_uid: str, network: str, rows: Sequence[NewCommission]
) -> list[NewCommission]:
    """`rows` with the status `paid` for each one a stored payment line names: a later
    answer of the network that says `approved` does not undo the payment's evidence."""
    ids = [row.external_id for row in rows if row.status != PAID]
    named: set[str] = set()
    for n in range(0, len(ids), 500):
        chunk = ids[n : n + 500]
        found = await s.fetch(
            "SELECT DISTINCT l.commission_external_id FROM payment_lines l "
            "JOIN payments p ON p.id = l.payment_id "
            "WHERE p.account_id = (SELECT id FROM accounts WHERE uid = ?) AND p.network = ? "
            f"AND l.commission_external_id IN ({', '.join('?' * len(chunk))})",
            account_uid,
            network,
            *chunk,
        )
        named.update(row[0] for row in found)
    if not named:
        return list(rows)
    out: list[NewCommission] = []
    for row in rows:
        if row.external_id in named:
            stated = None if row.stated is None else row.stated | {"status"}
            row = replace(row, status=PAID, stated=stated)
        out.append(row)
    return out


def payments_sql(query: PaymentQuery) -> tuple[str, list[Any]]:
    """One keyset page: the account's payments strictly after `query.after`, newest first
    (read by the payments_page and payments_network_page indexes)."""
    where = ["account_id = (SELECT id FROM accounts WHERE uid = ?)"]
    params: list[Any] = [query.account_uid]
    if query.network is not None:
        where.append("network = ?")
        params.append(query.network)
    if query.since is not None:
        where.append("paid_at >= ?")
        params.append(f"{query.since.isoformat()}T00:00:00Z")
    if query.until is not None:
        where.append("paid_at <= ?")
        params.append(f"{query.until.isoformat()}T23:59:59Z")
    if query.after is not None:
        where.append("(paid_at, id) < (?, ?)")
        params.extend(query.after)
    sql = (
        f"SELECT {PAYMENT_COLUMNS} FROM payments WHERE {' AND '.join(where)} "
        "ORDER BY paid_at DESC, id DESC LIMIT ?"
    )
    params.append(query.limit)
    return sql, params


async def page(s: Session, query: PaymentQuery) -> list[PaymentRow]:
    """One keyset page of the account's payments: paid_at DESC then seq DESC, never OFFSET."""
    sql, params = payments_sql(query)
    return [PaymentRow(*row) for row in await s.fetch(sql, *params)]


async def find(s: Session, account_uid: str, seq: int) -> PaymentDetail | None:
    """The account's payment `seq` with its lines in order, or None (another account's
    payments are None too)."""
    if not 0 < seq <= MAX_PAYMENT_SEQ:
        return None
    row = await s.fetchrow(
        f"SELECT {PAYMENT_COLUMNS}, account_id FROM payments "
        "WHERE id = ? AND account_id = (SELECT id FROM accounts WHERE uid = ?)",
        seq,
        account_uid,
    )
    if row is None:
        return None
    *columns, owner = tuple(row)
    payment = PaymentRow(*columns)
    lines = await s.fetch(
        "SELECT l.kind, l.program_external_id, l.program_name, l.commission_external_id, "
        "c.id, l.amount, l.currency FROM payment_lines l "
        "LEFT JOIN commissions c ON c.account_id = ? AND c.network = ? "
        "AND c.external_id = l.commission_external_id "
        "WHERE l.payment_id = ? ORDER BY l.position",
        owner,
        payment.network,
        seq,
    )
    return PaymentDetail(payment, tuple(PaymentLineRow(*line) for line in lines))
