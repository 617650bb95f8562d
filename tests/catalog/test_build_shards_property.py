"""Reading the shards as the edge does gives exactly a brute-force filter-and-sort, always.

Random catalogues go through the real pipeline (with tiny pages, so paging across files is
exercised); then for every filter combination, every minScore cut 0..100 and a random
limit, the edge-style read (shardformat.load, combo key, score cut, keyset pages) must
equal filtering and sorting the published submissions directly.
"""

from __future__ import annotations

import bisect
import json
import os
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest
from buildkit import Content
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import scoring, submission, validation
from catalog.site import pages as site
from contract import shardformat
from contract import vocabulary as v
from contract.resources import COMMISSION_TERMS, compact
from contract.shardformat import Directory, combo_key

# Many small builds: in memory when the machine offers it (creating directories on the
# development machines' disks costs ~0.1 ms each; the writing code is the same).
FAST_TMP = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
MARKETS = ("FR", "BE", "CH", "NO", "DE", "US")  # NO: quoted in the YAML, as it must be
UNUSED_MARKET = "JP"

TERMS = (
    {"mode": "percentage", "value": 10, "unit": "percent"},
    {"mode": "percentage", "value": 5, "upTo": 40, "unit": "percent"},
    {"mode": "flat", "upTo": 120, "unit": "EUR"},
    {"mode": "tiered", "unit": "percent", "tiers": [{"from": 0, "value": 8}, {"from": 9, "value": 30}]},
    {"mode": "hybrid", "parts": [{"value": 50, "unit": "EUR"}, {"value": 20, "unit": "percent"}]},
)  # fmt: skip
# Far apart, so that the reference day (the newest of them) makes some programmes stale.
VERIFIED = ("2023-01-10T00:00:00Z", "2024-06-01T12:00:00Z", "2024-07-01T00:00:00Z")

slugs = st.from_regex(r"[a-z][a-z0-9]{0,5}(-[a-z0-9]{1,3})?", fullmatch=True)
names = st.from_regex(r"[A-Za-zé0-9]( ?[A-Za-zé0-9'&]){0,15}", fullmatch=True)


@st.composite
def submissions(draw: st.DrawFn) -> dict[str, Any]:
    """One submission's fields (slug included), statuses mostly published."""
    sub: dict[str, Any] = {
        "status": draw(st.sampled_from((v.PUBLISHED,) * 4 + v.SUBMISSION_STATUSES[1:])),
        "name": draw(names),
        "host": "acme.example",
        "site": "https://www.acme.example/",
        "pitch": draw(names),
        "vertical": draw(st.sampled_from(v.VERTICALS[:4])),  # few values: many shared shards
        "model": draw(st.sampled_from(v.MODELS)),
        "commission": "10%",
        "recurring": draw(st.booleans()),
        "cookieDays": draw(st.sampled_from((0, 7, 30, 90, 400))),
        "payout": draw(st.sampled_from(v.PAYOUTS)),
        "minPayout": draw(st.sampled_from((0, 25, 49.5, 100, 1000))),
        "markets": draw(st.lists(st.sampled_from(MARKETS), min_size=1, max_size=4, unique=True)),
        "signupUrl": "https://www.acme.example/join",
        "createdAt": "2024-03-01T09:00:00+01:00",
        "commissionTerms": draw(st.sampled_from(TERMS)),
        "evidence": "https://www.acme.example/join/terms",
        "lastVerifiedAt": draw(st.sampled_from(VERIFIED)),
    }
    if draw(st.booleans()):
        sub["holdbackDays"] = draw(st.sampled_from((0, 30, 100)))
    if draw(st.booleans()):
        sub["currency"] = draw(st.sampled_from(("EUR", "USD", "JPY")))
    if draw(st.booleans()):
        sub["platform"] = "Awin"
    if draw(st.booleans()):
        sub["image"] = "https://cdn.acme.example/i.png"
    return sub


catalogues = st.dictionaries(slugs, submissions(), max_size=25)


def to_yaml(sub: dict[str, Any]) -> str:
    """JSON scalars are valid YAML; strings double-quoted so nothing is misread."""
    return "".join(f"{key}: {json.dumps(value)}\n" for key, value in sub.items())


def expected_rows(catalogue: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Brute force: the published submissions as API rows, score descending then slug."""
    rows = []
    published = [sub for sub in catalogue.values() if sub["status"] == v.PUBLISHED]
    reference = scoring.reference_day(sub["lastVerifiedAt"] for sub in published)
    for slug, sub in catalogue.items():
        if sub["status"] != v.PUBLISHED:
            continue
        row = {k: val for k, val in sub.items() if k != "status"}
        row.update(slug=slug, platform=sub.get("platform", ""), image=sub.get("image", ""))
        row["holdbackDays"] = sub.get("holdbackDays")
        row["currency"] = sub.get("currency")
        row["commissionTerms"] = validation.check_terms(
            sub["commissionTerms"], submission.BY_NAME["commissionTerms"]
        )  # every member, in the API's order
        scored = scoring.scored(row, reference)
        row.update(
            score=scored.score,
            stale=scored.stale,
            scoreVersion=v.SCORE_VERSION,
            scoreBreakdown=scored.breakdown,
        )
        row["createdAt"] = "2024-03-01T08:00:00Z"  # the same instant, in UTC
        # Rows carry the terms' members that apply (contract.resources.compact).
        row["commissionTerms"] = compact(row["commissionTerms"], COMMISSION_TERMS)
        rows.append(row)
    return sorted(rows, key=lambda r: (-r["score"], r["slug"]))


def matches(row: dict[str, Any], vertical: Any, model: Any, market: Any, recurring: Any) -> bool:
    return (
        (vertical is None or row["vertical"] == vertical)
        and (model is None or row["model"] == model)
        and (market is None or market in row["markets"])
        and (recurring is None or row["recurring"] == recurring)
    )


def edge_cut(d: Directory, key: str, min_score: int) -> list[int]:
    """The edge's list query: the combination's ranks, cut at minScore by bisection."""
    ranks = d.shards.get(key, [])
    end = bisect.bisect_left(ranks, True, key=lambda rank: d.scores[rank] < min_score)
    return list(ranks[:end])


def edge_pages(d: Directory, ranks: list[int], limit: int) -> list[list[int]]:
    """Keyset pagination as the edge does it: resume after the last (score, slug) seen."""
    pages: list[list[int]] = []
    after: tuple[int, str] | None = None
    while True:
        start = 0
        if after is not None:
            start = bisect.bisect_right(
                ranks, after, key=lambda rank: (-d.scores[rank], d.slugs[rank])
            )
        page = ranks[start : start + limit]
        has_more = start + limit < len(ranks)
        pages.append(page)
        if not has_more:
            return pages
        last = page[-1]
        after = (-d.scores[last], d.slugs[last])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    catalogue=catalogues,
    page_size=st.integers(1, 4),
    limit=st.sampled_from((1, 2, 3, 7, 25, 100)),
    probe_score=st.integers(v.SCORE_MIN, v.SCORE_MAX),
)
@pytest.mark.slow
def test_edge_reads_equal_brute_force(
    catalogue: dict[str, dict[str, Any]], page_size: int, limit: int, probe_score: int
) -> None:
    with (
        tempfile.TemporaryDirectory(dir=FAST_TMP) as tmp,
        mock.patch.object(shardformat, "PAGE_SIZE", page_size),
        mock.patch.object(site, "render_site", lambda programs, base_url, reuse=None: {}),
    ):
        content = Content(Path(tmp))
        content.programs.mkdir(parents=True)
        for slug, sub in catalogue.items():
            content.add(slug, to_yaml(sub))
        content.build(cache=False)
        d = shardformat.load(content.out)
        files = {p.relative_to(content.out).as_posix() for p in content.out.rglob("*.json")}

    expected = expected_rows(catalogue)
    assert [orjson.loads(row) for row in d.rows] == expected
    assert d.counts["published"] == len(expected) == d.counts["programs"]
    assert d.counts["submissions"] == len(catalogue)
    assert {f"api/programs/{row['slug']}.json" for row in expected} == {
        f for f in files if f.startswith("api/programs/")
    }

    used = sorted({m for row in expected for m in row["markets"]})
    seen_keys = set()
    for vertical in (None, *v.VERTICALS[:4], v.VERTICALS[-1]):
        for model in (None, *v.MODELS):
            for market in (None, *used, UNUSED_MARKET):
                for recurring in (None, True, False):
                    key = combo_key((vertical, model, market, recurring))
                    wanted = [r for r in expected if matches(r, vertical, model, market, recurring)]
                    if not wanted:
                        assert key not in d.shards  # only non-empty combinations are written
                        continue
                    seen_keys.add(key)
                    for min_score in range(v.SCORE_MIN, v.SCORE_MAX + 1):
                        got = [d.slugs[rank] for rank in edge_cut(d, key, min_score)]
                        assert got == [r["slug"] for r in wanted if r["score"] >= min_score]
                    cut = edge_cut(d, key, probe_score)
                    pages = edge_pages(d, cut, limit)
                    assert [rank for page in pages for rank in page] == cut
                    assert all(len(page) == limit for page in pages[:-1])
                    assert pages[-1] or not cut  # never an empty trailing page
    assert seen_keys == set(d.shards)  # and nothing else is
