"""TradeTracker affiliate SOAP service: `authenticate` opens a session (a cookie), then
`getAffiliateSites` and, per site, `getConversionTransactions` in limit/offset pages; the
account's payments (`getPayments`) in one answer."""

from __future__ import annotations

import datetime as dt
from http.cookies import CookieError, SimpleCookie
from typing import Any
from xml.etree.ElementTree import Element
from xml.sax.saxutils import escape

from contract.payment import NewPayment
from sync.connectors.base import (
    CallContext,
    Connector,
    Fields,
    Page,
    PaymentPage,
    Send,
    collect,
    last_second,
)
from sync.errors import AuthRejected, MalformedResponse, NetworkRefused, UnexpectedStatus
from sync.formats import children, find, parse_xml, record, soap_body, soap_fault, text
from sync.http import HttpRequest, HttpResponse
from sync.model import Refused, Window
from sync.spec import (
    AmountFormat,
    ConnectorSpec,
    CredentialField,
    CurrencySource,
    Pagination,
    PaymentsStream,
    Rate,
)
from sync.values import ValueProblem, optional_text, parse_amount, parse_currency, parse_timestamp

SPEC = ConnectorSpec(
    network="tradetracker",
    base_url="https://ws.tradetracker.com",
    credential_fields=(
        CredentialField("customerID", "customer id (TradeTracker: Account, Web services)"),
        CredentialField("passphrase", "web services passphrase (TradeTracker: Web services)"),
    ),
    auth=(
        "SOAP authenticate(customerID, passphrase, sandbox=false, locale=en_GB); the session"
        " cookie it sets goes with every later call of the run"
    ),
    # No longest range is published [U]; a month, as for the other networks without one.
    max_window=dt.timedelta(days=31),
    granularity=dt.timedelta(days=1),
    pagination=Pagination.PAGE,
    rate=Rate(10, 60),  # unpublished [U]: cautious
    rate_source="unpublished; a cautious 10/min",
    amount_format=AmountFormat.STRING,
    currency_source=CurrencySource.RECORD,
    sub_id_field="reference",
    # assessmentDateFrom, the filter that would report assessments of any age, is
    # unconfirmed [U] (only assessmentDateTo is known): the assessment period is read
    # again by registration date, campaigns' assessment intervals being up to months.
    rescan=dt.timedelta(days=120),
    horizon=dt.timedelta(days=730),  # unpublished [U]
    # One client asks for 500 a call (tradetracker-store WP plugin); the maximum is [U].
    page_size=500,
    notes=(
        "Sources: ws.tradetracker.com/soap/affiliate?wsdl; ConversionTransaction and its filter"
        " (github.com/stixx/tradetracker-api-client src/Model, src/Filter); php-oara"
        " TradeTracker.php (authenticate, getAffiliateSites, status words, getPayments).",
        "Every affiliate site of the account (getAffiliateSites) is read, each in its own pages:"
        " a site left out would lose its transactions.",
        "The session is the cookie authenticate sets (kept for this run only); a fault on a"
        " later call (`Not yet authenticated`, ominto TradeTracker processor, code-index id"
        " 48209749013) opens a new session once.",
        "SOAP faults come with HTTP 500: a fault to authenticate is refused credentials; the"
        " fault texts for bad credentials and for a range too long are unconfirmed [U].",
        "The answer gives no total: pages are read until one holds fewer than the limit"
        " (ominto TradeTracker processor); 500 a call as the tradetracker-store WP plugin asks.",
        "A filter on the assessment date (assessmentDateFrom) is unconfirmed [U]: assessments"
        " are caught by re-reading 120 days by registration date.",
        "The rate limit, the longest range, the page size maximum and the horizon are"
        " unpublished [U].",
        "The time zone of registrationDate without an offset, and of the requested range, is"
        " unconfirmed [U]: read and asked as UTC.",
        "`accepted`/`confirmed` are approved, `rejected`/`declined` declined, `pending` pending"
        " (php-oara); any other word is stored unknown with the word kept. paidOut=true is"
        " payment evidence.",
        "`commission` is stored; with multi-touch attribution `attributableCommission` may"
        " differ, and which of the two is paid is unconfirmed [U].",
        "The service's namespace in the envelope and the SOAPAction header are unconfirmed [U]:"
        " the WSDL's address is used.",
        "Payments: getPayments answers the account's invoices, each with invoiceNumber,"
        " currency, subTotal, VAT, endTotal, billDate and payDate (github.com/stixx/"
        "tradetracker-api-client src/Model/Payment.php, PaymentMapper.php; php-oara"
        " TradeTracker.php reads billDate and endTotal, the latter as the payment's value). A"
        " payment is stored as its invoiceNumber, endTotal (subTotal plus VAT) in its"
        " currency, paid at its payDate; subTotal and VAT are not kept.",
        "Payments carry no per-advertiser or per-commission breakdown: each payment's whole"
        " amount is its one `unallocated` line, and no commission becomes paid by a payment"
        " (only by its own paidOut).",
        "That getPayments answers every payment of the account when given an empty filter (as"
        " php-oara calls it; the filter's billDateFrom/billDateTo are not sent), and in one"
        " answer without paging, is unconfirmed [U].",
        "That an invoice not paid yet comes with an empty payDate is unconfirmed [U]: one"
        " without a payDate, or with a payDate still ahead, is read again by a later run and"
        " stored once it is paid; the time zone of a payDate without an offset is unconfirmed"
        " [U] (read as UTC).",
    ),
    payments=PaymentsStream(
        endpoint="SOAP getPayments(options)",
        lines="unallocated",
        lines_endpoint=None,
        page_size=0,
        max_offset=0,
    ),
)

NAMESPACE = "https://ws.tradetracker.com/soap/affiliate"
# Words of a fault the service sends when the session is missing or has ended.
SESSION_FAULT = "not yet authenticated"


def envelope(method: str, arguments: str) -> bytes:
    """A SOAP 1.1 rpc/encoded call of `method` with its argument elements."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/"'
        f' xmlns:ns1="{NAMESPACE}" xmlns:xsd="http://www.w3.org/2001/XMLSchema"'
        ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xmlns:SOAP-ENC="http://schemas.xmlsoap.org/soap/encoding/"'
        ' SOAP-ENV:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/">'
        f"<SOAP-ENV:Body><ns1:{method}>{arguments}</ns1:{method}></SOAP-ENV:Body>"
        "</SOAP-ENV:Envelope>"
    ).encode()


def value(name: str, kind: str, content: object) -> str:
    return f'<{name} xsi:type="xsd:{kind}">{escape(str(content))}</{name}>'


def call(ctx: CallContext, method: str, arguments: str) -> HttpRequest:
    return HttpRequest(
        "POST",
        ctx.url("/soap/affiliate"),
        headers={"SOAPAction": f'"{NAMESPACE}#{method}"', **ctx.auth_headers},
        body=envelope(method, arguments),
        content_type="text/xml; charset=utf-8",
        soap=True,
    )


def answer(ctx: CallContext, response: HttpResponse, *, login: bool = False) -> Element:
    """The element inside the answer's Body; a fault raised as what it means."""
    network = ctx.spec.network
    if response.status not in (200, 500):
        raise UnexpectedStatus(f"{network}: HTTP {response.status}")
    root = parse_xml(network, response.body)
    fault = soap_fault(root)
    if fault is not None:
        if login:
            raise AuthRejected(f"{network} refused the credentials (SOAP fault {fault.code})")
        if SESSION_FAULT in fault.message.lower():
            raise AuthRejected(f"{network}: the session ended ({fault.message})")
        raise NetworkRefused(f"{network}: SOAP fault {fault.code}: {fault.message}")
    if response.status != 200:
        raise UnexpectedStatus(f"{network}: HTTP {response.status} without a SOAP fault")
    return soap_body(network, root)


def session_cookie(response: HttpResponse) -> str:
    """The Cookie header that carries the session the answer set (every name=value)."""
    jar: SimpleCookie = SimpleCookie()
    for header in response.headers.getall("Set-Cookie", []):
        try:
            jar.load(header)
        except CookieError:
            continue
    return "; ".join(f"{name}={morsel.value}" for name, morsel in jar.items())


class TradeTracker(Connector):
    spec = SPEC
    reauthenticates = True

    async def authenticate(self, ctx: CallContext, send: Send) -> None:
        creds = ctx.credentials
        ctx.auth_headers = {}
        response = await send(
            call(
                ctx,
                "authenticate",
                value("customerID", "int", creds["customerID"])
                + value("passphrase", "string", creds["passphrase"])
                + value("sandbox", "boolean", "false")
                + value("locale", "string", "en_GB")
                + value("demo", "boolean", "false"),
            )
        )
        answer(ctx, response, login=True)
        cookie = session_cookie(response)
        if not cookie:
            raise MalformedResponse("tradetracker: authenticate set no session cookie")
        ctx.auth_headers = {"Cookie": cookie}
        sites = answer(ctx, await send(call(ctx, "getAffiliateSites", "")))
        ids = [text(find(site, "ID")) or "" for site in parts(sites)]
        if not all(i.isdigit() for i in ids):
            raise MalformedResponse("tradetracker: an affiliate site has no id")
        if not ids:
            raise NetworkRefused("tradetracker: the account has no affiliate site to read")
        ctx.session["sites"] = ids

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        site, offset = state or (0, 0)
        options = (
            value("registrationDateFrom", "dateTime", window.start.strftime("%Y-%m-%dT%H:%M:%S"))
            + value(
                "registrationDateTo", "dateTime", last_second(window).strftime("%Y-%m-%dT%H:%M:%S")
            )
            + value("limit", "int", ctx.page_size)
            + value("offset", "int", offset)
            + value("sort", "string", "registrationDate")
            + value("sortDirection", "string", "ascending")
        )
        return call(
            ctx,
            "getConversionTransactions",
            value("affiliateSiteID", "int", site_id(ctx, site))
            + f'<options xsi:type="ns1:ConversionTransactionFilter">{options}</options>',
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        site, offset = state or (0, 0)
        found = parts(answer(ctx, response))
        done, refused = collect(ctx, [record(item) for item in found], read)
        if len(found) >= ctx.page_size:
            following: tuple[int, int] | None = (site, offset + len(found))
        elif site + 1 < len(ctx.session.get("sites", ())):
            following = (site + 1, 0)
        else:
            following = None
        return Page(done, refused, following)

    def payments_request(self, ctx: CallContext, offset: int) -> HttpRequest:
        return call(ctx, "getPayments", '<options xsi:type="ns1:PaymentFilter"></options>')

    def parse_payments(self, ctx: CallContext, response: HttpResponse) -> PaymentPage:
        found = parts(answer(ctx, response))
        now = ctx.now()
        done: list[NewPayment] = []
        refused: list[Refused] = []
        for item in found:
            fields = record(item)
            try:
                payment = read_payment(fields)
            except (ValueProblem, ValueError, ArithmeticError, TypeError) as exc:
                message = str(exc) if isinstance(exc, ValueProblem) else type(exc).__name__
                external_id = optional_text(fields.get("invoiceNumber"))
                refused.append(Refused(external_id, "record_invalid", f"payment: {message}"))
                continue
            if payment is not None and dt.datetime.fromisoformat(payment.paid_at) <= now:
                done.append(payment)
        return PaymentPage(done, refused, len(found))


def read_payment(item: dict[str, Any]) -> NewPayment | None:
    """One invoice of getPayments as the payment it records, None while it is not paid
    (no payDate yet); ValueProblem for a value outside the definition."""
    external_id = optional_text(item.get("invoiceNumber"))
    if external_id is None:
        raise ValueProblem("invoiceNumber: missing")
    code = parse_currency(item.get("currency"))
    if code is None:
        raise ValueProblem("currency: missing")
    amount = parse_amount(item.get("endTotal"), AmountFormat.STRING, "endTotal")
    paid = item.get("payDate")
    if optional_text(paid) is None:
        return None
    return NewPayment(
        external_id=external_id,
        amount=amount,
        currency=code,
        paid_at=parse_timestamp(paid, "payDate"),
    )


def site_id(ctx: CallContext, index: int) -> str:
    """The id of the account's affiliate site `index` (authenticate lists them; empty
    before it ran, which the service refuses)."""
    sites = ctx.session.get("sites", ())
    return str(sites[index]) if index < len(sites) else ""


def parts(response: Element) -> list[Element]:
    """The items of an answer's array part (`<conversionTransactions>`, `<affiliateSites>`):
    the one child of the response element; none when the service sends no part."""
    found = list(response)
    if len(found) > 1:
        raise MalformedResponse("tradetracker: the answer has more than one part")
    return children(found[0], "item") if found else []


def read(item: dict[str, Any]) -> Fields:
    campaign = item.get("campaign")
    if not isinstance(campaign, dict):
        campaign = {}
    status = item.get("transactionStatus")
    rejected = item.get("rejectionReason") if status == "rejected" else None
    return Fields(
        external_id=item.get("ID"),
        raw_status=status,
        commission=item.get("commission"),
        currency=item.get("currency"),
        transacted_at=item.get("registrationDate"),
        sale=item.get("orderAmount") or None,
        clicked_at=item.get("originatingClickDate") or None,
        program_id=campaign.get("ID"),
        program_name=campaign.get("name"),
        sub_ids={"reference": item.get("reference")},
        paid_reason="tradetracker:paidOut" if item.get("paidOut") in ("true", "1") else None,
        status_reason="tradetracker:rejected" if rejected else None,
    )
