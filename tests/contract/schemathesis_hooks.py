"""Schemathesis hooks for the contract run (loaded with SCHEMATHESIS_HOOKS=schemathesis_hooks).

The document does not say these rules of the API, so a request that the document calls valid
can still be refused with a documented 400:
- a cursor is valid only for the endpoint and the filters it was issued with;
- `from` must not be later than `to`;
- a `market` is one of the officially assigned country codes (the document gives the shape,
  two letters, and refers to the list rather than spelling 249 codes out in a pattern);
- `q` holds 1 to `textsearch.MAX_TERMS` words of at least `textsearch.MIN_TERM` letters or
  digits once accents are folded (contract.textsearch), which no portable pattern says;
- a summary grouped by `day` needs `from` and `to` at most 366 days apart;
- `include` on a summary needs `groupBy` with `programSlug`, and is not taken by an export;
- an export (`format` csv or ndjson) holds every row: it takes no `limit` nor `cursor`, a
  `dialect` only with `format=csv`, and a summary pages (`limit`, `cursor`) only when grouped by `program` or `subId`;
- `programExternalId` names a programme of a `network`, so it needs one.
For *positive* cases only (the ones schemathesis expects the API to accept), this hook makes
the request obey those rules before it is sent: it swaps `from`/`to` when reversed, drops
a market that is not assigned, keeps the first words of a `q` with too many and adds one to
a `q` with none, gives a summary by day a period of a quarter, and drops a cursor the API
did not issue for these filters (every cursor, when the edge's secret is not given in
CONTRACT_CURSOR_SECRET: none can be checked then). Negative cases are sent as generated, and
every check still runs on every response.

Loaded through SCHEMATHESIS_HOOKS, or by the project's schemathesis.toml when schemathesis
runs from the repository's root.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import schemathesis

from contract import textsearch
from contract.countries import COUNTRIES
from contract.endpoints import (
    COMMISSION_SUMMARY,
    COMMISSIONS,
    EVENTS,
    PAYMENTS,
    PROGRAM_FACETS,
    PROGRAMS,
    Endpoint,
)
from contract.exports import CSV_FORMAT, NDJSON_FORMAT
from contract.resources import RANKED_GROUPS
from edge.handlers import events
from edge.handlers.programs import cursor_filters
from edge.http.errors import ApiError
from edge.request import cursor
from edge.request.query import parse_query

SECRET_ENV = "CONTRACT_CURSOR_SECRET"
EXPORT_FORMATS = {CSV_FORMAT, NDJSON_FORMAT}
LIST_ENDPOINTS: dict[str, Endpoint] = {
    PROGRAMS.path: PROGRAMS,
    COMMISSIONS.path: COMMISSIONS,
    EVENTS.path: EVENTS,
    PAYMENTS.path: PAYMENTS,
}
# Paths taking `q` (a full-text query).
SEARCH_PATHS = {PROGRAMS.path, PROGRAM_FACETS.path}


def wire(value: Any) -> str:
    """A query value as the client sends it (booleans are lowercase words)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def issued_for(endpoint: Endpoint, query: dict[str, Any], secret: bytes) -> bool | None:
    """Whether the cursor in `query` was issued for its filters; None if the query is bad."""
    try:
        values = parse_query(endpoint, [(name, wire(value)) for name, value in query.items()])
    except ApiError:
        return None
    if endpoint is PROGRAMS:
        filters = cursor_filters(values)
    elif endpoint is EVENTS:
        filters = events.cursor_filters(values)
    else:
        filters = {p.name: values.get(p.name) for p in endpoint.params if p.kind != "cursor"}
        filters.pop("limit", None)  # a cursor is not bound to the page size
    try:
        token = values["cursor"]
        cursor.decode(secret, token, endpoint.name, filters, issued_to(token))
    except ApiError:
        return False
    return True


def issued_to(token: str) -> str | None:
    """The account an account's cursor names (the run has one key: its account), else None.
    Read without checking: decode() then checks the signature over it."""
    body = token.partition(".")[0]
    try:
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:
        return None
    if isinstance(payload, list) and len(payload) > 2 and payload[0] == 2:
        return payload[2] if isinstance(payload[2], str) else None
    return None


@schemathesis.hook
def before_call(context: schemathesis.HookContext, case: Any, kwargs: dict[str, Any]) -> None:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return
    query = case.query
    if not isinstance(query, dict):
        return
    if case.operation.path in SEARCH_PATHS and isinstance(query.get("q"), str):
        terms = textsearch.query_terms(query["q"])
        query["q"] = " ".join(terms[: textsearch.MAX_TERMS]) if terms else query["q"][:-3] + " ab"
    if case.operation.path == COMMISSION_SUMMARY.path:
        groups = query.get("groupBy")
        named = groups if isinstance(groups, list) else str(groups or "").split(",")
        if "day" in named:
            # A day per row is bounded by a period of at most 366 days (documented in prose).
            query["from"], query["to"] = "2025-01-01", "2025-03-31"
        low, high = query.get("from"), query.get("to")
        if isinstance(low, str) and isinstance(high, str) and low > high:
            query["from"], query["to"] = high, low
    if query.get("format") in EXPORT_FORMATS:
        query.pop("limit", None)
        query.pop("cursor", None)
        query.pop("include", None)  # a summary's include shapes its JSON answer only
    if "dialect" in query and query.get("format") != CSV_FORMAT:
        del query["dialect"]
    if case.operation.path == COMMISSION_SUMMARY.path:
        groups = query.get("groupBy")
        named = groups if isinstance(groups, list) else str(groups or "").split(",")
        if not set(named) & set(RANKED_GROUPS):
            query.pop("limit", None)
        # include=terms adds a programme's terms: only to rows grouped by programSlug, and
        # never to an export's flat rows.
        if "programSlug" not in named or query.get("format") in EXPORT_FORMATS:
            query.pop("include", None)
        # A summary's cursor is bound to its filters and groups; none is checked here.
        query.pop("cursor", None)
    if "programExternalId" in query and "network" not in query:
        del query["programExternalId"]
    market = query.get("market")  # the list and the facets take one
    if isinstance(market, str) and market.upper() not in COUNTRIES:
        del query["market"]
    endpoint = LIST_ENDPOINTS.get(case.operation.path)
    if endpoint is None:
        return
    low, high = query.get("from"), query.get("to")
    if isinstance(low, str) and isinstance(high, str) and low > high:
        query["from"], query["to"] = high, low
    if "cursor" in query:
        secret = os.environ.get(SECRET_ENV)
        if secret is None or issued_for(endpoint, query, secret.encode()) is False:
            del query["cursor"]
