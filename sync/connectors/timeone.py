"""TimeOne (ex Public-Idées) SubID report (XML, one answer per window, 3 calls per 15 min)."""

from __future__ import annotations

import datetime as dt
from typing import Any
from xml.etree.ElementTree import Element

from sync.connectors.base import (
    CallContext,
    Connector,
    Fields,
    Page,
    collect,
    expect_ok,
    last_day,
)
from sync.errors import AuthRejected, MalformedResponse, RateLimitReached
from sync.formats import children, find, local, parse_xml, record, text
from sync.http import HttpRequest, HttpResponse
from sync.model import Window
from sync.spec import (
    AmountFormat,
    ConnectorSpec,
    CredentialField,
    CurrencySource,
    Pagination,
    Rate,
)

# The period of the network's call limit (seconds).
LIMIT_PERIOD = 900.0

SPEC = ConnectorSpec(
    network="timeone",
    base_url="https://api.publicidees.com",
    credential_fields=(
        CredentialField("partnerId", "partner id (TimeOne: API SubID, parameter p)"),
        CredentialField("apiKey", "API key (TimeOne: API SubID, parameter k)"),
    ),
    auth="query parameters p=<partnerId>&k=<apiKey>",
    # No longest range is published [U]; a month keeps a 90-day backfill to one budget.
    max_window=dt.timedelta(days=31),
    granularity=dt.timedelta(days=1),
    pagination=Pagination.NONE,
    rate=Rate(3, LIMIT_PERIOD),
    rate_source=(
        "3 calls per 900 s: the answer says 'You reached the limit of 3 call(s) in the last"
        " 900 seconds' (php-oara fork Publicidees.php)"
    ),
    amount_format=AmountFormat.STRING,
    currency_source=CurrencySource.RECORD,
    sub_id_field="SubID",
    # Which date dd/df filter is unconfirmed [U], and no change filter is known: the
    # validation period is read again (two windows of the three calls a quarter-hour).
    rescan=dt.timedelta(days=60),
    horizon=dt.timedelta(days=730),
    notes=(
        "Which date dd/df filter on is unconfirmed [U]; the re-scan covers validations.",
        "Errors are plain-text bodies (bad credentials, the call limit), checked before the"
        " XML is read; the HTTP status of the limit's answer is unconfirmed [U].",
        "Paid evidence is unpublished [U]: no row is marked paid.",
        "The time zone of ActionDate is unconfirmed [U] (probably Europe/Paris): read as UTC.",
        "The sources call the API over http; https is asked [U] (--base-url overrides it).",
    ),
)

BAD_CREDENTIALS = b"wrong information on parameter"
CALL_LIMIT = b"you reached the limit of"


class TimeOne(Connector):
    spec = SPEC

    def request(self, ctx: CallContext, window: Window, state: Any) -> HttpRequest:
        return HttpRequest(
            "GET",
            ctx.url("/subid.php5"),
            params=(
                ("p", ctx.credentials["partnerId"]),
                ("k", ctx.credentials["apiKey"]),
                ("dd", window.start.date().isoformat()),
                ("df", last_day(window).isoformat()),
            ),
        )

    def parse(self, ctx: CallContext, window: Window, state: Any, response: HttpResponse) -> Page:
        head = response.body[:300].lower()
        if BAD_CREDENTIALS in head:
            raise AuthRejected("timeone refused the credentials (its error text)")
        if CALL_LIMIT in head:
            # Its count is over the last 900 s: the run stops and resumes when it has passed.
            raise RateLimitReached(
                "timeone: the network's call limit (3 per 15 minutes) was reached",
                LIMIT_PERIOD,
            )
        expect_ok("timeone", response)
        root = parse_xml("timeone", response.body)
        if local(root.tag) != "partner":
            raise MalformedResponse("timeone: the answer is not a partner report")
        done, refused = collect(ctx, actions(root), read)
        return Page(done, refused)


def actions(root: Element) -> list[dict[str, Any]]:
    """Every action of every programme, with its programme's id and name."""
    found: list[dict[str, Any]] = []
    for program in children(root, "program"):
        name = text(find(program, "name"))
        for action in children(program, "action"):
            found.append({**record(action), "__program_id": program.get("id"), "__name": name})
    return found


def read(action: dict[str, Any]) -> Fields:
    return Fields(
        external_id=action.get("id"),
        raw_status=action.get("ActionStatus"),
        commission=action.get("ActionCommission"),
        currency=action.get("ProgramCurrency"),
        transacted_at=action.get("ActionDate"),
        sale=action.get("CartAmount") or None,
        program_id=action.get("__program_id"),
        program_name=action.get("__name"),
        sub_ids={"SubID": action.get("SubID")},
    )
