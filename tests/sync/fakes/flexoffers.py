"""FlexOffers' fake, from php-oara's reader and FlexOffers' API help: the `apiKey` header,
`/allsales` by whole days of the servers' Eastern time, numbered pages of `pageSize` with
`totalCount`, and 204 with no body when there is nothing."""

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

CREDENTIALS = {"apiKey": "PLANTED-flexoffers-key-0d4c"}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if st.reject_auth or request.headers.get("apiKey") != CREDENTIALS["apiKey"]:
        return refused("flexoffers")
    q = request.query
    first = dt.datetime.fromisoformat(q["startDate"]).replace(tzinfo=dt.UTC)
    last = dt.datetime.fromisoformat(q["endDate"]).replace(tzinfo=dt.UTC)
    if not st.window(first, last + dt.timedelta(days=1, seconds=-1), dt.timedelta(seconds=1)):
        return json_response({"message": "The date range may not exceed 31 days"}, 400)
    # Whole days of Eastern time: the dates of the records' own (offset-less) times.
    hits = [
        r
        for r in st.records
        if first.date() <= dt.date.fromisoformat(r["eventDate"][:10]) <= last.date()
    ]
    if not hits:
        return web.Response(status=204)
    page, size = int(q["page"]), int(q["pageSize"])
    chunk = hits[(page - 1) * size : page * size]
    return json_response({"totalCount": len(hits), "pageSize": size, "results": chunk})


def answer(records: list[Record], size: int) -> bytes:
    return dumps({"totalCount": len(records), "pageSize": size, "results": records})


FAKE = Fake(
    network="flexoffers",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="legacyId",
    flip=Flip("700006", "orderStatus", "Approved", "approved"),
    set_commission=setter("commission"),
    amended=("2.90", "2.90"),
    reversal=Reversal(
        "700006", by_status({}, "orderStatus", "Cancelled"), "700006", "declined", "3.10"
    ),
    page_size=2,
    paged=True,
    drop_currency=lambda r: r.pop("currency"),
    answer=answer,
    late=Late(("eventDate", "modifiedDate"), "%Y-%m-%dT%H:%M:%S"),
)
