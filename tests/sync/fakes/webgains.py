"""Webgains' fake, from the platform API as php-oara and its fork read it: transactions by
unix-second filters, `{data, pagination: {current_page, last_page}}`, pages of `size`,
numeric status codes and integer amounts (ten-thousandths)."""

from __future__ import annotations

import datetime as dt

from aiohttp import web

from fakes.base import (
    Fake,
    Flip,
    Late,
    NetState,
    Record,
    Reversal,
    by_status,
    dumps,
    json_response,
    refused,
    setter,
)

CREDENTIALS = {"apiToken": "PLANTED-webgains-token-71aa", "publisherId": "223344"}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if (
        not st.authorised(request, f"Bearer {CREDENTIALS['apiToken']}")
        or f"/publishers/{CREDENTIALS['publisherId']}/" not in request.path
    ):
        return refused("webgains")
    q = request.query
    low, high = int(q["filters[start_date]"]), int(q["filters[end_date]"])
    first, last = (dt.datetime.fromtimestamp(t, dt.UTC) for t in (low, high))
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"message": "The date range may not exceed 31 days."}, 422)
    hits = sorted((r for r in st.records if low <= r["date"] <= high), key=lambda r: r["date"])
    size, page = int(q["size"]), int(q["page"])
    last_page = max(1, -(-len(hits) // size))
    return json_response(
        {
            "data": hits[(page - 1) * size : page * size],
            "pagination": {"current_page": page, "last_page": last_page},
        }
    )


def answer(records: list[Record], size: int) -> bytes:
    return dumps({"data": records, "pagination": {"current_page": 1, "last_page": 1}})


FAKE = Fake(
    network="webgains",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="id",
    # Every code is unconfirmed: a flip changes the raw code and leaves the status unknown.
    flip=Flip("123456786", "status", "70", "unknown"),
    set_commission=setter("commission", "amount"),
    amended=(295000, "29.5000"),
    reversal=Reversal("123456786", by_status({}, "status", 70), "123456786", "unknown", "31.0000"),
    page_size=1,
    paged=True,
    drop_currency=lambda r: r["commission"].pop("currency_code"),
    answer=answer,
    late=Late(("date",), "epoch", words={"pending": 10, "approved": 20, "declined": 70}),
)
