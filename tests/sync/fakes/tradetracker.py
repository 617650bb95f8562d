"""TradeTracker's fake: the affiliate SOAP service (ws.tradetracker.com/soap/affiliate?wsdl)
as its envelopes are published: `authenticate` sets a session cookie; `getAffiliateSites`
lists the account's sites; `getConversionTransactions(affiliateSiteID, options)` answers the
site's transactions registered in [registrationDateFrom, registrationDateTo], sorted,
`limit`/`offset` pages without a total; `getPayments(options)` answers the account's
invoices (Payment: invoiceNumber, currency, subTotal, VAT, endTotal, billDate, payDate, as
github.com/stixx/tradetracker-api-client reads them) in one answer, filtered by billDateFrom/
billDateTo when they are given. Faults come with HTTP 500: bad credentials, a call without a
session (`Not yet authenticated`), a range too long [U: its text]. Records carry the fake's
own `__site`, the site they belong to."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from decimal import Decimal
from typing import Any
from xml.sax.saxutils import escape

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
    iso,
    recording,
    setter,
    utc,
)

CREDENTIALS = {"customerID": "54321", "passphrase": "PLANTED-tradetracker-pass-7d3e"}
SITES = ("1001", "1002")
STAMP = "%Y-%m-%dT%H:%M:%S"
SOAP_ENV = "http://schemas.xmlsoap.org/soap/envelope/"
NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    f'<SOAP-ENV:Envelope xmlns:SOAP-ENV="{SOAP_ENV}"'
    ' xmlns:ns1="https://ws.tradetracker.com/soap/affiliate"'
    ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><SOAP-ENV:Body>'
)
TAIL = "</SOAP-ENV:Body></SOAP-ENV:Envelope>"


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _value(element: ET.Element) -> Any:
    if element.get(NIL) == "true":
        return None
    if len(element):
        return {_local(c.tag): _value(c) for c in element}
    return element.text or ""


def load() -> list[Record]:
    """The recorded answers of both sites, one record per item with its site."""
    found: list[Record] = []
    for site in SITES:
        root = ET.fromstring((RECORDINGS / "tradetracker" / f"conversions_{site}.xml").read_bytes())
        for item in root.iter("item"):
            found.append({**{_local(c.tag): _value(c) for c in item}, "__site": site})
    return found


def load_payments() -> list[Record]:
    """The recorded getPayments answer's invoices (recordings/tradetracker/payments.xml)."""
    root = ET.fromstring((RECORDINGS / "tradetracker" / "payments.xml").read_bytes())
    return [{_local(c.tag): _value(c) for c in item} for item in root.iter("item")]


def _element(name: str, value: Any) -> str:
    if value is None:
        return f'<{name} xsi:nil="true"/>'
    if isinstance(value, dict):
        return f"<{name}>" + "".join(_element(k, v) for k, v in value.items()) + f"</{name}>"
    return f"<{name}>{escape(str(value))}</{name}>"


def answer(records: list[Record], size: int = 0) -> bytes:
    items = "".join(
        "<item>"
        + "".join(_element(k, v) for k, v in r.items() if not k.startswith("__"))
        + "</item>"
        for r in records
    )
    return (
        f"{HEAD}<ns1:getConversionTransactionsResponse><conversionTransactions>{items}"
        f"</conversionTransactions></ns1:getConversionTransactionsResponse>{TAIL}"
    ).encode()


def payments_answer(payments: list[Record]) -> bytes:
    items = "".join(
        "<item>" + "".join(_element(k, v) for k, v in p.items()) + "</item>" for p in payments
    )
    return (
        f"{HEAD}<ns1:getPaymentsResponse><payments>{items}</payments>"
        f"</ns1:getPaymentsResponse>{TAIL}"
    ).encode()


def serve_payments(st: NetState, options: dict[str, str]) -> web.Response:
    if st.payments_forbidden:
        return fault("Access denied")
    first, last = options.get("billDateFrom"), options.get("billDateTo")
    hits = [
        p
        for p in sorted(st.payments, key=lambda p: str(p["billDate"]))
        if (not first or str(p["billDate"])[:10] >= first[:10])
        and (not last or str(p["billDate"])[:10] <= last[:10])
    ]
    return _xml(payments_answer(hits))


def fault(text: str, code: str = "SOAP-ENV:Client") -> web.Response:
    body = (
        f"{HEAD}<SOAP-ENV:Fault><faultcode>{code}</faultcode>"
        f"<faultstring>{escape(text)}</faultstring></SOAP-ENV:Fault>{TAIL}"
    )
    return web.Response(status=500, body=body.encode(), content_type="text/xml")


def _xml(body: bytes) -> web.Response:
    return web.Response(body=body, content_type="text/xml")


async def serve(request: web.Request, st: NetState) -> web.StreamResponse:
    if request.method != "POST" or request.content_type != "text/xml":
        return web.Response(status=405, text="SOAP calls are POSTed as text/xml")
    try:
        body = ET.fromstring(await request.read()).find(f"{{{SOAP_ENV}}}Body")
        call = body[0] if body is not None and len(body) else None
    except ET.ParseError:
        call = None
    if call is None:
        return fault("Bad Request", "SOAP-ENV:Server")
    method = _local(call.tag)
    args = {_local(c.tag): c for c in call}
    if method == "authenticate":
        given = (args["customerID"].text, args["passphrase"].text)
        if st.reject_auth or given != (CREDENTIALS["customerID"], CREDENTIALS["passphrase"]):
            return web.Response(
                status=500,
                body=recording("tradetracker", "bad_credentials.xml"),
                content_type="text/xml",
            )
        st.tokens.append(f"sess{len(st.tokens)}")
        response = _xml(recording("tradetracker", "authenticate.xml"))
        response.set_cookie("PHPSESSID", st.tokens[-1], path="/")
        return response
    if not st.tokens or request.cookies.get("PHPSESSID") != st.tokens[-1]:
        return fault("Not yet authenticated")
    if method == "getAffiliateSites":
        return _xml(recording("tradetracker", "affiliate_sites.xml"))
    if method == "getPayments":
        given = args.get("options")
        return serve_payments(
            st, {} if given is None else {_local(c.tag): c.text or "" for c in given}
        )
    if method != "getConversionTransactions":
        return fault(f"Function ({method}) is not a valid method for this service")
    st.data_calls += 1
    if st.revoke_token_after is not None and st.data_calls >= st.revoke_token_after:
        st.revoke_token_after = None
        st.tokens.append("ended")  # the session ends: the next call has none
    site = args["affiliateSiteID"].text
    options = {_local(c.tag): c.text or "" for c in args["options"]}
    first = utc(options["registrationDateFrom"], STAMP)
    last = utc(options["registrationDateTo"], STAMP)
    if not st.window(first, last, dt.timedelta(seconds=1)):
        return fault("registrationDate period is too long")
    hits = sorted(
        (
            r
            for r in st.records
            if r["__site"] == site and first <= iso(r["registrationDate"]) <= last
        ),
        key=lambda r: iso(r["registrationDate"]),
    )
    offset, limit = int(options["offset"]), int(options["limit"])
    return _xml(answer(hits[offset : offset + limit]))


FAKE = Fake(
    network="tradetracker",
    credentials=CREDENTIALS,
    serve=serve,
    max_days=31,
    id_field="ID",
    flip=Flip("123456", "transactionStatus", "accepted", "approved"),
    set_commission=setter("commission"),
    amended=(Decimal("5.10"), "5.10"),
    reversal=Reversal(
        "123457", by_status({}, "transactionStatus", "rejected"), "123457", "declined", "12.50"
    ),
    drop_currency=lambda r: r.pop("currency"),
    page_size=2,
    truncated=b'<?xml version="1.0"?><SOAP-ENV:Envelope xmlns:SOAP-ENV="'
    + SOAP_ENV.encode()
    + b'"><SOAP-ENV:Body><ns1:authenticateRes',
    truncated_type="text/xml",
    answer=answer,
    load=load,
    late=Late(("registrationDate",), "%Y-%m-%dT%H:%M:%S+00:00"),
)
