"""Affilae publisher conversions (Bearer token, offset pages, amounts in cents)."""

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
    iso_z,
    json_body,
    last_second,
    member,
)
from sync.errors import MalformedResponse
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
    network="affilae",
    base_url="https://rest.affilae.com",
    credential_fields=(
        CredentialField("apiToken", "API token (Affilae: Settings, API)"),
        CredentialField("affiliateProfileId", "affiliate profile id (publishers.me)"),
    ),
    auth="Authorization: Bearer <apiToken>",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(seconds=1),
    pagination=Pagination.OFFSET,
    # Bursts get 429; known clients space calls 250 ms apart.
    rate=Rate(4, 1),
    rate_source="unpublished; 429 on bursts, clients space calls 250 ms (OSS clients)",
    amount_format=AmountFormat.CENTS,
    currency_source=CurrencySource.RECORD,
    sub_id_field="subId",
    # The standard lock period is 20 days, after which a conversion no longer changes; no
    # publisher-side filter by change date is published: the re-scan covers the lock.
    rescan=dt.timedelta(days=45),
    horizon=dt.timedelta(days=730),
    page_size=100,
    notes=("The response envelope is unconfirmed [U]: {conversions: {data, total}}.",),
)


class Affilae(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "GET",
            ctx.url("/publisher/conversions.list"),
            params=(
                ("affiliateProfile", ctx.credentials["affiliateProfileId"]),
                ("from", iso_z(window.start)),
                ("to", iso_z(last_second(window))),
                ("limit", str(ctx.page_size)),
                ("offset", str(state)),
                ("orderBy", "date"),
                ("sort", "asc"),
            ),
            headers={"Authorization": f"Bearer {ctx.credentials['apiToken']}"},
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("affilae", response)
        body = json_body("affilae", response)
        data = member(body, "conversions", "data")
        total = member(body, "conversions", "total")
        if not isinstance(data, list) or not isinstance(total, int):
            raise MalformedResponse("affilae: the answer lacks conversions.data or total")
        done, refused = collect(ctx, data, read)
        return Page(done, refused, records=len(data), total=total)


def read(record: dict[str, Any]) -> Fields:
    return Fields(
        external_id=record.get("id"),
        raw_status=record.get("status"),
        commission=record.get("commission"),
        currency=record.get("currency"),
        transacted_at=record.get("createdAt"),
        sale=record.get("amount"),
        program_id=member(record, "program", "id"),
        program_name=member(record, "program", "name"),
        sub_ids={"subId": record.get("subId")},
    )
