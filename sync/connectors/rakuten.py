"""Rakuten Advertising publisher Events (REST, JSON, numbered pages of a bare array)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from sync.connectors.base import (
    CallContext,
    FieldMap,
    Fields,
    JsonConnector,
    last_second,
    next_page_when_full,
)
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
    network="rakuten",
    base_url="https://api.linksynergy.com",
    credential_fields=(
        CredentialField(
            "accessToken", "Events API access token (Rakuten: Applications, scope = your SID)"
        ),
    ),
    auth="Authorization: Bearer <accessToken>",
    max_window=dt.timedelta(days=7),  # unpublished [U]
    granularity=dt.timedelta(seconds=1),
    pagination=Pagination.PAGE,
    rate=Rate(10, 60),  # unpublished [U]: cautious
    rate_source="unpublished for Events; a cautious 10/min",
    amount_format=AmountFormat.NUMBER,
    currency_source=CurrencySource.RECORD,
    sub_id_field="u1",
    # Events keeps 1-2 weeks (pubhelp.rakutenadvertising.com, Events API): every run
    # re-reads all of it, which is also how a u1 that arrives late is caught.
    rescan=dt.timedelta(days=14),
    horizon=dt.timedelta(days=14),
    change_feeds=(
        ChangeFeed(
            "process",
            "process_date_start/process_date_end",
            "returns and late-processed events (new rows: a return is a negative one)",
        ),
    ),
    # Events keeps no process date older than its retention either.
    change_lookback=dt.timedelta(days=14),
    rescan_catches="late sub-ids (u1) and amounts of the events still kept",
    page_size=1000,
    notes=(
        "Events sends no status: every event is stored pending (implied, rawStatus empty)"
        " and never moves from there through this API; the reconciliation reports, which"
        " would, are not read.",
        "Events keeps only one to two weeks (pubhelp.rakutenadvertising.com, Events API):"
        " history older than that is a file import.",
        "Returns as negative rows, the type of `is_event` and the token's lifetime are"
        " unconfirmed [U]; an `is_event` row (not commissionable) is skipped.",
        "Payments are not collected: Advanced Reports' Payment History Summary (reportid=1)"
        " is said to give each payment's id, amount, date and currency, but its column names"
        " and order are not published (php-oara reads columns 0, 1 and 5 by position; the"
        " currency's column is unknown), nor are the ids of the per-advertiser and detail"
        " reports [U].",
    ),
)

# JavaScript's Date.toString(), as Events writes its dates: "Wed Jan 07 2026 10:12:00
# GMT+0000 (UTC)".
_JS_DATE = re.compile(
    r"[A-Z][a-z]{2} (?P<mon>[A-Z][a-z]{2}) (?P<d>[0-9]{2}) (?P<y>[0-9]{4}) "
    r"(?P<t>[0-9]{2}:[0-9]{2}:[0-9]{2}) GMT(?P<off>[+-][0-9]{4})(?: \([^)]{0,64}\))?"
)
_MONTHS = {
    m: i
    for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1
    )
}
DATES = {"": "transaction_date", "process": "process_date"}


def js_date(value: object) -> object:
    """ISO 8601 text from a Date.toString() date; anything else as it came (the date's
    own parser then reads it, or refuses it)."""
    if not isinstance(value, str):
        return value
    found = _JS_DATE.fullmatch(value.strip())
    if found is None or found["mon"] not in _MONTHS:
        return value
    return (
        f"{found['y']}-{_MONTHS[found['mon']]:02d}-{found['d']}T{found['t']}"
        f"{found['off'][:3]}:{found['off'][3:]}"
    )


def stamp(moment: dt.datetime) -> str:
    """Events' parameter form: `YYYY-MM-DD HH:MM:SS`, GMT."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


class Rakuten(JsonConnector):
    spec = SPEC
    fields = FieldMap(
        external_id=("etransaction_id",),
        raw_status=None,
        commission=("commissions",),
        currency=("currency",),
        transacted_at=("transaction_date",),
        sale=("sale_amount",),
        program_id=("advertiser_id",),
        sub_ids={"u1": ("u1",)},
    )

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        date = DATES.get(window.feed, "transaction_date")
        return HttpRequest(
            "GET",
            ctx.url("/events/1.0/transactions"),
            params=(
                (f"{date}_start", stamp(window.start)),
                (f"{date}_end", stamp(last_second(window))),
                ("limit", str(ctx.page_size)),
                ("page", str(state or 1)),
            ),
            headers={
                "Authorization": f"Bearer {ctx.credentials['accessToken']}",
                "Accept": "application/json",
            },
        )

    def following(self, ctx: CallContext, state: Any, body: Any, records: list[Any]) -> Any:
        return next_page_when_full(ctx, state, records)

    def read(self, record: Any) -> Fields | None:
        if record.get("is_event") in (True, "true", "True", "Y", "y"):
            return None  # a media-optimisation event, not commissionable: no commission
        fields = self.fields.read(record)
        fields.transacted_at = js_date(fields.transacted_at)
        fields.implied_status = "pending"
        fields.status_reason = "rakuten:events-no-status"
        return fields
