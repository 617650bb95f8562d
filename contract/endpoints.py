"""Endpoints of /v1: their query parameters (in validation order) and allowed statuses.

The edge validates queries with these definitions and the OpenAPI document is generated
from them, so the two cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from contract import exports, searchindex, textsearch
from contract import vocabulary as v
from contract.resources import OUTCOMES, RANKED_GROUPS, SUMMARY_GROUPS, SUMMARY_INCLUDES, TERMS

# The media type of every answer with a body: the data, the errors, the OpenAPI document.
JSON = "application/json"


@dataclass(frozen=True)
class Param:
    """One query parameter. `kind` picks the parser: enum, integer, boolean, market, date,
    instant, string, slug, search (a full-text query), cursor, groups (a comma-separated
    list of distinct `enum` values, in order) or include (the same, as a set)."""

    name: str
    kind: str
    description: str
    enum: tuple[str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    default: int | str | None = None
    example: str | int | bool | None = None  # shown in the OpenAPI document and docs


@dataclass(frozen=True)
class Endpoint:
    name: str  # stable identifier, also what cursors are bound to
    path: str  # aiohttp route path
    summary: str
    params: tuple[Param, ...]
    statuses: tuple[int, ...]  # error statuses the spec lists; 200 and 304 are implied
    resource: str  # resource name of `data` (a list for list endpoints)
    is_list: bool = False
    public: bool = False  # True: no key needed (only the OpenAPI document)
    # True: a request without an Authorization header is answered as the public, under the
    # anonymous plan's per-address limit; one with the header is authenticated as always.
    anonymous: bool = False
    # True: `data` is an array of the resource, the whole answer in one (no page).
    complete_list: bool = False
    # With complete_list: some answers (a ranked summary) are pages, with `page` beside.
    paged_sometimes: bool = False
    # True: also answers as a CSV or NDJSON export (contract.exports), every row at once.
    exports: bool = False


LIMIT = Param(
    "limit",
    "integer",
    f"Items per page, {v.LIMIT_MIN} to {v.LIMIT_MAX}.",
    minimum=v.LIMIT_MIN,
    maximum=v.LIMIT_MAX,
    default=v.LIMIT_DEFAULT,
    example=10,
)
CURSOR = Param("cursor", "cursor", "Opaque cursor taken from page.nextCursor of the previous call.")

# --- /v1/programs and its facets: the directory's filters -------------------------------

CATEGORICAL_FILTERS = (
    Param("vertical", "enum", "Restrict to one industry.", enum=v.VERTICALS, example="saas"),
    Param("model", "enum", "Restrict to one payout model.", enum=v.MODELS, example="recurring"),
    Param(
        "market",
        "market",
        "Restrict to a market: an officially assigned ISO 3166-1 alpha-2 code, case-insensitive.",
        example="FR",
    ),
    Param(
        "recurring",
        "boolean",
        "true keeps only recurring commissions, false only the others.",
        example=True,
    ),
    Param(
        "minScore",
        "integer",
        f"Minimum attractiveness score, {v.SCORE_MIN} to {v.SCORE_MAX}.",
        minimum=v.SCORE_MIN,
        maximum=v.SCORE_MAX,
        example=50,
    ),
)
# Full-text search and the typed filters (docs/directory-api.md, "Search and typed filters").
SEARCH_FILTERS = (
    Param(
        "q",
        "search",
        "Full-text search over name, pitch, host and commission: every word must match the "
        "start of a word there, accents and case ignored; words shorter than "
        f"{textsearch.MIN_TERM} characters are ignored, at most {textsearch.MAX_TERMS} words. "
        "Results keep the order of `sort`.",
        example="formation vidéo",
    ),
    Param(
        "cookieDaysMin",
        "integer",
        f"Only programmes whose cookieDays is at least this, 0 to {v.COOKIE_DAYS_MAX}.",
        minimum=0,
        maximum=v.COOKIE_DAYS_MAX,
        example=30,
    ),
    Param(
        "minPayoutMax",
        "integer",
        f"Only programmes whose minPayout is at most this, 0 to {v.MIN_PAYOUT_MAX}.",
        minimum=0,
        maximum=v.MIN_PAYOUT_MAX,
        example=50,
    ),
    Param("payout", "enum", "Restrict to one payment cadence.", enum=v.PAYOUTS, example="monthly"),
    Param(
        "platform",
        "string",
        "Restrict to one affiliate platform, by name, accents and case ignored.",
        example="Awin",
    ),
    Param(
        "commissionMode",
        "enum",
        "Restrict to one commissionTerms.mode.",
        enum=v.COMMISSION_MODES,
        example=v.PERCENTAGE,
    ),
    Param(
        "verifiedWithinDays",
        "integer",
        "Only programmes whose terms were verified at most this many days before the build's "
        f"reference day (the newest lastVerifiedAt of the directory), 0 to "
        f"{searchindex.VERIFIED_WITHIN_DAYS_MAX}.",
        minimum=0,
        maximum=searchindex.VERIFIED_WITHIN_DAYS_MAX,
        example=180,
    ),
)
SORT = Param(
    "sort",
    "enum",
    "Order of the results, ties broken by slug: score (highest first, the default), name "
    "(A to Z, accents and case ignored), cookieDays (longest first), createdAt (newest first).",
    enum=searchindex.SORTS,
    default=searchindex.SCORE,
    example=searchindex.NAME,
)
DIRECTORY_FILTERS = CATEGORICAL_FILTERS + SEARCH_FILTERS
# What a list row leaves out unless asked: the members that explain a programme rather than
# list it (contract.resources, `detail`). One value names them all, after the largest.
SCORE_BREAKDOWN = "scoreBreakdown"
INCLUDE = Param(
    "include",
    "enum",
    "scoreBreakdown: each row with the members that explain it, as /v1/programs/{slug} "
    "answers it (scoreBreakdown, scoreVersion, evidence, lastVerifiedAt). Without it, a "
    "row has the members that list it.",
    enum=(SCORE_BREAKDOWN,),
    example=SCORE_BREAKDOWN,
)

PROGRAMS = Endpoint(
    name="programs",
    path="/v1/programs",
    summary="List published programmes, highest score first unless `sort` says otherwise.",
    params=(*DIRECTORY_FILTERS, SORT, INCLUDE, LIMIT, CURSOR),
    statuses=(400, 401, 429, 503),
    resource="Program",
    is_list=True,
    anonymous=True,
)

PROGRAM_FACETS = Endpoint(
    name="programFacets",
    path="/v1/programs/facets",
    summary="How many published programmes match the filters, per value of each facet.",
    params=DIRECTORY_FILTERS,
    statuses=(400, 401, 429, 503),
    resource="ProgramFacets",
    anonymous=True,
)

PROGRAM = Endpoint(
    name="program",
    path="/v1/programs/{slug}",
    summary="One published programme by slug.",
    params=(),
    statuses=(401, 404, 429),
    resource="Program",
    anonymous=True,
)

ME = Endpoint(
    name="me",
    path="/v1/me",
    summary="The calling account.",
    params=(),
    statuses=(401, 403, 429),
    resource="Account",
)

FORMAT = Param(
    "format",
    "enum",
    "The answer's format: json (the default), or an export of every matching row, streamed: "
    "csv (RFC 4180, a header row) or ndjson (one JSON object a line). Overrides Accept "
    f"({exports.CSV}, {exports.NDJSON}).",
    enum=exports.FORMATS,
    example="csv",
)
DIALECT = Param(
    "dialect",
    "enum",
    "The CSV dialect (format=csv only): rfc4180 (the default: `,` between cells, `12.30`) or "
    "excel-eu (spreadsheets in comma-decimal locales: `;` between cells, `12,30`, a UTF-8 "
    "byte order mark first).",
    enum=tuple(exports.DIALECTS),
    example="excel-eu",
)

COMMISSIONS = Endpoint(
    name="commissions",
    path="/v1/commissions",
    summary="Commissions from the account's connected networks, most recent first.",
    params=(
        Param("network", "string", "Restrict to one network.", example="awin"),
        Param(
            "status",
            "enum",
            "Restrict to one normalised status.",
            enum=v.COMMISSION_STATUSES,
            example="approved",
        ),
        Param(
            "from",
            "date",
            "Inclusive lower bound on the transaction date (YYYY-MM-DD, UTC).",
            example="2025-01-01",
        ),
        Param(
            "to",
            "date",
            "Inclusive upper bound on the transaction date (YYYY-MM-DD, UTC).",
            example="2025-12-31",
        ),
        Param(
            "programExternalId",
            "string",
            "Restrict to one programme, by its id at the network (exact match); only "
            "together with network, since ids are the network's own.",
            example="1234",
        ),
        Param("subId", "string", "Restrict to one sub-id (exact match).", example="blog-home"),
        Param(
            "programSlug",
            "slug",
            "Restrict to the commissions linked to one directory programme (exact slug): "
            "those whose network and programExternalId the programme lists in its networks. "
            "A slug of no published programme, or of one that lists no network, matches "
            "nothing.",
            example="factureo",
        ),
        Param(
            "updatedSince",
            "instant",
            "Only rows whose stored state changed (added, or any field updated by a sync or an "
            "import) at or after this RFC 3339 instant; the order and cursors are unchanged. "
            "Poll with the time of your previous poll to read only what changed since.",
            example="2026-01-31T12:00:00Z",
        ),
        LIMIT,
        CURSOR,
        FORMAT,
        DIALECT,
    ),
    statuses=(400, 401, 429, 503),
    resource="Commission",
    is_list=True,
    exports=True,
)

# The longest period a summary by day covers: its rows stay bounded without pages.
SUMMARY_DAY_PERIOD_MAX = 366

# What a summary row carries when asked: its realised terms (store.outcomes), the linked
# programme's advertised terms.
SUMMARY_INCLUDE = Param(
    "include",
    "include",
    "What to add to each row: a comma-separated list of distinct values among "
    f"{', '.join(SUMMARY_INCLUDES)}, in any order. {OUTCOMES}: the group's realised "
    "terms from its commissions' status histories (counts and exact sums per "
    "status, approval and reversal rates, median days to a first decision), every "
    "status counted; a group whose commissions are all declined then comes too, with "
    f"count 0. {TERMS} (grouped by programSlug only): the programme's advertised terms "
    "as the directory publishes them. Not with an export (format csv or ndjson).",
    enum=SUMMARY_INCLUDES,
    example=OUTCOMES,
)

COMMISSION_SUMMARY = Endpoint(
    name="commission_summary",
    path="/v1/commissions/summary",
    summary="Totals of the account's commissions per group and currency, exact, never "
    "converted nor summed across currencies; declined commissions only when filtered or "
    "grouped by status. Grouped by program or subId: largest commission first within each "
    "currency, in cursor pages.",
    params=(
        *(p for p in COMMISSIONS.params if p.name not in ("limit", "cursor", "format", "dialect")),
        Param(
            "groupBy",
            "groups",
            "What to group by besides the currency (always a key): a comma-separated list of "
            f"distinct values among {', '.join(SUMMARY_GROUPS)}; its order is the rows' order, "
            f"except with {' or '.join(RANKED_GROUPS)}: then the rows come by currency, "
            "largest commission first, ties by the keys in this order, in pages (limit, "
            f"cursor). With day, from and to are required, at most {SUMMARY_DAY_PERIOD_MAX} "
            "days apart. program is the network and programExternalId; programSlug the "
            "directory programme they are linked to.",
            enum=SUMMARY_GROUPS,
        ),
        SUMMARY_INCLUDE,
        Param(
            "limit",
            "integer",
            f"Rows per page of a grouping by {' or '.join(RANKED_GROUPS)}, {v.LIMIT_MIN} to "
            f"{v.LIMIT_MAX} (default {v.LIMIT_DEFAULT}); refused with any other grouping, "
            "whose rows come in one answer.",
            minimum=v.LIMIT_MIN,
            maximum=v.LIMIT_MAX,
            example=25,
        ),
        Param(
            "cursor",
            "cursor",
            f"Opaque cursor taken from page.nextCursor of the previous call (a grouping by "
            f"{' or '.join(RANKED_GROUPS)}).",
        ),
        FORMAT,
        DIALECT,
    ),
    statuses=(400, 401, 429, 503),
    resource="CommissionTotal",
    complete_list=True,
    paged_sometimes=True,
    exports=True,
)

COMMISSION = Endpoint(
    name="commission",
    path="/v1/commissions/{id}",
    summary="One commission of the account, with the states it went through.",
    params=(),
    statuses=(401, 404, 429, 503),
    resource="CommissionDetail",
)

EVENTS = Endpoint(
    name="events",
    path="/v1/events",
    summary="Changes recorded for the account, oldest first, kept "
    f"{v.EVENTS_RETENTION_DAYS} days unless the service is configured otherwise.",
    params=(
        Param(
            "type",
            "groups",
            "Only events of these types: a comma-separated list of distinct values among "
            f"{', '.join(v.EVENT_TYPES)}.",
            enum=v.EVENT_TYPES,
            example="commission.updated",
        ),
        LIMIT,
        CURSOR,
    ),
    statuses=(400, 401, 429, 503),
    resource="Event",
    is_list=True,
)

PAYMENTS = Endpoint(
    name="payments",
    path="/v1/payments",
    summary="Payments the account's connected networks made to it, most recent first.",
    params=(
        Param("network", "string", "Restrict to one network.", example="awin"),
        Param(
            "from",
            "date",
            "Inclusive lower bound on the payment date (YYYY-MM-DD, UTC).",
            example="2025-01-01",
        ),
        Param(
            "to",
            "date",
            "Inclusive upper bound on the payment date (YYYY-MM-DD, UTC).",
            example="2025-12-31",
        ),
        LIMIT,
        CURSOR,
    ),
    statuses=(400, 401, 429, 503),
    resource="Payment",
    is_list=True,
)

PAYMENT = Endpoint(
    name="payment",
    path="/v1/payments/{id}",
    summary="One payment of the account, with its lines.",
    params=(),
    statuses=(401, 404, 429, 503),
    resource="PaymentDetail",
)

ENDPOINTS: tuple[Endpoint, ...] = (
    PROGRAMS,
    PROGRAM_FACETS,
    PROGRAM,
    ME,
    COMMISSIONS,
    COMMISSION_SUMMARY,
    COMMISSION,
    PAYMENTS,
    PAYMENT,
    EVENTS,
)
