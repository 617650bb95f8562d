"""Effiliation's fake: one pipe-separated CSV per window; a bad key answers 200
"bad credentials !"."""

from __future__ import annotations

import csv
import datetime as dt
import io

from aiohttp import web

from fakes.base import (
    RECORDINGS,
    Fake,
    Flip,
    Late,
    NetState,
    Record,
    Reversal,
    by_status,
    refused,
    setter,
    utc,
)


def load() -> list[Record]:
    text = (RECORDINGS / "effiliation" / "transactions.csv").read_text("utf-8")
    return list(csv.DictReader(io.StringIO(text), delimiter="|"))


def answer(records: list[Record], size: int = 0) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(load()[0]), delimiter="|", lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue().encode()


CREDENTIALS = {"apiKey": "PLANTED-effi-key-44dd"}


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    q = request.query
    if st.reject_auth or q.get("key") != CREDENTIALS["apiKey"]:
        return refused("effiliation", status=200, name="bad_credentials.txt")
    first = utc(q["start"], "%d/%m/%Y")
    last = utc(q["end"], "%d/%m/%Y") + dt.timedelta(days=1) - dt.timedelta(seconds=1)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return web.Response(status=400, text="periode trop longue")
    hits = [
        r for r in st.records if first <= utc(r["date_transaction"], "%d/%m/%Y %H:%M:%S") <= last
    ]
    return web.Response(body=answer(hits), content_type="text/csv")


FAKE = Fake(
    network="effiliation",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="id_transaction",
    flip=Flip("EF-7004", "statut", "Refusé", "declined"),
    set_commission=setter("commission"),
    amended=("7,35", "7.35"),
    reversal=Reversal("EF-7004", by_status({}, "statut", "Annulé"), "EF-7004", "declined", "1.39"),
    drop_currency=lambda r: r.__setitem__("devise", ""),
    truncated=b"id_transaction|commission\nEF-1|2,00|Valide",
    truncated_type="text/csv",
    answer=answer,
    load=load,
    late=Late(("date_transaction",), "%d/%m/%Y %H:%M:%S"),
)
