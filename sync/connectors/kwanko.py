"""Kwanko publisher conversions (REST, JSON, one answer per window)."""

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
    ConnectorSpec,
    CredentialField,
    CurrencySource,
    Pagination,
    Rate,
)

SPEC = ConnectorSpec(
    network="kwanko",
    base_url="https://api.kwanko.com",
    credential_fields=(
        CredentialField(
            "apiToken", "API token generated in the Kwanko platform (may be IP-restricted)"
        ),
    ),
    auth="Authorization: Bearer <apiToken>",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(seconds=1),
    pagination=Pagination.NONE,  # unpublished [U]
    rate=Rate(30, 60),  # unpublished [U]: cautious
    rate_source="unpublished; a cautious 30/min",
    amount_format=AmountFormat.NUMBER,
    # The currency member is unconfirmed [U]: earnings.currency, else the connection's.
    currency_source=CurrencySource.RECORD_OR_CONNECTION,
    sub_id_field="argsite",
    # Filters on the completion date only [U]: the re-scan is the one way to learn of changes.
    rescan=dt.timedelta(days=60),
    horizon=dt.timedelta(days=730),
)


class Kwanko(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "GET",
            ctx.url("/publishers/conversions"),
            params=(
                ("columns", "ALL"),
                ("completion_date_from", window.start.isoformat()),
                ("completion_date_to", last_second(window).isoformat()),
            ),
            headers={"Authorization": f"Bearer {ctx.credentials['apiToken']}"},
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("kwanko", response)
        body = json_body("kwanko", response)
        conversions = member(body, "conversions")
        if not isinstance(conversions, list):
            raise MalformedResponse("kwanko: the answer lacks conversions")
        done, refused = collect(ctx, conversions, read)
        return Page(done, refused)


def read(record: dict[str, Any]) -> Fields:
    site = member(record, "websites_per_language", 0)
    return Fields(
        external_id=record.get("kwanko_id"),
        raw_status=record.get("state"),
        commission=member(site, "earnings", "value"),
        currency=member(site, "earnings", "currency") or member(record, "turnover", "currency"),
        transacted_at=record.get("completed_at_timestamp"),
        sale=member(record, "turnover", "value"),
        program_id=member(record, "campaign", "id"),
        program_name=member(record, "campaign", "name"),
        sub_ids={"argsite": member(site, "argsites", "argsite")},
    )
