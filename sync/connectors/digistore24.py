"""Digistore24 affiliate commissions (listCommissions: JSON pages, errors as HTTP 200)."""

from __future__ import annotations

import datetime as dt
import re
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
from sync.errors import AuthRejected, MalformedResponse, NetworkRefused
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
    network="digistore24",
    base_url="https://www.digistore24.com",
    credential_fields=(
        CredentialField("apiKey", "API key, permission readonly (Digistore24: Settings, API keys)"),
    ),
    auth="X-DS-API-KEY: <apiKey>",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(seconds=1),
    pagination=Pagination.PAGE,
    rate=Rate(30, 60),  # unpublished [U]: cautious
    rate_source="unpublished; a cautious 30/min",
    amount_format=AmountFormat.NUMBER,
    currency_source=CurrencySource.RECORD,
    sub_id_field="campaignkey",
    # A commission is an event (a payment, or a refund or chargeback with its own
    # negative amount) created once: from/to on the creation date reach every one. Whether
    # a commission changes once created is unconfirmed [U]: the last 31 days are read again.
    rescan=dt.timedelta(days=31),
    horizon=dt.timedelta(days=730),
    change_feeds=(
        ChangeFeed(
            "",
            "from/to (creation date)",
            "refunds and chargebacks, as new negative commissions created when they happen",
        ),
    ),
    rescan_catches="changes to a commission already sent, if any",
    page_size=1000,
    notes=(
        "Errors come back as HTTP 200 with result=error: a message naming the API key or"
        " its permission is read as refused credentials, any other as the network's error.",
        "A commission's kind (payment, refund, chargeback) maps to no status [U]: rows are"
        " stored `unknown` with the kind kept as the raw status; reversals are negative rows,"
        " which name no original (the commission they reverse is not referenced).",
        "The tracking key (campaignkey) member of listCommissions is unconfirmed [U].",
        "The time zone of created_at is unstated [U]: read as UTC.",
        "The rate limit and the longest range are unpublished [U].",
    ),
)

# How Digistore24 words a refused key or permission (its error codes are unpublished [U]).
AUTH_WORDS = re.compile(r"api.?key|permission|unauthori[sz]ed|access denied|not allowed", re.I)


class Digistore24(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "GET",
            ctx.url("/api/call/listCommissions"),
            params=(
                ("from", window.start.strftime("%Y-%m-%d %H:%M:%S")),
                ("to", last_second(window).strftime("%Y-%m-%d %H:%M:%S")),
                ("page_no", str(state or 1)),
                ("page_size", str(ctx.page_size)),
            ),
            headers={"X-DS-API-KEY": ctx.credentials["apiKey"], "Accept": "application/json"},
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("digistore24", response)
        body = json_body("digistore24", response)
        result = member(body, "result")
        if result == "error":
            message = member(body, "message")
            if isinstance(message, str) and AUTH_WORDS.search(message):
                raise AuthRejected("digistore24 refused the credentials (result=error)")
            # The network's message may quote the request: only its code is kept.
            code = member(body, "code")
            shown = (
                f" (code {code})" if isinstance(code, int) and not isinstance(code, bool) else ""
            )
            raise NetworkRefused(f"digistore24: the network answered an error{shown}")
        data = member(body, "data")
        items = member(data, "items")
        page_no, page_count = member(data, "page_no"), member(data, "page_count")
        if (
            result != "success"
            or not isinstance(items, list)
            or not isinstance(page_no, int)
            or not isinstance(page_count, int)
        ):
            raise MalformedResponse("digistore24: the answer lacks data.items or its pages")
        done, refused = collect(ctx, items, read)
        return Page(done, refused, next=page_no + 1 if page_no < page_count else None)


def read(record: dict[str, Any]) -> Fields:
    return Fields(
        external_id=record.get("id"),
        raw_status=record.get("transaction_type"),
        commission=record.get("amount"),
        currency=record.get("currency"),
        transacted_at=record.get("created_at"),
        program_id=record.get("product_id"),
        program_name=record.get("product_name"),
        sub_ids={"campaignkey": record.get("campaignkey")},
        status_reason=None,
    )
