"""Resource field lists of the API spec, with types and nullability, defined once.

The build renders programmes in `PROGRAM` order, the OpenAPI document is generated from
these tables and the tests check responses against them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contract import commission
from contract import vocabulary as v

# The most earlier states one commission's answer lists (the latest ones; store
# reads this many): a network that flips a record at every sync must not grow an answer
# without bound.
HISTORY_MAX = 100
# A commission's public id: `com_` and 16 lowercase hex digits, its row id under the
# store's keyed permutation (store.publicids): no order, no count.
COMMISSION_ID_PATTERN = r"^com_[0-9a-f]{16}$"
# An event's public id: `evt_` and 16 lowercase hex digits, as a commission's
# (store.publicids); the feed's order is its cursor's, not the ids'.
EVENT_ID_PATTERN = r"^evt_[0-9a-f]{16}$"
# A payment's public id: `pay_` and 16 lowercase hex digits, as a commission's.
PAYMENT_ID_PATTERN = r"^pay_[0-9a-f]{16}$"
# A synchronisation outcome's reason code (store.base.SYNC_REASON_CODE).
SYNC_REASON_CODE_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"


# The OpenAPI format of an amount: a JSON number written exactly, to be read as a decimal
# (the OpenAPI format registry's `decimal`), which generators that know it map to a decimal
# type instead of a binary float.
DECIMAL = "decimal"


@dataclass(frozen=True)
class Field:
    """One member of a resource as the spec lists it."""

    name: str
    type: str  # string | integer | number | boolean | array | object
    description: str
    nullable: bool = False
    enum: tuple[str, ...] | None = None
    items: str | None = None  # scalar item type, or a resource name, for arrays
    ref: str | None = None  # resource name, for objects
    format: str | None = None  # date-time | uri | decimal
    minimum: int | None = None
    maximum: int | None = None
    pattern: str | None = None  # ECMA-262 regular expression the string (or each item) matches
    max_length: int | None = None
    # Resource names, for an object that is one of them (which one, its description says).
    any_of: tuple[str, ...] | None = None
    # Left out of an answer when empty (null, false or []), not spelled out: the typed terms'
    # members that do not apply to a mode (docs/spec/api-decisions.md, "Programmes").
    omitted_when_empty: bool = False
    # Explains rather than lists: on /v1/programs/{slug}, on a list only when asked
    # (`include=scoreBreakdown`). Such members are the resource's last ones, so a list row is
    # the whole row cut before the first of them (contract.shardformat).
    detail: bool = False


@dataclass(frozen=True)
class Resource:
    name: str
    description: str
    fields: tuple[Field, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def always(self) -> tuple[str, ...]:
        """The members every answer has: not those omitted when empty, nor the details a
        list leaves out unless asked."""
        return tuple(f.name for f in self.fields if not (f.omitted_when_empty or f.detail))

    @property
    def listed(self) -> tuple[str, ...]:
        """The members a list row has unless asked for the details (`detail`)."""
        return tuple(f.name for f in self.fields if not f.detail)

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)


F = Field

# How each kind of commission field (contract.commission) reads in the API.
_COMMISSION_KINDS: Mapping[str, Mapping[str, Any]] = {
    "text": {"type": "string"},
    "status": {"type": "string", "enum": v.COMMISSION_STATUSES},
    "amount": {"type": "number", "format": DECIMAL},
    "currency": {"type": "string", "pattern": v.CURRENCY_PATTERN},
    "instant": {"type": "string", "format": "date-time"},
}


def commission_member(field: commission.CommissionField) -> Field:
    """A commission field as a member of the Commission resource (and of the OpenAPI
    document's schema)."""
    return Field(
        name=field.member,
        description=field.description,
        nullable=field.nullable,
        **_COMMISSION_KINDS[field.kind],
    )


PROGRAM = Resource(
    "Program",
    "A published affiliate programme.",
    (
        F(
            "slug",
            "string",
            "Stable identifier, used in the directory URL and in the by-slug path.",
            pattern=v.SLUG_PATTERN,
            max_length=v.SLUG_MAX_LENGTH,
        ),
        F("name", "string", "Programme name."),
        F("host", "string", "Advertiser domain, without scheme."),
        F("site", "string", "Advertiser website.", format="uri"),
        F("pitch", "string", "One-paragraph description written by the advertiser."),
        F("vertical", "string", "Industry.", enum=v.VERTICALS),
        F("model", "string", "Payout model.", enum=v.MODELS),
        F("commission", "string", "Commission as advertised, free text."),
        F("recurring", "boolean", "True when the commission repeats on renewals."),
        F("cookieDays", "integer", "Attribution window, in days.", minimum=0),
        F("payout", "string", "Payment cadence.", enum=v.PAYOUTS),
        F(
            "minPayout",
            "number",
            "Minimum balance before payment, in the advertiser currency.",
            minimum=0,
        ),
        F(
            "markets",
            "array",
            "ISO 3166-1 alpha-2 country codes.",
            items="string",
            pattern=v.COUNTRY_PATTERN,
        ),
        F("platform", "string", "Affiliate platform hosting the programme. Empty when in-house."),
        F("signupUrl", "string", "Where an affiliate applies.", format="uri"),
        F(
            "score",
            "integer",
            "Attractiveness score, 0 to 100.",
            minimum=v.SCORE_MIN,
            maximum=v.SCORE_MAX,
        ),
        F("image", "string", "Illustration URL. Empty when none is available."),
        F("createdAt", "string", "ISO 8601 timestamp of publication.", format="date-time"),
        F(
            "commissionTerms",
            "object",
            "The commission, typed; `commission` is its wording as the advertiser states it.",
            ref="CommissionTerms",
        ),
        F(
            "holdbackDays",
            "integer",
            "Days a commission is held before it can be paid out; null when the programme "
            "does not publish it.",
            nullable=True,
            minimum=0,
            maximum=v.HOLDBACK_DAYS_MAX,
        ),
        F(
            "currency",
            "string",
            "ISO 4217 code of the currency the programme pays in, that of `minPayout`; null "
            "when the programme does not state it.",
            nullable=True,
            pattern=v.CURRENCY_PATTERN,
        ),
        F(
            "evidence",
            "string",
            "The advertiser's public page that states these terms (never the homepage).",
            format="uri",
            detail=True,
        ),
        F(
            "lastVerifiedAt",
            "string",
            "ISO 8601 timestamp of the last check of the terms against `evidence`.",
            format="date-time",
            detail=True,
        ),
        F(
            "stale",
            "boolean",
            f"True when the terms were last verified more than {v.STALE_AFTER_DAYS} days before "
            "the build's reference day (the newest `lastVerifiedAt` of the directory).",
            detail=True,
        ),
        F(
            "scoreVersion",
            "integer",
            "Version of the scoring formula that computed `score` (docs/scoring.md).",
            minimum=1,
            detail=True,
        ),
        F(
            "scoreBreakdown",
            "array",
            "The score's components, in a fixed order; their points add up to `score` and "
            "their weights to 100.",
            items="ScoreComponent",
            detail=True,
        ),
    ),
)

COMMISSION_TERMS = Resource(
    "CommissionTerms",
    "A programme's commission, typed. Amounts are in the currency their unit names, never "
    "converted. A member that does not apply is absent (never null, false or empty).",
    (
        F("mode", "string", "How the commission is computed.", enum=v.COMMISSION_MODES),
        F(
            "value",
            "number",
            "percentage or flat: the rate, the lower bound when the page states a range; "
            "absent when the page states only a maximum, and for tiered and hybrid terms.",
            minimum=0,
            omitted_when_empty=True,
        ),
        F(
            "upTo",
            "number",
            "percentage or flat: the upper bound of a stated range or maximum; absent otherwise.",
            minimum=0,
            omitted_when_empty=True,
        ),
        F(
            "unit",
            "string",
            "`percent`, or the ISO 4217 currency of an amount; absent for hybrid terms, whose "
            "parts carry their own units.",
            pattern=v.RATE_UNIT_PATTERN,
            omitted_when_empty=True,
        ),
        F(
            "durationMonths",
            "integer",
            "Months a recurring commission is paid for; absent when lifetime or not stated.",
            minimum=1,
            maximum=v.DURATION_MONTHS_MAX,
            omitted_when_empty=True,
        ),
        F(
            "lifetime",
            "boolean",
            "true when a recurring commission is paid for life; absent otherwise.",
            omitted_when_empty=True,
        ),
        F(
            "tiers",
            "array",
            "tiered: the rates by volume, ascending; absent otherwise.",
            items="CommissionTier",
            omitted_when_empty=True,
        ),
        F(
            "parts",
            "array",
            "hybrid: the rates paid together (an amount and a share); absent otherwise.",
            items="CommissionPart",
            omitted_when_empty=True,
        ),
    ),
)

COMMISSION_TIER = Resource(
    "CommissionTier",
    "One rate of tiered terms, in the terms' unit.",
    (
        F(
            "from",
            "number",
            "The volume from which the rate applies, as the advertiser counts it.",
            minimum=0,
        ),
        F("value", "number", "The rate.", minimum=0),
    ),
)

COMMISSION_PART = Resource(
    "CommissionPart",
    "One rate of hybrid terms.",
    (
        F(
            "value",
            "number",
            "The rate, the lower bound of a range; absent when only a maximum is stated.",
            minimum=0,
            omitted_when_empty=True,
        ),
        F(
            "upTo",
            "number",
            "The upper bound of a range; absent otherwise.",
            minimum=0,
            omitted_when_empty=True,
        ),
        F(
            "unit",
            "string",
            "`percent`, or the ISO 4217 currency of an amount.",
            pattern=v.RATE_UNIT_PATTERN,
        ),
    ),
)

SCORE_COMPONENT = Resource(
    "ScoreComponent",
    "One component of a programme's score.",
    (
        F("component", "string", "What the component measures.", enum=v.SCORE_COMPONENTS),
        F("input", "string", "The value it read, in words (`unknown` when not stated)."),
        F("weight", "integer", "The most points it can give.", minimum=0, maximum=v.SCORE_MAX),
        F("points", "integer", "The points it gave.", minimum=0, maximum=v.SCORE_MAX),
    ),
)

CAPABILITY_STATE = Resource(
    "CapabilityState",
    "State of one capability of the account.",
    (
        F("enabled", "boolean", "Whether the capability is active."),
        F("configured", "boolean", "Whether the capability has been set up."),
        F(
            "enabledAt",
            "string",
            "ISO 8601 timestamp of the last enabling; null while never enabled.",
            nullable=True,
            format="date-time",
        ),
    ),
)

CAPABILITIES = Resource(
    "Capabilities",
    "Acquisition and monetisation are independent and both can be active.",
    tuple(
        F(c, "object", f"State of the {c} capability.", ref="CapabilityState")
        for c in v.CAPABILITIES
    ),
)

CONNECTED_NETWORK = Resource(
    "ConnectedNetwork",
    "An affiliate network connected to the account. Never credentials.",
    (
        F("network", "string", "Network identifier."),
        F("status", "string", "Outcome of the last synchronisation.", enum=v.NETWORK_SYNC_STATUSES),
        F("connectedAt", "string", "ISO 8601 timestamp.", nullable=True, format="date-time"),
        F("lastSyncAt", "string", "ISO 8601 timestamp.", nullable=True, format="date-time"),
        F("accounts", "integer", "How many accounts this connection exposes.", minimum=0),
        F("programs", "integer", "Count of programmes.", minimum=0),
        F("transactions", "integer", "Count of transactions.", minimum=0),
        # Coverage, beside the spec's members: stale tells from empty.
        F(
            "lastAttemptAt",
            "string",
            "ISO 8601 timestamp of the last synchronisation attempt, whatever its outcome; "
            "null before the first.",
            nullable=True,
            format="date-time",
        ),
        F(
            "lastSuccessAt",
            "string",
            "ISO 8601 timestamp of the last synchronisation whose outcome was ok; null "
            "while none was.",
            nullable=True,
            format="date-time",
        ),
        F(
            "reasonCode",
            "string",
            "Why the last outcome is not plainly ok (e.g. auth_rejected, "
            "network_unavailable, records_refused); null when it is, or before any.",
            nullable=True,
            pattern=SYNC_REASON_CODE_PATTERN,
        ),
        F(
            "completeThrough",
            "string",
            "ISO 8601 timestamp up to which the service holds every transaction the network "
            "reported (later changes to them included, as docs/sync.md states per network); "
            "null before the first synchronised window.",
            nullable=True,
            format="date-time",
        ),
        F(
            "nextAttemptAt",
            "string",
            "ISO 8601 timestamp of the next synchronisation attempt the service has planned: "
            "set when a network's documented limit cut the last one short (reasonCode "
            "rate_limited), the moment that limit opens again; null when the regular "
            "schedule decides.",
            nullable=True,
            format="date-time",
        ),
        F(
            "collection",
            "string",
            "How the network's commissions reach the service: sync (from the network's API, "
            "on a schedule) or import_only (file imports only; never synchronised, so its "
            "status stays never).",
            enum=v.NETWORK_COLLECTIONS,
        ),
        F(
            "lastImportAt",
            "string",
            "ISO 8601 timestamp of the latest file import of the network's commissions; "
            "null before any.",
            nullable=True,
            format="date-time",
        ),
        F(
            "importedFrom",
            "string",
            "For an import_only network: the earliest transactedAt among its stored "
            "commissions (the period its imports cover starts there); null for a synchronised "
            "network (see completeThrough) or while none is stored.",
            nullable=True,
            format="date-time",
        ),
        F(
            "importedThrough",
            "string",
            "For an import_only network: the latest transactedAt among its stored "
            "commissions; null for a synchronised network or while none is stored.",
            nullable=True,
            format="date-time",
        ),
    ),
)

KEY_INFO = Resource(
    "KeyInfo",
    "The key that authenticated the call. The key itself is never returned.",
    (
        F("prefix", "string", "Leading part of the key."),
        F("label", "string", "Label of the key."),
        F("scopes", "array", "Scopes of the key.", items="string", enum=v.KEY_SCOPES),
    ),
)

RATE_LIMIT = Resource(
    "RateLimit",
    "Rate limit applying to this key.",
    (
        F("limit", "integer", "Requests allowed per window, for this plan.", minimum=1),
        F("windowSeconds", "integer", "Window length in seconds.", minimum=1),
    ),
)

ACCOUNT = Resource(
    "Account",
    "The calling account.",
    (
        F("uid", "string", "Stable account identifier."),
        F("email", "string", "Account e-mail address.", nullable=True),
        F("plan", "string", "Plan of the account.", enum=v.PLANS),
        F("capabilities", "object", "Capabilities of the account.", ref="Capabilities"),
        F(
            "networks",
            "array",
            "Connected affiliate networks. Never credentials.",
            items="ConnectedNetwork",
        ),
        F("key", "object", "The key that authenticated the call.", ref="KeyInfo"),
        F("rateLimit", "object", "Rate limit applying to this key.", ref="RateLimit"),
    ),
)

PROGRAM_SLUG = F(
    "programSlug",
    "string",
    "The directory's programme this commission is linked to (/v1/programs/{slug}): the "
    "published programme that lists this network and programExternalId in its networks; "
    "null when none does. Resolved when read, so a change of the directory relinks past "
    "commissions too.",
    nullable=True,
    pattern=v.SLUG_PATTERN,
    max_length=v.SLUG_MAX_LENGTH,
)

COMMISSION_RECORD = Resource(
    "CommissionRecord",
    "A commission as an event records it: the Commission's members as they stood at the "
    "change, without programSlug (a link to the directory is resolved when commissions "
    "are read, not recorded).",
    (
        F("id", "string", "Stable identifier within the service."),
        F("network", "string", "Network identifier."),
        *(commission_member(f) for f in commission.FIELDS),
    ),
)

# programSlug follows the programme's members it is resolved from.
_SLUG_AT = [f.name for f in COMMISSION_RECORD.fields].index("programExternalId") + 1

COMMISSION = Resource(
    "Commission",
    "A commission collected from a connected network, in the network's currency.",
    (*COMMISSION_RECORD.fields[:_SLUG_AT], PROGRAM_SLUG, *COMMISSION_RECORD.fields[_SLUG_AT:]),
)

STATUS_CHANGE = Resource(
    "StatusChange",
    "An earlier state of a commission: what a later sync or import replaced, and when.",
    (
        F("status", "string", "Normalised status then.", enum=v.COMMISSION_STATUSES),
        F("rawStatus", "string", "The network's own word for it then.", nullable=True),
        F("commissionAmount", "number", "Amount owed to the publisher then.", format=DECIMAL),
        F(
            "saleAmount",
            "number",
            "Order value then, when the network reported it.",
            nullable=True,
            format=DECIMAL,
        ),
        F("currency", "string", "ISO 4217 currency code then.", pattern=v.CURRENCY_PATTERN),
        F(
            "recordedAt",
            "string",
            "When the service first held this state (the commission's first import, or the "
            "change before).",
            format="date-time",
        ),
        F(
            "replacedAt",
            "string",
            "When a later answer of the network (or an import) replaced it.",
            format="date-time",
        ),
    ),
)

COMMISSION_DETAIL = Resource(
    "CommissionDetail",
    "A commission, as in the list, and the states it went through before its present one.",
    (
        *COMMISSION.fields,
        F(
            "statusHistory",
            "array",
            f"Earlier states, oldest first: each stored change of the status (or of the "
            f"network's word for it), of the amounts or of the currency. Empty while "
            f"unchanged; the latest {HISTORY_MAX} at most.",
            items="StatusChange",
        ),
    ),
)

# What /v1/commissions/summary groups by besides the currency, which is always a key.
SUMMARY_GROUPS: tuple[str, ...] = (
    "network",
    "status",
    "day",
    "month",
    "program",
    "subId",
    "programSlug",
)
# Groupings whose rows come by currency, largest commission first, in cursor pages.
RANKED_GROUPS: tuple[str, ...] = ("program", "subId", "programSlug")
# What `include` adds to each row of /v1/commissions/summary (a comma-separated list):
# outcomes, its realised terms (store.outcomes); terms, the linked programme's
# advertised terms (grouped by programSlug only).
OUTCOMES = "outcomes"
TERMS = "terms"
SUMMARY_INCLUDES: tuple[str, ...] = (OUTCOMES, TERMS)
# Places of a rate of the outcomes (store.outcomes rounds to them).
RATE_PLACES = 4

STATUS_TOTAL = Resource(
    "StatusTotal",
    "The commissions of a group presently in one status, within the group's currency.",
    (
        F("count", "integer", "How many.", minimum=0),
        F(
            "commission",
            "number",
            "Sum of their commission amounts, exact (0 for none).",
            format=DECIMAL,
        ),
        F(
            "sale",
            "number",
            "Sum of their sale amounts that the networks reported, exact; null when none "
            "reports one.",
            nullable=True,
            format=DECIMAL,
        ),
    ),
)

STATUS_TOTALS = Resource(
    "StatusTotals",
    "A group's commissions by present status: every status, zero where none.",
    tuple(
        F(status, "object", f"The group's commissions presently {status}.", ref="StatusTotal")
        for status in v.COMMISSION_STATUSES
    ),
)

COMMISSION_OUTCOMES = Resource(
    "CommissionOutcomes",
    "What became of a group's commissions, from their status histories: every status of "
    "the group counts here, declined included, even where the row's totals leave declined "
    "out. Decided: presently approved, paid or declined.",
    (
        F("byStatus", "object", "Counts and exact sums per present status.", ref="StatusTotals"),
        F("decided", "integer", "Commissions presently approved, paid or declined.", minimum=0),
        F("approved", "integer", "Commissions presently approved or paid.", minimum=0),
        F(
            "everApproved",
            "integer",
            "Commissions approved or paid in any of their states, present or earlier.",
            minimum=0,
        ),
        F(
            "reversed",
            "integer",
            "Commissions presently declined after an earlier state approved or paid.",
            minimum=0,
        ),
        F(
            "approvalRate",
            "number",
            f"approved / decided, rounded half to even to {RATE_PLACES} places (approved "
            "and decided give it exactly); null when nothing is decided.",
            nullable=True,
            format=DECIMAL,
        ),
        F(
            "reversalRate",
            "number",
            f"reversed / everApproved, rounded half to even to {RATE_PLACES} places; null "
            "when none was ever approved.",
            nullable=True,
            format=DECIMAL,
        ),
        F(
            "decisionsTimed",
            "integer",
            "Commissions whose first decision (first approved, paid or declined state) was "
            "recorded as a change: a commission first stored already decided was decided "
            "at an instant the service never saw, and is not timed.",
            minimum=0,
        ),
        F(
            "medianDaysToDecision",
            "number",
            "Median, over the timed commissions, of the whole days (rounded down, none "
            "below 0) from transactedAt to the first decision's recording; the mean of the "
            "middle two for an even number (a whole or half number, exact); null when none "
            "is timed.",
            nullable=True,
            format=DECIMAL,
        ),
    ),
)

COMMISSION_TOTAL = Resource(
    "CommissionTotal",
    "The totals of one group of the account's commissions, within one currency: amounts are "
    "never converted nor added across currencies.",
    (
        F(
            "network",
            "string",
            "The group's network; null when not grouped by network.",
            nullable=True,
        ),
        F(
            "status",
            "string",
            "The group's normalised status; null when not grouped by status.",
            nullable=True,
            enum=v.COMMISSION_STATUSES,
        ),
        F(
            "day",
            "string",
            "The group's UTC day of transactedAt (YYYY-MM-DD); null when not grouped by day.",
            nullable=True,
            format="date",
        ),
        F(
            "month",
            "string",
            "The group's UTC month of transactedAt (YYYY-MM); null when not grouped by month.",
            nullable=True,
            pattern=r"^[0-9]{4}-[0-9]{2}$",
        ),
        F(
            "programExternalId",
            "string",
            "The group's programme id at its network (grouped by program, the network is "
            "the group's too); null when not grouped by program, or for the commissions "
            "that carry none.",
            nullable=True,
        ),
        F(
            "programName",
            "string",
            "Grouped by program: the name on the programme's newest commission (latest "
            "transactedAt, any status or period), null when it carries none; null when not "
            "grouped by program.",
            nullable=True,
        ),
        F(
            "subId",
            "string",
            "The group's sub-id (the publisher's tracking tag); null when not grouped by "
            "subId, or for the commissions that carry none.",
            nullable=True,
        ),
        F(
            "programSlug",
            "string",
            "The group's directory programme (the Commission's programSlug); null when not "
            "grouped by programSlug, or for the commissions linked to none.",
            nullable=True,
            pattern=v.SLUG_PATTERN,
            max_length=v.SLUG_MAX_LENGTH,
        ),
        F(
            "currency",
            "string",
            "ISO 4217 currency code of every amount of the group.",
            pattern=v.CURRENCY_PATTERN,
        ),
        F(
            "count",
            "integer",
            "Number of commissions in the group; 0 only on a row of `include=outcomes` "
            "whose commissions are all declined and left out of the totals.",
            minimum=0,
        ),
        F(
            "commission",
            "number",
            "Sum of the group's commission amounts, exact: written in the fewest digits "
            "that are exact (no trailing zero after the point), never rounded.",
            format=DECIMAL,
        ),
        F(
            "sale",
            "number",
            "Sum of the group's sale amounts that the networks reported, exact; null when no "
            "commission of the group reports one.",
            nullable=True,
            format=DECIMAL,
        ),
        F(
            "outcomes",
            "object",
            "The group's realised terms; only with `include=outcomes`.",
            ref="CommissionOutcomes",
            omitted_when_empty=True,
        ),
        F(
            "terms",
            "object",
            "Only with include=terms (grouped by programSlug): the programme's advertised "
            "terms, as the directory publishes them; null for the row of the commissions "
            "linked to no programme.",
            nullable=True,
            ref="ProgramTerms",
            detail=True,
        ),
    ),
)

PROGRAM_TERMS = Resource(
    "ProgramTerms",
    "A directory programme's advertised terms, beside what its commissions realised: the "
    "Programme's members of the same names.",
    (
        F("name", "string", "Programme name."),
        F(
            "url",
            "string",
            "The programme's address in the API (/v1/programs/{slug}): absolute under the "
            "service's public URL when one is configured, else the path.",
        ),
        *(
            PROGRAM.field(name)
            for name in ("commission", "commissionTerms", "cookieDays", "holdbackDays", "currency")
        ),
    ),
)

PAYMENT = Resource(
    "Payment",
    "A payment a connected network made to the account, as the network states it, in its currency.",
    (
        F(
            "id",
            "string",
            "Stable identifier within the service; its order means nothing.",
            pattern=PAYMENT_ID_PATTERN,
        ),
        F("network", "string", "Network identifier."),
        F("externalId", "string", "Identifier used by the network itself."),
        F("amount", "number", "Amount paid, as the network states it.", format=DECIMAL),
        F(
            "currency",
            "string",
            "ISO 4217 currency code of the amount. Never converted.",
            pattern=v.CURRENCY_PATTERN,
        ),
        F("paidAt", "string", "When the network processed the payment.", format="date-time"),
        F("method", "string", "How it was paid, in the network's words.", nullable=True),
    ),
)

PAYMENT_LINE = Resource(
    "PaymentLine",
    "One part of a payment: an advertiser's share or one commission, as the network gives "
    "them, or (unallocated) what the network's lines leave unaccounted for.",
    (
        F("kind", "string", "What the line stands for.", enum=v.PAYMENT_LINE_KINDS),
        F(
            "programExternalId",
            "string",
            "The advertiser's programme id at the network (kind advertiser).",
            nullable=True,
        ),
        F("programName", "string", "The advertiser's programme name.", nullable=True),
        F(
            "commissionExternalId",
            "string",
            "The commission's id at the network (kind commission).",
            nullable=True,
        ),
        F(
            "commissionId",
            "string",
            "The commission's id in this service, once its network reported it; null otherwise.",
            nullable=True,
            pattern=COMMISSION_ID_PATTERN,
        ),
        F("amount", "number", "The line's amount, exact.", format=DECIMAL),
        F(
            "currency",
            "string",
            "ISO 4217 currency code of the line's amount.",
            pattern=v.CURRENCY_PATTERN,
        ),
    ),
)

PAYMENT_DETAIL = Resource(
    "PaymentDetail",
    "A payment, as in the list, and its lines: per currency they sum exactly to the "
    "payment's amount (and to zero in any other currency), a difference being its own "
    "line of kind unallocated.",
    (
        *PAYMENT.fields,
        F("lines", "array", "The payment's lines, in the network's order.", items="PaymentLine"),
    ),
)

COMMISSION_PREVIOUS = Resource(
    "CommissionPrevious",
    "What a change of a commission replaced: its status, amounts and currency before.",
    (
        F("status", "string", "Normalised status before.", enum=v.COMMISSION_STATUSES),
        F("rawStatus", "string", "The network's own word for it before.", nullable=True),
        F("commissionAmount", "number", "Amount owed to the publisher before.", format=DECIMAL),
        F(
            "saleAmount",
            "number",
            "Order value before, when reported.",
            nullable=True,
            format=DECIMAL,
        ),
        F("currency", "string", "ISO 4217 currency code before.", pattern=v.CURRENCY_PATTERN),
    ),
)

COMMISSION_UPDATE = Resource(
    "CommissionUpdate",
    "The data of a commission.updated event: the commission as it now stands, and what the "
    "change replaced.",
    (
        *COMMISSION_RECORD.fields,
        F(
            "previous",
            "object",
            "The status, amounts and currency the change replaced.",
            ref="CommissionPrevious",
        ),
    ),
)

CONNECTION_CHANGE = Resource(
    "ConnectionChange",
    "The data of a connection.sync_failed or connection.recovered event: a connected "
    "network's synchronisation outcome changed between a failure and a success; of a "
    "connection.disconnected event: the connection as it stood when the account "
    "disconnected it (status and previousStatus alike).",
    (
        F("network", "string", "Network identifier."),
        F(
            "status",
            "string",
            "Outcome of the synchronisation that changed it.",
            enum=v.NETWORK_SYNC_STATUSES,
        ),
        F(
            "previousStatus",
            "string",
            "Outcome of the synchronisation before.",
            enum=v.NETWORK_SYNC_STATUSES,
        ),
        F(
            "reasonCode",
            "string",
            "Stable code of the outcome's reason (docs/sync.md), as /v1/me shows it.",
            nullable=True,
            pattern=SYNC_REASON_CODE_PATTERN,
        ),
        F(
            "lastSuccessAt",
            "string",
            "When a synchronisation last ended ok; null if none ever did.",
            nullable=True,
            format="date-time",
        ),
    ),
)

# The data resource of each event type, in EVENT_TYPES order.
EVENT_DATA: dict[str, str] = {
    "commission.created": "CommissionRecord",
    "commission.updated": "CommissionUpdate",
    "connection.sync_failed": "ConnectionChange",
    "connection.recovered": "ConnectionChange",
    "connection.disconnected": "ConnectionChange",
    "payment.created": "Payment",
}

EVENT = Resource(
    "Event",
    "A change the service recorded for the account, in the transaction of the change.",
    (
        F(
            "id",
            "string",
            "Stable identifier, the same in the feed and as `webhook-id`; its order means "
            "nothing (order by the feed's cursor, or `occurredAt`).",
            pattern=EVENT_ID_PATTERN,
        ),
        F("type", "string", "What happened; says what `data` holds.", enum=v.EVENT_TYPES),
        F("occurredAt", "string", "When the service recorded the change.", format="date-time"),
        F(
            "data",
            "object",
            "commission.created: the CommissionRecord (the Commission as /v1/commissions "
            "lists it, without programSlug); commission.updated: the CommissionUpdate (the "
            "CommissionRecord and `previous`); "
            "connection.sync_failed, connection.recovered and connection.disconnected: the "
            "ConnectionChange; payment.created: the Payment as /v1/payments lists it.",
            any_of=tuple(dict.fromkeys(EVENT_DATA.values())),
        ),
    ),
)

PAGE_INFO = Resource(
    "PageInfo",
    "Where a list page stands.",
    (
        F(
            "limit",
            "integer",
            "Number of items requested for this page.",
            minimum=v.LIMIT_MIN,
            maximum=v.LIMIT_MAX,
        ),
        F("hasMore", "boolean", "True when a further page exists."),
        F(
            "nextCursor",
            "string",
            "Opaque cursor for the next page; null on the last page. On /v1/events, the "
            "position after the page's last event, on the last page too (null only while "
            "the feed is empty): a client keeps it to read on later. Clients must not parse it.",
            nullable=True,
        ),
    ),
)

ERROR = Resource(
    "Error",
    "The one shape of every error body.",
    (
        F(
            "code",
            "string",
            "Stable machine-readable code; branch on this.",
            enum=tuple(v.ERROR_CODES),
        ),
        F("message", "string", "Human-readable explanation; may change."),
        F("status", "integer", "HTTP status, repeated."),
        F("param", "string", "The query parameter at fault, when there is one.", nullable=True),
        F("requestId", "string", "Equals the X-Request-Id response header."),
    ),
)

# GET /v1/programs/facets: how many programmes match each value of each facet.
FACET_NAMES: tuple[str, ...] = (
    "vertical",
    "model",
    "market",
    "recurring",
    "payout",
    "platform",
    "commissionMode",
)
FACET_VALUE = Resource(
    "FacetValue",
    "One value of a facet and how many matching programmes have it.",
    (
        F(
            "value",
            "string",
            "The value as the Programme field holds it (recurring: true or false; market: the "
            "upper-case code; platform: as written, empty for in-house programmes).",
        ),
        F("count", "integer", "Matching programmes with this value.", minimum=0),
    ),
)
FACET = Resource(
    "Facet",
    "The counts of one facet. Enumerated facets list every allowed value, zeros included, "
    "in the enumeration's order; market and platform list the values present, most "
    "frequent first, then by value.",
    (
        F("facet", "string", "The Programme field counted.", enum=FACET_NAMES),
        F("values", "array", "Each value and its count.", items="FacetValue"),
    ),
)
PROGRAM_FACETS = Resource(
    "ProgramFacets",
    "How many programmes match the filters, and per value of each facet.",
    (
        F("total", "integer", "Programmes matching every filter.", minimum=0),
        F("facets", "array", "One entry per facet, in a fixed order.", items="Facet"),
    ),
)

RESOURCES: tuple[Resource, ...] = (
    PROGRAM,
    COMMISSION_TERMS,
    COMMISSION_TIER,
    COMMISSION_PART,
    SCORE_COMPONENT,
    CAPABILITY_STATE,
    CAPABILITIES,
    CONNECTED_NETWORK,
    KEY_INFO,
    RATE_LIMIT,
    ACCOUNT,
    COMMISSION_RECORD,
    COMMISSION,
    STATUS_CHANGE,
    COMMISSION_DETAIL,
    COMMISSION_TOTAL,
    PROGRAM_TERMS,
    STATUS_TOTAL,
    STATUS_TOTALS,
    COMMISSION_OUTCOMES,
    COMMISSION_PREVIOUS,
    COMMISSION_UPDATE,
    CONNECTION_CHANGE,
    PAYMENT,
    PAYMENT_LINE,
    PAYMENT_DETAIL,
    EVENT,
    PAGE_INFO,
    ERROR,
    FACET_VALUE,
    FACET,
    PROGRAM_FACETS,
)
BY_NAME: dict[str, Resource] = {r.name: r for r in RESOURCES}


def _empty(field: Field) -> object:
    """What an omitted member stands for."""
    if field.type == "array":
        return []
    if field.type == "boolean":
        return False
    return None


def _is_empty(value: object) -> bool:
    # Not `value in (None, False, [])`: 0 == False, and a rate of 0 is a value.
    return value is None or value is False or (isinstance(value, list) and not value)


def compact(value: Mapping[str, Any], resource: Resource) -> dict[str, Any]:
    """`value` as answers carry it: the members `resource` omits when empty left out (and
    the same within its items that are resources)."""
    out: dict[str, Any] = {}
    for field in resource.fields:
        if field.name not in value:
            continue
        member = value[field.name]
        if field.omitted_when_empty and _is_empty(member):
            continue
        if field.items in BY_NAME and isinstance(member, list):
            member = [compact(item, BY_NAME[field.items]) for item in member]
        out[field.name] = member
    return out


def complete(value: Mapping[str, Any], resource: Resource) -> dict[str, Any]:
    """`value` with every member of `resource`, an omitted one as its empty value (null,
    false or []): what `compact` left out, put back."""
    out: dict[str, Any] = {}
    for field in resource.fields:
        member = (
            value.get(field.name, _empty(field)) if field.omitted_when_empty else value[field.name]
        )
        if field.items in BY_NAME and isinstance(member, list):
            member = [complete(item, BY_NAME[field.items]) for item in member]
        out[field.name] = member
    return out
