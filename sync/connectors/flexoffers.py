"""FlexOffers publisher sales (REST, JSON, numbered pages; one API key per domain)."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from sync.connectors.base import (
    CallContext,
    FieldMap,
    Fields,
    JsonConnector,
    expect_ok,
    in_zone,
    last_day,
    next_page_until,
)
from sync.errors import NetworkRefused
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
    network="flexoffers",
    base_url="https://api.flexoffers.com",
    credential_fields=(
        CredentialField("apiKey", "API key of one registered domain (FlexOffers: API)"),
    ),
    auth="apiKey: <apiKey> (a header)",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(days=1),
    pagination=Pagination.PAGE,
    rate=Rate(10, 60),  # unpublished [U]: cautious
    rate_source="unpublished; 429 when exceeded (clients wait 30 s); a cautious 10/min",
    amount_format=AmountFormat.NUMBER,
    currency_source=CurrencySource.RECORD,
    sub_id_field="subTracking",
    # Rows carry modifiedDate, but a filter on it is unconfirmed [U]: the validation
    # period is re-scanned.
    rescan=dt.timedelta(days=90),
    horizon=dt.timedelta(days=365),  # unpublished [U]
    page_size=500,
    notes=(
        "One API key per registered domain: a publisher with several domains connects each.",
        "Dates without an offset are the servers' Eastern time (America/New_York) [U].",
        "`bonus` is stored unknown [U]; no payment evidence is published.",
        'A 400 "All status is currently under maintenance" fails the window (network_error);'
        " the next run tries again.",
    ),
)
EASTERN = ZoneInfo("America/New_York")


class Flexoffers(JsonConnector):
    spec = SPEC
    records = ("results",)
    empty_statuses = frozenset({204})
    fields = FieldMap(
        external_id=("legacyId",),
        raw_status=("orderStatus",),
        commission=("commission",),
        currency=("currency",),
        transacted_at=("eventDate",),
        sale=("saleAmount",),
        clicked_at=("clickDate",),
        program_id=("programId",),
        program_name=("programName",),
        sub_ids={name: (name,) for name in ("subTracking", *(f"subId{i}" for i in range(1, 6)))},
    )

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "GET",
            ctx.url("/allsales"),
            params=(
                ("startDate", window.start.strftime("%Y-%m-%d")),
                ("endDate", last_day(window).strftime("%Y-%m-%d")),
                ("reportType", "sales"),
                ("status", "all"),
                ("page", str(state or 1)),
                ("pageSize", str(ctx.page_size)),
            ),
            headers={"apiKey": ctx.credentials["apiKey"], "Accept": "application/json"},
        )

    def check(self, ctx: CallContext, response: HttpResponse) -> None:
        if response.status == 400 and b"under maintenance" in response.body:
            raise NetworkRefused("flexoffers: sales by every status are under maintenance")
        expect_ok("flexoffers", response)

    def following(self, ctx: CallContext, state: Any, body: Any, records: list[Any]) -> Any:
        total, size = body.get("totalCount"), body.get("pageSize") or ctx.page_size
        if type(size) is not int or size < 1:
            size = ctx.page_size
        pages = -(-total // size) if type(total) is int and total >= 0 else None
        return next_page_until(ctx, state or 1, pages)

    def read(self, record: Any) -> Fields:
        fields = self.fields.read(record)
        if fields.sale is None:
            fields.sale = record.get("merchantValue")
        fields.transacted_at = in_zone(fields.transacted_at, EASTERN)
        fields.clicked_at = in_zone(fields.clicked_at, EASTERN)
        return fields
