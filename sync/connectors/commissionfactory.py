"""Commission Factory affiliate transactions (REST, JSON, one plain array per window)."""

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

SPEC = ConnectorSpec(
    network="commissionfactory",
    base_url="https://api.commissionfactory.com",
    credential_fields=(CredentialField("apiKey", "API key (Commission Factory: Account, API)"),),
    auth="query parameter apiKey=<apiKey>",
    # No longest range is published [U]: a month, as the other date-only APIs.
    max_window=dt.timedelta(days=31),
    granularity=dt.timedelta(days=1),
    pagination=Pagination.NONE,
    rate=Rate(30, 60),
    more_rates=(Rate(1000, 86400),),
    concurrency=1,
    rate_source=(
        "30 calls per rolling 60 s and 1,000 per rolling 24 h per user account, no concurrent"
        " calls; 429 past them (dev.commissionfactory.com/V1/ApiCallRateLimits)"
    ),
    amount_format=AmountFormat.NUMBER,
    # SaleValue and Commission are in the account's currency, which no record names [U];
    # ReportedCurrencyCode is the currency of ReportedSaleValue only.
    currency_source=CurrencySource.CONNECTION,
    sub_id_field="UniqueId",
    more_sub_ids=("UniqueId2", "UniqueId3", "UniqueId4"),
    # DateModified reports every change (status, Status2 up to Paid, voids, amendments).
    rescan=dt.timedelta(0),
    horizon=dt.timedelta(days=730),
    change_feeds=(
        ChangeFeed(
            "modified",
            "dateProperty=DateModified",
            "approvals, voids, amendments and payments (any modification)",
        ),
    ),
    notes=(
        "Usage counts per user account, not per key: two keys of one user share the limit.",
        "Timestamps carry no offset and no time zone is stated [U]: read as UTC.",
        "The longest date range is unpublished [U]: 31 days.",
        "Paid only on explicit evidence: Status2 `Paid` or `Paid: true`.",
    ),
)


class CommissionFactory(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "GET",
            ctx.url("/V1/Affiliate/Transactions"),
            params=(
                ("apiKey", ctx.credentials["apiKey"]),
                ("fromDate", window.start.date().isoformat()),
                ("toDate", last_day(window).isoformat()),
                ("dateProperty", "DateModified" if window.feed else "DateCreated"),
            ),
            headers={"Accept": "application/json"},
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("commissionfactory", response)
        body = json_body("commissionfactory", response)
        if not isinstance(body, list):
            raise MalformedResponse("commissionfactory: expected a list of transactions")
        done, refused = collect(ctx, body, read)
        return Page(done, refused)


def read(record: dict[str, Any]) -> Fields:
    """A Commission Factory transaction; `Status` is the raw word, Status2 `Paid` (or
    `Paid: true`) the payment evidence."""
    paid = None
    status2 = record.get("Status2")
    if isinstance(status2, str) and status2.strip().lower() == "paid":
        paid = "commissionfactory:Status2=Paid"
    elif record.get("Paid") is True:
        paid = "commissionfactory:Paid"
    reason = None
    if record.get("VoidReason"):
        reason = "commissionfactory:void"
    elif record.get("AmendedReason"):
        reason = "commissionfactory:amended"
    return Fields(
        external_id=record.get("Id"),
        raw_status=record.get("Status"),
        commission=record.get("Commission"),
        currency=None,
        transacted_at=record.get("DateCreated"),
        sale=record.get("SaleValue"),
        program_id=record.get("MerchantId"),
        program_name=record.get("MerchantName"),
        sub_ids={name: record.get(name) for name in SPEC.all_sub_ids},
        paid_reason=paid,
        status_reason=reason,
    )
