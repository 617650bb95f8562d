"""Adtraction partner transactions (REST, JSON body, one answer per window)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sync.connectors.base import CallContext, FieldMap, JsonConnector, last_second
from sync.http import HttpRequest
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
    network="adtraction",
    base_url="https://api.adtraction.net",
    credential_fields=(CredentialField("apiToken", "API token (Adtraction: Account, API)"),),
    auth="X-Token: <apiToken>",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(seconds=1),
    pagination=Pagination.NONE,
    # A quota per minute, each request taking from it; clients report 30/min for most
    # endpoints and 10/min for some [U]: the lower.
    rate=Rate(10, 60),
    rate_source="a quota per minute (apidocs.adtraction.net/v3); 10/min, the lowest reported by clients",
    amount_format=AmountFormat.NUMBER,
    currency_source=CurrencySource.RECORD_OR_CONNECTION,
    sub_id_field="epi",
    # No filter by change date is published: the validation period is re-scanned [U].
    rescan=dt.timedelta(days=90),
    horizon=dt.timedelta(days=365),  # unpublished [U]
    notes=(
        "Status codes: 1 approved and 5 declined (php-oara); every other code is stored"
        " unknown with its number kept as rawStatus, the full list being unconfirmed [U].",
        "Whether transactions come in pages is unconfirmed [U]: one answer per window.",
        "The currency member's name is unconfirmed [U]: a record's `currency` if it sends"
        " one, else the connection's declared currency.",
        'An answer of no transactions is {"message": "No transactions found."}, not [].',
    ),
)


class Adtraction(JsonConnector):
    spec = SPEC
    fields = FieldMap(
        external_id=("uniqueId",),
        raw_status=("transactionStatus",),
        commission=("commission",),
        currency=("currency",),
        transacted_at=("transactionDate",),
        sale=("orderValue",),
        clicked_at=("click", "clickDate"),
        program_id=("click", "programId"),
        program_name=("programName",),
        sub_ids={"epi": ("click", "epi")},
    )

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "POST",
            ctx.url("/v2/partner/transactions/"),
            json={
                "fromDate": window.start.strftime("%Y-%m-%dT%H:%M:%S+0000"),
                "toDate": last_second(window).strftime("%Y-%m-%dT%H:%M:%S+0000"),
                "transactionStatus": 0,  # every status
            },
            headers={"X-Token": ctx.credentials["apiToken"], "Accept": "application/json"},
        )

    def empty(self, body: Any) -> bool:
        return isinstance(body, dict) and body.get("message") == "No transactions found."
