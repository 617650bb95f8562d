"""Skimlinks commission report (client-credentials token in the query, offset pages)."""

from __future__ import annotations

import contextlib
import datetime as dt
from typing import Any

from sync.connectors.base import (
    CallContext,
    FieldMap,
    Fields,
    JsonConnector,
    Send,
    expect_ok,
    json_body,
    last_day,
    member,
)
from sync.errors import AuthRejected, CredentialsUnstorable, MalformedResponse
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
    network="skimlinks",
    base_url="https://reporting.skimapis.com",
    credential_fields=(
        CredentialField("clientId", "API client id (Skimlinks Hub: Settings, API keys)"),
        CredentialField("clientSecret", "API client secret"),
        CredentialField("publisherId", "publisher id"),
    ),
    auth="client credentials at authentication.skimapis.com/access_token, then query parameter access_token=<token>",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(days=1),
    pagination=Pagination.OFFSET,
    rate=Rate(40, 60),
    # 300 an hour per key; 1,000 a day per IP, which no one connection may exceed either.
    more_rates=(Rate(300, 3600), Rate(1000, 86400)),
    rate_source="40/min and 300/h per key; per IP 80/min, 500/h, 1,000/day (developers.skimlinks.com, reporting API)",
    amount_format=AmountFormat.NUMBER,
    currency_source=CurrencySource.RECORD,
    sub_id_field="custom_id",
    # updated_since reports changes; whether a payment moves last_updated is unconfirmed
    # [U], so the months in which payments land are re-scanned.
    rescan=dt.timedelta(days=90),
    horizon=dt.timedelta(days=365),  # unpublished [U]
    change_feeds=(
        ChangeFeed(
            "updated",
            "updated_since",
            "cancellations, amendments and any update of the record",
        ),
    ),
    rescan_catches="payments (payment_status)",
    page_size=500,
    notes=(
        "The token lives 7 days [U]: it is stored with its expiry and reused until an hour"
        " before it, or until the network refuses it (then a new one is asked for once).",
        "`active` means pending to some and approved to others [U]: stored unknown (rawStatus"
        " active); `cancelled` is declined, and payment_status paid is payment evidence.",
        "Dates carry no zone [U]: read as UTC. Window dates (start_date, end_date) are whole days.",
        "The per-IP limits (80/min, 500/h, 1,000/day) are shared by every connection of a"
        " worker's address; each connection keeps to 1,000 a day on its own.",
        "Reversals as rows of their own with negative amounts [U] are kept as sent.",
        "Payments are not collected: `GET /publisher/{id}/payment-status` is documented, but"
        " the fields of its records are not (the published schema gives `commissions` as"
        " untyped objects) [U]; a commission is paid by its own payment_status only.",
    ),
)

# The token is asked of this host; a --base-url proxy (or sandbox) serves it too.
TOKEN_URL = "https://authentication.skimapis.com/access_token"
# The stored token and its expiry, kept among the connection's credentials.
TOKEN, EXPIRES = "accessToken", "accessTokenExpiresAt"
LIFETIME = dt.timedelta(days=7)
# A token closer than this to its end is not started with: a run may last an hour.
MARGIN = dt.timedelta(hours=1)


def token_url(ctx: CallContext) -> str:
    return TOKEN_URL if ctx.base_url == SPEC.base_url else ctx.url("/access_token")


def usable_until(text: str | None) -> dt.datetime:
    """A stored expiry; the epoch when absent or unreadable (the token is then renewed)."""
    try:
        moment = dt.datetime.fromisoformat(text or "")
    except ValueError:
        return dt.datetime.min.replace(tzinfo=dt.UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


class Skimlinks(JsonConnector):
    spec = SPEC
    reauthenticates = True
    records = ("commissions",)
    total = ("pagination", "total_count")
    fields = FieldMap(
        external_id=("commission_id",),
        raw_status=("transaction_details", "status"),
        commission=("transaction_details", "basket", "publisher_amount"),
        currency=("transaction_details", "basket", "currency"),
        transacted_at=("transaction_details", "transaction_date"),
        sale=("transaction_details", "basket", "order_amount"),
        program_id=("merchant_details", "merchant_id"),
        program_name=("merchant_details", "merchant_name"),
        sub_ids={"custom_id": ("click_details", "custom_id")},
    )

    async def authenticate(self, ctx: CallContext, send: Send) -> None:
        creds = ctx.credentials
        stored = creds.get(TOKEN)
        # The stored token, unless it is about to end or is the one just refused.
        if (
            stored
            and stored != ctx.auth_headers.get("access_token")
            and usable_until(creds.get(EXPIRES)) > ctx.now() + MARGIN
        ):
            ctx.auth_headers = {"access_token": stored}
            return
        response = await send(
            HttpRequest(
                "POST",
                token_url(ctx),
                json={
                    "client_id": creds["clientId"],
                    "client_secret": creds["clientSecret"],
                    "grant_type": "client_credentials",
                },
            )
        )
        if response.status == 400:
            raise AuthRejected(f"skimlinks refused the credentials (HTTP {response.status})")
        expect_ok("skimlinks", response)
        body = json_body("skimlinks", response)
        token = member(body, "access_token")
        if not isinstance(token, str) or not token:
            raise MalformedResponse("skimlinks: the token answer has no access_token")
        expires = ctx.now() + LIFETIME
        stated = member(body, "expiry_timestamp")
        if type(stated) is int and 0 < stated < 2**32:
            expires = min(expires, dt.datetime.fromtimestamp(stated, dt.UTC))
        # Where the run cannot store it, the token is used all the same: one from client
        # credentials is asked for again by the next run, nothing is lost.
        with contextlib.suppress(CredentialsUnstorable):
            await ctx.keep_credentials({TOKEN: token, EXPIRES: expires.isoformat()})
        ctx.auth_headers = {"access_token": token}

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        if window.feed == "updated":
            dates: tuple[tuple[str, str], ...] = (
                ("updated_since", window.start.strftime("%Y-%m-%d %H:%M:%S")),
            )
        else:
            dates = (
                ("start_date", window.start.strftime("%Y-%m-%d")),
                ("end_date", last_day(window).strftime("%Y-%m-%d")),
            )
        return HttpRequest(
            "GET",
            ctx.url(f"/publisher/{ctx.credentials['publisherId']}/commission-report"),
            # The token rides in the query (kept in auth_headers, which repr never shows);
            # it is among the run's secrets, redacted from every line and reason.
            params=(
                ("access_token", ctx.auth_headers.get("access_token", "")),
                *dates,
                ("limit", str(ctx.page_size)),
                ("offset", str(state)),
                ("sort_by", "transaction_date"),
                ("sort_dir", "ASC"),
            ),
            headers={"Accept": "application/json"},
        )

    def read(self, record: Any) -> Fields:
        fields = self.fields.read(record)
        if fields.program_id is None:
            fields.program_id = member(record, "merchant_details", "id")  # an older shape
        if member(record, "transaction_details", "payment_status") == "paid":
            fields.paid_reason = "skimlinks:payment_status"
        return fields
