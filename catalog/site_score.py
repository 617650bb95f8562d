"""How the site explains a programme's score.

The score is the build's (catalog/scoring.py, explained to advertisers in docs/scoring.md);
the site only shows it. When the scoring module exposes `breakdown(record)` — an iterable
of `(label, points, maximum)`, whose points add up to the score — the programme page lists
the components. Otherwise the page explains, in words, what the score rewards. The site
never re-derives the formula itself: two copies of it would drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from catalog.model import Program


@dataclass(frozen=True, slots=True)
class ScorePart:
    """One component of a score: what it measures and how many points it gave."""

    label: str
    points: float
    maximum: float


@dataclass(frozen=True, slots=True)
class ScoreView:
    summary: str
    rewards: tuple[str, ...]
    parts: tuple[ScorePart, ...] = ()


SUMMARY = (
    "The score, from 0 to 100, is computed by the build from the terms the advertiser "
    "published, with one documented formula: the same terms always get the same score, and "
    "nobody can set or buy it. The free-text commission is not read by the formula; what "
    "it pays is captured by the payout model and whether it recurs."
)
# What the formula rewards (docs/scoring.md has the points).
REWARDS = (
    "the payout model: recurring and hybrid models first, then pay per sale, per action, per lead",
    "a commission that is paid again on renewals",
    "a longer cookie window, up to 90 days",
    "being paid often: weekly is best, net 60 least",
    "a low minimum payout",
    "more markets, up to five",
    "tracking and payment by an independent affiliate platform",
    "a complete listing, with an illustration",
)

Breakdown = Callable[[dict[str, Any]], Iterable[tuple[str, float, float]]]


def breakdown_function() -> Breakdown | None:
    """`catalog.scoring.breakdown`, if the scoring module has one."""
    try:
        from catalog import scoring
    except ImportError:
        return None
    found = getattr(scoring, "breakdown", None)
    return found if callable(found) else None


def score_view(program: Program | None, breakdown: Breakdown | None = None) -> ScoreView:
    """The explanation shown next to a programme's score (general, for None)."""
    if program is None or breakdown is None:
        return ScoreView(SUMMARY, REWARDS)
    parts = tuple(
        ScorePart(str(label), points, maximum)
        for label, points, maximum in breakdown(program.to_api())
    )
    # A breakdown that does not add up would contradict the score shown above it.
    if sum(part.points for part in parts) != program.score:
        return ScoreView(SUMMARY, REWARDS)
    return ScoreView(SUMMARY, REWARDS, parts)
