"""Skimlinks' fake, from the reporting API's blueprint (developers.skimlinks.com): a token
from client credentials, then the commission report by transaction date or updated_since,
offset pages with `pagination.total_count`; the token travels in the query."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

from aiohttp import web

from fakes.base import (
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
    "clientId": "skim-client-1",
    "clientSecret": "PLANTED-skimlinks-secret-5c7d",
    "publisherId": "1",
}
SECONDS = "%Y-%m-%d %H:%M:%S"
# A change the tests make to these members is what the network shows in transaction_details.
DETAILS = ("status", "last_updated")
CHANGES = {kind: ("last_updated", SECONDS) for kind in ("status", "reversal", "amount")}


def render(record: Record) -> Record:
    """The record as the network sends it."""
    shown = copy.deepcopy({k: v for k, v in record.items() if k not in DETAILS})
    for name in DETAILS:
        if name in record:
            shown["transaction_details"][name] = record[name]
    return shown


def detail(record: Record, name: str) -> Any:
    return record.get(name, record["transaction_details"][name])


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if request.path.endswith("/access_token"):
        body = await request.json()
        if (
            st.reject_auth
            or body.get("client_id") != CREDENTIALS["clientId"]
            or body.get("client_secret") != CREDENTIALS["clientSecret"]
            or body.get("grant_type") != "client_credentials"
        ):
            return refused("skimlinks")
        st.tokens.append(f"skim-token-{len(st.tokens) + 1}")
        return json_response({"access_token": st.tokens[-1], "expiry_timestamp": 1893456000})
    q = request.query
    if (
        not st.tokens
        or q.get("access_token") != st.tokens[-1]
        or f"/publisher/{CREDENTIALS['publisherId']}/" not in request.path
    ):
        return json_response({"error": "invalid_token"}, 401)
    if "updated_since" in q:
        since = utc(q["updated_since"], SECONDS)
        hits = [r for r in st.records if utc(detail(r, "last_updated"), SECONDS) >= since]
    else:
        first = utc(q["start_date"], "%Y-%m-%d")
        last = utc(q["end_date"], "%Y-%m-%d") + dt.timedelta(days=1, seconds=-1)
        if not st.window(first, last, dt.timedelta(seconds=1)):
            return json_response({"error": "date range too large"}, 400)
        hits = [
            r
            for r in st.records
            if first <= utc(r["transaction_details"]["transaction_date"], SECONDS) <= last
        ]
    offset, limit = int(q["offset"]), int(q["limit"])
    page = hits[offset : offset + limit]
    return json_response(
        {
            "pagination": {
                "has_next": offset + limit < len(hits),
                "total_count": len(hits),
                "offset": offset,
                "limit": limit,
            },
            "commissions": [render(r) for r in page],
        }
    )


def answer(records: list[Record], size: int) -> bytes:
    return dumps(
        {
            "pagination": {"has_next": False, "total_count": len(records), "offset": 0},
            "commissions": records,
        }
    )


FAKE = Fake(
    network="skimlinks",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="commission_id",
    flip=Flip("9006", "status", "cancelled", "declined"),
    set_commission=setter("transaction_details", "basket", "publisher_amount"),
    amended=("2.95", "2.95"),
    reversal=Reversal(
        "9006", by_status(CHANGES, "status", "cancelled"), "9006", "declined", "3.10"
    ),
    page_size=2,
    paged=True,
    change_dates=CHANGES,
    drop_currency=lambda r: r["transaction_details"]["basket"].pop("currency"),
    answer=answer,
    late=Late(
        (("transaction_details", "transaction_date"), "last_updated"),
        SECONDS,
        frozenset({"decline", "reversal", "amendment"}),
        words={"pending": "active", "declined": "cancelled"},
    ),
)
