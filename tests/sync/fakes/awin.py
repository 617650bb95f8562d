"""Awin's fake: no paging, the window bounds the answer; dateType picks the date."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

from aiohttp import web

from fakes.base import (
    ALL_LATE,
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


# The Public API's payments, as help.awin.com/apidocs/payments describes them: a list newest
# first (processingDate, then paymentId, descending) and each payment's breakdown (largest
# net `payment` first, then advertiserId ascending), both paged by limit (1-100, default
# 25) and offset (at most 10,000), in a `results` envelope; an unknown payment is 404.
PAYMENTS_PATH = re.compile(r"/public/v1/publishers/([0-9]+)/payments(?:/([0-9]+)/breakdowns)?/?$")


def paged(request: web.Request, rows: list[Record]) -> web.Response:
    try:
        limit = int(request.query.get("limit", "25"))
        offset = int(request.query.get("offset", "0"))
    except ValueError:
        return json_response({"error": "limit and offset are integers"}, 400)
    if not 1 <= limit <= 100 or not 0 <= offset <= 10_000:
        return json_response({"error": "limit is 1-100 and offset 0-10000"}, 400)
    return json_response({"results": rows[offset : offset + limit]})


def serve_payments(request: web.Request, st: NetState, match: re.Match[str]) -> web.Response:
    if match.group(1) != CREDENTIALS["publisherId"] or st.payments_forbidden:
        return json_response({"error": "forbidden"}, 403)
    payment_id = match.group(2)
    if payment_id is None:
        rows = sorted(
            st.payments, key=lambda p: (p["processingDate"], int(p["paymentId"])), reverse=True
        )
        return paged(request, rows)
    if payment_id in st.failing_breakdowns:
        return json_response({"error": "internal error"}, 500)
    if not any(str(p["paymentId"]) == payment_id for p in st.payments):
        return json_response({"error": "payment not found"}, 404)
    lines = sorted(
        st.breakdowns.get(payment_id, []),
        key=lambda b: (-Decimal(str(b["payment"])), int(b["advertiserId"])),
    )
    return paged(request, lines)


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if not st.authorised(request, f"Bearer {CREDENTIALS['accessToken']}"):
        return refused("awin")
    match = PAYMENTS_PATH.search(request.path)
    if match is not None:
        return serve_payments(request, st, match)
    if f"/{CREDENTIALS['publisherId']}/" not in request.path:
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
