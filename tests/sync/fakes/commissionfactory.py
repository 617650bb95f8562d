"""Commission Factory's fake: one plain JSON array per window, date-only bounds by the
creation or the modification date; the key in the query; 30 calls a minute, 1,000 a day and
no concurrent call, each answered 429 past it (dev.commissionfactory.com)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from aiohttp import web

from fakes.base import (
    ALL_LATE,
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
    shown,
    utc,
)

CREDENTIALS = {"apiKey": "PLANTED-cf-key-c0ffee"}
STAMP = "%Y-%m-%dT%H:%M:%S.000"
DAY = dt.timedelta(days=1)
CHANGES = {kind: ("DateModified", STAMP) for kind in ("status", "reversal", "amount")}
# The published limits: per rolling minute, per rolling day, and one call at a time.
LIMITS = ((30, 60.0), (1000, 86400.0))


def over_limit(st: NetState) -> bool:
    times = st.times()
    now = times[-1]
    return st.in_flight > 1 or any(
        sum(1 for t in times if now - t < period) > most for most, period in LIMITS
    )


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    q = request.query
    if st.reject_auth or q.get("apiKey") != CREDENTIALS["apiKey"]:
        return refused("commissionfactory")
    if over_limit(st):
        return json_response({"Message": "API call rate limit exceeded."}, 429)
    first = utc(q["fromDate"], "%Y-%m-%d")
    last = utc(q["toDate"], "%Y-%m-%d") + DAY - dt.timedelta(seconds=1)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"Message": "The date range is too large."}, 400)
    member = {"DateCreated": "DateCreated", "DateModified": "DateModified"}.get(
        q.get("dateProperty", "DateCreated")
    )
    if member is None:
        return json_response({"Message": "The dateProperty is invalid."}, 400)
    hits = [r for r in st.records if first <= utc(r[member], STAMP) <= last]
    return json_response(shown(hits))


def answer(records: list[Record], size: int) -> bytes:
    return dumps(records)


FAKE = Fake(
    network="commissionfactory",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="Id",
    flip=Flip("50001", "Status", "Approved", "approved"),
    set_commission=setter("Commission"),
    amended=(Decimal("11.2500"), "11.2500"),
    reversal=Reversal(
        "50001", by_status(CHANGES, "Status", "Void"), "50001", "declined", "10.0000"
    ),
    currency="AUD",
    change_dates=CHANGES,
    answer=answer,
    late=Late(("DateCreated", "DateModified"), STAMP, ALL_LATE),
)
