"""Awin publisher transactions (REST, JSON, one answer per window)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from contract.payment import NewPayment, NewPaymentLine
from sync.connectors.base import (
    CallContext,
    Connector,
    Fields,
    LinePage,
    Page,
    PaymentPage,
    collect,
    expect_ok,
    json_body,
    last_second,
    member,
)
from sync.errors import MalformedResponse
from sync.http import HttpRequest, HttpResponse
from sync.model import Refused, Window
from sync.spec import (
    AmountFormat,
    ChangeFeed,
    ConnectorSpec,
    CredentialField,
    CurrencySource,
    Pagination,
    PaymentsStream,
    Rate,
)
from sync.values import ValueProblem, optional_text, parse_amount, parse_currency, parse_timestamp

CLICK_REFS = ("clickRef", "clickRef2", "clickRef3", "clickRef4", "clickRef5", "clickRef6")

SPEC = ConnectorSpec(
    network="awin",
    base_url="https://api.awin.com",
    credential_fields=(
        CredentialField("accessToken", "OAuth2 user token (Awin UI: API credentials)"),
        CredentialField("publisherId", "publisher account id"),
    ),
    auth="Authorization: Bearer <accessToken>",
    max_window=dt.timedelta(days=31),
    granularity=dt.timedelta(seconds=1),
    pagination=Pagination.NONE,
    rate=Rate(20, 60),
    rate_source="20 calls/min/user, shared by every account the token reaches (help.awin.com, APIs overview)",
    amount_format=AmountFormat.NUMBER,
    currency_source=CurrencySource.RECORD,
    sub_id_field="clickRef",
    more_sub_ids=CLICK_REFS[1:],
    # Validations and amendments come through dateType; a payment (paidToPublisher,
    # paymentId) changes neither date, so the re-scan is there for payments only.
    rescan=dt.timedelta(days=120),
    horizon=dt.timedelta(days=730),
    change_feeds=(
        ChangeFeed("validation", "dateType=validation", "approvals and declines"),
        ChangeFeed("amendment", "dateType=amendment", "amendments and reversals"),
    ),
    rescan_catches="payments",
    notes=(
        "Endpoint dates are inclusive; timezone=UTC is always sent.",
        "What `deleted` means is unconfirmed [U]: declined, with statusReason awin:deleted.",
        "Payments: the list's paymentId and processingDate, the envelope's `results` and the "
        "breakdown's advertiserId and net `payment` are documented; the names of a "
        "payment's amount, currency and method (amount, currency, paymentMethod) and of a "
        "breakdown's advertiserName are unconfirmed [U]; a breakdown is read in the "
        "payment's currency.",
    ),
    # The Public API's payments (help.awin.com/apidocs/payments): limit at most 100, offsets
    # past 10,000 refused; the Full Access role is needed.
    payments=PaymentsStream(
        endpoint="GET /public/v1/publishers/{publisherId}/payments",
        lines="advertiser",
        lines_endpoint="GET /public/v1/publishers/{publisherId}/payments/{paymentId}/breakdowns",
        page_size=100,
        max_offset=10_000,
    ),
)


class Awin(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        publisher = ctx.credentials["publisherId"]
        return HttpRequest(
            "GET",
            ctx.url(f"/publishers/{publisher}/transactions/"),
            params=(
                ("startDate", window.start.strftime("%Y-%m-%dT%H:%M:%S")),
                ("endDate", last_second(window).strftime("%Y-%m-%dT%H:%M:%S")),
                ("timezone", "UTC"),
                ("dateType", window.feed or "transaction"),
            ),
            headers={
                "Authorization": f"Bearer {ctx.credentials['accessToken']}",
                "Accept": "application/json",
            },
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("awin", response)
        body = json_body("awin", response)
        if not isinstance(body, list):
            raise MalformedResponse("awin: expected a list of transactions")
        done, refused = collect(ctx, body, read)
        return Page(done, refused)

    def _public(self, ctx: CallContext, path: str, offset: int) -> HttpRequest:
        publisher = ctx.credentials["publisherId"]
        stream = ctx.spec.payments
        assert stream is not None
        return HttpRequest(
            "GET",
            ctx.url(f"/public/v1/publishers/{publisher}{path}"),
            params=(("limit", str(stream.page_size)), ("offset", str(offset))),
            headers={
                "Authorization": f"Bearer {ctx.credentials['accessToken']}",
                "Accept": "application/json",
            },
        )

    def payments_request(self, ctx: CallContext, offset: int) -> HttpRequest:
        return self._public(ctx, "/payments", offset)

    def parse_payments(self, ctx: CallContext, response: HttpResponse) -> PaymentPage:
        records = _results("awin", response)
        done: list[NewPayment] = []
        refused: list[Refused] = []
        for record in records:
            external_id = optional_text(member(record, "paymentId"))
            try:
                done.append(read_payment(record))
            except (ValueProblem, ValueError, ArithmeticError, TypeError) as exc:
                message = str(exc) if isinstance(exc, ValueProblem) else type(exc).__name__
                refused.append(Refused(external_id, "record_invalid", f"payment: {message}"))
        return PaymentPage(done, refused, len(records))

    def lines_request(self, ctx: CallContext, payment: NewPayment, offset: int) -> HttpRequest:
        return self._public(ctx, f"/payments/{payment.external_id}/breakdowns", offset)

    def parse_lines(
        self, ctx: CallContext, payment: NewPayment, response: HttpResponse
    ) -> LinePage:
        records = _results("awin", response)
        lines = []
        for record in records:
            if not isinstance(record, dict):
                raise MalformedResponse("awin: a breakdown is not an object")
            value = record.get("payment")
            currency = payment.currency
            if isinstance(value, dict):
                currency = parse_currency(value.get("currency")) or currency
                value = value.get("amount")
            lines.append(
                NewPaymentLine(
                    kind="advertiser",
                    amount=parse_amount(value, AmountFormat.NUMBER, "payment"),
                    currency=currency,
                    program_external_id=optional_text(record.get("advertiserId")),
                    program_name=optional_text(record.get("advertiserName")),
                )
            )
        return LinePage(lines, len(records))


def _results(network: str, response: HttpResponse) -> list[Any]:
    """The `results` list of a Public API answer, or MalformedResponse."""
    expect_ok(network, response)
    body = json_body(network, response)
    results = member(body, "results")
    if not isinstance(results, list):
        raise MalformedResponse(f"{network}: expected an object with a results list")
    return results


def read_payment(record: Any) -> NewPayment:
    """One Awin payment of the list (its lines come from its breakdown); ValueProblem for
    a value outside the definition."""
    if not isinstance(record, dict):
        raise ValueProblem("payment: not an object")
    external_id = optional_text(record.get("paymentId"))
    if external_id is None:
        raise ValueProblem("paymentId: missing")
    value = record.get("amount")
    currency = record.get("currency")
    if isinstance(value, dict):
        currency = value.get("currency", currency)
        value = value.get("amount")
    code = parse_currency(currency)
    if code is None:
        raise ValueProblem("currency: missing")
    return NewPayment(
        external_id=external_id,
        amount=parse_amount(value, AmountFormat.NUMBER, "amount"),
        currency=code,
        paid_at=parse_timestamp(record.get("processingDate"), "processing date"),
        method=optional_text(record.get("paymentMethod")),
    )


def read(record: dict[str, Any]) -> Fields:
    """An Awin transaction's fields; paid only on explicit evidence."""
    payment_id = record.get("paymentId")
    paid = None
    if record.get("paidToPublisher") is True:
        paid = "awin:paidToPublisher"
    elif isinstance(payment_id, int) and not isinstance(payment_id, bool) and payment_id > 0:
        paid = "awin:paymentId"
    raw = record.get("commissionStatus")
    reason = "awin:deleted" if isinstance(raw, str) and raw.strip().lower() == "deleted" else None
    if reason is None and record.get("amended") is True:
        reason = "awin:amended"
    given = record.get("clickRefs")
    refs: dict[str, Any] = given if isinstance(given, dict) else {}
    return Fields(
        external_id=record.get("id"),
        raw_status=raw,
        commission=member(record, "commissionAmount", "amount"),
        currency=member(record, "commissionAmount", "currency"),
        transacted_at=record.get("transactionDate"),
        sale=member(record, "saleAmount", "amount"),
        clicked_at=record.get("clickDate"),
        program_id=record.get("advertiserId"),
        program_name=record.get("advertiserName"),
        sub_ids={name: refs.get(name) for name in CLICK_REFS},
        paid_reason=paid,
        status_reason=reason,
    )
