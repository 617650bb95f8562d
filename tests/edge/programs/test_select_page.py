"""select_page, the pure heart of GET /v1/programs, against a brute-force filter-and-sort."""

from __future__ import annotations

import dataclasses
import itertools
import random

import pytest
from support.distwriter import MARKETS, brute_force, directory_of, random_catalogue

from contract import vocabulary as v
from contract.shardformat import FormatError
from edge.directory.pages import Index, check, select_page


def walk(directory, combo, *, min_score, limits):
    """Every slug a client paging with these limits sees, and the pages' sizes."""
    slugs, after, sizes = [], None, []
    for limit in limits:
        page = select_page(
            Index.of(directory), combo, min_score=min_score, after=after, limit=limit
        )
        sizes.append(len(page.ranks))
        slugs += [directory.slugs[r] for r in page.ranks]
        if not page.has_more:
            return slugs, sizes
        assert len(page.ranks) == limit  # a page that says "more" is full
        last = page.ranks[-1]
        after = (directory.scores[last], directory.slugs[last])
    raise AssertionError("more pages than limits")


@pytest.mark.parametrize("seed", range(4))
def test_every_combination_walks_to_the_brute_force_answer(seed):
    rng = random.Random(seed)
    programmes = random_catalogue(rng, rng.randint(0, 60), verticals=v.VERTICALS[:4])
    directory = directory_of(programmes)
    check(directory)
    verticals = (None, *v.VERTICALS[:5])  # the fifth is used by nobody
    markets = (None, *MARKETS, "JP")
    for combo in itertools.product(verticals, (None, *v.MODELS), markets, (None, True, False)):
        min_score = rng.choice((None, 0, 1, 50, 64, 100))
        limits = [rng.randint(1, 7) for _ in range(100)]
        got, sizes = walk(directory, combo, min_score=min_score, limits=limits)
        vertical, model, market, recurring = combo
        expected = brute_force(
            programmes,
            vertical=vertical,
            model=model,
            market=market,
            recurring=recurring,
            min_score=min_score,
        )
        assert got == expected, combo
        assert sizes[-1] > 0 or len(sizes) == 1  # never an empty trailing page


def test_min_score_cut_and_cursor_seek_are_exact_around_ties():
    rng = random.Random(7)
    programmes = random_catalogue(rng, 40)
    for i, p in enumerate(programmes):
        p["score"] = (50, 50, 50, 49, 100)[i % 5]
    directory = directory_of(programmes)
    any_combo = (None, None, None, None)
    page = select_page(Index.of(directory), any_combo, min_score=50, after=None, limit=100)
    assert [directory.scores[r] for r in page.ranks] == [100] * 8 + [50] * 24
    assert page.has_more is False
    # Resume after a tie member: exactly the rest of the tie, then the lower scores.
    third_fifty = directory.slugs[page.ranks[10]]
    rest = select_page(
        Index.of(directory), any_combo, min_score=None, after=(50, third_fifty), limit=100
    )
    assert [directory.slugs[r] for r in rest.ranks] == directory.slugs[11:]


def test_a_cursor_resumes_after_its_sort_key_even_when_that_row_is_gone():
    rng = random.Random(3)
    programmes = random_catalogue(rng, 30)
    directory = directory_of(programmes)
    gone = programmes.pop(rng.randrange(len(programmes)))
    smaller = directory_of(programmes)
    page = select_page(
        Index.of(smaller),
        (None,) * 4,
        min_score=None,
        after=(gone["score"], gone["slug"]),
        limit=100,
    )
    expected = [s for s in directory.slugs if s not in {gone["slug"]}]
    position = directory.slugs.index(gone["slug"])
    assert [smaller.slugs[r] for r in page.ranks] == expected[position:]


def test_an_absent_combination_is_an_empty_last_page():
    directory = directory_of(random_catalogue(random.Random(1), 10))
    page = select_page(
        Index.of(directory), ("saas", "cpl", "JP", True), min_score=None, after=None, limit=25
    )
    assert (list(page.ranks), page.has_more) == ([], False)


def test_a_cursor_after_the_cut_gives_an_empty_last_page():
    programmes = random_catalogue(random.Random(2), 20)
    directory = directory_of(programmes)
    low = min(programmes, key=lambda p: p["score"])
    page = select_page(
        Index.of(directory), (None,) * 4, min_score=100, after=(low["score"], low["slug"]), limit=5
    )
    assert (list(page.ranks), page.has_more) == ([], False)


def test_check_refuses_rows_out_of_order_and_unsorted_shards():
    programmes = random_catalogue(random.Random(4), 10)
    directory = directory_of(programmes)
    broken = dataclasses.replace(directory, scores=directory.scores[::-1])
    with pytest.raises(FormatError, match="directory order"):
        check(broken)
    shards = dict(directory.shards)
    shards["any.any.any.any"] = shards["any.any.any.any"][::-1]
    with pytest.raises(FormatError, match="ascending"):
        check(dataclasses.replace(directory, shards=shards))
