"""Admitad's fake: a client-credentials token, then offset pages; status_updated_start/_end
bound the last change of status."""

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
    basic,
    by_status,
    dumps,
    json_response,
    refused,
    setter,
    shown,
    utc,
)

CREDENTIALS = {"clientId": "PLANTED-admitad-id-9922", "clientSecret": "PLANTED-admitad-secret-aa33"}
FORMAT = "%Y-%m-%d %H:%M:%S"
CHANGES = {"status": ("status_updated", FORMAT), "reversal": ("status_updated", FORMAT)}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if request.path.endswith("/token/"):
        form = await request.post()
        if (
            not st.authorised(request, basic(CREDENTIALS["clientId"], CREDENTIALS["clientSecret"]))
            or form.get("scope") != "statistics"
        ):
            return refused("admitad")
        st.tokens.append(f"adm-token-{len(st.tokens) + 1}")
        return json_response({"access_token": st.tokens[-1], "expires_in": 604800})
    if not st.tokens or request.headers.get("Authorization") != f"Bearer {st.tokens[-1]}":
        return json_response({"error": "invalid_token"}, 401)
    q = request.query
    prefix, member = (
        ("status_updated", "status_updated")
        if "status_updated_start" in q
        else ("date", "action_date")
    )
    first = utc(q[f"{prefix}_start"], "%d.%m.%Y")
    last = utc(q[f"{prefix}_end"], "%d.%m.%Y") + dt.timedelta(days=1) - dt.timedelta(seconds=1)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"error": "range too long"}, 400)
    hits = [r for r in st.records if r.get(member) and first <= utc(r[member], FORMAT) <= last]
    offset, limit = int(q["offset"]), int(q["limit"])
    return json_response(
        {
            "results": shown(hits[offset : offset + limit]),
            "_meta": {"count": len(hits), "limit": limit, "offset": offset},
        }
    )


def answer(records: list[Record], size: int) -> bytes:
    return dumps({"results": records, "_meta": {"count": len(records), "limit": size, "offset": 0}})


FAKE = Fake(
    network="admitad",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="action_id",
    flip=Flip("124", "status", "declined", "declined"),
    set_commission=setter("payment"),
    amended=("2.75", "2.75"),
    reversal=Reversal("124", by_status(CHANGES, "status", "declined"), "124", "declined", "0.99"),
    page_size=1,
    paged=True,
    change_dates=CHANGES,
    drop_currency=lambda r: r.pop("currency"),
    answer=answer,
    late=Late(
        ("action_date",), "%Y-%m-%d %H:%M:%S", frozenset({"approval", "decline", "reversal"})
    ),
)
