"""Digistore24's fake: listCommissions, pages by page_no, every answer HTTP 200 (errors as
{"result": "error"}); a refund or chargeback is a new commission with a negative amount
(dev.digistore24.com, listCommissions and API basics)."""

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
    dumps,
    json_response,
    recording,
    setter,
    shown,
    utc,
)

CREDENTIALS = {"apiKey": "PLANTED-ds24-key-d16157"}
STAMP = "%Y-%m-%d %H:%M:%S"


def error(message: str, code: int = 0) -> web.Response:
    return json_response(
        {"api_version": "1.2", "result": "error", "code": code, "message": message}
    )


def refunded(records: list[Record], record: Record, now: dt.datetime) -> None:
    """A refund: a new commission of the opposite amount, created when it happens."""
    records.append(
        {
            **record,
            "id": 1234599,
            "created_at": now.strftime(STAMP),
            "amount": -record["amount"],
            "transaction_type": "refund",
            "schedule_payout_at": None,
        }
    )


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if st.reject_auth or request.headers.get("X-DS-API-KEY") != CREDENTIALS["apiKey"]:
        body = recording("digistore24", "bad_credentials.json")
        return web.Response(status=200, body=body, content_type="application/json")
    q = request.query
    first, last = utc(q["from"], STAMP), utc(q["to"], STAMP)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return error("The date range is too large", 9)
    hits = [r for r in st.records if first <= utc(r["created_at"], STAMP) <= last]
    page, size = int(q.get("page_no", "1")), int(q.get("page_size", "1000"))
    count = -(-len(hits) // size)
    return json_response(
        {
            "api_version": "1.2",
            "current_time": "2026-03-15 12:00:00",
            "result": "success",
            "data": {
                "page_no": page,
                "page_size": size,
                "item_count": len(hits),
                "page_count": count,
                "items": shown(hits[(page - 1) * size : page * size]),
            },
        }
    )


def answer(records: list[Record], size: int) -> bytes:
    data = {"page_no": 1, "page_size": size, "item_count": len(records), "page_count": 1}
    return dumps({"result": "success", "data": {**data, "items": records}})


FAKE = Fake(
    network="digistore24",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="id",
    # A commission's kind is not known to change once created [U]; were it to, the
    # re-scan would read it.
    flip=Flip("1234570", "transaction_type", "refund", "declined"),
    set_commission=setter("amount"),
    amended=(Decimal("21.00"), "21.00"),
    reversal=Reversal("1234568", refunded, "1234599", "declined", "-30.00", names_original=False),
    page_size=2,
    paged=True,
    drop_currency=lambda r: r.pop("currency"),
    truncated=b'{"result": "success", "data": {"items": [{"id": 12',
    answer=answer,
    late=Late(
        ("created_at",),
        STAMP,
        frozenset({"reversal"}),
        words={"pending": "payment", "declined": "refund"},
        reversal_row=True,
    ),
)
