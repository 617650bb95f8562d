"""The API's vocabulary: every enum and limit, defined once.

The submission schema, the build's validator, the edge's query parser, the OpenAPI
document and the tests all read these values; nothing else spells them out.
"""

from __future__ import annotations

import re

from contract.countries import COUNTRIES

# --- Programme -----------------------------------------------------------------------

VERTICALS: tuple[str, ...] = (
    "saas",
    "ecommerce",
    "infoproduit",
    "finance",
    "sante",
    "voyage",
    "mode",
    "maison",
    "jeux",
    "services",
    "immobilier",
    "autre",
)
MODELS: tuple[str, ...] = ("cps", "cpa", "cpl", "recurring", "hybrid")
PAYOUTS: tuple[str, ...] = ("weekly", "biweekly", "monthly", "net30", "net60")

# Publication state of a submission; only PUBLISHED ever reaches dist/.
PUBLISHED = "published"
SUBMISSION_STATUSES: tuple[str, ...] = (PUBLISHED, "unpublished", "rejected")

SCORE_MIN = 0
SCORE_MAX = 100

SLUG_MAX_LENGTH = 64
SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
SLUG_RE = re.compile(SLUG_PATTERN)

# Bounds that keep submissions sane; the spec only says "integer" and "number".
COOKIE_DAYS_MAX = 3650
MIN_PAYOUT_MAX = 1_000_000
MARKETS_MAX = 250
NAME_MAX_LENGTH = 120
PITCH_MAX_LENGTH = 2000
COMMISSION_MAX_LENGTH = 200
URL_MAX_LENGTH = 2048

# --- Typed commission terms --------------------------------------------------------------

# How a commission is computed: a share of the sale (percentage), a fixed amount (flat),
# rates that change with the affiliate's volume (tiered), or an amount and a share together
# (hybrid).
PERCENTAGE, FLAT, TIERED, HYBRID = "percentage", "flat", "tiered", "hybrid"
COMMISSION_MODES: tuple[str, ...] = (PERCENTAGE, FLAT, TIERED, HYBRID)
# The unit of a rate: a percentage, or the ISO 4217 code of the currency of an amount.
PERCENT = "percent"
RATE_UNIT_PATTERN = r"^(?:percent|[A-Z]{3})$"
PERCENT_MAX = 100
AMOUNT_MAX = 1_000_000
TIERS_MIN, TIERS_MAX = 2, 10
PARTS_MIN, PARTS_MAX = 2, 4
DURATION_MONTHS_MAX = 600  # a recurring commission paid for a stated number of months
HOLDBACK_DAYS_MAX = 365  # days a commission is held before it can be paid out
# The members of a submission's `commissionTerms` (and of the API's), of a tier, of a part.
TERMS_MEMBERS: tuple[str, ...] = (
    "mode",
    "value",
    "upTo",
    "unit",
    "durationMonths",
    "lifetime",
    "tiers",
    "parts",
)
TIER_MEMBERS: tuple[str, ...] = ("from", "value")
PART_MEMBERS: tuple[str, ...] = ("value", "upTo", "unit")

# --- Score -----------------------------------------------------------------------------

# The version of the scoring formula (docs/scoring.md): raised whenever a change of the
# formula can change a score, so that clients comparing scores know they compare alike.
SCORE_VERSION = 2
# The score's components, in docs/scoring.md's order: API identifiers.
SCORE_COMPONENTS: tuple[str, ...] = (
    "commissionRate",
    "payoutModel",
    "recurringDuration",
    "attributionWindow",
    "paymentCadence",
    "minimumPayout",
    "holdback",
    "markets",
    "platform",
    "freshness",
)
# A programme whose terms were last verified this many days before the build's reference
# day (docs/scoring.md) is `stale`.
STALE_AFTER_DAYS = 365

# --- Account -------------------------------------------------------------------------

PLANS: tuple[str, ...] = ("free", "pro")
CAPABILITIES: tuple[str, ...] = ("acquisition", "monetisation")
KEY_SCOPES: tuple[str, ...] = ("read",)
NETWORK_SYNC_STATUSES: tuple[str, ...] = ("never", "ok", "partial", "auth_failed", "error")
# How a connected network's commissions reach the service: synchronised from its API, or by
# file import only (`network connect --import-only`: never synchronised, status `never`).
COLLECTION_SYNC = "sync"
COLLECTION_IMPORT_ONLY = "import_only"
NETWORK_COLLECTIONS: tuple[str, ...] = (COLLECTION_SYNC, COLLECTION_IMPORT_ONLY)
COMMISSION_STATUSES: tuple[str, ...] = ("pending", "approved", "declined", "paid", "unknown")
# The status a summary leaves out when it neither filters nor groups by status: what is
# earned, or may still be, without refused money mixed in.
EXCLUDED_FROM_TOTALS = "declined"
# What GET /v1/events reports (store.events writes them).
EVENT_TYPES: tuple[str, ...] = (
    "commission.created",
    "commission.updated",
    "connection.sync_failed",
    "connection.recovered",
    "connection.disconnected",
    "payment.created",
)
# What a payment's line stands for (contract.payment): an advertiser's share, one
# commission, or the part of the payment its network's lines do not account for.
PAYMENT_LINE_KINDS: tuple[str, ...] = ("advertiser", "commission", "unallocated")
# Days an event stays readable by default; edge, sync worker and admin CLI can be told
# another retention (docs/configuration.md).
EVENTS_RETENTION_DAYS = 30
EVENTS_RETENTION_DAYS_MAX = 3650  # ten years: a bound, not a recommendation

# Requests without an Authorization header, where an endpoint answers them (the directory):
# counted per client address under this plan's limit, never an account's plan.
ANONYMOUS_PLAN = "anonymous"
# Default rate limits per plan: (requests, window in seconds). Configurable in the edge.
DEFAULT_RATE_LIMITS: dict[str, tuple[int, int]] = {
    "free": (60, 60),
    "pro": (600, 60),
    ANONYMOUS_PLAN: (30, 60),
}

# --- Text ---------------------------------------------------------------------------------

# The subdivision flags Unicode recommends for general interchange (RGI, Unicode TS 51):
# England, Scotland, Wales. Their tags (the region's code in tag letters) are the one use of
# tag characters text may keep, between a black flag and a cancel tag. Any other code would
# do as well to spell out a hidden message a few letters at a time.
RGI_SUBDIVISION_FLAGS = ("gbeng", "gbsct", "gbwls")
# One such flag: the black flag, its tags, the cancel tag (a regex, for Python's re).
FLAG_PATTERN = (
    "\U0001f3f4(?:"
    + "|".join("".join(chr(0xE0000 + ord(c)) for c in code) for code in RGI_SUBDIVISION_FLAGS)
    + ")\U000e007f"
)

# --- Lists and pagination ------------------------------------------------------------

LIMIT_MIN = 1
LIMIT_MAX = 100
LIMIT_DEFAULT = 25

DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
# An RFC 3339 instant: date, `T`, time with optional fraction, and a UTC offset (`Z` or ±hh:mm).
INSTANT_PATTERN = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?"
    r"(?:[Zz]|[+-][0-9]{2}:[0-9]{2})$"
)
# The `market` filter: an officially assigned ISO 3166-1 alpha-2 code in any case, spelt
# out ("[Ff][Rr]") so that the OpenAPI document, the parser and its tests share one rule.
MARKET_PATTERN = (
    "^(?:" + "|".join(f"[{a}{a.lower()}][{b}{b.lower()}]" for a, b in map(tuple, COUNTRIES)) + ")$"
)
# What the API returns: country codes upper case (ISO 3166-1 alpha-2), ISO 4217 currencies.
COUNTRY_PATTERN = r"^[A-Z]{2}$"
CURRENCY_PATTERN = r"^[A-Z]{3}$"

# --- Errors ----------------------------------------------------------------------------

# code -> HTTP status. The decisions' table, in one place.
ERROR_CODES: dict[str, int] = {
    "invalid_parameter": 400,
    "unknown_parameter": 400,
    "invalid_cursor": 400,
    "invalid_date_range": 400,
    "missing_api_key": 401,
    "invalid_api_key": 401,
    "forbidden": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "rate_limited": 429,
    "internal_error": 500,
    "unavailable": 503,
}
