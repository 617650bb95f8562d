"""Tradedoubler publisher transactions (OAuth2 password grant, offset pages)."""

from __future__ import annotations

import base64
import datetime as dt
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
    member,
)
from sync.errors import AuthRejected, MalformedResponse
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
    network="tradedoubler",
    base_url="https://connect.tradedoubler.com",
    credential_fields=(
        CredentialField("clientId", "API client id"),
        CredentialField("clientSecret", "API client secret"),
        CredentialField("username", "Tradedoubler user name"),
        CredentialField("password", "Tradedoubler password"),
    ),
    auth="OAuth2 password grant at /uaa/oauth/token (Basic clientId:clientSecret), then Bearer",
    # From php-oara comments only [S/U].
    max_window=dt.timedelta(days=31),
    granularity=dt.timedelta(days=1),
    pagination=Pagination.OFFSET,
    rate=Rate(60, 60),
    rate_source="60 requests/min, then 429 (tradedoubler.docs.apiary.io)",
    amount_format=AmountFormat.NUMBER,
    # The currency field name is unconfirmed [U]: a record's `currency`, else the connection's.
    currency_source=CurrencySource.RECORD_OR_CONNECTION,
    sub_id_field="epi1",
    more_sub_ids=("epi2",),
    # Advertisers get 30 days to validate, then auto-approval. No publisher-side filter
    # by modification date is published [U]: the re-scan is the one way to learn of changes.
    rescan=dt.timedelta(days=60),
    horizon=dt.timedelta(days=730),
    page_size=100,
)


class Tradedoubler(Connector):
    spec = SPEC
    reauthenticates = True

    async def authenticate(self, ctx: CallContext, send: Send) -> None:
        creds = ctx.credentials
        basic = base64.b64encode(f"{creds['clientId']}:{creds['clientSecret']}".encode()).decode()
        response = await send(
            HttpRequest(
                "POST",
                ctx.url("/uaa/oauth/token"),
                headers={"Authorization": f"Basic {basic}", "Accept": "application/json"},
                form={
                    "grant_type": "password",
                    "username": creds["username"],
                    "password": creds["password"],
                },
            )
        )
        if response.status in (400, 401, 403):
            raise AuthRejected(f"tradedoubler refused the credentials (HTTP {response.status})")
        expect_ok("tradedoubler", response)
        token = member(json_body("tradedoubler", response), "access_token")
        if not isinstance(token, str) or not token:
            raise MalformedResponse("tradedoubler: the token answer has no access_token")
        ctx.auth_headers = {"Authorization": f"Bearer {token}"}

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "GET",
            ctx.url("/publisher/report/transactions"),
            params=(
                ("fromDate", window.start.strftime("%Y%m%d")),
                ("toDate", last_day(window).strftime("%Y%m%d")),
                ("limit", str(ctx.page_size)),
                ("offset", str(state)),
            ),
            headers={**ctx.auth_headers, "Accept": "application/json"},
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("tradedoubler", response)
        body = json_body("tradedoubler", response)
        items = member(body, "items")
        total = member(body, "total")
        if not isinstance(items, list) or not isinstance(total, int):
            raise MalformedResponse("tradedoubler: the answer lacks items or total")
        done, refused = collect(ctx, items, read)
        return Page(done, refused, records=len(items), total=total)


def read(record: dict[str, Any]) -> Fields:
    return Fields(
        external_id=record.get("transactionId"),
        raw_status=record.get("status"),
        commission=record.get("commission"),
        currency=record.get("currency"),
        transacted_at=record.get("timeOfTransaction"),
        sale=record.get("orderValue"),
        clicked_at=record.get("timeOfVisit"),
        program_id=record.get("programId"),
        program_name=record.get("programName"),
        sub_ids={"epi1": record.get("epi1"), "epi2": record.get("epi2")},
    )
