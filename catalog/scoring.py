"""Stage 4: the attractiveness score (0-100) of each programme, and the directory order.

One deterministic formula over the submission's terms, in integer points (docs/scoring.md
explains it to advertisers). The free-text `commission` is not parsed: its meaning is
carried by `model` and `recurring`. Order: score descending, then slug ascending
(`Program.sort_key`), a total order since slugs are unique.

The stage turns each published record into its `Listing` (`catalog.rendering.listing_of`:
the score, the row the API serves, the document's digest) and ranks them;
`catalog.incremental` remembers listings, so a rebuild scores only what changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import attrgetter
from typing import Any

from catalog.model import Listing
from contract import vocabulary as v

# Points per payout model: a model that pays on a sale or a subscription is worth more to a
# publisher than one that pays on a lead, and hybrid/recurring models pay over time.
MODEL_POINTS: dict[str, int] = {"recurring": 20, "hybrid": 16, "cps": 12, "cpa": 10, "cpl": 6}
RECURRING_POINTS = 10  # the commission repeats on renewals
# (at least this many days, points): longer attribution windows convert more clicks.
COOKIE_STEPS: tuple[tuple[int, int], ...] = (
    (90, 20),
    (60, 17),
    (30, 14),
    (14, 10),
    (7, 7),
    (1, 3),
)
PAYOUT_POINTS: dict[str, int] = {"weekly": 15, "biweekly": 12, "monthly": 9, "net30": 6, "net60": 3}
# (at most this balance, points): a low threshold means being paid sooner.
MIN_PAYOUT_STEPS: tuple[tuple[float, int], ...] = (
    (0, 15),
    (25, 12),
    (50, 9),
    (100, 6),
    (250, 3),
)
MARKET_POINTS_EACH = 2
MARKET_POINTS_MAX = 10  # reached at five markets
PLATFORM_POINTS = 5  # tracked by a third-party platform: independent tracking and payment
IMAGE_POINTS = 5  # a complete listing, with an illustration

MAX_POINTS = (
    max(MODEL_POINTS.values())
    + RECURRING_POINTS
    + COOKIE_STEPS[0][1]
    + max(PAYOUT_POINTS.values())
    + MIN_PAYOUT_STEPS[0][1]
    + MARKET_POINTS_MAX
    + PLATFORM_POINTS
    + IMAGE_POINTS
)
# tests/catalog check that MAX_POINTS == SCORE_MAX and that every model and payout has points.


def cookie_points(days: int) -> int:
    """Points for the attribution window."""
    for least, points in COOKIE_STEPS:
        if days >= least:
            return points
    return 0


def min_payout_points(amount: float) -> int:
    """Points for the minimum balance before payment."""
    for most, points in MIN_PAYOUT_STEPS:
        if amount <= most:
            return points
    return 0


def breakdown(record: Mapping[str, Any]) -> list[tuple[str, int, int]]:
    """The score's parts as (term, points, maximum), in docs/scoring.md's order.

    The points add up to `score(record)` and the maxima to SCORE_MAX; the site lists them
    on each programme's page (catalog/site_score.py).
    """
    return [
        ("Payout model", MODEL_POINTS[record["model"]], max(MODEL_POINTS.values())),
        ("Recurring commission", RECURRING_POINTS if record["recurring"] else 0, RECURRING_POINTS),
        ("Attribution window", cookie_points(record["cookieDays"]), COOKIE_STEPS[0][1]),
        ("Payment cadence", PAYOUT_POINTS[record["payout"]], max(PAYOUT_POINTS.values())),
        ("Minimum payout", min_payout_points(record["minPayout"]), MIN_PAYOUT_STEPS[0][1]),
        (
            "Markets",
            min(len(record["markets"]) * MARKET_POINTS_EACH, MARKET_POINTS_MAX),
            MARKET_POINTS_MAX,
        ),
        ("Affiliate platform", PLATFORM_POINTS if record["platform"] else 0, PLATFORM_POINTS),
        ("Illustration", IMAGE_POINTS if record["image"] else 0, IMAGE_POINTS),
    ]


def score(record: Mapping[str, Any]) -> int:
    """The score of a validated record, an integer from SCORE_MIN to SCORE_MAX.

    The sum of `breakdown(record)`'s points (tests/catalog check it), added up directly: a
    build scores 17,000 records.
    """
    points = (
        MODEL_POINTS[record["model"]]
        + (RECURRING_POINTS if record["recurring"] else 0)
        + cookie_points(record["cookieDays"])
        + PAYOUT_POINTS[record["payout"]]
        + min_payout_points(record["minPayout"])
        + min(len(record["markets"]) * MARKET_POINTS_EACH, MARKET_POINTS_MAX)
        + (PLATFORM_POINTS if record["platform"] else 0)
        + (IMAGE_POINTS if record["image"] else 0)
    )
    return max(v.SCORE_MIN, min(v.SCORE_MAX, points))


def rank(listings: Iterable[Listing]) -> list[Listing]:
    """The published programmes in directory order (`Program.sort_key`)."""
    ranked = list(listings)
    # Two stable sorts on plain attributes (no key tuples): slug ascending, then score
    # descending (reverse=True keeps equal scores in slug order).
    ranked.sort(key=attrgetter("slug"))
    ranked.sort(key=attrgetter("score"), reverse=True)
    return ranked
