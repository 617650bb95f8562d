"""Daisycon's fake: an OAuth2 refresh_token grant whose refresh token rotates (the old one
stops working once a new one is issued), then pages (page, per_page) with the total in the
X-Total-Count header; a transaction holds parts, each with its own status.

The fake keeps one record per part (the row the sync stores, `__row_id`), with its
transaction under `__tx`, and answers them grouped into transactions as Daisycon does."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

from aiohttp import web

from fakes.base import (
    ALL_LATE,
    RECORDINGS,
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
    utc,
)

CREDENTIALS = {
    "clientId": "dc-client-1",
    "clientSecret": "PLANTED-dc-secret-da15",
    "refreshToken": "PLANTED-dc-refresh-0",
    "publisherId": "77001",
}
STAMP = "%Y-%m-%d %H:%M:%S"
# A change to a part dates its transaction's date_modified.
CHANGES = {kind: ("__modified", STAMP) for kind in ("status", "reversal", "amount")}


def load() -> list[Record]:
    """The recorded transactions, one record per part."""
    text = (RECORDINGS / "daisycon" / "transactions.json").read_text("utf-8")
    parts: list[Record] = []
    for tx in json.loads(text, parse_float=Decimal):
        head = {k: v for k, v in tx.items() if k != "parts"}
        for part in tx["parts"]:
            parts.append(
                {
                    **part,
                    "__row_id": f"{tx['affiliatemarketing_id']}:{part['id']}",
                    "__tx": head,
                    "__modified": part["last_modified"],
                }
            )
    return parts


def transactions(parts: list[Record]) -> list[Record]:
    """Parts grouped into Daisycon's transactions, in order (the `__` members dropped)."""
    grouped: dict[str, Record] = {}
    for part in parts:
        head = {k: v for k, v in part["__tx"].items() if not k.startswith("__")}
        tx = grouped.setdefault(head["affiliatemarketing_id"], {**head, "parts": []})
        tx["parts"].append({k: v for k, v in part.items() if not k.startswith("__")})
    return list(grouped.values())


async def token(request: web.Request, st: NetState) -> web.StreamResponse:
    form = await request.post()
    current = st.tokens[-1] if st.tokens else CREDENTIALS["refreshToken"]
    if (
        st.reject_auth
        or form.get("grant_type") != "refresh_token"
        or form.get("client_id") != CREDENTIALS["clientId"]
        or form.get("client_secret") != CREDENTIALS["clientSecret"]
        or form.get("refresh_token") != current
        or form.get("redirect_uri") != "https://login.daisycon.com/oauth/cli"
    ):
        return refused("daisycon", 400)
    st.tokens.append(f"PLANTED-dc-refresh-{len(st.tokens) + 1}")
    return json_response(
        {
            "access_token": f"PLANTED-dc-access-{len(st.tokens)}",
            "token_type": "Bearer",
            "expires_in": 1800,
            "refresh_token": st.tokens[-1],
        }
    )


def identify(record: Record, ident: str) -> None:
    """A planted part: the one part of a transaction of its own."""
    record["__tx"]["affiliatemarketing_id"] = ident
    record["__row_id"] = f"{ident}:{record['id']}"


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if request.path.endswith("/oauth/access-token"):
        return await token(request, st)
    st.data_calls += 1
    bearer = f"Bearer PLANTED-dc-access-{len(st.tokens)}"
    if not st.tokens or request.headers.get("Authorization") != bearer:
        return json_response({"error": "invalid_token"}, 401)
    if f"/publishers/{CREDENTIALS['publisherId']}/" not in request.path:
        return json_response({"error": "forbidden"}, 403)
    q = request.query
    if "date_modified_start" in q:
        first, last = utc(q["date_modified_start"], STAMP), utc(q["date_modified_end"], STAMP)
        changed = {
            p["__tx"]["affiliatemarketing_id"]
            for p in st.records
            if first <= utc(p["__modified"], STAMP) <= last
        }
        hits = [p for p in st.records if p["__tx"]["affiliatemarketing_id"] in changed]
    else:
        first = utc(q["start"], "%Y-%m-%d")
        last = utc(q["end"], "%Y-%m-%d") + dt.timedelta(days=1) - dt.timedelta(seconds=1)
        hits = [p for p in st.records if first <= utc(p["__tx"]["date"], STAMP) <= last]
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return json_response({"error": "the period may not exceed 31 days"}, 400)
    if q.get("currency_code") != "EUR":
        return json_response({"error": "unknown currency_code"}, 400)
    found = transactions(hits)
    total = len(found)
    page, size = int(q["page"]), int(q["per_page"])
    return web.Response(
        body=dumps(found[(page - 1) * size : page * size]),
        content_type="application/json",
        headers={"X-Total-Count": str(total)},
    )


def answer(records: list[Record], size: int) -> bytes:
    return dumps(transactions(records))


FAKE = Fake(
    network="daisycon",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="__row_id",
    # The total of the recorded answer: the parsers read it before the body.
    answer_headers={"X-Total-Count": str(len(transactions(load())))},
    flip=Flip("dc-a1:p1", "status", "approved", "approved"),
    set_commission=setter("commission"),
    amended=(Decimal("5.10"), "5.10"),
    reversal=Reversal(
        "dc-a1:p1", by_status(CHANGES, "status", "disapproved"), "dc-a1:p1", "declined", "4.26"
    ),
    currency="EUR",
    page_size=1,
    paged=True,
    change_dates=CHANGES,
    truncated=b'[{"affiliatemarketing_id": "dc',
    answer=answer,
    load=load,
    late=Late(
        ("date", "last_modified", "__modified", ("__tx", "date")),
        STAMP,
        ALL_LATE,
        identify=identify,
    ),
)
