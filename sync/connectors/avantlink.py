"""AvantLink affiliate report 8, Sales/Commissions (Detail) (CSV, one answer per window;
amounts as the report writes them, negatives in parentheses)."""

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
    last_second,
)
from sync.formats import read_table
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
    network="avantlink",
    base_url="https://classic.avantlink.com",
    credential_fields=(
        CredentialField("affiliateId", "affiliate id (AvantLink: Account, API)"),
        CredentialField("authKey", "API authorisation key"),
    ),
    auth="query parameters affiliate_id=<affiliateId>&auth_key=<authKey>",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(seconds=1),
    pagination=Pagination.NONE,
    rate=Rate(1000, 86400),
    rate_source="AffiliateReport: 1,000 requests a day (classic.avantlink.com, api.php help)",
    # `$85.20`, `($4.26)`: a negative in parentheses is negative, never positive.
    amount_format=AmountFormat.FORMATTED,
    # The currency is the site's (avantlink.com USD, avantlink.ca CAD), not a column: the
    # connection declares it.
    currency_source=CurrencySource.CONNECTION,
    sub_id_field="Custom_Tracking_Code",
    # Returns, fraud and cancellations are rows of their own: the return window is read
    # again to catch those dated by the original sale [U].
    rescan=dt.timedelta(days=90),
    horizon=dt.timedelta(days=730),
    change_feeds=(
        ChangeFeed(
            "",
            "date_begin/date_end (a return's own date [U])",
            "returns, fraud, cancellations and adjustments, as rows of their own dated when"
            " they are made",
        ),
    ),
    rescan_catches="returns, cancellations and adjustments (rows of their own)",
    notes=(
        "The CSV header's spelling and order are unconfirmed [U]: read by name; an answer"
        " without the named columns is malformed, never an empty report.",
        "A transaction type maps to a status only for returns, fraud and cancellations"
        " (declined); SALE, BONUS and ADJUSTMENT are `unknown` [U], the type kept raw.",
        "No transaction id column is published [U]: a sale is <Merchant_Id>:<Order_Id>; any"
        " other row adds its type and date; a return, fraud or cancellation names the sale"
        " as its original.",
        "The time zone of Transaction_Date is unconfirmed [U]: read as UTC.",
        "A Canadian account reports at classic.avantlink.ca (--base-url avantlink=…), in CAD.",
    ),
)

COLUMNS = (
    "Merchant",
    "Merchant_Id",
    "Order_Id",
    "Transaction_Date",
    "Transaction_Amount",
    "Total_Commission",
    "Transaction_Type",
    "Custom_Tracking_Code",
)

# The types that reverse a sale, each a row of its own.
REVERSALS = frozenset({"RETURN", "FRAUD", "CANCELED"})


class AvantLink(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "GET",
            ctx.url("/api.php"),
            params=(
                ("module", "AffiliateReport"),
                ("affiliate_id", ctx.credentials["affiliateId"]),
                ("auth_key", ctx.credentials["authKey"]),
                ("report_id", "8"),
                ("date_begin", window.start.strftime("%Y-%m-%d %H:%M:%S")),
                ("date_end", last_second(window).strftime("%Y-%m-%d %H:%M:%S")),
                ("output", "csv"),
                # A merchant that left the network still owes what it owed.
                ("include_inactive_merchants", "1"),
                ("search_results_include_cpc", "0"),
            ),
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("avantlink", response)
        rows = read_table("avantlink", response.body, required=COLUMNS, allow_empty=False)
        done, refused = collect(ctx, rows, read)
        return Page(done, refused)


def read(row: dict[str, Any]) -> Fields:
    """A sale is <Merchant_Id>:<Order_Id>; any other row on the same order adds its type
    and date, and a return, fraud or cancellation names the sale as its original. A row
    lacking one of them has no id, and is refused."""
    merchant, order = row.get("Merchant_Id", "").strip(), row.get("Order_Id", "").strip()
    kind, moment = row.get("Transaction_Type", "").strip(), row.get("Transaction_Date", "").strip()
    sale = f"{merchant}:{order}" if merchant and order and kind else None
    other = sale is not None and kind.upper() != "SALE"
    external_id = (f"{sale}:{kind}:{moment}" if moment else None) if other else sale
    of_sale = other and kind.upper() in REVERSALS
    return Fields(
        external_id=external_id,
        raw_status=kind,
        commission=row.get("Total_Commission"),
        currency=None,
        transacted_at=moment,
        sale=row.get("Transaction_Amount") or None,
        program_id=merchant,
        program_name=row.get("Merchant"),
        sub_ids={"Custom_Tracking_Code": row.get("Custom_Tracking_Code")},
        original_id=sale if of_sale else None,
    )
