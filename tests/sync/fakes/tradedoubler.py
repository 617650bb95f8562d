"""Tradedoubler's fake: a password-grant token, then offset pages."""

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
    basic,
    by_status,
    dumps,
    json_response,
    refused,
    setter,
    utc,
)

CREDENTIALS = {
    "clientId": "PLANTED-td-client-11aa",
    "clientSecret": "PLANTED-td-secret-22bb",
    "username": "planted-td-user",
    "password": "PLANTED-td-password-33cc",
}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if request.path.endswith("/uaa/oauth/token"):
        form = await request.post()
        ok = (
            st.authorised(request, basic(CREDENTIALS["clientId"], CREDENTIALS["clientSecret"]))
            and form.get("username") == CREDENTIALS["username"]
            and form.get("password") == CREDENTIALS["password"]
        )
        if not ok:
            return refused("tradedoubler")
        st.tokens.append(f"td-token-{len(st.tokens) + 1}")
        return json_response(
            {"access_token": st.tokens[-1], "token_type": "bearer", "expires_in": 3600}
        )
    st.data_calls += 1
    if (
        st.revoke_token_after is not None
        and st.data_calls > st.revoke_token_after
        and len(st.tokens) == 1
    ):
        st.tokens.append("expired")  # the first token expires: the next one works
    valid = st.tokens[-1] if st.tokens and st.tokens[-1] != "expired" else None
    if valid is None or request.headers.get("Authorization") != f"Bearer {valid}":
        return json_response({"error": "invalid_token"}, 401)
    q = request.query
    first = utc(q["fromDate"], "%Y%m%d")
    last = utc(q["toDate"], "%Y%m%d") + dt.timedelta(days=1) - dt.timedelta(seconds=1)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"message": "Period too long"}, 400)
    hits = [
        r for r in st.records if first <= utc(r["timeOfTransaction"], "%Y-%m-%dT%H:%M:%S") <= last
    ]
    offset, limit = int(q["offset"]), int(q["limit"])
    return json_response(
        {
            "items": hits[offset : offset + limit],
            "offset": offset,
            "limit": limit,
            "total": len(hits),
        }
    )


def answer(records: list[Record], size: int) -> bytes:
    return dumps({"items": records, "offset": 0, "limit": size, "total": len(records)})


FAKE = Fake(
    network="tradedoubler",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="transactionId",
    flip=Flip("TD-900004", "status", "A", "approved"),
    set_commission=setter("commission"),
    amended=(Decimal("2.25"), "2.25"),
    reversal=Reversal("TD-900004", by_status({}, "status", "D"), "TD-900004", "declined", "1.21"),
    page_size=1,
    paged=True,
    drop_currency=lambda r: r.pop("currency"),
    answer=answer,
    late=Late(("timeOfTransaction",), "%Y-%m-%dT%H:%M:%S"),
)
