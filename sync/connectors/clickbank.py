"""ClickBank affiliate orders (REST orders2/list, JSON; pages by a request header, HTTP 206
while more remain)."""

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
    last_day,
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

# ClickBank answers 206 Partial Content while pages remain, 200 with the last one.
MORE_PAGES = 206

SPEC = ConnectorSpec(
    network="clickbank",
    base_url="https://api.clickbank.com",
    credential_fields=(
        CredentialField(
            "apiKey", "API key (ClickBank: Settings, API keys: API-…; a legacy pair DEV-…:API-…)"
        ),
    ),
    auth="Authorization: <apiKey>",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(days=1),
    pagination=Pagination.PAGE,
    rate=Rate(30, 60),  # unpublished [U]: cautious
    rate_source="unpublished; a cautious 30/min",
    amount_format=AmountFormat.NUMBER,
    currency_source=CurrencySource.RECORD,
    sub_id_field="trackingId",
    # Refunds and chargebacks are transactions of their own; which date the date filter
    # reads for them, and whether a transaction changes once sent, is unconfirmed [U]: the
    # refund period (60 days) and a margin are read again at every run.
    rescan=dt.timedelta(days=75),
    horizon=dt.timedelta(days=730),
    change_feeds=(
        ChangeFeed(
            "",
            "startDate/endDate (a refund's own transactionTime [U])",
            "refunds and chargebacks, as negative transactions of their own dated when they happen",
        ),
    ),
    rescan_catches="refunds, chargebacks and any change to a transaction",
    notes=(
        "A transaction's type (SALE, BILL, RFND, CGBK...) maps to no status [U]: rows are"
        " stored `unknown` with the type kept as the raw status.",
        "orderData field names are unconfirmed [U]: transactionTime, receipt,"
        " transactionType, totalAccountAmount, currency, trackingId.",
        "A sale's id is its receipt; a refund, chargeback or rebill shares it: its id is"
        " receipt:type:time, and it names the sale as its original.",
        "A single transaction may come as an object instead of an array: read as one.",
        "The rate limit and the longest range are unpublished [U].",
    ),
)


class ClickBank(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "GET",
            ctx.url("/rest/1.3/orders2/list"),
            params=(
                ("startDate", window.start.date().isoformat()),
                ("endDate", last_day(window).isoformat()),
                ("role", "AFFILIATE"),
            ),
            headers={
                "Authorization": ctx.credentials["apiKey"],
                "Accept": "application/json",
                "Page": str(state or 1),
            },
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("clickbank", response)
        body = json_body("clickbank", response)
        if not isinstance(body, dict):
            raise MalformedResponse("clickbank: the answer is not an object")
        if "orderData" not in body and body:
            # How ClickBank answers "no orders" is unconfirmed [U]: an empty object, or a
            # null orderData; an object with other members is not taken for no orders.
            raise MalformedResponse("clickbank: the answer lacks orderData")
        orders = body.get("orderData") or []
        if isinstance(orders, dict):
            orders = [orders]  # one transaction comes as the object itself
        if not isinstance(orders, list):
            raise MalformedResponse("clickbank: orderData is neither a list nor an object")
        done, refused = collect(ctx, orders, read)
        following = (state or 1) + 1 if response.status == MORE_PAGES else None
        return Page(done, refused, next=following)


def read(record: dict[str, Any]) -> Fields:
    """A sale's id is its receipt; a refund, chargeback or rebill shares the receipt, so
    its id adds its type and time and it names the sale as its original."""
    receipt, kind, moment = (
        record.get("receipt"),
        record.get("transactionType"),
        record.get("transactionTime"),
    )
    whole = all(isinstance(v, str) and v.strip() for v in (receipt, kind, moment))
    sale = whole and str(kind).strip().upper() == "SALE"
    external_id = receipt if sale else f"{receipt}:{kind}:{moment}" if whole else None
    return Fields(
        external_id=external_id,
        raw_status=kind,
        commission=record.get("totalAccountAmount"),
        currency=record.get("currency"),
        transacted_at=moment,
        sale=record.get("totalOrderAmount"),
        program_id=record.get("vendor"),
        program_name=member(record, "lineItemData", "productTitle"),
        sub_ids={"trackingId": record.get("trackingId")},
        original_id=None if sale else receipt,
    )
