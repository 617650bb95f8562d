"""Search, typed filters, sorts and facets of the edge's directory against a brute-force
reference (tests/support/searchkit.py), for random queries: in memory, page by page."""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.distwriter import MARKETS, directory_of
from support.sample import build_sample
from support.searchkit import WORDS, reference, reference_facets, wordy_catalogue

from contract import searchindex, shardformat, textsearch
from contract import vocabulary as v
from contract.endpoints import PROGRAMS
from contract.shardformat import FormatError
from edge.directory import search
from edge.directory.pages import Build, prepare
from edge.directory.search import Query
from edge.handlers.programs import position_of, select_rows
from edge.request.query import parse_query

SECRET = b"s" * 32


def walk(build: Build, params: dict[str, str], limits: list[int]) -> list[str]:
    """Every slug a client paging with these limits sees, through cursor positions."""
    values = parse_query(PROGRAMS, params.items())
    query = Query.of(values)
    slugs: list[str] = []
    after = None
    for limit in limits:
        ranks, has_more = select_rows(build, query, after, limit)
        assert len(ranks) <= limit
        slugs += [build.directory.slugs[r] for r in ranks]
        if not has_more:
            return slugs
        assert len(ranks) == limit  # a page that says "more" is full
        value, slug = position_of(build, query.sort, ranks[-1])
        # What cursor_position makes of the cursor: the ascending key of the sort.
        after = (value, slug) if query.sort == searchindex.NAME else (-value, slug)
    raise AssertionError("more pages than limits")


def queries(programmes: list[dict[str, Any]]) -> st.SearchStrategy[dict[str, str]]:
    """Random queries: every parameter optional, values that match often, rarely, never."""
    texts = [*WORDS, "aff", "af", "acad", "zzz", "vid", "form"]
    texts += [p["name"] for p in programmes[:5]]
    optional = {
        "vertical": st.sampled_from(v.VERTICALS[:4]),
        "model": st.sampled_from(v.MODELS),
        "market": st.sampled_from([*MARKETS, "jp", "fr"]),
        "recurring": st.sampled_from(["true", "false"]),
        "minScore": st.sampled_from(["0", "1", "50", "64", "100"]),
        "q": st.lists(st.sampled_from(texts), min_size=1, max_size=3).map(" ".join),
        "cookieDaysMin": st.sampled_from(["0", "1", "30", "31", "90", "365", "3650"]),
        "minPayoutMax": st.sampled_from(["0", "10", "49", "50", "100", "1000000"]),
        "payout": st.sampled_from(v.PAYOUTS),
        "platform": st.sampled_from(["Awin", "AWIN", "affilae", "Rakuten", "nope"]),
        "commissionMode": st.sampled_from(v.COMMISSION_MODES),
        "verifiedWithinDays": st.sampled_from(["0", "1", "30", "200", "3650"]),
        "sort": st.sampled_from(searchindex.SORTS),
    }
    return st.fixed_dictionaries({}, optional={name: s for name, s in optional.items()}).filter(
        lambda d: "q" not in d or bool(textsearch.query_terms(d["q"]))
    )


PROGRAMMES = wordy_catalogue(random.Random(3), 400)
BUILD = prepare(directory_of(PROGRAMMES), SECRET)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=queries(PROGRAMMES), limit=st.integers(1, 40))
@pytest.mark.slow
def test_pages_walk_to_the_brute_force_answer(params, limit):
    got = walk(BUILD, params, [limit] * 500)
    assert got == reference(PROGRAMMES, params)


@settings(max_examples=200, deadline=None)
@given(params=queries(PROGRAMMES))
def test_facets_count_the_brute_force_answer(params):
    params.pop("sort", None)
    query = Query.of(parse_query(PROGRAMS, params.items()))
    assert BUILD.searcher.facets(query) == reference_facets(PROGRAMMES, params)


@pytest.mark.parametrize("sort", searchindex.SORTS)
def test_every_sort_walks_every_programme_once(sort):
    slugs = walk(BUILD, {"sort": sort}, [7] * 100)
    assert sorted(slugs) == sorted(p["slug"] for p in PROGRAMMES)
    assert slugs == reference(PROGRAMMES, {"sort": sort})


def test_an_empty_directory_answers_empty_pages_and_zero_counts():
    build = prepare(directory_of([]), SECRET)
    assert walk(build, {"q": "cafe", "sort": "name"}, [5]) == []
    facets = build.searcher.facets(Query.of(parse_query(PROGRAMS, [("q", "cafe")])))
    assert facets["total"] == 0
    assert {f["facet"]: f["values"] for f in facets["facets"]}["market"] == []


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Build]:
    """The sample content, built by the real build, loaded as the edge loads it."""
    dist = build_sample(tmp_path_factory.mktemp("sample") / "dist", "--no-site")
    directory = shardformat.load(dist)
    return [orjson.loads(row) for row in directory.rows], prepare(directory, SECRET)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.slow
def test_the_sample_content_answers_as_the_reference(sample, data):
    programmes, build = sample
    params = data.draw(queries(programmes))
    limit = data.draw(st.integers(1, 30))
    assert walk(build, params, [limit] * 100) == reference(programmes, params)
    params.pop("sort", None)
    query = Query.of(parse_query(PROGRAMS, params.items()))
    assert build.searcher.facets(query) == reference_facets(programmes, params)


def test_the_sample_content_is_searchable_in_french_and_english(sample):
    programmes, build = sample
    found = walk(build, {"q": "ACADEMIE du code"}, [10] * 10)
    assert found[:1] == ["academie-du-code"]
    assert walk(build, {"q": "formations vidéo"}, [10] * 10) == reference(
        programmes, {"q": "formations video"}
    )


@functools.cache
def big() -> tuple[list[dict[str, Any]], Build]:
    programmes = wordy_catalogue(random.Random(20), 20_000)
    return programmes, prepare(directory_of(programmes), SECRET)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_20k_catalogue_answers_as_the_reference(data):
    programmes, build = big()
    params = data.draw(queries(programmes))
    assert walk(build, params, [100] * 300) == reference(programmes, params)
    params.pop("sort", None)
    query = Query.of(parse_query(PROGRAMS, params.items()))
    assert build.searcher.facets(query) == reference_facets(programmes, params)


@pytest.mark.parametrize("sort", searchindex.ORDERED_SORTS)
def test_a_build_whose_order_is_not_its_sort_is_refused(sort):
    directory = directory_of(wordy_catalogue(random.Random(4), 30))
    order = directory.search.orders[sort]
    order[0], order[-1] = order[-1], order[0]
    with pytest.raises(FormatError, match=sort):
        prepare(directory, SECRET)


@settings(max_examples=200, deadline=None)
@given(
    positions=st.sets(st.integers(0, 999), max_size=300),
    start=st.integers(0, 1000),
    count=st.integers(1, 40),
)
@pytest.mark.slow
def test_a_bitmap_gives_back_its_positions_in_order(positions, start, count):
    bits = search.bits_of(positions, 1000)
    assert bits.bit_count() == len(positions)
    assert (
        search.first_positions(bits, start, count)
        == sorted(p for p in positions if p >= start)[:count]
    )


@pytest.fixture(scope="module")
def bitmaps_only() -> Iterator[Build]:
    """A build whose facets always AND bitmaps (above FEW_MATCHES matches they do)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search, "FEW_MATCHES", -1)
        yield prepare(directory_of(PROGRAMMES), SECRET)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(params=queries(PROGRAMMES))
def test_facets_counted_by_bitmaps_are_the_brute_force_answer(bitmaps_only, params):
    params.pop("sort", None)
    query = Query.of(parse_query(PROGRAMS, params.items()))
    assert bitmaps_only.searcher.facets(query) == reference_facets(PROGRAMMES, params)
