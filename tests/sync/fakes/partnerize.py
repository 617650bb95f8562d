"""Partnerize's fake: cursor pages, hypermedia next_page; date_type=last_modified."""

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
    by_status,
    dumps,
    json_response,
    refused,
    setter,
    shown,
    utc,
)

CREDENTIALS = {
    "applicationKey": "PLANTED-pz-app-66ff",
    "userApiKey": "PLANTED-pz-user-7700",
    "publisherId": "1l1007",
}
FORMAT = "%Y-%m-%d %H:%M:%S"
DATES = {"": "conversion_time", "last_modified": "__last_modified"}
CHANGES = {kind: ("__last_modified", FORMAT) for kind in ("status", "reversal", "amount")}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if (
        not st.authorised(request, basic(CREDENTIALS["applicationKey"], CREDENTIALS["userApiKey"]))
        or CREDENTIALS["publisherId"] not in request.path
    ):
        return refused("partnerize")
    q = request.query
    first, last = utc(q["start_date"], FORMAT), utc(q["end_date"], FORMAT)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"error": {"message": "date range too long"}}, 400)
    member = DATES.get(q.get("date_type", ""))
    if member is None:
        return json_response({"error": {"message": "invalid date_type"}}, 400)
    hits = [r for r in st.records if r.get(member) and first <= utc(r[member], FORMAT) <= last]
    limit = int(q["limit"])
    start = int(q.get("cursor_id", "c0")[1:])
    chunk = hits[start : start + limit]
    following = None
    if start + limit < len(hits):
        following = f"{request.path}?cursor_id=c{start + limit}&limit={limit}"
    return json_response(
        {
            "conversions": [{"conversion_data": r} for r in shown(chunk)],
            "hypermedia": {"pagination": {"next_page": following}},
        }
    )


def answer(records: list[Record], size: int) -> bytes:
    return dumps(
        {
            "conversions": [{"conversion_data": r} for r in records],
            "hypermedia": {"pagination": {"next_page": None}},
        }
    )


FAKE = Fake(
    network="partnerize",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="conversion_id",
    flip=Flip("1011l1234570", "conversion_status", "approved", "approved"),
    set_commission=setter("publisher_commission"),
    amended=("11.11", "11.11"),
    reversal=Reversal(
        "1011l1234570",
        by_status(CHANGES, "conversion_status", "reversed"),
        "1011l1234570",
        "declined",
        "1.10",
    ),
    page_size=1,
    paged=True,
    change_dates=CHANGES,
    drop_currency=lambda r: r.pop("currency"),
    answer=answer,
    late=Late(("conversion_time",), "%Y-%m-%d %H:%M:%S", ALL_LATE),
)
