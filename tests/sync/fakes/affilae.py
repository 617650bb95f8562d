"""Affilae's fake: offset pages, amounts in cents."""

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

CREDENTIALS = {"apiToken": "PLANTED-affilae-token-8811", "affiliateProfileId": "p1"}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    q = request.query
    if (
        not st.authorised(request, f"Bearer {CREDENTIALS['apiToken']}")
        or q.get("affiliateProfile") != CREDENTIALS["affiliateProfileId"]
    ):
        return refused("affilae")
    first, last = iso(q["from"]), iso(q["to"])
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"error": "range too long"}, 400)
    hits = [r for r in st.records if first <= iso(r["createdAt"]) <= last]
    offset, limit = int(q["offset"]), int(q["limit"])
    return json_response(
        {"conversions": {"data": hits[offset : offset + limit], "total": len(hits)}}
    )


def answer(records: list[Record], size: int) -> bytes:
    return dumps({"conversions": {"data": records, "total": len(records)}})


FAKE = Fake(
    network="affilae",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="id",
    flip=Flip("afl-c-004", "status", "accepted", "approved"),
    set_commission=setter("commission"),
    amended=(1100, "11.00"),  # cents
    reversal=Reversal(
        "afl-c-004", by_status({}, "status", "refused"), "afl-c-004", "declined", "0.05"
    ),
    page_size=1,
    paged=True,
    drop_currency=lambda r: r.pop("currency"),
    answer=answer,
    late=Late(("createdAt",), "%Y-%m-%dT%H:%M:%SZ"),
)
