"""Impact's fake: pages with @nextpageuri; too many records for one query is an error."""

from __future__ import annotations

import datetime as dt

from aiohttp import web

from fakes.base import (
    ALL_LATE,
    FUTURE,
    Fake,
    Flip,
    Late,
    NetState,
    Record,
    Reversal,
    basic,
    by_status,
    dumps,
    iso,
    json_response,
    refused,
    setter,
    shown,
)

CREDENTIALS = {"accountSid": "IRplantedSID55", "authToken": "PLANTED-impact-auth-9d0e12"}
Z = "%Y-%m-%dT%H:%M:%SZ"
# The parameters of each date the query may bound, and the member holding that date.
DATES = (
    ("ActionDateStart", "ActionDateEnd", "EventDate"),
    ("LockingDateStart", "LockingDateEnd", "LockingDate"),
    ("StartDate", "EndDate", "__UpdatedDate"),
)
CHANGES = {
    "status": ("LockingDate", Z),
    "reversal": ("LockingDate", Z),
    "amount": ("__UpdatedDate", Z),
}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if not st.authorised(request, basic(CREDENTIALS["accountSid"], CREDENTIALS["authToken"])):
        return refused("impact")
    q = request.query
    (start, end, member) = next((s, e, m) for s, e, m in DATES if s in q)
    first, last = iso(q[start]), iso(q[end])
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response(
            {"Status": "ERROR", "Message": "Date range cannot exceed 45 days"}, 400
        )
    size = int(q["PageSize"])
    number = int(q.get("Page", "1"))
    hits = [r for r in st.records if r.get(member) and first <= iso(r[member]) <= last]
    if st.cap is not None and len(hits) > st.cap:
        return json_response(
            {"Status": "ERROR", "Message": "Too many results: total exceeds 10 x PageSize"}, 400
        )
    pages = max(1, -(-len(hits) // size))
    chunk = hits[(number - 1) * size : number * size]
    following = ""
    if number < pages:
        following = (
            f"/Mediapartners/{CREDENTIALS['accountSid']}/Actions?{start}={q[start]}"
            f"&{end}={q[end]}&PageSize={size}&Page={number + 1}"
        )
    return json_response(
        {
            "@page": str(number),
            "@numpages": str(pages),
            "@total": str(len(hits)),
            "@nextpageuri": following,
            "Actions": shown(chunk),
        }
    )


def answer(records: list[Record], size: int) -> bytes:
    return dumps(
        {
            "@page": "1",
            "@numpages": "1",
            "@total": str(len(records)),
            "@nextpageuri": "",
            "Actions": records,
        }
    )


FAKE = Fake(
    network="impact",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=45,
    id_field="Id",
    flip=Flip("7700.1.2", "State", "REVERSED", "declined"),
    set_commission=setter("Payout"),
    amended=("5.50", "5.50"),
    reversal=Reversal(
        "7700.1.2", by_status(CHANGES, "State", "REVERSED"), "7700.1.2", "declined", "14.70"
    ),
    page_size=1,
    paged=True,
    change_dates=CHANGES,
    drop_currency=lambda r: r.pop("Currency"),
    answer=answer,
    late=Late(("EventDate",), "%Y-%m-%dT%H:%M:%SZ", ALL_LATE, {"LockingDate": FUTURE}),
)
