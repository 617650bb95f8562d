"""Daisycon's fake: an OAuth2 refresh_token grant whose refresh token rotates (the old one
stops working once a new one is issued), then pages (page, per_page) with the total in the
X-Total-Count header; one transaction holds parts, each with its own status."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from aiohttp import web

from fakes.base import (
    Fake,
    Flip,
    NetState,
    Record,
    Reversal,
    dumps,
    json_response,
    refused,
    shown,
    stamp,
    utc,
)

CREDENTIALS = {
    "clientId": "dc-client-1",
    "clientSecret": "PLANTED-dc-secret-da15",
    "refreshToken": "PLANTED-dc-refresh-0",
    "publisherId": "77001",
}
STAMP = "%Y-%m-%d %H:%M:%S"
CHANGES = {kind: ("__modified", STAMP) for kind in ("status", "reversal", "amount")}


def part_setter(name: str):
    def change(record: Record, value: object) -> None:
        record["parts"][0][name] = value

    return change


def disapproved(records: list[Record], record: Record, now: dt.datetime) -> None:
    """Daisycon reverses a part by its status: disapproved, with a reason."""
    record["parts"][0]["status"] = "disapproved"
    record["parts"][0]["disapproved_reason"] = "cancelled order"
    stamp(record, CHANGES["reversal"], now)


def flipped(record: Record, member: str, raw: str) -> None:
    record["parts"][0][member] = raw


async def token(request: web.Request, st: NetState) -> web.StreamResponse:
    form = await request.post()
    current = st.tokens[-1] if st.tokens else CREDENTIALS["refreshToken"]
    if (
        st.reject_auth
        or form.get("grant_type") != "refresh_token"
        or form.get("client_id") != CREDENTIALS["clientId"]
        or form.get("client_secret") != CREDENTIALS["clientSecret"]
        or form.get("refresh_token") != current
    ):
        return refused("daisycon", 400)
    st.tokens.append(f"PLANTED-dc-refresh-{len(st.tokens) + 1}")
    return json_response(
        {
            "access_token": f"dc-access-{len(st.tokens)}",
            "token_type": "Bearer",
            "expires_in": 1800,
            "refresh_token": st.tokens[-1],
        }
    )


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if request.path.endswith("/oauth/access-token"):
        return await token(request, st)
    st.data_calls += 1
    if (
        not st.tokens
        or request.headers.get("Authorization") != f"Bearer dc-access-{len(st.tokens)}"
    ):
        return json_response({"error": "invalid_token"}, 401)
    if f"/publishers/{CREDENTIALS['publisherId']}/" not in request.path:
        return json_response({"error": "forbidden"}, 403)
    q = request.query
    if "date_modified_start" in q:
        first, last = utc(q["date_modified_start"], STAMP), utc(q["date_modified_end"], STAMP)
        hits = [r for r in st.records if first <= utc(r["__modified"], STAMP) <= last]
    else:
        first = utc(q["start"], "%Y-%m-%d")
        last = utc(q["end"], "%Y-%m-%d") + dt.timedelta(days=1) - dt.timedelta(seconds=1)
        hits = [r for r in st.records if first <= utc(r["date"], STAMP) <= last]
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"error": "the period may not exceed 31 days"}, 400)
    if q.get("currency_code") != "EUR":
        return json_response({"error": "unknown currency_code"}, 400)
    page, size = int(q["page"]), int(q["per_page"])
    if st.cap is not None and len(hits) > st.cap:
        hits = hits[: st.cap + 1]  # the answer says there are more than it serves
    body = dumps(shown(hits[(page - 1) * size : page * size]))
    return web.Response(
        body=body, content_type="application/json", headers={"X-Total-Count": str(len(hits))}
    )


def answer(records: list[Record], size: int) -> bytes:
    return dumps(records)


FAKE = Fake(
    network="daisycon",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="affiliatemarketing_id",
    flip=Flip("dc-a1", "status", "approved", "approved"),
    set_commission=part_setter("commission"),
    amended=(Decimal("5.10"), "5.10"),
    reversal=Reversal("dc-a1", disapproved, "dc-a1:p1", "declined", "4.26"),
    currency="EUR",
    page_size=1,
    paged=True,
    change_dates=CHANGES,
    truncated=b'[{"affiliatemarketing_id": "dc',
    answer=answer,
)
