"""The programme objects the edge serves from a real build of the sample content carry the
typed terms, their evidence and the versioned, explained score (docs/api.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.programkit import AUTH, walk

from contract import vocabulary as v
from contract.resources import COMMISSION_TERMS, PROGRAM, complete

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def sample_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("samples") / "dist"
    done = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "--content", str(ROOT / "content"),
         "--out", str(dist), "--quiet", "--no-cache", "--no-sync", "--no-site"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return dist


@pytest.fixture
async def served(edge_client, sample_dist):
    client = await edge_client(dist=sample_dist)
    rows, _ = await walk(client, {"include": "scoreBreakdown"}, [100])
    return client, {row["slug"]: row for row in rows}, rows


async def one(client, slug: str) -> dict[str, Any]:
    resp = await client.get(f"/v1/programs/{slug}", headers=AUTH)
    assert resp.status == 200
    return (await resp.json())["data"]


def part(row: dict[str, Any], component: str) -> dict[str, Any]:
    (found,) = [p for p in row["scoreBreakdown"] if p["component"] == component]
    return found


async def test_every_programme_carries_its_terms_evidence_and_explained_score(served) -> None:
    client, by_slug, rows = served
    assert rows == [await one(client, slug) for slug in by_slug]  # the list and by slug agree
    # Without include=scoreBreakdown, each row stops before the members that explain it.
    listed, _ = await walk(client, {}, [100])
    assert listed == [{k: row[k] for k in PROGRAM.listed if k in row} for row in rows]
    for row in rows:
        terms = row["commissionTerms"]
        # The members that apply, in their order; none spelled out null, false or empty.
        assert [m for m in v.TERMS_MEMBERS if m in terms] == list(terms) and "mode" in terms
        assert not any(value in (None, False, []) and value != 0 for value in terms.values())
        assert complete(terms, COMMISSION_TERMS).keys() == set(v.TERMS_MEMBERS)
        assert terms["mode"] in v.COMMISSION_MODES
        evidence = urlsplit(row["evidence"])
        assert evidence.hostname and evidence.path.strip("/")
        assert row["evidence"] != row["site"]
        assert row["scoreVersion"] == v.SCORE_VERSION
        assert [p["component"] for p in row["scoreBreakdown"]] == list(v.SCORE_COMPONENTS)
        assert sum(p["points"] for p in row["scoreBreakdown"]) == row["score"]
        assert sum(p["weight"] for p in row["scoreBreakdown"]) == v.SCORE_MAX
    # Directory order and the minScore cut are unchanged by the richer objects.
    assert [(-r["score"], r["slug"]) for r in rows] == sorted(
        (-r["score"], r["slug"]) for r in rows
    )
    cut, _ = await walk(client, {"minScore": "60", "include": "scoreBreakdown"}, [100])
    assert cut == [r for r in rows if r["score"] >= 60]


async def test_a_range_scores_its_lower_bound_and_a_maximum_alone_nothing(served) -> None:
    _, by_slug, _ = served
    ranged = by_slug["grand-bazar-nordique"]  # "7% per sale, 10% on first orders"
    assert (ranged["commissionTerms"]["value"], ranged["commissionTerms"]["upTo"]) == (7, 10)
    plain = by_slug["le-plateau-ludique"]  # "7% per sale"
    assert part(ranged, "commissionRate")["points"] == part(plain, "commissionRate")["points"]
    up_to = by_slug["aurore-banque"]  # "Jusqu'à 120 € par ouverture de compte"
    assert "value" not in up_to["commissionTerms"]
    assert (up_to["commissionTerms"]["upTo"], up_to["commissionTerms"]["unit"]) == (120, "EUR")
    rate = part(up_to, "commissionRate")
    assert rate["points"] == 0 and rate["input"].startswith("unknown")


async def test_staleness_counts_to_the_newest_verification(served) -> None:
    _, by_slug, rows = served
    newest = max(row["lastVerifiedAt"] for row in rows)[:10]
    stale = {slug for slug, row in by_slug.items() if row["stale"]}
    assert stale == {"casa-soleada", "genealogie-vivante", "kasa-streetwear"}
    for slug in stale:
        assert part(by_slug[slug], "freshness")["points"] == 0
        assert by_slug[slug]["lastVerifiedAt"][:10] < newest
    assert part(by_slug["traducta"], "freshness")["input"] == "0 days old"
