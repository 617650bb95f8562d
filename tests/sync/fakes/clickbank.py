"""ClickBank's fake: orders2/list by date, pages by the `Page` request header, HTTP 206
while more remain and 200 with the last; a page of one transaction is the object itself,
not an array; a refund is a transaction of its own (RFND) sharing the sale's receipt."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from aiohttp import web

from fakes.base import (
    Fake,
    Late,
    NetState,
    Record,
    Reversal,
    dumps,
    json_response,
    refused,
    setter,
    shown,
    utc,
)

CREDENTIALS = {"apiKey": "API-PLANTED-cb-key-0c1b"}
PAGE_SIZE = 2  # ClickBank's own page size is 100; small so the recordings span pages


def moment(record: Record) -> dt.datetime:
    return dt.datetime.fromisoformat(record["transactionTime"]).astimezone(dt.UTC)


def refunded(records: list[Record], record: Record, now: dt.datetime) -> None:
    """A refund: a transaction of its own, negative, on the sale's receipt."""
    records.append(
        {
            **record,
            "transactionTime": now.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00"),
            "transactionType": "RFND",
            "totalOrderAmount": -record["totalOrderAmount"],
            "totalAccountAmount": -record["totalAccountAmount"],
        }
    )


def page_body(orders: list[Record]) -> bytes:
    # One transaction comes as the object itself (the XML-to-JSON mapping of one element).
    return dumps({"orderData": orders[0] if len(orders) == 1 else orders})


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if not st.authorised(request, CREDENTIALS["apiKey"]):
        return refused("clickbank")
    q = request.query
    first = utc(q["startDate"], "%Y-%m-%d")
    last = utc(q["endDate"], "%Y-%m-%d") + dt.timedelta(days=1) - dt.timedelta(seconds=1)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"error": "date range too large"}, 400)
    if q.get("role") != "AFFILIATE":
        return json_response({"error": "role is required"}, 400)
    hits = shown([r for r in st.records if first <= moment(r) <= last])
    page = int(request.headers.get("Page", "1"))
    chunk = hits[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    more = page * PAGE_SIZE < len(hits)
    return web.Response(
        status=206 if more else 200, body=page_body(chunk), content_type="application/json"
    )


def answer(records: list[Record], size: int) -> bytes:
    return page_body(records)


FAKE = Fake(
    network="clickbank",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="receipt",
    # A transaction's type never changes: a refund is a transaction of its own, with an
    # id of its own, so the suite's flip case cannot hold for ClickBank. The record is the
    # one the poison and amendment cases change (the re-scan reads it again).
    flip=None,  # a change of type is another row, never a status word changed
    sample_id="CBR0004D",
    set_commission=setter("totalAccountAmount"),
    amended=(Decimal("600.00"), "600.00"),
    # The refund is dated when the test makes it: the clock's start (no wait before it).
    reversal=Reversal(
        "CBR0003C", refunded, "CBR0003C:RFND:2026-03-15T12:00:00+00:00", "unknown", "-13.23"
    ),
    paged=True,
    drop_currency=lambda r: r.pop("currency"),
    truncated=b'{"orderData": [{"receipt": "CB',
    answer=answer,
    late=Late(
        ("transactionTime",), "%Y-%m-%dT%H:%M:%S+00:00", frozenset({"reversal"}), reversal_row=True
    ),
)
