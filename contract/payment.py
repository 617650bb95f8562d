"""What a valid payment is: the one definition the sync's mapping and the store's check
apply (store.payments), as contract.commission is for commissions.

A payment is what a network paid the account: its own id, an amount and currency as it
states them, when it was processed, and its lines (per advertiser or per commission, as
the network gives them). Amounts and instants take the forms of contract.commission.

The lines of a stored payment sum exactly to its amount in its currency, and to zero in
any other: `reconcile` adds the difference per currency as a line of kind `unallocated`,
so a breakdown that is short, long or in another currency is shown, never hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

from contract.commission import amount_problem, currency_problem, instant_problem, text_problem
from contract.vocabulary import PAYMENT_LINE_KINDS

UNALLOCATED = "unallocated"
# A payment's lines at most: Awin's breakdowns stop at an offset of 10,000.
LINES_MAX = 10_000
METHOD_MAX = 100


@dataclass(frozen=True, slots=True)
class NewPaymentLine:
    """One line of a payment as its network gave it."""

    kind: str
    amount: str
    currency: str
    program_external_id: str | None = None
    program_name: str | None = None
    commission_external_id: str | None = None


@dataclass(frozen=True, slots=True)
class NewPayment:
    """One payment as its network reported it, normalised."""

    external_id: str
    amount: str
    currency: str
    paid_at: str
    lines: tuple[NewPaymentLine, ...] = ()
    method: str | None = None


def line_problem(line: NewPaymentLine) -> str | None:
    """Why `line` is not a valid line, None when it is."""
    if line.kind not in PAYMENT_LINE_KINDS:
        return f"kind: not one of {', '.join(PAYMENT_LINE_KINDS)}"
    if (why := amount_problem(line.amount)) is not None:
        return f"amount: {why}"
    if (why := currency_problem(line.currency)) is not None:
        return f"currency: {why}"
    for name, value in (
        ("program_external_id", line.program_external_id),
        ("program_name", line.program_name),
        ("external_id", line.commission_external_id),
    ):
        if value is not None and (why := text_problem(name, value)) is not None:
            return f"{name}: {why}"
    if line.kind == "commission" and not line.commission_external_id:
        return "commission_external_id: a commission line names its commission"
    return None


def problem(payment: NewPayment, latest: str) -> tuple[str, str] | None:
    """The first (field, reason) at fault in `payment`, None when it is valid and its
    instant is at most `latest` (contract.commission.latest_instant)."""
    if (why := text_problem("external_id", payment.external_id)) is not None:
        return "external_id", why
    if (why := amount_problem(payment.amount)) is not None:
        return "amount", why
    if (why := currency_problem(payment.currency)) is not None:
        return "currency", why
    if (why := instant_problem(payment.paid_at, latest)) is not None:
        return "paid_at", why
    if payment.method is not None and not (
        len(payment.method) <= METHOD_MAX and payment.method.isprintable()
    ):
        return "method", f"more than {METHOD_MAX} printable characters"
    if len(payment.lines) > LINES_MAX:
        return "lines", f"more than {LINES_MAX}"
    for n, line in enumerate(payment.lines):
        if (why := line_problem(line)) is not None:
            return f"lines[{n}]", why
    return None


def plain(value: Decimal) -> str:
    """A Decimal in the stored amount form: no exponent, no negative zero."""
    text = format(value, "f")
    return "0" if Decimal(text) == 0 else text


def gaps(payment: NewPayment) -> dict[str, str]:
    """Per currency, what the payment's lines leave unaccounted for (its amount less their
    sum in its currency, minus their sum in any other), the currencies with a difference
    only."""
    sums: dict[str, Decimal] = {payment.currency: Decimal(0)}
    for line in payment.lines:
        sums[line.currency] = sums.get(line.currency, Decimal(0)) + Decimal(line.amount)
    out = {}
    for currency, total in sums.items():
        target = Decimal(payment.amount) if currency == payment.currency else Decimal(0)
        if total != target:
            out[currency] = plain(target - total)
    return out


def reconcile(payment: NewPayment) -> NewPayment:
    """`payment` with one `unallocated` line per currency whose lines do not sum to the
    payment's amount in it (none when they do): the lines then sum exactly, per currency.
    A payment whose network gave no lines gets one line, the whole amount unallocated."""
    kept = tuple(line for line in payment.lines if line.kind != UNALLOCATED)
    bare = replace(payment, lines=kept)
    extra = tuple(
        NewPaymentLine(UNALLOCATED, amount, currency)
        for currency, amount in sorted(gaps(bare).items())
    )
    return replace(bare, lines=kept + extra)
