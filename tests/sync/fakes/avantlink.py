"""AvantLink's fake: AffiliateReport 8 as CSV, amounts as the report writes them (`$1,250.00`,
`($4.26)`), a return as a row of its own; 1,000 calls a day (classic.avantlink.com api.php
help, the ominto processor). Bad credentials: HTTP 401 [U: the network's answer]."""

from __future__ import annotations

import csv
import datetime as dt
import io

from aiohttp import web

from fakes.base import (
    RECORDINGS,
    Fake,
    Late,
    NetState,
    Record,
    Reversal,
    refused,
    setter,
    utc,
)

CREDENTIALS = {"affiliateId": "4242", "authKey": "PLANTED-avantlink-key-a11e"}
STAMP = "%Y-%m-%d %H:%M:%S"


def row_id(row: Record) -> str:
    """The id the sync gives the row (the report has no id column)."""
    sale = f"{row['Merchant_Id']}:{row['Order_Id']}"
    kind = row["Transaction_Type"]
    return sale if kind == "SALE" else f"{sale}:{kind}:{row['Transaction_Date']}"


def load() -> list[Record]:
    text = (RECORDINGS / "avantlink" / "report.csv").read_text("utf-8")
    return [{**row, "__row_id": row_id(row)} for row in csv.DictReader(io.StringIO(text))]


def answer(records: list[Record], size: int = 0) -> bytes:
    out = io.StringIO()
    names = [name for name in load()[0] if not name.startswith("__")]
    writer = csv.DictWriter(out, fieldnames=names, extrasaction="ignore", lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue().encode()


def returned(records: list[Record], record: Record, now: dt.datetime) -> None:
    """A return: a row of its own, negative, on the sale's order."""
    row = {
        **record,
        "Transaction_Date": now.strftime(STAMP),
        "Transaction_Amount": f"({record['Transaction_Amount']})",
        "Total_Commission": f"({record['Total_Commission']})",
        "Transaction_Type": "RETURN",
    }
    records.append({**row, "__row_id": row_id(row)})


def identify(record: Record, ident: str) -> None:
    """A planted row: its own order on the recorded row's merchant."""
    record["Order_Id"] = ident
    record["__row_id"] = row_id(record)


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    q = request.query
    if st.reject_auth or (q.get("affiliate_id"), q.get("auth_key")) != (
        CREDENTIALS["affiliateId"],
        CREDENTIALS["authKey"],
    ):
        return refused("avantlink", status=401, name="bad_credentials.txt")
    if (q.get("module"), q.get("report_id"), q.get("output")) != ("AffiliateReport", "8", "csv"):
        return web.Response(status=400, text="Error: unknown report")
    times = st.times()
    if sum(1 for t in times if times[-1] - t < 86400) > 1000:
        return web.Response(status=429, text="Error: daily request limit reached")
    first, last = utc(q["date_begin"], STAMP), utc(q["date_end"], STAMP)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return web.Response(status=400, text="Error: date range too large")
    hits = [r for r in st.records if first <= utc(r["Transaction_Date"], STAMP) <= last]
    return web.Response(body=answer(hits), content_type="text/csv")


FAKE = Fake(
    network="avantlink",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="__row_id",
    # A row's type never changes (a return is a row of its own): the flip case cannot hold.
    # The record is the one the poison and amendment cases change.
    flip=None,  # a change of type is another row, never a status word changed
    sample_id="10060:ORD-2",
    set_commission=setter("Total_Commission"),
    amended=("$60.00", "60.00"),
    reversal=Reversal(
        "10071:ORD-77",
        returned,
        "10071:ORD-77:RETURN:2026-03-15 12:00:00",
        "declined",
        "-2.00",
    ),
    currency="USD",
    truncated=b"Merchant,Merchant_Id,Order_Id,Transaction_Date\nTrail,100",
    truncated_type="text/csv",
    answer=answer,
    load=load,
    late=Late(
        ("Transaction_Date",),
        STAMP,
        frozenset({"reversal"}),
        reversal_row=True,
        identify=identify,
    ),
)
