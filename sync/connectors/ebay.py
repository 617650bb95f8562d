"""eBay Partner Network transaction detail report (REST, JSON, one answer per window of
update dates)."""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any

from sync.connectors.base import CallContext, FieldMap, JsonConnector, last_day
from sync.http import HttpRequest
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
    network="ebay",
    base_url="https://api.partner.ebay.com",
    credential_fields=(
        CredentialField("accountSid", "Account SID (EPN portal: Enable API Access)"),
        CredentialField("authToken", "Auth Token"),
    ),
    auth="HTTP Basic accountSid:authToken",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(days=1),
    pagination=Pagination.NONE,
    rate=Rate(10, 60),  # unpublished [U]: cautious
    rate_source="unpublished; a cautious 10/min",
    amount_format=AmountFormat.STRING,
    # No currency member is documented [U]: the account's (network connect --currency).
    currency_source=CurrencySource.CONNECTION,
    sub_id_field="CustomId",
    # Every window reads update dates: a new transaction is an update, and so is each
    # later change, which comes as the transaction's row in its new state.
    rescan=dt.timedelta(0),
    horizon=dt.timedelta(days=365),  # unpublished [U]
    change_feeds=(
        ChangeFeed(
            "",
            "date_type=update_date",
            "approvals, reversals and amended amounts (each update is the transaction's row"
            " in its new state)",
        ),
    ),
    notes=(
        "Windows are of update dates (date_type=update_date, epn-guide): each row is the"
        " transaction as it stands, Earnings and Sales its amounts now; DeltaEarnings and"
        " DeltaSales (the change the update made) are not stored [U: their exact meaning].",
        "No currency member is documented [U]: the connection declares the account's currency.",
        "Statuses other than Pending, Approved and Reversed are stored unknown; no payment"
        " evidence is published [U].",
        "START_DATE/END_DATE are whole days in the network's zone (America/Denver per"
        " php-oara [U]); the window of today is read again by the next run.",
    ),
)


class Ebay(JsonConnector):
    spec = SPEC
    records = ("Records",)
    fields = FieldMap(
        external_id=("EpnTransactionId",),
        raw_status=("Status",),
        commission=("Earnings",),
        currency=None,
        transacted_at=("EventDate",),
        sale=("Sales",),
        clicked_at=("ClickTimestamp",),
        sub_ids={"CustomId": ("CustomId",), "CheckoutSite": ("CheckoutSite",)},
    )

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        sid = ctx.credentials["accountSid"]
        token = base64.b64encode(f"{sid}:{ctx.credentials['authToken']}".encode()).decode()
        return HttpRequest(
            "GET",
            ctx.url(f"/Mediapartners/{sid}/Reports/ebay_partner_transaction_detail.json"),
            params=(
                ("STATUS", "ALL"),
                ("START_DATE", window.start.strftime("%Y-%m-%d")),
                ("END_DATE", last_day(window).strftime("%Y-%m-%d")),
                ("date_type", "update_date"),
            ),
            headers={"Authorization": f"Basic {token}", "Accept": "application/json"},
        )
