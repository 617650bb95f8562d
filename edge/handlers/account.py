"""GET /v1/me, GET /v1/commissions, GET /v1/commissions/summary and GET
/v1/commissions/{id}: the calling account, its commissions, their totals, and one of them
with its history.

All four answer with `Cache-Control: private, no-store` and `Vary: Authorization,
Accept-Encoding`: the data belongs to one account, changes at any time and includes
financial figures, so no cache, shared or private, should keep a copy (see docs/accounts.md).
Bodies of `GZIP_MIN_BYTES` or more are gzip-coded when the client accepts it; no
endpoint here has an ETag, so the coding changes no validator.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from operator import attrgetter
from typing import Any, TypeVar

import orjson
from aiohttp import web

from contract import commission as commission_fields
from contract.endpoints import (
    COMMISSION,
    COMMISSION_SUMMARY,
    COMMISSIONS,
    JSON,
    ME,
    PROGRAM,
    SUMMARY_DAY_PERIOD_MAX,
)
from contract.exports import CSV_FORMAT, DIALECTS, EXPORT_CHUNK, JSON_FORMAT, RFC4180, Dialect
from contract.resources import COMMISSION as COMMISSION_RESOURCE
from contract.resources import COMMISSION_TOTAL, OUTCOMES, RANKED_GROUPS, TERMS
from contract.vocabulary import (
    COLLECTION_IMPORT_ONLY,
    COLLECTION_SYNC,
    EXCLUDED_FROM_TOTALS,
    LIMIT_DEFAULT,
)
from edge import appkeys, links
from edge.auth.authenticate import Principal, unverifiable
from edge.directory.programlinks import NO_LINKS, ProgramLinks
from edge.handlers import export
from edge.http.errors import ApiError, invalid, not_found, unavailable
from edge.http.expect import ignore_expectation
from edge.http.httpcache import GZIP_MIN_BYTES, VARY, accepts_gzip, gzip_bytes
from edge.links import link_origin
from edge.request import cursor
from edge.request.query import commission_seq_of, included, parse_query
from store import Session, accounts, outcomes, summary
from store import commissions as store_commissions
from store.base import (
    AMOUNT_RE,
    TIMESTAMP_RE,
    AccountView,
    CommissionDetail,
    CommissionQuery,
    CommissionRow,
    Outcomes,
    StatusChange,
    StoreUnavailable,
    format_timestamp,
)
from store.publicids import PublicIds
from store.summary import SummaryQuery, SummaryRow

log = logging.getLogger("edge.account")

R = TypeVar("R")  # a row of a keyset page
D = TypeVar("D")  # a resource read by its id

PRIVATE_HEADERS = {"Cache-Control": "private, no-store", "Vary": f"Authorization, {VARY}"}
# The endpoints that also export: Accept picks the format too.
EXPORT_HEADERS = {**PRIVATE_HEADERS, "Vary": f"Authorization, Accept, {VARY}"}
FILTERS = (
    "network",
    "status",
    "from",
    "to",
    "programExternalId",
    "subId",
    "programSlug",
    "updatedSince",
)
# One answer for unknown, malformed and other accounts' ids.
NO_SUCH_COMMISSION = "the account has no commission with this id"

# --- Pure mapping -----------------------------------------------------------------------


def amount(text: str) -> orjson.Fragment:
    """A stored decimal string, emitted verbatim as a JSON number (no float on the way)."""
    if not AMOUNT_RE.fullmatch(text):
        raise ValueError(f"stored amount {text!r} is not a decimal number")
    return orjson.Fragment(text)


def amount_text(text: str) -> str:
    """A stored decimal string as it is, checked as `amount` checks it (a CSV cell)."""
    if not AMOUNT_RE.fullmatch(text):
        raise ValueError(f"stored amount {text!r} is not a decimal number")
    return text


# A Commission's members after id and network, the row's attributes they show, and those
# that are amounts (contract.commission.FIELDS, in its order).
# programSlug, resolved when read, follows the programme's members it is resolved from.
_SLUG_AT = commission_fields.MEMBERS.index("programExternalId") + 1
_HEAD_MEMBERS = commission_fields.MEMBERS[:_SLUG_AT]
_TAIL_MEMBERS = commission_fields.MEMBERS[_SLUG_AT:]
_HEAD_VALUES = attrgetter(*commission_fields.NAMES[:_SLUG_AT])
_TAIL_VALUES = attrgetter(*commission_fields.NAMES[_SLUG_AT:])
_AMOUNTS = tuple(f.member for f in commission_fields.FIELDS if f.kind == "amount")


def commission_json(
    ids: PublicIds,
    row: CommissionRow,
    number: Callable[[str], Any] = amount,
    links: ProgramLinks | None = None,
) -> dict[str, Any]:
    """A Commission, members in spec order; its id the row's public id, amounts by `number`
    (JSON number fragments, or the stored text as it is for a CSV export). With `links`
    (the served build's), its programSlug, resolved now; without, the CommissionRecord an
    event carries (no programSlug)."""
    body: dict[str, Any] = {"id": ids.commission(row.seq), "network": row.network}
    body.update(zip(_HEAD_MEMBERS, _HEAD_VALUES(row), strict=True))
    if links is not None:
        body["programSlug"] = links.slug(row.network, row.program_external_id)
    body.update(zip(_TAIL_MEMBERS, _TAIL_VALUES(row), strict=True))
    for member in _AMOUNTS:
        if (value := body[member]) is not None:
            body[member] = number(value)
    return body


def status_change_json(change: StatusChange) -> dict[str, Any]:
    """A StatusChange, members in resource order."""
    return {
        "status": change.status,
        "rawStatus": change.raw_status,
        "commissionAmount": amount(change.commission_amount),
        "saleAmount": None if change.sale_amount is None else amount(change.sale_amount),
        "currency": change.currency,
        "recordedAt": change.recorded_at,
        "replacedAt": change.replaced_at,
    }


def commission_detail_json(
    ids: PublicIds, detail: CommissionDetail, links: ProgramLinks
) -> dict[str, Any]:
    """A CommissionDetail: the Commission's members, then its statusHistory."""
    body = commission_json(ids, detail.row, links=links)
    body["statusHistory"] = [status_change_json(change) for change in detail.history]
    return body


def _decimal(text: str | None) -> orjson.Fragment | None:
    return None if text is None else orjson.Fragment(text)


def outcomes_json(found: Outcomes) -> dict[str, Any]:
    """A CommissionOutcomes, members in resource order; amounts, rates and the median as
    exact JSON numbers."""
    return {
        "byStatus": {
            status: {
                "count": total.count,
                "commission": amount(total.commission),
                "sale": None if total.sale is None else amount(total.sale),
            }
            for status, total in found.by_status
        },
        "decided": found.decided,
        "approved": found.approved,
        "everApproved": found.ever_approved,
        "reversed": found.reversed,
        "approvalRate": _decimal(found.approval_rate),
        "reversalRate": _decimal(found.reversal_rate),
        "decisionsTimed": found.timed,
        "medianDaysToDecision": _decimal(found.median_days),
    }


def total_json(
    row: SummaryRow,
    number: Callable[[str], Any] = amount,
    terms: Callable[[str | None], dict[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """A CommissionTotal, members in resource order; exact sums by `number` (JSON numbers,
    or the text as it is for a CSV export); `outcomes` only when the row has them; with
    `terms` (include=terms), the advertised terms of the row's programme."""
    body = {
        "network": row.network,
        "status": row.status,
        "day": row.day,
        "month": row.month,
        "programExternalId": row.program_external_id,
        "programName": row.program_name,
        "subId": row.sub_id,
        "programSlug": row.program_slug,
        "currency": row.currency,
        "count": row.count,
        "commission": number(row.commission),
        "sale": None if row.sale is None else number(row.sale),
    }
    if row.outcomes is not None:
        body["outcomes"] = outcomes_json(row.outcomes)
    if terms is not None:
        body["terms"] = terms(row.program_slug)
    return body


def links_of(request: web.Request) -> ProgramLinks:
    """The programme links of the build being served (none before the first build): taken
    once per request, so a reload midway cannot mix two builds' links in one answer."""
    build = request.app[appkeys.DIRECTORY].current
    return NO_LINKS if build is None else build.links


def program_pairs(
    params: dict[str, Any], links: ProgramLinks
) -> tuple[tuple[str, str], ...] | None:
    """The (network, programme id) pairs a programSlug filter stands for; None without one."""
    slug = params.get("programSlug")
    return None if slug is None else links.pairs_of(slug)


def terms_of(request: web.Request, links: ProgramLinks) -> Callable[[str | None], Any]:
    """A row's `terms` (ProgramTerms) by its programme slug; None for no programme."""
    origin = link_origin(request.app[appkeys.CONFIG])

    def terms(slug: str | None) -> dict[str, Any] | None:
        if slug is None or (advertised := links.terms.get(slug)) is None:
            return None
        return {
            "name": advertised["name"],
            "url": f"{origin}{PROGRAM.path.replace('{slug}', slug)}",
            **{name: advertised[name] for name in advertised if name != "name"},
        }

    return terms


def check_program_filter(params: dict[str, Any]) -> None:
    """A programme id is the network's own: without network it names nothing for sure."""
    if "programExternalId" in params and "network" not in params:
        raise invalid(
            "programExternalId", "programExternalId needs network: ids are each network's own"
        )


def summary_query(
    account_uid: str, params: dict[str, Any], links: ProgramLinks = NO_LINKS
) -> SummaryQuery:
    """The store's query of validated summary parameters. A summary by day needs a bounded
    period (its rows come in one answer, without pages): invalid_parameter on groupBy.
    limit and cursor page only a ranked grouping: invalid_parameter otherwise; include=terms
    needs a grouping by programSlug. `links`: the served build's programme links."""
    group_by: tuple[str, ...] = params.get("groupBy", ())
    check_program_filter(params)
    if TERMS in params.get("include", ()) and "programSlug" not in group_by:
        raise invalid(
            "include",
            "include=terms adds each programme's advertised terms: it needs groupBy with "
            "programSlug",
        )
    ranked = any(name in RANKED_GROUPS for name in group_by)
    if not ranked:
        for name in ("limit", "cursor"):
            if name in params:
                raise invalid(
                    name,
                    f"{name} pages only a summary grouped by {' or '.join(RANKED_GROUPS)}; "
                    "the others come in one answer",
                )
    since: dt.date | None = params.get("from")
    until: dt.date | None = params.get("to")
    if "day" in group_by and (
        since is None or until is None or (until - since).days >= SUMMARY_DAY_PERIOD_MAX
    ):
        raise invalid(
            "groupBy",
            f"groupBy=day needs from and to, at most {SUMMARY_DAY_PERIOD_MAX} days apart",
        )
    return SummaryQuery(
        account_uid=account_uid,
        group_by=group_by,
        network=params.get("network"),
        status=params.get("status"),
        since=since,
        until=until,
        updated_since=updated_since(params.get("updatedSince")),
        # Without a status to filter or group by, the totals are what is earned or may still
        # be: declined commissions would otherwise be added in with them.
        excluded=()
        if params.get("status") is not None or "status" in group_by
        else (EXCLUDED_FROM_TOTALS,),
        program_external_id=params.get("programExternalId"),
        sub_id=params.get("subId"),
        program_pairs=program_pairs(params, links),
        program_links=links.slugs if "programSlug" in group_by else None,
        # One more than asked: hasMore is then exact, never an empty page.
        limit=params.get("limit", LIMIT_DEFAULT) + 1 if ranked else None,
    )


def account_json(
    account: AccountView, principal: Principal, rate_limit: tuple[int, int]
) -> dict[str, Any]:
    """An Account, members in spec order; never a credential, never the key itself."""
    return {
        "uid": account.uid,
        "email": account.email,
        "plan": account.plan,
        "capabilities": {
            name: {
                "enabled": state.enabled,
                "configured": state.configured,
                "enabledAt": state.enabled_at,
            }
            for name, state in account.capabilities.items()
        },
        "networks": [
            {
                "network": n.network,
                "status": n.status,
                "connectedAt": n.connected_at,
                "lastSyncAt": n.last_sync_at,
                "accounts": n.accounts,
                "programs": n.programs,
                "transactions": n.transactions,
                "lastAttemptAt": n.last_attempt_at,
                "lastSuccessAt": n.last_success_at,
                "reasonCode": n.reason_code,
                "completeThrough": n.complete_through,
                "nextAttemptAt": n.next_attempt_at,
                "collection": COLLECTION_IMPORT_ONLY if n.import_only else COLLECTION_SYNC,
                "lastImportAt": n.last_import_at,
                "importedFrom": n.imported_from,
                "importedThrough": n.imported_through,
            }
            for n in account.networks
        ],
        "key": {
            "prefix": principal.prefix,
            "label": principal.label,
            "scopes": list(principal.scopes),
        },
        "rateLimit": {"limit": rate_limit[0], "windowSeconds": rate_limit[1]},
    }


def updated_since(moment: dt.datetime | None) -> str | None:
    """The stored form of an `updatedSince` instant, to the second: changes are stamped to
    the second, so a row changed within that second is included, never missed."""
    return None if moment is None else format_timestamp(moment)


def cursor_position(ids: PublicIds, position: list[Any]) -> tuple[str, int]:
    """The (transactedAt, seq) a commissions cursor resumes after; invalid_cursor otherwise.

    The cursor carries the last row's public id, not its row id: a cursor is signed, not
    encrypted, and its position is readable by whoever holds it."""
    if (
        len(position) == 2
        and isinstance(position[0], str)
        and TIMESTAMP_RE.fullmatch(position[0])
        and isinstance(position[1], str)
        and (seq := commission_seq_of(ids, position[1])) is not None
        and 0 < seq <= store_commissions.MAX_SEQ
    ):
        return position[0], seq
    raise ApiError("invalid_cursor", "cursor is not one this API issued", param="cursor")


def link_next(request: web.Request, token: str) -> str:
    """The Link header of the next page: same path and parameters, cursor replaced, under
    `--public-url` or relative (`edge.links`: never the request's Host)."""
    return links.next_link(
        request.app[appkeys.CONFIG], str(request.rel_url.update_query({"cursor": token}))
    )


def keyset_page(
    request: web.Request,
    rows: Sequence[R],
    limit: int,
    *,
    endpoint: str,
    filters: Mapping[str, Any],
    account: str,
    position: Callable[[R], list[Any]],
    item: Callable[[R], dict[str, Any]],
    headers: Mapping[str, str],
) -> web.Response:
    """The answer of one keyset page: `rows` holds one more than `limit` when a next page
    exists (hasMore is then exact, never an empty page), whose cursor, bound to the
    endpoint, its filters and the account, resumes after the last row shown (`position`)."""
    has_more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = None
    answer_headers = dict(headers)
    if has_more:
        secret = request.app[appkeys.SECRET]
        next_cursor = cursor.encode(secret, endpoint, filters, position(rows[-1]), account)
        answer_headers["Link"] = link_next(request, next_cursor)
    body = orjson.dumps(
        {
            "data": [item(row) for row in rows],
            "page": {"limit": limit, "hasMore": has_more, "nextCursor": next_cursor},
        }
    )
    return json_response(request, body, answer_headers)


def json_response(request: web.Request, body: bytes, headers: dict[str, str]) -> web.Response:
    """The 200 answer: gzip-coded when the body is large enough and the client accepts it."""
    if len(body) >= GZIP_MIN_BYTES and accepts_gzip(request.headers.get("Accept-Encoding", "")):
        body = gzip_bytes(body)
        headers = {**headers, "Content-Encoding": "gzip"}
    return web.Response(body=body, content_type=JSON, headers=headers)


def commissions_unavailable(request: web.Request, exc: StoreUnavailable) -> ApiError:
    """The 503 of a commission endpoint whose store cannot be read (logged)."""
    log.warning("commissions unavailable: %s", exc)
    return unavailable(
        "commissions cannot be read right now; retry later",
        request.app[appkeys.CONFIG].retry_after,
    )


# --- Handlers ---------------------------------------------------------------------------


async def me(request: web.Request) -> web.Response:
    """The calling account. It takes no parameters; any query string is ignored, since
    400 is not among this endpoint's statuses (docs/accounts.md)."""
    principal: Principal = request[appkeys.PRINCIPAL]
    # Read on every request, never from the key cache: a plan, a capability or a network
    # changed by an operator or the sync worker shows at once. Only the key's verification
    # is cached.
    try:
        account = await request.app[appkeys.STORE].read(accounts.find, principal.account_uid)
    except StoreUnavailable:
        raise unverifiable(request) from None
    if account is None:
        raise ApiError("invalid_api_key", "the API key's account no longer exists")
    if account.suspended:
        raise ApiError(
            "forbidden",
            "this account is suspended: its keys answer 401 on every other endpoint until "
            "the suspension is lifted; contact support",
        )
    state = request.get(appkeys.RATE_STATE)
    rate = (
        (state.limit, state.window_seconds)
        if state is not None and account.plan == principal.plan
        else request.app[appkeys.CONFIG].rate_limit(account.plan)
    )
    body = orjson.dumps({"data": account_json(account, principal, rate)})
    return json_response(request, body, PRIVATE_HEADERS)


async def export_commissions(
    request: web.Request,
    query: CommissionQuery,
    export_format: str,
    dialect: Dialect,
    links: ProgramLinks,
) -> web.StreamResponse:
    """Every commission of `query`'s filters, newest first, streamed a keyset chunk at a
    time (edge.handlers.export)."""
    store = request.app[appkeys.STORE]
    number = amount_text if export_format == CSV_FORMAT else amount
    chunk = dataclasses.replace(query, limit=EXPORT_CHUNK, after=None)
    try:
        ids = store.ids
        rows = await store.read(store_commissions.page, chunk)
    except StoreUnavailable as exc:
        raise commissions_unavailable(request, exc) from None

    async def rest(rows: list[CommissionRow]) -> AsyncIterator[list[dict[str, Any]]]:
        while len(rows) == EXPORT_CHUNK:
            last = rows[-1]
            after = dataclasses.replace(chunk, after=(last.transacted_at, last.seq))
            rows = await store.read(store_commissions.page, after)
            yield [commission_json(ids, row, number, links) for row in rows]

    return await export.stream(
        request,
        endpoint=COMMISSIONS.name,
        export_format=export_format,
        dialect=dialect,
        resource=COMMISSION_RESOURCE,
        headers=EXPORT_HEADERS,
        first=[commission_json(ids, row, number, links) for row in rows],
        rest=rest(rows),
    )


async def commissions(request: web.Request) -> web.StreamResponse:
    """One keyset page of the caller's commissions, newest first; or all of them as an
    export (format=csv|ndjson, or Accept)."""
    principal: Principal = request[appkeys.PRINCIPAL]
    params = parse_query(COMMISSIONS, request.query.items())
    check_program_filter(params)
    links = links_of(request)
    export_format = export.chosen_format(params, request.headers.get("Accept", ""))
    if export_format != JSON_FORMAT:
        # `limit` has a default: only one the client gave is refused.
        export.refuse_paging(request.query.keys())
        query = CommissionQuery(
            account_uid=principal.account_uid,
            limit=EXPORT_CHUNK,
            network=params.get("network"),
            status=params.get("status"),
            since=params.get("from"),
            until=params.get("to"),
            updated_since=updated_since(params.get("updatedSince")),
            program_external_id=params.get("programExternalId"),
            sub_id=params.get("subId"),
            program_pairs=program_pairs(params, links),
        )
        dialect = DIALECTS[params.get("dialect", RFC4180.name)]
        return await export_commissions(request, query, export_format, dialect, links)
    filters = {name: params.get(name) for name in FILTERS}
    secret = request.app[appkeys.SECRET]
    store = request.app[appkeys.STORE]
    try:
        ids = store.ids
    except StoreUnavailable as exc:
        raise commissions_unavailable(request, exc) from None
    after = None
    if "cursor" in params:
        token = params["cursor"]
        after = cursor_position(
            ids, cursor.decode(secret, token, COMMISSIONS.name, filters, principal.account_uid)
        )
    limit: int = params["limit"]
    query = CommissionQuery(
        account_uid=principal.account_uid,  # the only account any query ever reads
        limit=limit + 1,  # one more than asked: hasMore is then exact, never an empty page
        network=params.get("network"),
        status=params.get("status"),
        since=params.get("from"),
        until=params.get("to"),
        updated_since=updated_since(params.get("updatedSince")),
        after=after,
        program_external_id=params.get("programExternalId"),
        sub_id=params.get("subId"),
        program_pairs=program_pairs(params, links),
    )
    try:
        rows = await store.read(store_commissions.page, query)
    except StoreUnavailable as exc:
        raise commissions_unavailable(request, exc) from None
    return keyset_page(
        request,
        rows,
        limit,
        endpoint=COMMISSIONS.name,
        filters=filters,
        account=principal.account_uid,
        position=lambda last: [last.transacted_at, ids.commission(last.seq)],
        item=lambda row: commission_json(ids, row, links=links),
        headers=EXPORT_HEADERS,
    )


async def commission_summary(request: web.Request) -> web.StreamResponse:
    """The caller's commission totals per group and currency: all in one answer, or, by
    program or subId, largest commission first in cursor pages; or every row as an export
    (format=csv|ndjson, or Accept)."""
    principal: Principal = request[appkeys.PRINCIPAL]
    params = parse_query(COMMISSION_SUMMARY, request.query.items())
    links = links_of(request)
    export_format = export.chosen_format(params, request.headers.get("Accept", ""))
    if export_format != JSON_FORMAT:
        export.refuse_paging(params)
        if "include" in params:
            raise invalid(
                "include",
                "include adds nested members an export's flat rows do not hold; export without it",
            )
        # Every row, in the order of the JSON answer (ranked ones too, unpaged).
        query = dataclasses.replace(summary_query(principal.account_uid, params, links), limit=None)
        try:
            rows = await request.app[appkeys.STORE].read(summary.totals, query)
        except StoreUnavailable as exc:
            raise commissions_unavailable(request, exc) from None
        number = amount_text if export_format == CSV_FORMAT else amount
        items = [total_json(row, number) for row in rows]

        async def rest() -> AsyncIterator[list[dict[str, Any]]]:
            for start in range(EXPORT_CHUNK, len(items), EXPORT_CHUNK):
                yield items[start : start + EXPORT_CHUNK]

        return await export.stream(
            request,
            endpoint=COMMISSION_SUMMARY.name,
            export_format=export_format,
            dialect=DIALECTS[params.get("dialect", RFC4180.name)],
            resource=COMMISSION_TOTAL,
            headers=EXPORT_HEADERS,
            first=items[:EXPORT_CHUNK],
            rest=rest(),
        )
    binding = {name: params.get(name) for name in FILTERS}
    binding["groupBy"] = ",".join(params.get("groupBy", ())) or None
    if "include" in params:
        # Its rows are not the same set (a group wholly declined comes too).
        binding["include"] = ",".join(sorted(params["include"]))
    secret = request.app[appkeys.SECRET]
    query = summary_query(principal.account_uid, params, links)  # the key's account only
    terms = terms_of(request, links) if TERMS in params.get("include", ()) else None
    if "cursor" in params:
        position = cursor.decode(secret, params["cursor"], COMMISSION_SUMMARY.name, binding)
        after = summary.rank_of(position, query.keys)
        if after is None:
            raise ApiError("invalid_cursor", "cursor is not one this API issued", param="cursor")
        query = dataclasses.replace(query, after=after)
    read = outcomes.summary_with_outcomes if included(params, OUTCOMES) else summary.totals
    try:
        rows = await request.app[appkeys.STORE].read(read, query)
    except StoreUnavailable as exc:
        raise commissions_unavailable(request, exc) from None
    headers = dict(EXPORT_HEADERS)
    if query.limit is None:
        body = orjson.dumps({"data": [total_json(row, terms=terms) for row in rows]})
        return json_response(request, body, headers)
    limit = query.limit - 1
    has_more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = None
    if has_more:
        next_cursor = cursor.encode(
            secret,
            COMMISSION_SUMMARY.name,
            binding,
            summary.position(rows[-1], query.keys),
        )
        headers["Link"] = link_next(request, next_cursor)
    body = orjson.dumps(
        {
            "data": [total_json(row, terms=terms) for row in rows],
            "page": {"limit": limit, "hasMore": has_more, "nextCursor": next_cursor},
        }
    )
    return json_response(request, body, headers)


async def owned_detail(
    request: web.Request,
    seq_of: Callable[[PublicIds, str], int | None],
    find: Callable[[Session, str, int], Coroutine[Any, Any, D | None]],
    unavailable_answer: Callable[[web.Request, StoreUnavailable], ApiError],
    missing: str,
) -> tuple[PublicIds, D]:
    """The store's ids and the caller's resource named by the path's `id` (`find` of its
    sequence number); 404 `missing` for an unknown id, a malformed one or another account's
    alike."""
    principal: Principal = request[appkeys.PRINCIPAL]
    store = request.app[appkeys.STORE]
    try:
        ids = store.ids
        seq = seq_of(ids, request.match_info["id"])
        # The key's account only: another account's id is None, as an unknown one.
        detail = None if seq is None else await store.read(find, principal.account_uid, seq)
    except StoreUnavailable as exc:
        raise unavailable_answer(request, exc) from None
    if detail is None:
        raise not_found(missing)
    return ids, detail


async def commission(request: web.Request) -> web.Response:
    """One of the caller's commissions with its history. Query parameters are ignored: it
    takes none, and 400 is not among its statuses (as /v1/me)."""
    ids, detail = await owned_detail(
        request,
        commission_seq_of,
        store_commissions.find,
        commissions_unavailable,
        NO_SUCH_COMMISSION,
    )
    body = orjson.dumps({"data": commission_detail_json(ids, detail, links_of(request))})
    return json_response(request, body, PRIVATE_HEADERS)


# --- Wiring -----------------------------------------------------------------------------


def setup(app: web.Application) -> None:
    """Register the account routes (the store is edge.lifecycle.store_context's)."""
    app.router.add_get(ME.path, me, expect_handler=ignore_expectation)
    app.router.add_get(COMMISSIONS.path, commissions, expect_handler=ignore_expectation)
    # Before /v1/commissions/{id}: routes match in the order they were added.
    app.router.add_get(
        COMMISSION_SUMMARY.path, commission_summary, expect_handler=ignore_expectation
    )
    app.router.add_get(COMMISSION.path, commission, expect_handler=ignore_expectation)
