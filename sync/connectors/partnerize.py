"""Partnerize publisher conversion report (Basic auth, cursor pages)."""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any
from urllib.parse import parse_qs, urlsplit

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

SPEC = ConnectorSpec(
    network="partnerize",
    base_url="https://api.partnerize.com",
    credential_fields=(
        CredentialField("applicationKey", "user application key"),
        CredentialField("userApiKey", "user API key"),
        CredentialField("publisherId", "publisher id"),
    ),
    auth="HTTP Basic applicationKey:userApiKey",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(seconds=1),
    pagination=Pagination.CURSOR,
    rate=Rate(30, 60),  # thresholds unpublished [U]; X-RateLimit-* and Retry-After are sent
    rate_source="unpublished thresholds; a cautious 30/min, Retry-After honoured",
    amount_format=AmountFormat.STRING,
    currency_source=CurrencySource.RECORD,
    sub_id_field="publisher_reference",
    # date_type=last_modified reports every change: no re-scan.
    rescan=dt.timedelta(0),
    horizon=dt.timedelta(days=730),
    change_feeds=(
        ChangeFeed(
            "last_modified",
            "date_type=last_modified",
            "approvals, declines, reversals, amendments and payments (any modification)",
        ),
    ),
    page_size=300,
    notes=("The conversion report path is by analogy with click.json [U].",),
)


class Partnerize(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        creds = ctx.credentials
        basic = base64.b64encode(
            f"{creds['applicationKey']}:{creds['userApiKey']}".encode()
        ).decode()
        params = [
            ("start_date", window.start.strftime("%Y-%m-%d %H:%M:%S")),
            ("end_date", last_second(window).strftime("%Y-%m-%d %H:%M:%S")),
            ("timezone", "UTC"),
            ("limit", str(ctx.page_size)),
        ]
        if window.feed:
            params.append(("date_type", window.feed))
        if state is not None:
            params.append(("cursor_id", state))
        return HttpRequest(
            "GET",
            ctx.url(
                f"/reporting/report_publisher/publisher/{creds['publisherId']}/conversion.json"
            ),
            params=tuple(params),
            headers={"Authorization": f"Basic {basic}", "Accept": "application/json"},
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("partnerize", response)
        body = json_body("partnerize", response)
        conversions = member(body, "conversions")
        if not isinstance(conversions, list):
            raise MalformedResponse("partnerize: the answer lacks conversions")
        records = [member(c, "conversion_data") for c in conversions]
        done, refused = collect(ctx, records, read)
        following = next_cursor(member(body, "hypermedia", "pagination", "next_page"))
        return Page(done, refused, following)


def next_cursor(link: Any) -> str | None:
    """The cursor_id of a next_page link, None at the end."""
    if not isinstance(link, str) or not link:
        return None
    values = parse_qs(urlsplit(link).query).get("cursor_id")
    if not values:
        raise MalformedResponse("partnerize: next_page has no cursor_id")
    return values[0]


def read(record: dict[str, Any]) -> Fields:
    return Fields(
        external_id=record.get("conversion_id"),
        raw_status=record.get("conversion_status"),
        commission=record.get("publisher_commission"),
        currency=record.get("currency"),
        transacted_at=record.get("conversion_time"),
        sale=record.get("conversion_value"),
        clicked_at=record.get("click_time") or None,
        program_id=record.get("campaign_id"),
        program_name=record.get("campaign_title"),
        sub_ids={"publisher_reference": record.get("publisher_reference")},
    )
