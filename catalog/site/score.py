"""How the site explains a programme's score.

The score is the build's (catalog/scoring.py, explained to advertisers in docs/scoring.md);
the site only shows it. The programme page lists the components `catalog.scoring.breakdown`
gives, `(label, points, maximum)` whose points add up to the score, with the input each
one read (the programme's `scoreBreakdown`); the page explains in words what the score
rewards. The site never re-derives the formula itself: two copies of it would drift apart.
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
    input: str = ""  # what the component read, in words


@dataclass(frozen=True, slots=True)
class ScoreView:
    summary: str
    rewards: tuple[str, ...]
    parts: tuple[ScorePart, ...] = ()


SUMMARY = (
    "The score, from 0 to 100, is computed by the build from the terms the advertiser "
    "published, with one documented, versioned formula: the same terms always get the same "
    "score, and nobody can set or buy it. It reads the typed commission (the lower bound of "
    "any range), gives nothing for terms that are not stated, and decays as the terms' last "
    "verification ages."
)
# What the formula rewards (docs/scoring.md has the points).
REWARDS = (
    "a higher commission rate, the lower bound of a range counting",
    "the payout model: recurring and hybrid models first, then pay per sale, per action, per lead",
    "a recurring commission paid for longer, lifetime best",
    "a longer cookie window, up to 90 days",
    "being paid often: weekly is best, net 60 least",
    "a low minimum payout",
    "a short holdback before payment, when the programme publishes one",
    "more markets, up to five",
    "tracking and payment by an independent affiliate platform",
    "terms verified recently against the advertiser's own page",
)

Breakdown = Callable[[dict[str, Any]], Iterable[tuple[str, float, float]]]


def score_view(program: Program | None, breakdown: Breakdown | None = None) -> ScoreView:
    """The explanation shown next to a programme's score (general, for None)."""
    if program is None or breakdown is None:
        return ScoreView(SUMMARY, REWARDS)
    record = program.to_api()
    inputs = [str(part.get("input", "")) for part in record.get("scoreBreakdown", ())]
    parts = tuple(
        ScorePart(str(label), points, maximum, inputs[i] if i < len(inputs) else "")
        for i, (label, points, maximum) in enumerate(breakdown(record))
    )
    # A breakdown that does not add up would contradict the score shown above it.
    if sum(part.points for part in parts) != program.score:
        return ScoreView(SUMMARY, REWARDS)
    return ScoreView(SUMMARY, REWARDS, parts)
