"""TimeOne's fake: the SubID report as XML (actions as attributes, grouped by programme);
errors as plain text with HTTP 200, bad credentials and the limit of 3 calls in 900 s
alike (php-oara fork Publicidees.php)."""

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

CREDENTIALS = {"partnerId": "12345", "apiKey": "PLANTED-timeone-key-71e0"}
STAMP = "%Y-%m-%d %H:%M:%S"
LIMIT = "You reached the limit of 3 call(s) in the last 900 seconds (15 min). Try later."


def load() -> list[Record]:
    """The recorded report, one record per action with its programme."""
    root = ET.fromstring((RECORDINGS / "timeone" / "report.xml").read_bytes())
    return [
        {**action.attrib, "__program": program.get("id"), "__name": program.findtext("name")}
        for program in root.iter("program")
        for action in program.iter("action")
    ]


def answer(records: list[Record], size: int = 0) -> bytes:
    root = ET.Element("partner", id=CREDENTIALS["partnerId"])
    programs: dict[str, ET.Element] = {}
    for r in records:
        program = programs.get(r["__program"])
        if program is None:
            program = programs[r["__program"]] = ET.SubElement(root, "program", id=r["__program"])
            ET.SubElement(program, "name").text = r["__name"]
        attributes = {k: str(v) for k, v in r.items() if not k.startswith("__") and v is not None}
        ET.SubElement(program, "action", attributes)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root)


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    q = request.query
    if st.reject_auth or (q.get("p"), q.get("k")) != (
        CREDENTIALS["partnerId"],
        CREDENTIALS["apiKey"],
    ):
        return refused("timeone", status=200, name="bad_credentials.txt")
    times = st.times()
    if sum(1 for t in times if times[-1] - t < 900) > 3:
        return web.Response(status=200, text=LIMIT)
    first = utc(q["dd"], "%Y-%m-%d")
    last = utc(q["df"], "%Y-%m-%d") + dt.timedelta(days=1) - dt.timedelta(seconds=1)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return web.Response(status=200, text="Period too long")
    hits = [r for r in st.records if first <= utc(r["ActionDate"], STAMP) <= last]
    return web.Response(body=answer(hits), content_type="text/xml")


FAKE = Fake(
    network="timeone",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="id",
    flip=Flip("1826272-606459", "ActionStatus", "0", "declined"),
    set_commission=setter("ActionCommission"),
    amended=(Decimal("7.250"), "7.250"),
    reversal=Reversal(
        "1826272-606459", by_status({}, "ActionStatus", "0"), "1826272-606459", "declined", "6.500"
    ),
    drop_currency=lambda r: r.pop("ProgramCurrency"),
    truncated=b'<?xml version="1.0"?><partner id="12345"><program id="390"><act',
    truncated_type="text/xml",
    answer=answer,
    load=load,
    late=Late(("ActionDate",), STAMP),
)
