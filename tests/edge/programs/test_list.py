"""GET /v1/programs on a real server: walks against brute force, filters, minScore, market."""

from __future__ import annotations

import itertools
import random

import pytest
from support.apierror import assert_api_error
from support.distwriter import MARKETS, brute_force, publish, random_catalogue
from support.programkit import AUTH, walk

from contract import vocabulary as v
from contract.resources import PROGRAM


@pytest.mark.slow
async def test_every_filter_combination_walks_to_the_brute_force_answer(edge_client, dist):
    rng = random.Random(11)
    programmes = random_catalogue(rng, 150)
    publish(dist, programmes, "b1")
    client = await edge_client()
    combos = itertools.product(
        (None, *v.VERTICALS), (None, *v.MODELS), (None, *MARKETS, "JP"), (None, True, False)
    )
    for vertical, model, market, recurring in combos:
        params = {
            name: value
            for name, value in (("vertical", vertical), ("model", model), ("market", market))
            if value is not None
        }
        if recurring is not None:
            params["recurring"] = "true" if recurring else "false"
        min_score = rng.choice((None, None, 0, 50, 64, 100))
        if min_score is not None:
            params["minScore"] = str(min_score)
        limits = [rng.choice((1, 2, 3, 7, 25, 100)) for _ in range(200)]
        rows, _ = await walk(client, params, limits)
        expected = brute_force(
            programmes,
            vertical=vertical,
            model=model,
            market=market,
            recurring=recurring,
            min_score=min_score,
        )
        assert [row["slug"] for row in rows] == expected, params


async def test_rows_are_the_programmes_as_published(edge_client, dist):
    programmes = random_catalogue(random.Random(5), 30)
    publish(dist, programmes, "b1")
    client = await edge_client()
    rows, pages = await walk(client, {}, [7] * 10)
    assert len(pages) == 5
    by_slug = {p["slug"]: p for p in programmes}
    # A list row: the programme without the members that explain it.
    assert rows == [{k: by_slug[row["slug"]][k] for k in PROGRAM.listed} for row in rows]
    whole, _ = await walk(client, {"include": "scoreBreakdown"}, [7] * 10)
    assert whole == [by_slug[row["slug"]] for row in rows]


async def test_min_score_bounds(edge_client, dist):
    programmes = random_catalogue(random.Random(6), 60)
    publish(dist, programmes, "b1")
    client = await edge_client()
    everything, _ = await walk(client, {"minScore": "0"}, [100])
    assert [r["slug"] for r in everything] == brute_force(programmes)
    top, _ = await walk(client, {"minScore": "100"}, [3] * 60)
    assert [r["slug"] for r in top] == brute_force(programmes, min_score=100)
    assert top and all(r["score"] == 100 for r in top)


async def test_market_is_case_insensitive_and_so_are_its_cursors(edge_client, dist):
    programmes = random_catalogue(random.Random(8), 80)
    publish(dist, programmes, "b1")
    client = await edge_client()
    bodies = []
    for market in ("fr", "FR", "Fr"):
        resp = await client.get(
            "/v1/programs", params={"market": market, "limit": "4"}, headers=AUTH
        )
        assert resp.status == 200
        bodies.append(await resp.read())
    assert bodies[0] == bodies[1] == bodies[2]
    first = await (await client.get("/v1/programs?market=fr&limit=4", headers=AUTH)).json()
    cursor = first["page"]["nextCursor"]
    resp = await client.get(f"/v1/programs?market=fR&limit=100&cursor={cursor}", headers=AUTH)
    assert resp.status == 200
    rest = (await resp.json())["data"]
    slugs = [r["slug"] for r in first["data"] + rest]
    assert slugs == brute_force(programmes, market="FR")


async def test_limit_defaults_to_25_and_may_change_between_pages(edge_client, dist):
    publish(dist, random_catalogue(random.Random(9), 40), "b1")
    client = await edge_client()
    first = await (await client.get("/v1/programs", headers=AUTH)).json()
    assert (len(first["data"]), first["page"]["limit"], first["page"]["hasMore"]) == (25, 25, True)
    cursor = first["page"]["nextCursor"]
    second = await (await client.get(f"/v1/programs?cursor={cursor}&limit=10", headers=AUTH)).json()
    assert (len(second["data"]), second["page"]["hasMore"]) == (10, True)


async def test_an_exactly_full_last_page_says_no_more(edge_client, dist):
    publish(dist, random_catalogue(random.Random(10), 20), "b1")
    client = await edge_client()
    body = await (await client.get("/v1/programs?limit=20", headers=AUTH)).json()
    assert (len(body["data"]), body["page"]["hasMore"], body["page"]["nextCursor"]) == (
        20,
        False,
        None,
    )


async def test_include_score_breakdown_is_its_own_page_and_cursors_ignore_it(edge_client, dist):
    programmes = random_catalogue(random.Random(9), 20)
    publish(dist, programmes, "b1")
    client = await edge_client()
    short = await client.get("/v1/programs?limit=3", headers=AUTH)
    whole = await client.get("/v1/programs?limit=3&include=scoreBreakdown", headers=AUTH)
    short_body, whole_body = await short.json(), await whole.json()
    assert short.headers["ETag"] != whole.headers["ETag"]
    assert [r["slug"] for r in short_body["data"]] == [r["slug"] for r in whole_body["data"]]
    assert all("scoreBreakdown" not in r and "evidence" not in r for r in short_body["data"])
    assert all("scoreBreakdown" in r and "evidence" in r for r in whole_body["data"])
    # The cursor is bound to the filters, not to what a row shows: it resumes either way.
    cursor = short_body["page"]["nextCursor"]
    assert cursor == whole_body["page"]["nextCursor"]
    resumed = await client.get(
        f"/v1/programs?limit=3&include=scoreBreakdown&cursor={cursor}", headers=AUTH
    )
    assert resumed.status == 200
    assert whole.headers["Link"].startswith("</v1/programs?limit=3&include=scoreBreakdown&")


@pytest.mark.parametrize("query", ["include=", "include=details", "include=scorebreakdown"])
async def test_include_takes_only_score_breakdown(edge_client, dist, query):
    publish(dist, random_catalogue(random.Random(10), 5), "b1")
    client = await edge_client()
    resp = await client.get(f"/v1/programs?{query}", headers=AUTH)
    await assert_api_error(resp, 400, "invalid_parameter", "include")
