"""CJ publisher commissions (GraphQL, watermark pagination, no currency on records)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from sync.connectors.base import (
    CallContext,
    Connector,
    Fields,
    Page,
    collect,
    expect_ok,
    iso_z,
    json_body,
    member,
)
from sync.errors import AuthRejected, MalformedResponse, NetworkRefused
from sync.http import HttpRequest, HttpResponse
from sync.model import Window
from sync.spec import (
    AmountFormat,
    ChangeFeed,
    ConnectorSpec,
    CredentialField,
    CurrencySource,
    Pagination,
    Rate,
)

SPEC = ConnectorSpec(
    network="cj",
    base_url="https://commissions.api.cj.com",
    credential_fields=(
        CredentialField("personalAccessToken", "CJ personal access token (developers.cj.com)"),
        CredentialField("publisherId", "publisher company id (CID)"),
    ),
    auth="Authorization: Bearer <personalAccessToken>",
    # The GraphQL range cap is unconfirmed [U]: the legacy REST service's 31 days.
    max_window=dt.timedelta(days=31),
    granularity=dt.timedelta(seconds=1),
    pagination=Pagination.WATERMARK,
    # Unpublished for GraphQL [U]: the legacy REST figure.
    rate=Rate(25, 60),
    rate_source="unpublished for GraphQL; legacy REST 25 calls/min (api-evangelist cj conventions)",
    amount_format=AmountFormat.STRING,
    # Records carry amounts in the publisher's currency but no currency code.
    currency_source=CurrencySource.CONNECTION,
    sub_id_field="shopperId",
    # A correction (a reversal, an amendment) is a new record, posted when it is made: the
    # forward windows of posting dates fetch it. Locking (approval) is read by its date;
    # closing for payment has no date filter, so the re-scan is there for payments only.
    rescan=dt.timedelta(days=100),
    horizon=dt.timedelta(days=1095),
    change_feeds=(
        # A commission's lockingDate is set ahead (the 11th of the month after next at
        # most): a decline before it carries a date still to come.
        ChangeFeed(
            "locking",
            "sinceLockingDate/beforeLockingDate",
            "approvals (locked) and declines decided at locking",
            ahead=dt.timedelta(days=62),
        ),
        # Read by the forward windows: a correction is posted when it is made.
        ChangeFeed(
            "",
            "sincePostingDate/beforePostingDate",
            "reversals and amendments, as correction records (original=false) posted when made",
        ),
    ),
    rescan_catches="payments (closed)",
    notes=(
        "Corrections are new records (original=false, originalActionId, correctionReason), signed.",
        "The connection must declare its currency: records carry none.",
    ),
)

RECORD_FIELDS = (
    "commissionId orderId actionStatus actionType postingDate eventDate lockingDate original "
    "originalActionId correctionReason pubCommissionAmountPubCurrency saleAmountPubCurrency "
    "advertiserId advertiserName shopperId validationStatus"
)
AUTH_CODES = frozenset({"UNAUTHENTICATED", "UNAUTHORIZED", "FORBIDDEN"})


# The dates a window bounds: posting dates, or locking dates for the locking feed.
DATE_ARGUMENTS = {"locking": ("sinceLockingDate", "beforeLockingDate")}
POSTING = ("sincePostingDate", "beforePostingDate")


def query(publisher: str, window: Window, since_id: str | None) -> str:
    """The publisherCommissions query for one window (watermark after `since_id`)."""
    since, before = DATE_ARGUMENTS.get(window.feed, POSTING)
    args = [
        f"forPublishers: [{json.dumps(publisher)}]",
        f"{since}: {json.dumps(iso_z(window.start))}",
        f"{before}: {json.dumps(iso_z(window.end))}",
    ]
    if since_id is not None:
        args.append(f"sinceCommissionId: {json.dumps(since_id)}")
    return (
        f"{{ publisherCommissions({', '.join(args)}) "
        f"{{ count limit maxCommissionId payloadComplete records {{ {RECORD_FIELDS} }} }} }}"
    )


class CJ(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "POST",
            ctx.url("/query"),
            headers={"Authorization": f"Bearer {ctx.credentials['personalAccessToken']}"},
            json={"query": query(ctx.credentials["publisherId"], window, state)},
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        expect_ok("cj", response)
        body = json_body("cj", response)
        errors = member(body, "errors")
        if errors:
            check_errors(errors)
        result = member(body, "data", "publisherCommissions")
        records = member(result, "records")
        if not isinstance(records, list) or not isinstance(result.get("payloadComplete"), bool):
            raise MalformedResponse("cj: publisherCommissions lacks records or payloadComplete")
        done, refused = collect(ctx, records, read)
        following = None
        if not result["payloadComplete"]:
            following = member(result, "maxCommissionId")
            if following is None:
                raise MalformedResponse("cj: payload incomplete but no maxCommissionId")
            following = str(following)
        return Page(done, refused, following)


def check_errors(errors: Any) -> None:
    """Raise for a GraphQL errors[] answer: AuthRejected when it is about credentials."""
    items = errors if isinstance(errors, list) else [errors]
    for item in items:
        code = str(member(item, "extensions", "code") or "").upper()
        message = str(member(item, "message") or "").lower()
        if code in AUTH_CODES or "not authorized" in message or "unauthorized" in message:
            raise AuthRejected("cj refused the credentials (GraphQL error)")
    raise NetworkRefused("cj: the query was answered with GraphQL errors")


def read(record: dict[str, Any]) -> Fields:
    """A CJ commission's fields; a correction keeps its sign and names its original."""
    correction = record.get("original") is False
    reason = None
    if correction:
        reason = f"cj:correction:{record.get('correctionReason') or 'UNSPECIFIED'}"
    return Fields(
        external_id=record.get("commissionId"),
        raw_status=record.get("actionStatus"),
        commission=record.get("pubCommissionAmountPubCurrency"),
        currency=None,
        transacted_at=record.get("eventDate") or record.get("postingDate"),
        sale=record.get("saleAmountPubCurrency"),
        program_id=record.get("advertiserId"),
        program_name=record.get("advertiserName"),
        sub_ids={"shopperId": record.get("shopperId")},
        status_reason=reason,
        original_id=record.get("originalActionId") if correction else None,
    )
