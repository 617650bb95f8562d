"""Sovrn Commerce's fake: one day of update dates per call (updateDate=YYYY-MM-DD), at most
one call a minute (429 with Retry-After past it); no status, no currency; an adjustment
updates the row and its updateDate (developer.sovrn.com, reports/transactions)."""

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
    stamp,
    utc,
)

CREDENTIALS = {"secretKey": "PLANTED-sovrn-secret-5eed"}
STAMP = "%Y-%m-%dT%H:%M:%S"
CHANGES = {kind: ("updateDate", STAMP) for kind in ("status", "reversal", "amount")}


def adjusted(records: list[Record], record: Record, now: dt.datetime) -> None:
    """Sovrn reverses a commission by updating its row: revenue to zero, updated today."""
    record["publisherRevenue"] = Decimal("0.00")
    stamp(record, CHANGES["reversal"], now)


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if not st.authorised(request, f"secret {CREDENTIALS['secretKey']}"):
        return refused("sovrn")
    times = st.times()
    if len(times) > 1 and times[-1] - times[-2] < 60:
        return json_response({"message": "Too Many Requests"}, 429)
    q = request.query
    dates = [k for k in ("updateDate", "clickDate", "commissionDate") if k in q]
    if len(dates) != 1 or any(k in q for k in ("startDate", "endDate")):
        return json_response({"message": "exactly one date per request"}, 400)
    first = utc(q[dates[0]], "%Y-%m-%d")
    last = first + dt.timedelta(days=1) - dt.timedelta(seconds=1)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"message": "one day per request"}, 400)
    hits = [r for r in st.records if first <= utc(r[dates[0]], STAMP) <= last]
    return json_response({"transactions": shown(hits)})


def answer(records: list[Record], size: int) -> bytes:
    return dumps({"transactions": records})


FAKE = Fake(
    network="sovrn",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=1,
    id_field="commissionId",
    # Sovrn publishes no status: no word of a record can flip, and the suite's flip case
    # cannot hold for it. The record is the one the poison and amendment cases change.
    flip=None,  # a change of type is another row, never a status word changed
    sample_id="sv-c-7002",
    one_day_per_call=True,
    set_commission=setter("publisherRevenue"),
    amended=(Decimal("1.75"), "1.75"),
    reversal=Reversal("sv-c-7002", adjusted, "sv-c-7002", "unknown", "0.00"),
    currency="USD",
    change_dates=CHANGES,
    truncated=b'{"transactions": [{"commissionId": "sv',
    answer=answer,
    late=Late(
        ("clickDate", "commissionDate", "updateDate"), STAMP, frozenset({"reversal", "amendment"})
    ),
)
