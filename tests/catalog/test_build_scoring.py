"""The score formula: documented points, bounded, deterministic, integer."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog import scoring, sharding
from catalog.model import Program, program_from_row
from catalog.rendering import listing_of
from contract import vocabulary as v
from contract.shardformat import combo_key, combos_of


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
    }
    base.update(changes)
    return base


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
)  # fmt: skip


def test_points_add_up_to_the_maximum_score() -> None:
    assert scoring.MAX_POINTS == v.SCORE_MAX
    assert set(scoring.MODEL_POINTS) == set(v.MODELS)
    assert set(scoring.PAYOUT_POINTS) == set(v.PAYOUTS)


def test_best_and_worst_terms() -> None:
    best = record(model="recurring", recurring=True, cookieDays=90, payout="weekly",
                  minPayout=0, markets=("FR", "BE", "CH", "LU", "CA"), platform="Awin",
                  image="https://acme.fr/i.png")  # fmt: skip
    worst = record(model="cpl", cookieDays=0, payout="net60", minPayout=1000)
    assert scoring.score(best) == v.SCORE_MAX
    assert scoring.score(worst) == 6 + 0 + 0 + 3 + 0 + 2  # cpl, one market


def test_worked_example_of_docs_scoring_md() -> None:
    # cps 12 + not recurring 0 + 30 days 14 + monthly 9 + 50 minimum 9 + 2 markets 4
    # + platform 5 + image 0 = 53
    example = record(markets=("FR", "BE"), platform="Awin")
    assert scoring.score(example) == 53


@given(records)
def test_score_is_an_integer_in_range(rec: dict[str, Any]) -> None:
    score = scoring.score(rec)
    assert isinstance(score, int) and v.SCORE_MIN <= score <= v.SCORE_MAX


@given(records, st.integers(0, v.COOKIE_DAYS_MAX))
def test_better_terms_never_lower_the_score(rec: dict[str, Any], more_days: int) -> None:
    longer = dict(rec, cookieDays=max(rec["cookieDays"], more_days))
    assert scoring.score(longer) >= scoring.score(rec)
    lower = dict(rec, minPayout=rec["minPayout"] / 2)
    assert scoring.score(lower) >= scoring.score(rec)


@settings(max_examples=30)
@given(st.lists(records, max_size=12))
def test_rank_is_score_descending_then_slug(recs: list[dict[str, Any]]) -> None:
    recs = [dict(r, slug=f"p-{i}") for i, r in enumerate(recs)]
    programs = scoring.rank(listing_of(r) for r in recs)
    keys = [(-p.score, p.slug) for p in programs]
    assert keys == sorted(keys)
    assert sorted(keys) == sorted((-scoring.score(r), r["slug"]) for r in recs)


@settings(max_examples=30)
@given(st.lists(records, max_size=12))
def test_shards_agree_with_shardformat_combos(recs: list[dict[str, Any]]) -> None:
    programs = scoring.rank(listing_of(dict(r, slug=f"p-{i}")) for i, r in enumerate(recs))
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

    program = Program(**dict(rec, name=name), score=scoring.score(rec))
    assert rendering._NATIVE_ROWS
    assert rendering.row(program) == shardformat.encode_row(program.to_api())


@given(records)
def test_breakdown_adds_up_to_the_score(rec: dict[str, Any]) -> None:
    parts = scoring.breakdown(rec)
    assert sum(points for _, points, _ in parts) == scoring.score(rec)
    assert sum(maximum for _, _, maximum in parts) == v.SCORE_MAX
    assert all(0 <= points <= maximum for _, points, maximum in parts)
    program = Program(**rec, score=scoring.score(rec))
    assert scoring.breakdown(program.to_api()) == parts  # what the site passes


@given(records)
def test_a_listing_holds_its_programme(rec: dict[str, Any]) -> None:
    """The cache keeps listings, not records: the row gives the programme back whole, and
    the other members agree with it."""
    from catalog.cache import output_digest
    from contract import shardformat

    listing, program = listing_of(rec), Program(**rec, score=scoring.score(rec))
    assert program_from_row(listing.row) == program
    assert type(program_from_row(listing.row).markets) is tuple
    assert listing.row == shardformat.encode_row(program.to_api())
    assert listing[:6] == (
        program.slug, program.score, program.vertical, program.model, program.recurring,
        program.markets,
    )  # fmt: skip
    assert listing.digest == output_digest(shardformat.encode_document(listing.row))


@given(records)
def test_program_of_is_the_dataclass_constructor(rec: dict[str, Any]) -> None:
    from catalog.model import program_of

    made, constructed = program_of(rec, 42), Program(**rec, score=42)
    assert made == constructed and hash(made) == hash(constructed)
    assert [getattr(made, f) for f in Program.__slots__] == [
        getattr(constructed, f) for f in Program.__slots__
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.score = 1  # type: ignore[misc]
