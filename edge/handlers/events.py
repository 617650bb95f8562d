"""GET /v1/events: the changes recorded for the calling account, oldest first.

The events come from store.events, written in the transaction of each change;
their `data` is JSON the database made, sent as it is stored. Pages are keyset pages on
the event id (feed order), so a client keeps the last page's cursor and reads on from it
later, without a gap or a repeat: the next event it gets is the first one written after
the last one it read (`page.nextCursor` is set on the last page too). Events older than the retention (`--events-retention-days`) are
never answered, whether or not pruning has deleted them yet. Answers are private and
uncached, as every account endpoint's (edge.handlers.account).
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from aiohttp import web

from contract.endpoints import EVENTS
from edge import appkeys
from edge.handlers.account import PRIVATE_HEADERS, json_response, link_next
from edge.http.errors import ApiError, unavailable
from edge.http.expect import ignore_expectation
from edge.request import cursor
from edge.request.query import parse_query
from store.base import StoreUnavailable, utc_now
from store.events import (
    MAX_EVENT_SEQ,
    EventQuery,
    EventRow,
    event_id,
    events_page,
    retention_horizon,
)

log = logging.getLogger("edge.events")


def event_json(row: EventRow) -> dict[str, Any]:
    """An Event, members in resource order; `data` verbatim as the database wrote it."""
    return {
        "id": event_id(row.seq),
        "type": row.type,
        "occurredAt": row.occurred_at,
        "data": orjson.Fragment(row.data),
    }


def cursor_filters(params: dict[str, Any]) -> dict[str, Any]:
    """What an events cursor is bound to: the `type` filter, its types sorted, since
    `type=a,b` and `type=b,a` select the same events and one's cursor serves the other."""
    types: tuple[str, ...] = params.get("type", ())
    return {"type": ",".join(sorted(types)) or None}


def cursor_position(position: list[Any]) -> int:
    """The event id an events cursor resumes after; invalid_cursor otherwise."""
    if len(position) == 1 and type(position[0]) is int and 0 < position[0] <= MAX_EVENT_SEQ:
        return position[0]
    raise ApiError("invalid_cursor", "cursor is not one this API issued", param="cursor")


async def events(request: web.Request) -> web.Response:
    """One keyset page of the caller's events, oldest first."""
    principal = request[appkeys.PRINCIPAL]
    params = parse_query(EVENTS, request.query.items())
    types: tuple[str, ...] = params.get("type", ())
    filters = cursor_filters(params)
    secret = request.app[appkeys.SECRET]
    after = None
    if "cursor" in params:
        token = params["cursor"]
        after = cursor_position(
            cursor.decode(secret, token, EVENTS.name, filters, principal.account_uid)
        )
    config = request.app[appkeys.CONFIG]
    limit: int = params["limit"]
    query = EventQuery(
        account_uid=principal.account_uid,  # the only account any query ever reads
        limit=limit + 1,  # one more than asked: hasMore is then exact
        since=retention_horizon(utc_now(), config.events_retention_days),
        types=types,
        after=after,
    )
    try:
        page = await request.app[appkeys.STORE].read(events_page, query)
    except StoreUnavailable as exc:
        log.warning("events unavailable: %s", exc)
        raise unavailable(
            "events cannot be read right now; retry later", config.retry_after
        ) from None
    rows = page.rows[:limit]
    # More is there: a further event read, or a type filter's scan that stopped early.
    has_more = len(page.rows) > limit or page.scanned_to is not None
    headers = dict(PRIVATE_HEADERS)
    # The feed's position after this page, also on its last page: a client keeps it and
    # reads on from there once more events are written. An empty page leaves it where it
    # was (null: the feed's start), unless a type filter's scan moved on past events of
    # other types.
    next_cursor: str | None = params.get("cursor")
    if page.scanned_to is not None:
        next_cursor = cursor.encode(
            secret, EVENTS.name, filters, [page.scanned_to], principal.account_uid
        )
    elif rows:
        next_cursor = cursor.encode(
            secret, EVENTS.name, filters, [rows[-1].seq], principal.account_uid
        )
    if has_more and next_cursor is not None:
        headers["Link"] = link_next(request, next_cursor)
    body = orjson.dumps(
        {
            "data": [event_json(row) for row in rows],
            "page": {"limit": limit, "hasMore": has_more, "nextCursor": next_cursor},
        }
    )
    return json_response(request, body, headers)


def setup(app: web.Application) -> None:
    """Register GET /v1/events (the store is edge.lifecycle.store_context's)."""
    app.router.add_get(EVENTS.path, events, expect_handler=ignore_expectation)
