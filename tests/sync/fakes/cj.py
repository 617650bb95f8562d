"""CJ's fake: GraphQL, watermark pages of `cj_limit` records; a bad token answers 200 with
errors; a reversal is a new correction record with a negative amount."""

from __future__ import annotations

import datetime as dt
import re

from aiohttp import web

from fakes.base import (
    FUTURE,
    Fake,
    Flip,
    Late,
    NetState,
    Record,
    Reversal,
    dumps,
    iso,
    json_response,
    refused,
    setter,
    shown,
)

CREDENTIALS = {"personalAccessToken": "PLANTED-cj-pat-2b8c44", "publisherId": "999"}
CHANGES = {"status": ("lockingDate", "%Y-%m-%dT%H:%M:%SZ")}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if not st.authorised(request, f"Bearer {CREDENTIALS['personalAccessToken']}"):
        return refused("cj", status=200)
    text = (await request.json())["query"]
    # The dates the query bounds: posting dates, or locking dates.
    kind = "Locking" if "sinceLockingDate" in text else "Posting"
    member = f"{kind[0].lower()}{kind[1:]}Date"
    since = iso(re.search(rf'since{kind}Date: "([^"]+)"', text)[1])
    before = iso(re.search(rf'before{kind}Date: "([^"]+)"', text)[1])
    after = re.search(r'sinceCommissionId: "([^"]+)"', text)
    if not st.window(since, before - dt.timedelta(seconds=1), dt.timedelta(seconds=1)):
        return json_response({"errors": [{"message": "date range too large"}], "data": None})
    hits = sorted(
        (
            r
            for r in st.records
            if r.get(member)
            and since <= iso(r[member]) < before
            and (after is None or int(r["commissionId"]) > int(after[1]))
        ),
        key=lambda r: int(r["commissionId"]),
    )
    page = hits[: st.cj_limit]
    result = {
        "count": len(page),
        "limit": st.cj_limit,
        "maxCommissionId": page[-1]["commissionId"] if page else (after[1] if after else "0"),
        "payloadComplete": len(hits) <= st.cj_limit,
        "records": shown(page),
    }
    return json_response({"data": {"publisherCommissions": result}})


def correction(records: list[Record], record: Record, now: dt.datetime) -> None:
    """CJ posts a reversal as a new record (original=false) naming the original."""
    posted = now.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    records.append(
        {
            **record,
            "commissionId": "2292069999",
            "actionStatus": "new",
            "postingDate": posted,
            "original": False,
            "originalActionId": record["commissionId"],
            "correctionReason": "RETURNED_MERCHANDISE",
            "pubCommissionAmountPubCurrency": "-" + record["pubCommissionAmountPubCurrency"],
            "pubCommissionAmountUsd": "-" + record["pubCommissionAmountUsd"],
            "saleAmountPubCurrency": "-" + record["saleAmountPubCurrency"],
        }
    )


def answer(records: list[Record], size: int) -> bytes:
    result = {
        "count": len(records),
        "limit": size,
        "maxCommissionId": records[-1]["commissionId"],
        "payloadComplete": True,
        "records": records,
    }
    return dumps({"data": {"publisherCommissions": result}})


FAKE = Fake(
    network="cj",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="commissionId",
    flip=Flip("2292068003", "actionStatus", "locked", "approved"),
    set_commission=setter("pubCommissionAmountPubCurrency"),
    amended=("6.50", "6.50"),
    reversal=Reversal("2292068003", correction, "2292069999", "pending", "-3.30"),
    currency="USD",
    paged=True,
    change_dates=CHANGES,
    answer=answer,
    late=Late(
        ("postingDate",), "%Y-%m-%dT%H:%M:%SZ", frozenset({"approval"}), {"lockingDate": FUTURE}
    ),
)
