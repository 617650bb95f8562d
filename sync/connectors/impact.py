"""Impact partner Actions (REST, JSON, next-page links)."""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any
from urllib.parse import urlsplit

from sync.connectors.base import (
    CallContext,
    Connector,
    Fields,
    Page,
    collect,
    iso_z,
    json_body,
    last_second,
    member,
)
from sync.errors import MalformedResponse, UnexpectedStatus, WindowTooLarge
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
    network="impact",
    base_url="https://api.impact.com",
    credential_fields=(
        CredentialField("accountSid", "partner Account SID (Impact: Settings, API)"),
        CredentialField("authToken", "partner Auth Token"),
    ),
    auth="HTTP Basic accountSid:authToken",
    max_window=dt.timedelta(days=45),
    granularity=dt.timedelta(seconds=1),
    pagination=Pagination.PAGE,
    rate=Rate(500, 3600),
    rate_source="500/hour for Actions (integrations.impact.com, rate limits)",
    amount_format=AmountFormat.STRING,
    currency_source=CurrencySource.RECORD,
    sub_id_field="SubId1",
    more_sub_ids=("SubId2", "SubId3", "SharedId"),
    # StartDate/EndDate filter on the last update, but a state transition is no update:
    # the locking date reports those (a state is final once the action locks).
    rescan=dt.timedelta(0),
    horizon=dt.timedelta(days=1095),
    change_feeds=(
        # An action's LockingDate is the end of its lock period, set when it is made: a
        # reversal of a pending action carries a locking date ahead of now. The lock
        # period is the campaign's own; 90 days covers the ones published [U].
        ChangeFeed(
            "locking",
            "LockingDateStart/LockingDateEnd",
            "approvals and reversals, final once the action locks",
            ahead=dt.timedelta(days=90),
        ),
        ChangeFeed("updated", "StartDate/EndDate", "amendments (updates other than of state)"),
    ),
    page_size=2000,
    notes=(
        "An answer above 10x PageSize is an error: such windows are split.",
        "Whether LockingDate is set on PENDING actions, and the longest lock period, are "
        "unconfirmed [U]: locking dates are read up to 90 days ahead of now.",
    ),
)

# The most records Impact answers for one query, in pages of PageSize.
PAGES_CAP = 10
# The dates a window bounds: the action date, or a change feed's.
ACTION_DATE = ("ActionDateStart", "ActionDateEnd")
DATE_PARAMETERS = {
    "locking": ("LockingDateStart", "LockingDateEnd"),
    "updated": ("StartDate", "EndDate"),
}


class Impact(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        sid = ctx.credentials["accountSid"]
        token = base64.b64encode(f"{sid}:{ctx.credentials['authToken']}".encode()).decode()
        headers = {"Authorization": f"Basic {token}", "Accept": "application/json"}
        if state is not None:
            # @nextpageuri is a path with its query; only the configured host is trusted.
            return HttpRequest("GET", ctx.url(state), headers=headers)
        start, end = DATE_PARAMETERS.get(window.feed, ACTION_DATE)
        return HttpRequest(
            "GET",
            ctx.url(f"/Mediapartners/{sid}/Actions"),
            params=(
                (start, iso_z(window.start)),
                (end, iso_z(last_second(window))),
                ("PageSize", str(ctx.page_size)),
            ),
            headers=headers,
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        if response.status == 400 and b"pagesize" in response.body.lower():
            raise WindowTooLarge("impact: more records than one query may return")
        if not 200 <= response.status < 300:
            raise UnexpectedStatus(f"impact: HTTP {response.status}")
        body = json_body("impact", response)
        actions = member(body, "Actions")
        if not isinstance(actions, list) or not isinstance(body.get("@total", ""), str | int):
            raise MalformedResponse("impact: the answer lacks Actions")
        try:
            total = int(body.get("@total", len(actions)))
        except ValueError:
            raise MalformedResponse("impact: @total is not a number") from None
        if state is None and total > PAGES_CAP * ctx.page_size:
            raise WindowTooLarge("impact: more records than one query may return")
        done, refused = collect(ctx, actions, read)
        following = body.get("@nextpageuri") or None
        if following is not None:
            parts = urlsplit(str(following))
            following = parts.path + (f"?{parts.query}" if parts.query else "")
        return Page(done, refused, following)


def read(record: dict[str, Any]) -> Fields:
    return Fields(
        external_id=record.get("Id"),
        raw_status=record.get("State"),
        commission=record.get("Payout"),
        currency=record.get("Currency"),
        transacted_at=record.get("EventDate"),
        sale=record.get("Amount"),
        clicked_at=record.get("ReferringDate") or None,
        program_id=record.get("CampaignId"),
        program_name=record.get("CampaignName"),
        sub_ids={k: record.get(k) for k in ("SubId1", "SubId2", "SubId3", "SharedId")},
    )
