"""GET /v1/events: the changes recorded for the calling account, oldest first.

The events come from store.events, written in the transaction of each change;
their `data` is JSON the database made, sent as it is stored. Pages are keyset pages on
the event's row id (feed order; its cursor carries the public id, store.publicids), so a client keeps the last page's cursor and reads on from it
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
    events_page,
    retention_horizon,
)
from store.publicids import PublicIds

log = logging.getLogger("edge.events")


def event_json(ids: PublicIds, row: EventRow) -> dict[str, Any]:
    """An Event, members in resource order: its public id, and `data` as the database
    wrote it with the commission's public id in (`PublicIds.event_data`)."""
    return {
        "id": ids.event(row.seq),
        "type": row.type,
        "occurredAt": row.occurred_at,
        "data": orjson.Fragment(ids.event_data(row.data)),
    }


def cursor_filters(params: dict[str, Any]) -> dict[str, Any]:
    """What an events cursor is bound to: the `type` filter, its types sorted, since
    `type=a,b` and `type=b,a` select the same events and one's cursor serves the other."""
    types: tuple[str, ...] = params.get("type", ())
    return {"type": ",".join(sorted(types)) or None}


def cursor_position(ids: PublicIds, position: list[Any]) -> int:
    """The event row id an events cursor resumes after; invalid_cursor otherwise. The
    cursor carries the event's public id, never its row id (a cursor is signed, not
    encrypted)."""
    if (
        len(position) == 1
        and isinstance(position[0], str)
        and (seq := ids.event_seq(position[0])) is not None
        and 0 < seq <= MAX_EVENT_SEQ
    ):
        return seq
    raise ApiError("invalid_cursor", "cursor is not one this API issued", param="cursor")


async def events(request: web.Request) -> web.Response:
    """One keyset page of the caller's events, oldest first."""
    principal = request[appkeys.PRINCIPAL]
    params = parse_query(EVENTS, request.query.items())
    types: tuple[str, ...] = params.get("type", ())
    filters = cursor_filters(params)
    secret = request.app[appkeys.SECRET]
    config = request.app[appkeys.CONFIG]
    store = request.app[appkeys.STORE]
    try:
        ids = store.ids
    except StoreUnavailable as exc:
        log.warning("events unavailable: %s", exc)
        raise unavailable(
            "events cannot be read right now; retry later", config.retry_after
        ) from None
    after = None
    if "cursor" in params:
        token = params["cursor"]
        after = cursor_position(
            ids, cursor.decode(secret, token, EVENTS.name, filters, principal.account_uid)
        )
    limit: int = params["limit"]
    query = EventQuery(
        account_uid=principal.account_uid,  # the only account any query ever reads
        limit=limit + 1,  # one more than asked: hasMore is then exact
        since=retention_horizon(utc_now(), config.events_retention_days),
        types=types,
        after=after,
    )
    try:
        page = await store.read(events_page, query)
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
            secret, EVENTS.name, filters, [ids.event(page.scanned_to)], principal.account_uid
        )
    elif rows:
        next_cursor = cursor.encode(
            secret, EVENTS.name, filters, [ids.event(rows[-1].seq)], principal.account_uid
        )
    if has_more and next_cursor is not None:
        headers["Link"] = link_next(request, next_cursor)
    body = orjson.dumps(
        {
            "data": [event_json(ids, row) for row in rows],
            "page": {"limit": limit, "hasMore": has_more, "nextCursor": next_cursor},
        }
    )
    return json_response(request, body, headers)


def setup(app: web.Application) -> None:
    """Register GET /v1/events (the store is edge.lifecycle.store_context's)."""
    app.router.add_get(EVENTS.path, events, expect_handler=ignore_expectation)
