"""Adtraction's fake, from its API docs (X-Token) and php-oara's reader: POST the period
as JSON, one answer per window, transactions as a bare list, numeric status codes; no
transactions is a message, not an empty list."""

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
    iso,
    json_response,
    refused,
    setter,
)

CREDENTIALS = {"apiToken": "PLANTED-adtraction-token-3b9e"}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if (
        st.reject_auth
        or request.method != "POST"
        or request.headers.get("X-Token") != CREDENTIALS["apiToken"]
    ):
        return refused("adtraction")
    body = await request.json()
    first, last = iso(body["fromDate"]), iso(body["toDate"])
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"message": "The period may not exceed 31 days"}, 400)
    wanted = body.get("transactionStatus", 0)
    hits = [
        r
        for r in st.records
        if first <= iso(r["transactionDate"]) <= last and wanted in (0, r["transactionStatus"])
    ]
    return json_response(hits or {"message": "No transactions found."})


def answer(records: list[Record], size: int) -> bytes:
    return dumps(records)


FAKE = Fake(
    network="adtraction",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="uniqueId",
    flip=Flip("adt-6", "transactionStatus", "5", "declined"),
    set_commission=setter("commission"),
    amended=("29.50", "29.50"),
    reversal=Reversal("adt-6", by_status({}, "transactionStatus", 5), "adt-6", "declined", "31.00"),
    currency="SEK",
    answer=answer,
    late=Late(
        ("transactionDate",),
        "%Y-%m-%dT%H:%M:%S+0000",
        words={"pending": 2, "approved": 1, "declined": 5},
    ),
)
