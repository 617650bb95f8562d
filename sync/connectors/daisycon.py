"""Daisycon publisher transactions (OAuth2 with a rotating refresh token; JSON pages with the
total in X-Total-Count; one row per transaction part)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from sync.connectors.base import (
    CallContext,
    Connector,
    Fields,
    Page,
    Send,
    collect,
    expect_ok,
    json_body,
    last_day,
    last_second,
    member,
)
from sync.errors import AuthRejected, MalformedResponse, WindowTooLarge
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
    network="daisycon",
    base_url="https://services.daisycon.com",
    credential_fields=(
        CredentialField("clientId", "OAuth client id (Daisycon: My account, API, OAuth clients)"),
        CredentialField("clientSecret", "OAuth client secret"),
        CredentialField(
            "refreshToken", "refresh token of the authorisation; rotates at every refresh"
        ),
        CredentialField("publisherId", "publisher id"),
    ),
    auth=(
        "OAuth2 refresh_token grant at login.daisycon.com/oauth/access-token (the new refresh"
        " token stored before use), then Bearer"
    ),
    max_window=dt.timedelta(days=31),
    granularity=dt.timedelta(days=1),
    pagination=Pagination.PAGE,
    rate=Rate(25, 60),
    more_rates=(Rate(2500, 3600),),
    rate_source=(
        "50 requests/min per IP, then the IP is blocked for a minute with 429 (daisycon.com,"
        " developers, rate limits; an older page: 2,500/h per user, 503); half of it, as"
        " connections on one worker share the IP"
    ),
    amount_format=AmountFormat.NUMBER,
    # Amounts are in the currency the request names (currency_code): the connection's.
    currency_source=CurrencySource.CONNECTION,
    sub_id_field="subid",
    more_sub_ids=("subid_2", "subid_3", "extra_1", "extra_2", "extra_3", "extra_4", "extra_5"),
    rescan=dt.timedelta(0),
    horizon=dt.timedelta(days=730),
    change_feeds=(
        ChangeFeed(
            "modified",
            "date_modified_start/date_modified_end",
            "approvals, disapprovals and amendments of any part (any modification)",
        ),
    ),
    page_size=1000,
    notes=(
        "Each part of a transaction is a row of its own, id `<affiliatemarketing_id>:<part"
        " id>`: one transaction can mix approved and disapproved parts.",
        "The refresh token rotates: the new one is stored before the access token is used,"
        " so a run that dies after a refresh does not lock the account out.",
        "A query answers at most 10,000 records (X-Total-Count): a larger window is split.",
        "Paid evidence is unpublished [U]: no row is marked paid.",
        "The date format and time zone are unconfirmed [U]: read as UTC.",
        "Amounts are asked for in the connection's currency (currency_code).",
    ),
)

# The most records one query answers (php-oara: split windows past it).
RESULT_CAP = 10_000
# The token endpoint, on its own host (a configured base URL serves it under /oauth/).
LOGIN_URL = "https://login.daisycon.com/oauth/access-token"
CLI_REDIRECT = "https://login.daisycon.com/oauth/cli"
# A stored access token is used only while it lives this much longer (a run's first pages).
MARGIN = dt.timedelta(minutes=5)


class Daisycon(Connector):
    spec = SPEC
    reauthenticates = True

    async def authenticate(self, ctx: CallContext, send: Send) -> None:
        """An access token: the stored one while it lives, else a refresh, whose new refresh
        token (the old one is dead once used) is stored before anything uses it."""
        creds = ctx.credentials
        expires = creds.get("accessTokenExpiresAt")
        renewing = bool(ctx.auth_headers)  # the token in use was refused: never reuse it
        if (
            not renewing
            and creds.get("accessToken")
            and expires
            and _moment(expires) > ctx.now() + MARGIN
        ):
            ctx.auth_headers = {"Authorization": f"Bearer {creds['accessToken']}"}
            return
        default = ctx.base_url.rstrip("/") == SPEC.base_url
        response = await send(
            HttpRequest(
                "POST",
                LOGIN_URL if default else ctx.url("/oauth/access-token"),
                form={
                    "grant_type": "refresh_token",
                    "client_id": creds["clientId"],
                    "client_secret": creds["clientSecret"],
                    "refresh_token": creds["refreshToken"],
                    "redirect_uri": CLI_REDIRECT,
                },
            )
        )
        if response.status in (400, 401, 403):
            raise AuthRejected(f"daisycon refused the credentials (HTTP {response.status})")
        expect_ok("daisycon", response)
        body = json_body("daisycon", response)
        access, refresh, lifetime = (
            member(body, "access_token"),
            member(body, "refresh_token"),
            member(body, "expires_in"),
        )
        if not (isinstance(access, str) and access and isinstance(refresh, str) and refresh):
            raise MalformedResponse("daisycon: the token answer lacks its tokens")
        seconds = lifetime if isinstance(lifetime, int) and 0 < lifetime <= 86400 else 0
        await ctx.keep_credentials(
            {
                "refreshToken": refresh,
                "accessToken": access,
                "accessTokenExpiresAt": (ctx.now() + dt.timedelta(seconds=seconds)).isoformat(),
            }
        )
        ctx.auth_headers = {"Authorization": f"Bearer {access}"}

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        if window.feed:
            dates = (
                ("date_modified_start", window.start.strftime("%Y-%m-%d %H:%M:%S")),
                ("date_modified_end", last_second(window).strftime("%Y-%m-%d %H:%M:%S")),
            )
        else:
            dates = (
                ("start", window.start.date().isoformat()),
                ("end", last_day(window).isoformat()),
            )
        return HttpRequest(
            "GET",
            ctx.url(f"/publishers/{ctx.credentials['publisherId']}/transactions"),
            params=(
                *dates,
                ("currency_code", ctx.currency or ""),
                ("page", str(state or 1)),
                ("per_page", str(ctx.page_size)),
            ),
            headers={**ctx.auth_headers, "Accept": "application/json"},
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("daisycon", response)
        try:
            total = int(response.headers.get("X-Total-Count", ""))
        except ValueError:
            raise MalformedResponse("daisycon: X-Total-Count is missing or not a number") from None
        if total > RESULT_CAP:
            raise WindowTooLarge("daisycon: more records than one query may return")
        body = json_body("daisycon", response)
        if not isinstance(body, list):
            raise MalformedResponse("daisycon: expected a list of transactions")
        done, refused = collect(ctx, parts(body), read)
        page = state or 1
        return Page(done, refused, next=page + 1 if body and page * ctx.page_size < total else None)


def _moment(text: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return dt.datetime.min.replace(tzinfo=dt.UTC)  # unreadable: refresh
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def parts(transactions: list[Any]) -> Iterator[Any]:
    """Every part of every transaction, with its transaction (one row each)."""
    for tx in transactions:
        found = member(tx, "parts")
        if not isinstance(found, list) or not found:
            yield {"transaction": tx, "part": None}  # refused: a transaction without parts
            continue
        for part in found:
            yield {"transaction": tx, "part": part}


def read(record: dict[str, Any]) -> Fields:
    tx, part = record["transaction"], record["part"]
    if not isinstance(tx, dict) or not isinstance(part, dict):
        raise TypeError("a transaction without its parts")
    tx_id, part_id = tx.get("affiliatemarketing_id"), part.get("id")
    return Fields(
        external_id=f"{tx_id}:{part_id}"
        if tx_id not in (None, "") and part_id not in (None, "")
        else None,
        raw_status=part.get("status"),
        commission=part.get("commission"),
        currency=None,
        transacted_at=part.get("date") or tx.get("date"),
        sale=part.get("revenue"),
        clicked_at=part.get("date_click"),
        program_id=tx.get("program_id"),
        program_name=tx.get("program_name"),
        sub_ids={name: part.get(name) for name in SPEC.all_sub_ids},
        status_reason="daisycon:disapproved" if part.get("disapproved_reason") else None,
    )
