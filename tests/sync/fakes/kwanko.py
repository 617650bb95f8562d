"""Kwanko's fake: one JSON answer per window; records without a currency."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

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

CREDENTIALS = {"apiToken": "PLANTED-kwanko-token-55ee"}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if not st.authorised(request, f"Bearer {CREDENTIALS['apiToken']}"):
        return refused("kwanko")
    q = request.query
    first, last = iso(q["completion_date_from"]), iso(q["completion_date_to"])
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"error": "range too long"}, 400)
    hits = [
        r
        for r in st.records
        if first <= dt.datetime.fromtimestamp(r["completed_at_timestamp"], dt.UTC) <= last
    ]
    return json_response({"conversions": hits})


def answer(records: list[Record], size: int) -> bytes:
    return dumps({"conversions": records})


FAKE = Fake(
    network="kwanko",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="kwanko_id",
    flip=Flip("5550002", "state", "approved", "approved"),
    set_commission=setter("websites_per_language", 0, "earnings", "value"),
    amended=(Decimal("6.25"), "6.25"),
    reversal=Reversal("5550002", by_status({}, "state", "refused"), "5550002", "declined", "3.6"),
    currency="EUR",
    answer=answer,
    late=Late(("completed_at_timestamp",), "epoch"),
)
