"""api/search.json as the real build writes it: postings, orders and columns against the
rows it serves, and the slug the facets endpoint reserves."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import orjson
import pytest
from buildkit import VALID, Content, submission

from catalog import validation
from catalog.errors import BuildError
from contract import searchindex, textsearch
from contract import shardformat as sf


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from support.sample import build_sample

    return build_sample(tmp_path_factory.mktemp("sample") / "dist", "--no-site")


def test_postings_hold_exactly_the_rows_with_the_token_or_prefix(sample: Path) -> None:
    directory = sf.load(sample)
    rows = [orjson.loads(row) for row in directory.rows]
    words = [textsearch.document_tokens(searchindex.searchable(row)) for row in rows]
    index = directory.search
    every = set().union(*words)
    assert set(index.tokens) == every
    for token, ranks in index.tokens.items():
        assert ranks.tolist() == [r for r, w in enumerate(words) if token in w]
    heads = {w[:n] for w in every for n in range(2, 4) if len(w) >= n}
    assert set(index.prefixes) == heads
    for head, ranks in index.prefixes.items():
        assert ranks.tolist() == [
            r for r, w in enumerate(words) if any(x.startswith(head) for x in w)
        ]


def test_orders_are_the_documented_sorts(sample: Path) -> None:
    directory = sf.load(sample)
    rows = [orjson.loads(row) for row in directory.rows]

    def instant(p: dict) -> float:
        return dt.datetime.fromisoformat(p["createdAt"].replace("Z", "+00:00")).timestamp()

    keys = {
        "name": lambda p: (textsearch.name_key(p["name"]), p["slug"]),
        "cookieDays": lambda p: (-p["cookieDays"], p["slug"]),
        "createdAt": lambda p: (-instant(p), p["slug"]),
    }
    for sort, key in keys.items():
        expected = sorted(range(len(rows)), key=lambda r, k=key: k(rows[r]))
        assert directory.search.orders[sort].tolist() == expected, sort
    assert [textsearch.name_key(r["name"]) for r in rows] == directory.search.columns["nameKey"]


def test_verified_age_counts_from_the_reference_day(sample: Path) -> None:
    directory = sf.load(sample)
    rows = [orjson.loads(row) for row in directory.rows]
    reference = dt.date.fromisoformat(max(r["lastVerifiedAt"] for r in rows)[:10])
    ages = [(reference - dt.date.fromisoformat(r["lastVerifiedAt"][:10])).days for r in rows]
    assert directory.search.columns["verifiedAge"].tolist() == ages
    assert min(ages) == 0


def test_the_facets_slug_is_reserved(content: Content) -> None:
    assert {"facets"} == validation.RESERVED_SLUGS
    content.add("facets", VALID)
    content.add("facettes", submission())
    with pytest.raises(BuildError) as caught:
        content.build()
    (problem,) = [str(d) for d in caught.value.diagnostics]
    assert "facets.yaml" in problem and "reserved" in problem
