"""The score formula: documented points, bounded, deterministic, integer, versioned."""

from __future__ import annotations

import dataclasses
import re
from datetime import date, timedelta
from typing import Any

import pytest
from buildkit import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog import scoring, sharding
from catalog.model import Program, program_from_row
from catalog.rendering import listing_of, rescored
from contract import vocabulary as v
from contract.shardformat import combo_key, combos_of

REFERENCE = "2026-11-20"  # the reference day the tests score against


def terms(**changes: Any) -> dict[str, Any]:
    """Complete terms, as validation returns them: 10% per sale unless changed."""
    base: dict[str, Any] = {
        "mode": "percentage",
        "value": 10,
        "upTo": None,
        "unit": "percent",
        "durationMonths": None,
        "lifetime": False,
        "tiers": [],
        "parts": [],
    }
    base.update(changes)
    return base


def verified(days_before: int) -> str:
    day = date.fromisoformat(REFERENCE) - timedelta(days=days_before)
    return f"{day.isoformat()}T09:00:00Z"


def record(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "slug": "acme",
        "name": "Acme",
        "host": "acme.fr",
        "site": "https://acme.fr/",
        "pitch": "Pitch.",
        "vertical": "saas",
        "model": "cps",
        "commission": "10%",
        "recurring": False,
        "cookieDays": 30,
        "payout": "monthly",
        "minPayout": 50,
        "markets": ("FR",),
        "platform": "",
        "signupUrl": "https://acme.fr/join",
        "image": "",
        "createdAt": "2024-03-01T09:00:00Z",
        "commissionTerms": terms(),
        "holdbackDays": None,
        "currency": None,
        "evidence": "https://acme.fr/join/terms",
        "lastVerifiedAt": verified(0),
    }
    base.update(changes)
    return base


def score(rec: dict[str, Any], reference: str = REFERENCE) -> int:
    return scoring.score(rec, reference)


def program(rec: dict[str, Any], reference: str = REFERENCE) -> Program:
    """The programme a record becomes: every member the API shows, the computed ones too."""
    return program_from_row(listing_of(rec, reference).row)


rates = st.one_of(
    st.builds(
        terms,
        mode=st.just("percentage"),
        value=st.one_of(st.none(), st.integers(0, 100), st.floats(0, 100)),
        upTo=st.none(),
        unit=st.just("percent"),
    ),
    st.builds(
        terms,
        mode=st.just("flat"),
        value=st.one_of(st.integers(0, 500), st.floats(0, 500)),
        unit=st.sampled_from(("EUR", "USD")),
    ),
    st.builds(
        terms,
        mode=st.just("tiered"),
        value=st.none(),
        tiers=st.lists(st.integers(0, 100), min_size=2, max_size=4).map(
            lambda vs: [{"from": i * 10, "value": x} for i, x in enumerate(vs)]
        ),
    ),
    st.builds(
        terms,
        mode=st.just("hybrid"),
        value=st.none(),
        unit=st.none(),
        parts=st.tuples(st.integers(0, 300), st.integers(0, 100)).map(
            lambda p: [
                {"value": p[0], "upTo": None, "unit": "EUR"},
                {"value": p[1], "upTo": None, "unit": "percent"},
            ]
        ),
    ),
)

records = st.builds(
    record,
    model=st.sampled_from(v.MODELS),
    recurring=st.booleans(),
    cookieDays=st.integers(0, v.COOKIE_DAYS_MAX),
    payout=st.sampled_from(v.PAYOUTS),
    minPayout=st.one_of(st.integers(0, v.MIN_PAYOUT_MAX), st.floats(0, v.MIN_PAYOUT_MAX)),
    markets=st.lists(st.sampled_from(("FR", "BE", "CH", "DE", "ES", "IT", "GB")), unique=True,
                     min_size=1).map(tuple),
    platform=st.sampled_from(("", "Awin")),
    image=st.sampled_from(("", "https://acme.fr/i.png")),
    commissionTerms=rates,
    holdbackDays=st.one_of(st.none(), st.integers(0, v.HOLDBACK_DAYS_MAX)),
    currency=st.sampled_from((None, "EUR", "USD")),
    lastVerifiedAt=st.integers(0, 2000).map(verified),
)  # fmt: skip


def test_points_add_up_to_the_maximum_score() -> None:
    assert scoring.MAX_POINTS == v.SCORE_MAX
    assert tuple(scoring.WEIGHTS) == v.SCORE_COMPONENTS
    assert set(scoring.LABELS) == set(v.SCORE_COMPONENTS)
    assert set(scoring.MODEL_POINTS) == set(v.MODELS)
    assert set(scoring.PAYOUT_POINTS) == set(v.PAYOUTS)


def test_best_and_worst_terms() -> None:
    best = record(model="recurring", recurring=True, cookieDays=90, payout="weekly",
                  minPayout=0, markets=("FR", "BE", "CH", "LU", "CA"), platform="Awin",
                  commissionTerms=terms(value=50, lifetime=True), holdbackDays=0)  # fmt: skip
    worst = record(model="cpl", cookieDays=0, payout="net60", minPayout=1000,
                   commissionTerms=terms(value=None, upTo=20), lastVerifiedAt=verified(3000))  # fmt: skip
    assert score(best) == v.SCORE_MAX
    assert score(worst) == 3 + 0 + 0 + 0 + 2 + 0 + 0 + 1 + 0 + 0  # cpl, net60, one market


def test_worked_example_of_docs_scoring_md() -> None:
    # 8% 7 + cps 6 + not recurring 0 + 30 days 10 + monthly 6 + 50 minimum 5
    # + 30 days holdback 3 + 2 markets 2 + platform 2 + verified 40 days before 10 = 51
    example = record(
        commissionTerms=terms(value=8), markets=("FR", "BE"), platform="Awin",
        holdbackDays=30, lastVerifiedAt=verified(40),
    )  # fmt: skip
    assert score(example) == 51
    points = [part["points"] for part in scoring.scored(example, REFERENCE).breakdown]
    assert points == [7, 6, 0, 10, 6, 5, 3, 2, 2, 10]
    # The page states the same sum, part by part, in the components' order.
    doc = (ROOT / "docs" / "scoring.md").read_text(encoding="utf-8")
    worked = doc.split("## Worked example", 1)[1].split("\n\n")[2]
    stated = [int(n) for n in re.findall(r"(?:^|[+=] )(\d+)(?= \(|$)", worked.strip(), re.M)]
    assert stated == [*points, 51]


@pytest.mark.parametrize(
    ("ranged", "plain"),
    [
        (terms(value=7, upTo=10), terms(value=7)),  # "7% per sale, 10% on first orders"
        (terms(value=3, upTo=50), terms(value=3)),
        (terms(mode="flat", value=40, upTo=120, unit="EUR"), terms(mode="flat", value=40, unit="EUR")),
        (
            terms(mode="tiered", value=None, tiers=[{"from": 0, "value": 8}, {"from": 50, "value": 30}]),
            terms(value=8),
        ),
        (
            terms(mode="tiered", value=None, tiers=[{"from": 0, "value": 30}, {"from": 50, "value": 8}]),
            terms(value=8),
        ),
    ],
    ids=["range", "wide-range", "flat-range", "tiers-up", "tiers-down"],
)  # fmt: skip
def test_a_range_counts_for_its_lower_bound(ranged: dict[str, Any], plain: dict[str, Any]) -> None:
    assert score(record(commissionTerms=ranged)) == score(record(commissionTerms=plain))


@pytest.mark.parametrize(
    ("unknown", "stated"),
    [
        ({"commissionTerms": terms(value=None, upTo=120)}, {"commissionTerms": terms(value=1)}),
        ({"holdbackDays": None}, {"holdbackDays": v.HOLDBACK_DAYS_MAX}),
        (
            {"recurring": True, "commissionTerms": terms()},
            {"recurring": True, "commissionTerms": terms(durationMonths=1)},
        ),
    ],
    ids=["rate-up-to-only", "holdback", "recurring-duration"],
)
def test_unknowns_get_no_bonus(unknown: dict[str, Any], stated: dict[str, Any]) -> None:
    """What a programme does not state scores no more than the worst it could state."""
    assert score(record(**unknown)) <= score(record(**stated))
    component = {"commissionTerms": "commissionRate", "holdbackDays": "holdback"}
    name = next((component[k] for k in unknown if k in component), None)
    if name and "recurring" not in unknown:
        (part,) = [p for p in scoring.scored(record(**unknown), REFERENCE).breakdown
                   if p["component"] == name]  # fmt: skip
        assert part["points"] == 0 and part["input"].startswith("unknown")


@given(records, st.integers(0, 3000), st.integers(0, 3000))
def test_staleness_decay_is_monotonic(rec: dict[str, Any], a: int, b: int) -> None:
    younger, older = sorted((a, b))
    fresh = scoring.scored(dict(rec, lastVerifiedAt=verified(younger)), REFERENCE)
    stale = scoring.scored(dict(rec, lastVerifiedAt=verified(older)), REFERENCE)
    assert stale.score <= fresh.score
    assert fresh.stale is (younger > v.STALE_AFTER_DAYS)
    assert stale.stale is (older > v.STALE_AFTER_DAYS)


def test_age_is_counted_in_days_to_the_reference_day() -> None:
    assert scoring.reference_day([]) == ""
    assert scoring.reference_day(["2025-01-01T23:00:00Z", "2026-02-03T00:00:00Z"]) == "2026-02-03"
    assert scoring.age_days("2026-02-01T23:59:59Z", "2026-02-03") == 2
    assert scoring.age_days("2026-02-05T00:00:00Z", "2026-02-03") == 0  # never negative
    assert scoring.age_days("2026-02-01T00:00:00Z", "") == 0


@given(records)
def test_score_is_an_integer_in_range(rec: dict[str, Any]) -> None:
    result = score(rec)
    assert isinstance(result, int) and v.SCORE_MIN <= result <= v.SCORE_MAX


def _better_terms(t: dict[str, Any], factor: float) -> dict[str, Any]:
    grow = lambda x: None if x is None else x * factor  # noqa: E731
    better = dict(t, value=grow(t["value"]))
    if better["unit"] == "percent" and better["value"] is not None:
        better["value"] = min(better["value"], 100)
    better["tiers"] = [dict(tier, value=min(tier["value"] * factor, 100)) for tier in t["tiers"]]
    better["parts"] = [dict(p, value=grow(p["value"])) for p in t["parts"]]
    return better


@given(records, st.integers(0, v.COOKIE_DAYS_MAX), st.floats(1, 10), st.integers(0, 2000))
def test_better_terms_never_lower_the_score(
    rec: dict[str, Any], more_days: int, factor: float, fresher: int
) -> None:
    base = score(rec)
    assert score(dict(rec, cookieDays=max(rec["cookieDays"], more_days))) >= base
    assert score(dict(rec, minPayout=rec["minPayout"] / 2)) >= base
    assert score(dict(rec, commissionTerms=_better_terms(rec["commissionTerms"], factor))) >= base
    if rec["holdbackDays"] is not None:
        assert score(dict(rec, holdbackDays=rec["holdbackDays"] // 2)) >= base
    age = scoring.age_days(rec["lastVerifiedAt"], REFERENCE)
    assert score(dict(rec, lastVerifiedAt=verified(min(age, fresher)))) >= base
    if rec["recurring"]:
        assert score(dict(rec, commissionTerms=dict(rec["commissionTerms"], lifetime=True,
                                                    durationMonths=None))) >= base  # fmt: skip


def test_the_score_version_is_on_every_programme() -> None:
    assert program(record()).scoreVersion == v.SCORE_VERSION
    assert [p["component"] for p in program(record()).scoreBreakdown] == list(v.SCORE_COMPONENTS)


def test_a_listing_of_another_reference_day_is_rescored_from_its_row() -> None:
    rec = record(lastVerifiedAt=verified(100))
    old = listing_of(rec, "2026-01-01")
    moved = rescored(old, REFERENCE)
    assert moved == listing_of(rec, REFERENCE)
    assert moved.reference == REFERENCE and moved.score < old.score
    assert rescored(moved, REFERENCE) is moved


@settings(max_examples=30)
@given(st.lists(records, max_size=12))
def test_rank_is_score_descending_then_slug(recs: list[dict[str, Any]]) -> None:
    recs = [dict(r, slug=f"p-{i}") for i, r in enumerate(recs)]
    programs = scoring.rank(listing_of(r, REFERENCE) for r in recs)
    keys = [(-p.score, p.slug) for p in programs]
    assert keys == sorted(keys)
    assert sorted(keys) == sorted((-score(r), r["slug"]) for r in recs)


@settings(max_examples=30)
@given(st.lists(records, max_size=12))
def test_shards_agree_with_shardformat_combos(recs: list[dict[str, Any]]) -> None:
    programs = scoring.rank(
        listing_of(dict(r, slug=f"p-{i}"), REFERENCE) for i, r in enumerate(recs)
    )
    shards = sharding.shard(programs)
    expected: dict[str, list[int]] = {}
    for rank, p in enumerate(programs):
        for combo in combos_of(p.vertical, p.model, p.markets, p.recurring):
            expected.setdefault(combo_key(combo), []).append(rank)
    assert shards == expected
    assert list(shards) == sorted(shards)
    for p in programs:
        assert sum(p.slug == programs[r].slug for ranks in shards.values() for r in ranks) == 8 * (
            len(p.markets) + 1
        )


@given(records, st.text(max_size=20))
def test_native_rows_are_the_encoded_api_objects(rec: dict[str, Any], name: str) -> None:
    from catalog import rendering
    from contract import shardformat

    made = dataclasses.replace(program(rec), name=name)
    assert rendering._NATIVE_ROWS
    assert rendering.row(made) == shardformat.encode_row(made.to_api())


@given(records)
def test_breakdown_adds_up_to_the_score(rec: dict[str, Any]) -> None:
    made = program(rec)
    parts = scoring.breakdown(made.to_api())  # what the site passes
    assert sum(points for _, points, _ in parts) == made.score == score(rec)
    assert sum(maximum for _, _, maximum in parts) == v.SCORE_MAX
    assert all(0 <= points <= maximum for _, points, maximum in parts)
    assert [label for label, _, _ in parts] == [scoring.LABELS[c] for c in v.SCORE_COMPONENTS]


@given(records)
def test_a_listing_holds_its_programme(rec: dict[str, Any]) -> None:
    """The cache keeps listings, not records: the row gives the programme back whole, and
    the other members agree with it."""
    from catalog.cache import output_digest
    from contract import shardformat
    from contract.resources import COMMISSION_TERMS, compact

    listing = listing_of(rec, REFERENCE)
    made = program_from_row(listing.row)
    assert type(made.markets) is tuple
    assert made.to_api() == {
        **{k: (list(x) if isinstance(x, tuple) else x) for k, x in rec.items()},
        # The row's terms leave out the members that do not apply (contract.resources).
        "commissionTerms": compact(rec["commissionTerms"], COMMISSION_TERMS),
        "score": score(rec),
        "stale": made.stale,
        "scoreVersion": v.SCORE_VERSION,
        "scoreBreakdown": scoring.scored(rec, REFERENCE).breakdown,
    }
    assert listing.row == shardformat.encode_row(made.to_api())
    assert listing[:6] == (
        made.slug, made.score, made.vertical, made.model, made.recurring, made.markets,
    )  # fmt: skip
    assert (listing.verified, listing.reference) == (rec["lastVerifiedAt"], REFERENCE)
    assert listing.digest == output_digest(shardformat.encode_document(listing.row))


@given(records)
def test_program_of_is_the_dataclass_constructor(rec: dict[str, Any]) -> None:
    from catalog.model import program_of

    full = program(rec).to_api()
    full["markets"] = tuple(full["markets"])
    made = program_of(full, 42)
    constructed = Program(**dict(full, score=42))
    assert made == constructed
    assert [getattr(made, f) for f in Program.__slots__] == [
        getattr(constructed, f) for f in Program.__slots__
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.score = 1  # type: ignore[misc]
