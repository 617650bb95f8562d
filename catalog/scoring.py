"""Stage 4: the attractiveness score (0-100) of each programme, and the directory order.

One deterministic, versioned formula (`contract.vocabulary.SCORE_VERSION`) over the typed
terms of a submission, in integer points; docs/scoring.md explains it to advertisers. The
free-text `commission` is only the displayed wording: the score reads `commissionTerms`,
takes the lower bound of every range, gives nothing for what is not stated, and decays as
the terms' last verification ages. Order: score descending, then slug ascending
(`Program.sort_key`), a total order since slugs are unique.

Age is counted in whole days from `lastVerifiedAt` to the build's *reference day*, the
newest `lastVerifiedAt` of all published programmes (`reference_day`): a pure function of
the content, so the same content gives the same scores whenever and wherever it is built.

The stage turns each published record into its `Listing` (`catalog.rendering.listing_of`:
the score, the row the API serves, the document's digest) and ranks them;
`catalog.incremental` remembers listings, so a rebuild scores only what changed (and
rescores the rest from their rows when the reference day moved).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import Any, NamedTuple

from catalog.model import Listing
from contract import vocabulary as v

# (at least this much, points): the rate a publisher earns, the lower bound of a range.
# Amounts are compared as written, in their own currency, never converted.
PERCENT_STEPS: tuple[tuple[float, int], ...] = ((50, 25), (30, 21), (20, 17), (10, 12), (5, 7))
AMOUNT_STEPS: tuple[tuple[float, int], ...] = ((100, 25), (50, 21), (20, 17), (10, 12), (5, 7))
ANY_RATE_POINTS = 3  # a rate above zero, below the lowest step
RATE_POINTS_MAX = 25
# Points per payout model: a model that pays on a sale or a subscription is worth more to a
# publisher than one that pays on a lead, and hybrid/recurring models pay over time.
MODEL_POINTS: dict[str, int] = {"recurring": 10, "hybrid": 8, "cps": 6, "cpa": 5, "cpl": 3}
# How long a recurring commission is paid: lifetime, or (at least this many months, points).
LIFETIME_POINTS = 10
DURATION_STEPS: tuple[tuple[int, int], ...] = ((24, 8), (12, 6), (6, 4))
RECURRING_POINTS = 2  # recurring for less than six months, or for a duration not stated
# (at least this many days, points): longer attribution windows convert more clicks.
COOKIE_STEPS: tuple[tuple[int, int], ...] = ((90, 15), (60, 13), (30, 10), (14, 7), (7, 5), (1, 2))
PAYOUT_POINTS: dict[str, int] = {"weekly": 10, "biweekly": 8, "monthly": 6, "net30": 4, "net60": 2}
# (at most this balance, points): a low threshold means being paid sooner.
MIN_PAYOUT_STEPS: tuple[tuple[float, int], ...] = ((0, 8), (25, 6), (50, 5), (100, 3), (250, 2))
# (at most this many days held before payment, points); not published: nothing.
HOLDBACK_STEPS: tuple[tuple[int, int], ...] = ((0, 5), (14, 4), (30, 3), (60, 2), (90, 1))
MARKET_POINTS_EACH = 1
MARKET_POINTS_MAX = 5  # reached at five markets
PLATFORM_POINTS = 2  # tracked by a third-party platform: independent tracking and payment
# (at most this many days since the last verification, points): the score decays with age.
FRESHNESS_STEPS: tuple[tuple[int, int], ...] = ((90, 10), (180, 8), (365, 5), (730, 2))

# The most points of each component (API identifier), in docs/scoring.md's order.
WEIGHTS: dict[str, int] = {
    "commissionRate": RATE_POINTS_MAX,
    "payoutModel": max(MODEL_POINTS.values()),
    "recurringDuration": LIFETIME_POINTS,
    "attributionWindow": COOKIE_STEPS[0][1],
    "paymentCadence": max(PAYOUT_POINTS.values()),
    "minimumPayout": MIN_PAYOUT_STEPS[0][1],
    "holdback": HOLDBACK_STEPS[0][1],
    "markets": MARKET_POINTS_MAX,
    "platform": PLATFORM_POINTS,
    "freshness": FRESHNESS_STEPS[0][1],
}
# What the site calls each component.
LABELS: dict[str, str] = {
    "commissionRate": "Commission rate",
    "payoutModel": "Payout model",
    "recurringDuration": "Recurring commission",
    "attributionWindow": "Attribution window",
    "paymentCadence": "Payment cadence",
    "minimumPayout": "Minimum payout",
    "holdback": "Holdback before payment",
    "markets": "Markets",
    "platform": "Affiliate platform",
    "freshness": "Terms verified",
}
MAX_POINTS = sum(WEIGHTS.values())
# tests/catalog check that MAX_POINTS == SCORE_MAX, that WEIGHTS lists SCORE_COMPONENTS in
# order, and that every model and payout has points.


class Scored(NamedTuple):
    """What the formula makes of a record: the API's computed members."""

    score: int
    breakdown: list[dict[str, Any]]  # [{component, input, weight, points}], API order
    stale: bool


def reference_day(verified: Iterable[str]) -> str:
    """The reference day of a build: the newest of these `lastVerifiedAt` (UTC, as the
    validator writes them), as YYYY-MM-DD; "" when there are none."""
    return max(verified, default="")[:10]


def age_days(verified_at: str, reference: str) -> int:
    """Whole days from a verification to the reference day (0 when not before it)."""
    if not reference:
        return 0
    days = (date.fromisoformat(reference) - date.fromisoformat(verified_at[:10])).days
    return max(days, 0)


def _least(value: float, steps: Sequence[tuple[float, int]]) -> int:
    for least, points in steps:
        if value >= least:
            return points
    return 0


def _most(value: float, steps: Sequence[tuple[float, int]]) -> int:
    for most, points in steps:
        if value <= most:
            return points
    return 0


def rate_points(value: float | None, unit: str | None) -> int:
    """Points for one rate: a percentage, or an amount in its own currency; None: nothing."""
    if value is None or unit is None or value <= 0:
        return 0
    steps = PERCENT_STEPS if unit == v.PERCENT else AMOUNT_STEPS
    return _least(value, steps) or ANY_RATE_POINTS


def _number(value: float) -> str:
    return f"{value:g}"


def _rate_text(value: float | None, up_to: float | None, unit: str | None) -> str:
    if value is None:
        return "unknown" + (f" (up to {_number(up_to)} {unit})" if up_to is not None else "")
    ranged = f" (range up to {_number(up_to)})" if up_to is not None and up_to != value else ""
    return f"{_number(value)} {unit}{ranged}"


def commission_points(terms: Mapping[str, Any]) -> tuple[int, str]:
    """Points for the typed commission, and the input they read, in words.

    The lower bound everywhere: a range's `value`, the lowest tier, and for hybrid terms the
    best-paid part's lower bound (a hybrid pays all its parts, so it is worth at least that).
    """
    mode = terms["mode"]
    if mode == v.TIERED:
        values = [tier["value"] for tier in terms["tiers"]]
        lowest = min(values) if values else None
        text = _rate_text(lowest, None, terms["unit"]) + " (lowest tier)"
        return rate_points(lowest, terms["unit"]), text
    if mode == v.HYBRID:
        parts = terms["parts"]
        best = max((rate_points(p["value"], p["unit"]) for p in parts), default=0)
        texts = " + ".join(_rate_text(p["value"], p["upTo"], p["unit"]) for p in parts)
        return best, texts
    return rate_points(terms["value"], terms["unit"]), _rate_text(
        terms["value"], terms["upTo"], terms["unit"]
    )


def duration_points(recurring: bool, terms: Mapping[str, Any]) -> tuple[int, str]:
    """Points for how long a recurring commission is paid; unknown gets the least."""
    if not recurring:
        return 0, "not recurring"
    if terms["lifetime"]:
        return LIFETIME_POINTS, "lifetime"
    months = terms["durationMonths"]
    if months is None:
        return RECURRING_POINTS, "unknown"
    return _least(months, DURATION_STEPS) or RECURRING_POINTS, f"{months} months"


def cookie_points(days: int) -> int:
    """Points for the attribution window."""
    return _least(days, COOKIE_STEPS)


def min_payout_points(amount: float) -> int:
    """Points for the minimum balance before payment."""
    return _most(amount, MIN_PAYOUT_STEPS)


def holdback_points(days: int | None) -> int:
    """Points for the days a commission is held; not published: nothing."""
    return 0 if days is None else _most(days, HOLDBACK_STEPS)


def freshness_points(age: int) -> int:
    """Points for how recently the terms were verified: never more for an older check."""
    return _most(age, FRESHNESS_STEPS)


def scored(record: Mapping[str, Any], reference: str) -> Scored:
    """The score of a validated record against the build's reference day, its breakdown
    (whose points add up to the score and weights to SCORE_MAX) and its staleness."""
    terms = record["commissionTerms"]
    age = age_days(record["lastVerifiedAt"], reference)
    rate, rate_input = commission_points(terms)
    duration, duration_input = duration_points(record["recurring"], terms)
    holdback = record["holdbackDays"]
    markets = len(record["markets"])
    parts = (
        ("commissionRate", rate_input, rate),
        ("payoutModel", record["model"], MODEL_POINTS[record["model"]]),
        ("recurringDuration", duration_input, duration),
        ("attributionWindow", f"{record['cookieDays']} days", cookie_points(record["cookieDays"])),
        ("paymentCadence", record["payout"], PAYOUT_POINTS[record["payout"]]),
        (
            "minimumPayout",
            _number(record["minPayout"]),
            min_payout_points(record["minPayout"]),
        ),
        (
            "holdback",
            "unknown" if holdback is None else f"{holdback} days",
            holdback_points(holdback),
        ),
        ("markets", str(markets), min(markets * MARKET_POINTS_EACH, MARKET_POINTS_MAX)),
        (
            "platform",
            record["platform"] or "in-house",
            PLATFORM_POINTS if record["platform"] else 0,
        ),
        ("freshness", f"{age} days old", freshness_points(age)),
    )
    breakdown = [
        {"component": name, "input": text, "weight": WEIGHTS[name], "points": points}
        for name, text, points in parts
    ]
    total = sum(points for _, _, points in parts)
    return Scored(max(v.SCORE_MIN, min(v.SCORE_MAX, total)), breakdown, age > v.STALE_AFTER_DAYS)


def score(record: Mapping[str, Any], reference: str) -> int:
    """The score of a validated record, an integer from SCORE_MIN to SCORE_MAX."""
    return scored(record, reference).score


def breakdown(record: Mapping[str, Any]) -> list[tuple[str, int, int]]:
    """A programme's score parts as (label, points, maximum), read from its own
    `scoreBreakdown` (the API object): what the site lists on its page."""
    return [
        (LABELS.get(part["component"], part["component"]), part["points"], part["weight"])
        for part in record.get("scoreBreakdown") or ()
    ]


def rank(listings: Iterable[Listing]) -> list[Listing]:
    """The published programmes in directory order (`Program.sort_key`)."""
    return sorted(listings, key=lambda listing: (-listing.score, listing.slug))
