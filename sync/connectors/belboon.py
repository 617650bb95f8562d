"""Belboon / Ingenious transaction export (XML, the key in the URL path, one answer per
window)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from urllib.parse import quote

from sync.connectors.base import (
    CallContext,
    Connector,
    Fields,
    Page,
    collect,
    expect_ok,
    last_day,
)
from sync.errors import MalformedResponse
from sync.formats import find_all, parse_xml, record
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
    network="belboon",
    base_url="https://export.service.belboon.com",
    credential_fields=(
        CredentialField("apiKey", "export API key (Belboon: Tools, API), carried in the URL path"),
        CredentialField("userId", "partner user id"),
    ),
    auth="the key in the URL path: /<apiKey>/reporttransactions_<userId>.xml",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(days=1),
    pagination=Pagination.NONE,
    rate=Rate(10, 60),  # unpublished [U]: cautious
    rate_source="unpublished; a cautious 10/min",
    amount_format=AmountFormat.STRING,
    # Amounts come converted to the currency the request names (filter[currencycode]).
    currency_source=CurrencySource.CONNECTION,
    sub_id_field="subid1",
    # Rows carry conversion_last_modified_time, but a filter on it is unconfirmed [U]: the
    # validation period is read again.
    rescan=dt.timedelta(days=90),
    horizon=dt.timedelta(days=730),
    notes=(
        "The key is part of the URL path: every log line and error is redacted of it.",
        "click_subid's pairs (`subid1=X+smc1=Y`) are each a sub-id; a value without pairs is"
        " subid1.",
        "Amounts are asked for in the connection's currency (filter[currencycode]) and read"
        " from conversion_commission_total / conversion_order_value.",
        "The root element is unconfirmed [U]: every <transaction> element is read.",
        "A filter on conversion_last_modified_time is unconfirmed [U]: re-scan of 90 days.",
        "Paid evidence and the time zone are unconfirmed [U]: none is paid; dates read as UTC.",
        "The rate limit and the longest range are unpublished [U].",
    ),
)

# click_subid holds `subid1=X`, or several pairs (`subid1=X+smc1=Y`).
_PAIR = re.compile(r"([A-Za-z0-9_]+)=([^+&]*)")


class Belboon(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        key = quote(ctx.credentials["apiKey"], safe="")
        user = quote(ctx.credentials["userId"], safe="")
        return HttpRequest(
            "GET",
            ctx.url(f"/{key}/reporttransactions_{user}.xml"),
            params=(
                ("filter[currencycode]", ctx.currency or ""),
                ("filter[zeitraumvon]", window.start.strftime("%d.%m.%Y")),
                ("filter[zeitraumbis]", last_day(window).strftime("%d.%m.%Y")),
                ("filter[zeitraumAuswahl]", "absolute"),
            ),
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("belboon", response)
        root = parse_xml("belboon", response.body)
        transactions = find_all(root, "transaction")
        if not transactions and len(root):
            # The root's name is unconfirmed: an empty report is an empty root, and an
            # answer with other content is not taken for one.
            raise MalformedResponse("belboon: the answer holds no transaction elements")
        done, refused = collect(ctx, [record(t) for t in transactions], read)
        return Page(done, refused)


def sub_ids(value: object) -> dict[str, str]:
    """click_subid's pairs; a value without pairs is subid1 itself."""
    if not isinstance(value, str) or not value.strip():
        return {}
    pairs = dict(_PAIR.findall(value))
    return pairs or {"subid1": value}


def read(row: dict[str, Any]) -> Fields:
    return Fields(
        external_id=row.get("conversion_uniqid"),
        raw_status=row.get("status"),
        commission=row.get("conversion_commission_total"),
        currency=None,
        transacted_at=row.get("conversion_tracking_time"),
        sale=row.get("conversion_order_value") or None,
        program_id=row.get("advertiser_id"),
        program_name=row.get("advertiser_label"),
        sub_ids=sub_ids(row.get("click_subid")),
    )
