"""PartnerStack's fake, from its partner API docs: rewards filtered by creation in epoch
milliseconds, `{data: {has_more, items}, message, status}`, pages by `starting_after`
(the last item's key), amounts in cents; errors as `{message, status}`."""

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
    by_status,
    dumps,
    json_response,
    refused,
    setter,
)

CREDENTIALS = {"apiKey": "PLANTED-partnerstack-key-9f02"}
DAY_MS = 86_400_000


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if not st.authorised(request, f"Bearer {CREDENTIALS['apiKey']}"):
        return refused("partnerstack")
    q = request.query
    low, high = int(q["min_created"]), int(q["max_created"])
    first = dt.datetime.fromtimestamp(low / 1000, dt.UTC)
    last = dt.datetime.fromtimestamp(high / 1000, dt.UTC)
    if not st.window(first, last, dt.timedelta(milliseconds=1)):
        return json_response({"message": "created range too large", "status": 400}, 400)
    hits = sorted(
        (r for r in st.records if low <= r["created_at"] <= high), key=lambda r: r["created_at"]
    )
    after = q.get("starting_after")
    if after is not None:
        keys = [r["key"] for r in hits]
        hits = hits[keys.index(after) + 1 :]
    limit = int(q["limit"])
    return json_response(
        {
            "data": {"has_more": len(hits) > limit, "items": hits[:limit]},
            "message": "Page returned successfully",
            "status": 200,
        }
    )


def answer(records: list[Record], size: int) -> bytes:
    return dumps({"data": {"has_more": False, "items": records}, "status": 200})


FAKE = Fake(
    network="partnerstack",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="key",
    flip=Flip("rwrd_7", "reward_status", "approved", "approved"),
    set_commission=setter("amount"),
    amended=(1500, "15.00"),  # cents
    reversal=Reversal(
        "rwrd_7", by_status({}, "reward_status", "declined"), "rwrd_7", "declined", "18.75"
    ),
    currency="USD",
    page_size=1,
    paged=True,
    truncated=b'{"data": {"has_more": true, "items": [{"key": "rw',
    answer=answer,
    late=Late(("created_at",), "epoch_ms"),
)
