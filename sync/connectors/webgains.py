"""Webgains publisher transaction report (REST, JSON, numbered pages; unix seconds,
amounts in a declared scale)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sync.connectors.base import (
    CallContext,
    FieldMap,
    JsonConnector,
    last_second,
    member,
    next_page_until,
)
from sync.http import HttpRequest
from sync.model import Window
from sync.spec import (
    Amount,
    AmountFormat,
    ConnectorSpec,
    CredentialField,
    CurrencySource,
    Pagination,
    Rate,
    TimeFormat,
)

# value.amount and commission.amount are integers of ten-thousandths for both publisher-side
# readers (php-oara and its fork); a merchant-side client reads hundredths [U].
SCALED = Amount(AmountFormat.NUMBER, scale=4)

SPEC = ConnectorSpec(
    network="webgains",
    base_url="https://platform-api.webgains.com",
    credential_fields=(
        CredentialField("apiToken", "personal access token (Webgains: Account, API)"),
        CredentialField("publisherId", "publisher (affiliate) id"),
    ),
    auth="Authorization: Bearer <apiToken>",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(seconds=1),
    pagination=Pagination.PAGE,
    rate=Rate(10, 60),  # unpublished [U]: cautious
    rate_source="unpublished; a cautious 10/min",
    amount_format=AmountFormat.NUMBER,
    currency_source=CurrencySource.RECORD,
    sub_id_field="click_reference",
    # No filter by change date was found: the validation period is re-scanned [U].
    rescan=dt.timedelta(days=90),
    horizon=dt.timedelta(days=365),  # unpublished [U]
    page_size=250,
    amounts={"commission": SCALED, "sale": SCALED},
    times={"transacted": TimeFormat.UNIX_SECONDS},
    notes=(
        "The numeric status codes mean different things in each source (10 and 20 approved"
        " or 10 confirmed and 20 cancelled; 30-60 pending or approved) [U]: every code is"
        " stored unknown, its number kept as rawStatus, until a live account confirms them.",
        "Amounts are integers read as ten-thousandths (8520000 is 852.00), as both"
        " publisher-side readers do; a merchant-side client reads hundredths [U]. The scale"
        " is declared once (SCALED).",
        "Which date filters[start_date] bounds is unconfirmed [U]; a Webgains confirmation"
        " may still fall inside the cancellation window.",
    ),
)


class Webgains(JsonConnector):
    spec = SPEC
    records = ("data",)
    fields = FieldMap(
        external_id=("id",),
        raw_status=("status",),
        commission=("commission", "amount"),
        currency=("commission", "currency_code"),
        transacted_at=("date",),
        sale=("value", "amount"),
        program_id=("program", "id"),
        program_name=("program", "name"),
        sub_ids={"click_reference": ("click_reference",)},
    )

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "GET",
            ctx.url(f"/publishers/{ctx.credentials['publisherId']}/reports/transactions"),
            params=(
                ("filters[start_date]", str(int(window.start.timestamp()))),
                ("filters[end_date]", str(int(last_second(window).timestamp()))),
                ("sort", "date"),
                ("sort_order", "ASC"),
                ("size", str(ctx.page_size)),
                ("page", str(state or 1)),
            ),
            headers={
                "Authorization": f"Bearer {ctx.credentials['apiToken']}",
                "Accept": "application/json",
            },
        )

    def following(self, ctx: CallContext, state: Any, body: Any, records: list[Any]) -> Any:
        return next_page_until(
            ctx, member(body, "pagination", "current_page"), member(body, "pagination", "last_page")
        )
