"""Belboon's fake: the transaction export as XML, the key in the URL path, amounts in the
currency filter[currencycode] names, dates as dd.mm.YYYY (php-oara Belboon.php, the
affiliate-power WordPress plugin). Bad credentials: HTTP 403 [U: the body]."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from decimal import Decimal

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

CREDENTIALS = {"apiKey": "PLANTED-belboon-key-bb01", "userId": "880011"}
STAMP = "%Y-%m-%d %H:%M:%S"
CHANGES = {kind: ("conversion_last_modified_time", STAMP) for kind in ("status", "amount")}


def load() -> list[Record]:
    root = ET.fromstring((RECORDINGS / "belboon" / "transactions.xml").read_bytes())
    return [{child.tag: child.text or "" for child in t} for t in root.iter("transaction")]


def answer(records: list[Record], size: int = 0) -> bytes:
    root = ET.Element("transactions")
    for r in records:
        element = ET.SubElement(root, "transaction")
        for name, value in r.items():
            if value is not None:
                ET.SubElement(element, name).text = str(value)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root)


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    path = f"/belboon/{CREDENTIALS['apiKey']}/reporttransactions_{CREDENTIALS['userId']}.xml"
    if st.reject_auth or request.path != path:
        return refused("belboon", status=403, name="bad_credentials.xml")
    q = request.query
    if q.get("filter[zeitraumAuswahl]") != "absolute" or q.get("filter[currencycode]") != "EUR":
        return web.Response(status=400, text="invalid filter")
    first = utc(q["filter[zeitraumvon]"], "%d.%m.%Y")
    last = utc(q["filter[zeitraumbis]"], "%d.%m.%Y") + dt.timedelta(days=1, seconds=-1)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return web.Response(status=400, text="Zeitraum zu lang")
    hits = [r for r in st.records if first <= utc(r["conversion_tracking_time"], STAMP) <= last]
    return web.Response(body=answer(hits), content_type="text/xml")


FAKE = Fake(
    network="belboon",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="conversion_uniqid",
    flip=Flip("bb-c-002", "status", "canceled", "declined"),
    set_commission=setter("conversion_commission_total"),
    amended=(Decimal("8.10"), "8.10"),
    reversal=Reversal(
        "bb-c-002", by_status(CHANGES, "status", "rejected"), "bb-c-002", "declined", "9.60"
    ),
    currency="EUR",
    change_dates=CHANGES,
    truncated=b'<?xml version="1.0"?><transactions><transaction><conversion_uniqid>bb',
    truncated_type="text/xml",
    answer=answer,
    load=load,
    late=Late(("conversion_tracking_time", "conversion_last_modified_time"), STAMP),
)
