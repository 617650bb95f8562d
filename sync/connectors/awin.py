"""Awin publisher transactions (REST, JSON, one answer per window)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sync.connectors.base import (
    CallContext,
    Connector,
    Fields,
    Page,
    collect,
    expect_ok,
    json_body,
    last_second,
    member,
)
from sync.errors import MalformedResponse
from sync.http import HttpRequest, HttpResponse
from sync.model import Window
from sync.spec import (
    AmountFormat,
    ChangeFeed,
    ConnectorSpec,
    CredentialField,
    CurrencySource,
    Pagination,
    Rate,
)

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
