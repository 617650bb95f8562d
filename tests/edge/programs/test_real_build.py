"""The edge on dist/ made by the REAL build (build.py) from random YAML submissions.

The mini-writer tests pin the edge down; these check that it and the build pipeline agree:
published submissions, and only they, reachable by every filter and by slug, in order.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.distwriter import MARKETS, random_programme
from support.programkit import AUTH, directory_state, walk

from contract import vocabulary as v
from contract.resources import COMMISSION_TERMS, compact

ROOT = Path(__file__).resolve().parents[3]
BUILD = ROOT / "build.py"

pytestmark = pytest.mark.skipif(not BUILD.exists(), reason="build.py is not there yet")

DRAFT_STATUSES = ("unpublished", "rejected")


def submission(p: dict[str, Any], status: str) -> dict[str, Any]:
    """A YAML submission for an API programme: no score (the build computes it, with its
    version, breakdown and staleness), a status, and only the members of its terms that
    apply (the API shows every member, null or empty when it does not apply)."""
    computed = {"slug", "score", "scoreVersion", "scoreBreakdown", "stale"}
    fields = {k: val for k, val in p.items() if k not in computed}
    if not fields["image"]:
        del fields["image"]  # optional: it becomes ""
    if fields["holdbackDays"] is None:
        del fields["holdbackDays"]  # optional: not published
    if fields["currency"] is None:
        del fields["currency"]  # optional: not stated
    terms = dict(fields["commissionTerms"])
    terms["parts"] = [
        {k: val for k, val in part.items() if val is not None} for part in terms["parts"]
    ]
    fields["commissionTerms"] = {k: val for k, val in terms.items() if val not in (None, [], False)}
    return {"status": status, **fields}


def random_submissions(rng: random.Random, n: int) -> dict[str, tuple[str, dict[str, Any]]]:
    """slug -> (status, API-shaped fields), about one in five a draft."""
    out = {}
    for i in range(n):
        slug = f"s{rng.randrange(10**5):05d}-{i}"
        status = v.PUBLISHED if rng.random() < 0.8 else rng.choice(DRAFT_STATUSES)
        p = random_programme(rng, slug)
        if status != v.PUBLISHED and rng.random() < 0.5:
            # Drafts are not validated: this market matches no published programme, and
            # a broken field must not block the build either.
            p["markets"] = ["JP"]
            p["cookieDays"] = "soon"
        out[slug] = (status, p)
    return out


def write_content(content: Path, subs: dict[str, tuple[str, dict[str, Any]]]) -> None:
    programs = content / "programs"
    programs.mkdir(parents=True, exist_ok=True)
    for old in programs.glob("*.yaml"):
        old.unlink()
    for slug, (status, p) in subs.items():
        text = yaml.safe_dump(submission(p, status), sort_keys=False, allow_unicode=True)
        (programs / f"{slug}.yaml").write_text(text, encoding="utf-8")


def run_build(content: Path, out: Path) -> None:
    cmd = [sys.executable, str(BUILD), "--content", str(content), "--out", str(out)]
    done = subprocess.run(
        [*cmd, "--quiet", "--no-cache", "--no-sync"],
        cwd=content.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def published(subs):
    return {slug: p for slug, (status, p) in subs.items() if status == v.PUBLISHED}


def expected_slugs(rows_by_slug, pub, vertical, model, market, recurring, min_score):
    """Brute force over the published submissions, with the scores the build gave them."""
    kept = [
        slug
        for slug, p in pub.items()
        if (vertical is None or p["vertical"] == vertical)
        and (model is None or p["model"] == model)
        and (market is None or market in p["markets"])
        and (recurring is None or p["recurring"] == recurring)
        and (min_score is None or rows_by_slug[slug]["score"] >= min_score)
    ]
    return sorted(kept, key=lambda s: (-rows_by_slug[s]["score"], s))


def _build_random(root: Path) -> tuple[Path, dict, Path, random.Random]:
    rng = random.Random(2024)
    subs = random_submissions(rng, 90)
    content = root / "content"
    write_content(content, subs)
    dist = root / "dist"
    run_build(content, dist)
    return dist, subs, content, rng


@pytest.fixture(scope="module")
def shared_build(tmp_path_factory):
    """One real build for the tests that only read it."""
    return _build_random(tmp_path_factory.mktemp("real-build"))


@pytest.fixture
async def built(edge_client, shared_build):
    dist, subs, content, rng = shared_build
    return await edge_client(dist=dist), subs, content, rng


@pytest.fixture
async def built_own(edge_client, tmp_path):
    """A real build of this test's own, which it may rebuild."""
    dist, subs, content, rng = _build_random(tmp_path)
    return await edge_client(dist=dist), subs, content, rng, dist


@pytest.mark.slow
async def test_published_submissions_and_only_they_walk_in_order(built):
    client, subs, _, rng = built
    pub = published(subs)
    everything, _ = await walk(client, {"include": "scoreBreakdown"}, [100, 100])
    rows_by_slug = {row["slug"]: row for row in everything}
    assert set(rows_by_slug) == set(pub)
    for slug, row in rows_by_slug.items():
        p = pub[slug]
        for name in ("name", "host", "vertical", "model", "recurring", "cookieDays", "payout"):
            assert row[name] == p[name], (slug, name)
        assert sorted(row["markets"]) == sorted(p["markets"])
        assert 0 <= row["score"] <= 100
        # The typed terms as submitted, and the score explained by its versioned breakdown.
        for name in ("holdbackDays", "currency", "evidence", "lastVerifiedAt"):
            assert row[name] == p[name], (slug, name)
        # The members of the terms that apply; the others are left out.
        assert row["commissionTerms"] == compact(p["commissionTerms"], COMMISSION_TERMS)
        assert row["scoreVersion"] == v.SCORE_VERSION
        breakdown = row["scoreBreakdown"]
        assert [part["component"] for part in breakdown] == list(v.SCORE_COMPONENTS)
        assert sum(part["points"] for part in breakdown) == row["score"]
        assert sum(part["weight"] for part in breakdown) == v.SCORE_MAX
        assert isinstance(row["stale"], bool)
    # Staleness counts from the newest verification of the directory: never that one.
    newest = max(row["lastVerifiedAt"] for row in everything)
    assert not any(row["stale"] for row in everything if row["lastVerifiedAt"] == newest)

    combos = itertools.product(
        (None, *v.VERTICALS), (None, *v.MODELS), (None, *MARKETS, "JP"), (None, True, False)
    )
    for vertical, model, market, recurring in combos:
        params = {}
        for name, value in (("vertical", vertical), ("model", model), ("market", market)):
            if value is not None:
                params[name] = value if name != "market" else rng.choice((value, value.lower()))
        if recurring is not None:
            params["recurring"] = str(recurring).lower()
        min_score = rng.choice((None, None, 0, 40, 60, 100))
        if min_score is not None:
            params["minScore"] = str(min_score)
        limits = [rng.choice((1, 3, 10, 100)) for _ in range(100)]
        rows, _ = await walk(client, params, limits)
        want = expected_slugs(rows_by_slug, pub, vertical, model, market, recurring, min_score)
        assert [row["slug"] for row in rows] == want, params


async def test_drafts_are_unreachable_and_their_404_is_the_unknown_one(built):
    client, subs, _, _ = built
    drafts = [slug for slug, (status, _) in subs.items() if status != v.PUBLISHED]
    assert {subs[s][0] for s in drafts} == set(DRAFT_STATUSES)
    reference = await client.get("/v1/programs/no-such-programme", headers=AUTH)
    ref_body = {**await reference.json(), "requestId": None}
    for slug in drafts:
        resp = await client.get(f"/v1/programs/{slug}", headers=AUTH)
        assert resp.status == 404
        assert {**await resp.json(), "requestId": None} == ref_body
    # The only submissions in JP are drafts.
    resp = await client.get("/v1/programs?market=JP", headers=AUTH)
    assert (await resp.json())["data"] == []
    for slug, p in published(subs).items():
        resp = await client.get(f"/v1/programs/{slug}", headers=AUTH)
        assert resp.status == 200
        assert (await resp.json())["data"]["name"] == p["name"]


@pytest.mark.process
async def test_a_real_rebuild_mid_walk_neither_repeats_nor_skips(built_own):
    client, subs, content, rng, dist = built_own
    first_id = directory_state(client).current.build_id
    before, pages = await walk(client, {}, [10, 10], partial=True)
    everything_before, _ = await walk(client, {}, [100, 100])
    rows_before = {row["slug"]: row for row in everything_before}

    pub = sorted(published(subs))
    changed = dict(subs)
    gone = rng.choice(pub)
    del changed[gone]
    edited = rng.choice([s for s in pub if s != gone])
    status, p = changed[edited]
    changed[edited] = (status, {**p, "cookieDays": (p["cookieDays"] + 200) % 3650})
    added = random_programme(rng, "zz-added")
    changed["zz-added"] = (v.PUBLISHED, added)
    write_content(content, changed)
    run_build(content, dist)
    new_id = await _wait_for_new_build(client, first_id)
    assert new_id != first_id

    rest, _ = await walk(client, {"cursor": pages[-1]["nextCursor"]}, [7] * 100)
    everything_after, _ = await walk(client, {}, [100, 100])
    rows_after = {row["slug"]: row for row in everything_after}
    unchanged = {s for s in rows_before if rows_after.get(s) == rows_before[s]}
    walked = Counter(row["slug"] for row in before + rest)
    assert unchanged and all(walked[s] == 1 for s in unchanged)


async def _wait_for_new_build(client, old: str) -> str:
    state = directory_state(client)
    for _ in range(500):
        if state.current.build_id != old:
            return state.current.build_id
        await asyncio.sleep(0.01)
    raise AssertionError("the edge never took the new build")
