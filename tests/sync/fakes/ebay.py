"""eBay Partner Network's fake, from its reporting guide (epn-guide) and php-oara's reader:
the transaction detail report as JSON `{"Records": [...]}`, one answer per window of whole
days of update dates; an update is the transaction's row in its new state, with the
change it made in Delta*."""

from __future__ import annotations

import datetime as dt

from aiohttp import web

from fakes.base import (
    ALL_LATE,
    Fake,
    Flip,
    Late,
    NetState,
    Record,
    Reversal,
    basic,
    dumps,
    iso,
    json_response,
    refused,
    setter,
    shown,
    stamp,
    utc,
)

CREDENTIALS = {"accountSid": "IRplantedEPN77", "authToken": "PLANTED-ebay-auth-6a1f"}
UPDATE = ("UpdateDate", "%Y-%m-%dT%H:%M:%S+0000")
CHANGES = {kind: UPDATE for kind in ("status", "reversal", "amount")}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if (
        not st.authorised(request, basic(CREDENTIALS["accountSid"], CREDENTIALS["authToken"]))
        or CREDENTIALS["accountSid"] not in request.path
    ):
        return refused("ebay")
    q = request.query
    if q.get("date_type") != "update_date" or q.get("STATUS") != "ALL":
        return json_response({"Status": "ERROR", "Message": "invalid parameters"}, 400)
    first = utc(q["START_DATE"], "%Y-%m-%d")
    last = utc(q["END_DATE"], "%Y-%m-%d") + dt.timedelta(days=1, seconds=-1)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"Status": "ERROR", "Message": "Date range is too large"}, 400)
    hits = [r for r in st.records if first <= iso(r["UpdateDate"]) <= last]
    return json_response({"Records": shown(hits)})


def reversed_(records: list[Record], record: Record, now: dt.datetime) -> None:
    """Reversed: the row in its new state, the change in its deltas."""
    record["Status"] = "Reversed"
    record["DeltaEarnings"] = f"-{record['Earnings']}"
    record["DeltaSales"] = f"-{record['Sales']}"
    stamp(record, UPDATE, now)


def answer(records: list[Record], size: int) -> bytes:
    return dumps({"Records": records})


FAKE = Fake(
    network="ebay",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="EpnTransactionId",
    flip=Flip("5000000006", "Status", "Approved", "approved"),
    set_commission=setter("Earnings"),
    amended=("2.10", "2.10"),
    reversal=Reversal("5000000006", reversed_, "5000000006", "declined", "2.48"),
    currency="USD",
    change_dates=CHANGES,
    truncated=b'{"Records": [{"EpnTransactionId": "5',
    answer=answer,
    late=Late(("EventDate", "UpdateDate"), "%Y-%m-%dT%H:%M:%S+0000", ALL_LATE),
)
