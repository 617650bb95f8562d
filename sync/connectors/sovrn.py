"""Sovrn Commerce (ex VigLink) transaction reports (REST, JSON, one day per call)."""

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
    member,
)
from sync.errors import MalformedResponse, WindowTooLarge
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

DAY = dt.timedelta(days=1)

SPEC = ConnectorSpec(
    network="sovrn",
    base_url="https://viglink.io",
    credential_fields=(
        CredentialField(
            "secretKey", "the site's secret API key (Sovrn Commerce: Settings, API keys)"
        ),
    ),
    auth="Authorization: secret <secretKey>",
    max_window=DAY,
    granularity=DAY,
    pagination=Pagination.NONE,
    rate=Rate(1, 60),
    concurrency=1,
    rate_source=(
        "one day per request and 1 request per 60 s; overruns may block the key"
        " (developer.sovrn.com, get_reports-transactions)"
    ),
    amount_format=AmountFormat.NUMBER,
    # No currency member is published [U]: the connection declares the account's.
    currency_source=CurrencySource.CONNECTION,
    sub_id_field="cuid",
    # The windows read updateDate ("delta queries"): a transaction is sent again on the
    # day it changes, so every change reaches the forward windows and no re-scan is needed.
    rescan=dt.timedelta(0),
    horizon=dt.timedelta(days=730),
    change_feeds=(
        ChangeFeed(
            "",
            "updateDate",
            "adjustments and every other update, by the day of the update",
        ),
    ),
    notes=(
        "Every window is one day of update dates (updateDate=YYYY-MM-DD); a backfill of N days"
        " takes N calls, one a minute.",
        "The API publishes no status [U]: rows are stored `unknown`, with no raw status;"
        " payment follows a schedule (90 days after month end), not a record field.",
        "No currency member is published [U]: the connection's currency is used.",
        "Which id is a row's stable key is unconfirmed [U]: commissionId.",
        "The time zone of the dates is unstated [U]: read as UTC.",
    ),
)


class Sovrn(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "GET",
            ctx.url("/v1/reports/transactions"),
            params=(("updateDate", window.start.date().isoformat()),),
            headers={
                "Authorization": f"secret {ctx.credentials['secretKey']}",
                "Accept": "application/json",
            },
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("sovrn", response)
        if window.length > DAY:
            # The API takes one date: the answer holds the window's first day only.
            raise WindowTooLarge("sovrn: one day per request")
        records = member(json_body("sovrn", response), "transactions")
        if not isinstance(records, list):
            raise MalformedResponse("sovrn: the answer lacks transactions")
        done, refused = collect(ctx, records, read)
        return Page(done, refused)


def read(record: dict[str, Any]) -> Fields:
    return Fields(
        external_id=record.get("commissionId"),
        raw_status=None,
        commission=record.get("publisherRevenue"),
        currency=None,
        transacted_at=record.get("commissionDate"),
        sale=record.get("orderValue"),
        clicked_at=record.get("clickDate"),
        program_id=record.get("merchantGroupId"),
        program_name=record.get("merchantGroupName"),
        sub_ids={"cuid": record.get("cuid")},
    )
