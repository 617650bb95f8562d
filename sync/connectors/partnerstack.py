"""PartnerStack partner rewards (REST, JSON, cursor pages; epoch milliseconds, cents)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sync.connectors.base import CallContext, FieldMap, Fields, JsonConnector, member
from sync.errors import MalformedResponse
from sync.http import HttpRequest
from sync.model import Window
from sync.spec import (
    AmountFormat,
    ConnectorSpec,
    CredentialField,
    CurrencySource,
    Pagination,
    Rate,
    TimeFormat,
)

SPEC = ConnectorSpec(
    network="partnerstack",
    base_url="https://api.partnerstack.com",
    credential_fields=(
        CredentialField("apiKey", "partner API key (PartnerStack: Settings, API keys)"),
    ),
    auth="Authorization: Bearer <apiKey>",
    max_window=dt.timedelta(days=31),  # unpublished [U]
    granularity=dt.timedelta(seconds=1),
    pagination=Pagination.CURSOR,
    rate=Rate(10, 60),  # unpublished [U]: cautious
    rate_source="unpublished; a cautious 10/min",
    amount_format=AmountFormat.CENTS,
    currency_source=CurrencySource.RECORD_OR_CONNECTION,
    sub_id_field="customer",
    # No filter by update is published [U]; companies review rewards in the first week of
    # the next month and pay around the 13th: two months and a half are re-scanned.
    rescan=dt.timedelta(days=75),
    horizon=dt.timedelta(days=730),  # unpublished [U]
    # limit is 1-250 (docs.partnerstack.com); a third party says 100 at most.
    page_size=100,
    times={"transacted": TimeFormat.UNIX_MILLIS},
    notes=(
        "amount is integer cents (a client's typing); the reward's currency member is"
        " unconfirmed [U]: a record's `currency` if it sends one, else the connection's.",
        "No sub-id member is documented for partners [U]: the referred customer's key is"
        " kept as the sub-id `customer`.",
        "payment_status in_transit, withdrawn and paid_externally is payment evidence;"
        " paid_and_refunded, expired, failed and merging are unconfirmed [U]: the row is"
        " stored unknown with that word as rawStatus.",
    ),
)
PAID_EVIDENCE = frozenset({"in_transit", "withdrawn", "paid_externally"})
DOUBTFUL = frozenset({"paid_and_refunded", "expired", "failed", "merging"})


def millis(moment: dt.datetime) -> str:
    return str(int(moment.timestamp()) * 1000)


class Partnerstack(JsonConnector):
    spec = SPEC
    records = ("data", "items")
    fields = FieldMap(
        external_id=("key",),
        raw_status=("reward_status",),
        commission=("amount",),
        currency=("currency",),
        transacted_at=("created_at",),
        program_id=("company", "key"),
        program_name=("company", "name"),
        sub_ids={"customer": ("customer", "key")},
    )

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        cursor = () if state is None else (("starting_after", str(state)),)
        return HttpRequest(
            "GET",
            ctx.url("/api/v2/rewards"),
            params=(
                ("min_created", millis(window.start)),
                # max_created is inclusive [U]: the window's last millisecond.
                ("max_created", str(int(window.end.timestamp()) * 1000 - 1)),
                ("order_by", "created_at"),
                ("limit", str(ctx.page_size)),
                *cursor,
            ),
            headers={
                "Authorization": f"Bearer {ctx.credentials['apiKey']}",
                "Accept": "application/json",
            },
        )

    def following(self, ctx: CallContext, state: Any, body: Any, records: list[Any]) -> Any:
        if member(body, "data", "has_more") is not True:
            return None
        last = member(records, len(records) - 1, "key")
        if not isinstance(last, str) or not last:
            raise MalformedResponse("partnerstack: more pages, but the last item has no key")
        return last

    def read(self, record: Any) -> Fields:
        fields = self.fields.read(record)
        payment = record.get("payment_status")
        if payment in PAID_EVIDENCE:
            fields.paid_reason = f"partnerstack:payment_status:{payment}"
        elif payment in DOUBTFUL:
            fields.raw_status = payment
            fields.status_reason = "partnerstack:payment_status"
        return fields
