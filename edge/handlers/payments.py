"""GET /v1/payments and GET /v1/payments/{id}: the payments the account's networks made
to it, newest first in cursor pages, and one of them with its lines.

They follow /v1/commissions (edge.handlers.account): the same filters' parsing, signed
cursors bound to the filters and the account, `Cache-Control: private, no-store`, one 404
for unknown, malformed and other accounts' ids.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from aiohttp import web

from contract.endpoints import PAYMENT, PAYMENTS
from edge import appkeys
from edge.auth.authenticate import Principal
from edge.handlers.account import (
    PRIVATE_HEADERS,
    amount,
    json_response,
    keyset_page,
    owned_detail,
)
from edge.http.errors import ApiError, unavailable
from edge.http.expect import ignore_expectation
from edge.request import cursor
from edge.request.query import parse_query, payment_seq_of
from store import payments as store_payments
from store.base import TIMESTAMP_RE, StoreUnavailable
from store.payments import PaymentDetail, PaymentLineRow, PaymentQuery, PaymentRow
from store.publicids import PublicIds

log = logging.getLogger("edge.payments")

FILTERS = ("network", "from", "to")
NO_SUCH_PAYMENT = "the account has no payment with this id"


def payment_json(ids: PublicIds, row: PaymentRow) -> dict[str, Any]:
    """A Payment, members in resource order; its id the row's public id."""
    return {
        "id": ids.payment(row.seq),
        "network": row.network,
        "externalId": row.external_id,
        "amount": amount(row.amount),
        "currency": row.currency,
        "paidAt": row.paid_at,
        "method": row.method,
    }


def line_json(ids: PublicIds, line: PaymentLineRow) -> dict[str, Any]:
    """A PaymentLine, members in resource order."""
    return {
        "kind": line.kind,
        "programExternalId": line.program_external_id,
        "programName": line.program_name,
        "commissionExternalId": line.commission_external_id,
        "commissionId": None
        if line.commission_seq is None
        else ids.commission(line.commission_seq),
        "amount": amount(line.amount),
        "currency": line.currency,
    }


def payment_detail_json(ids: PublicIds, detail: PaymentDetail) -> dict[str, Any]:
    """A PaymentDetail: the Payment's members, then its lines."""
    body = payment_json(ids, detail.row)
    body["lines"] = [line_json(ids, line) for line in detail.lines]
    return body


def payments_unavailable(request: web.Request, exc: StoreUnavailable) -> ApiError:
    """The 503 of a payment endpoint whose store cannot be read (logged)."""
    log.warning("payments unavailable: %s", exc)
    return unavailable(
        "payments cannot be read right now; retry later",
        request.app[appkeys.CONFIG].retry_after,
    )


def cursor_position(ids: PublicIds, position: list[Any]) -> tuple[str, int]:
    """The (paidAt, seq) a payments cursor resumes after; invalid_cursor otherwise. The
    cursor carries the last row's public id, never its row id."""
    if (
        len(position) == 2
        and isinstance(position[0], str)
        and TIMESTAMP_RE.fullmatch(position[0])
        and isinstance(position[1], str)
        and (seq := payment_seq_of(ids, position[1])) is not None
        and 0 < seq <= store_payments.MAX_PAYMENT_SEQ
    ):
        return position[0], seq
    raise ApiError("invalid_cursor", "cursor is not one this API issued", param="cursor")


async def payments(request: web.Request) -> web.Response:
    """One keyset page of the caller's payments, newest first."""
    principal: Principal = request[appkeys.PRINCIPAL]
    params = parse_query(PAYMENTS, request.query.items())
    filters = {name: params.get(name) for name in FILTERS}
    secret = request.app[appkeys.SECRET]
    store = request.app[appkeys.STORE]
    try:
        ids = store.ids
    except StoreUnavailable as exc:
        raise payments_unavailable(request, exc) from None
    after = None
    if "cursor" in params:
        after = cursor_position(
            ids,
            cursor.decode(secret, params["cursor"], PAYMENTS.name, filters, principal.account_uid),
        )
    limit: int = params["limit"]
    query = PaymentQuery(
        account_uid=principal.account_uid,  # the only account any query ever reads
        limit=limit + 1,  # one more than asked: hasMore is then exact, never an empty page
        network=params.get("network"),
        since=params.get("from"),
        until=params.get("to"),
        after=after,
    )
    try:
        rows = await store.read(store_payments.page, query)
    except StoreUnavailable as exc:
        raise payments_unavailable(request, exc) from None
    return keyset_page(
        request,
        rows,
        limit,
        endpoint=PAYMENTS.name,
        filters=filters,
        account=principal.account_uid,
        position=lambda last: [last.paid_at, ids.payment(last.seq)],
        item=lambda row: payment_json(ids, row),
        headers=PRIVATE_HEADERS,
    )


async def payment(request: web.Request) -> web.Response:
    """One of the caller's payments with its lines. Query parameters are ignored: it takes
    none, and 400 is not among its statuses (as /v1/commissions/{id})."""
    ids, detail = await owned_detail(
        request, payment_seq_of, store_payments.find, payments_unavailable, NO_SUCH_PAYMENT
    )
    body = orjson.dumps({"data": payment_detail_json(ids, detail)})
    return json_response(request, body, PRIVATE_HEADERS)


def setup(app: web.Application) -> None:
    """Register the payment routes (the store is edge.lifecycle.store_context's)."""
    app.router.add_get(PAYMENTS.path, payments, expect_handler=ignore_expectation)
    app.router.add_get(PAYMENT.path, payment, expect_handler=ignore_expectation)
