"""Awin's fake: no paging, the window bounds the answer; dateType picks the date."""

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
    Reversal,
    by_status,
    dumps,
    json_response,
    refused,
    setter,
    shown,
    utc,
)

CREDENTIALS = {"accessToken": "PLANTED-awin-token-7f3a91", "publisherId": "123456"}
SECONDS = "%Y-%m-%dT%H:%M:%S"
# The record member each dateType bounds (`__` members the network does not send).
DATES = {
    "transaction": "transactionDate",
    "validation": "validationDate",
    "amendment": "__amendmentDate",
}
CHANGES = {
    "status": ("validationDate", SECONDS),
    "reversal": ("__amendmentDate", SECONDS),
    "amount": ("__amendmentDate", SECONDS),
}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if (
        not st.authorised(request, f"Bearer {CREDENTIALS['accessToken']}")
        or f"/{CREDENTIALS['publisherId']}/" not in request.path
    ):
        return refused("awin")
    q = request.query
    first, last = utc(q["startDate"], SECONDS), utc(q["endDate"], SECONDS)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"error": "date range must not exceed 31 days"}, 400)
    member = DATES.get(q.get("dateType", "transaction"))
    if member is None:
        return json_response({"error": "invalid dateType"}, 400)
    hits = [r for r in st.records if r.get(member) and first <= utc(r[member], SECONDS) <= last]
    return json_response(shown(hits))


FAKE = Fake(
    network="awin",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="id",
    flip=Flip("1591984036", "commissionStatus", "approved", "approved"),
    set_commission=setter("commissionAmount", "amount"),
    amended=(Decimal("2.13"), "2.13"),
    reversal=Reversal(
        "1591984036",
        by_status(CHANGES, "commissionStatus", "declined"),
        "1591984036",
        "declined",
        "12.00",
    ),
    change_dates=CHANGES,
    answer=lambda records, size: dumps(records),
    late=Late(("transactionDate",), "%Y-%m-%dT%H:%M:%S", ALL_LATE, {"validationDate": None}),
)
