"""Search, typed filters, sorts and facets of the directory on a real served edge."""

from __future__ import annotations

import random
import urllib.parse

import pytest
from support.apierror import assert_api_error
from support.distwriter import publish
from support.programkit import AUTH, walk
from support.searchkit import reference, reference_facets, wordy_catalogue

from contract import searchindex, textsearch
from edge import appkeys
from edge.request import cursor

PROGRAMMES = wordy_catalogue(random.Random(7), 120)


@pytest.fixture(scope="module")
def shared_dist(tmp_path_factory):
    """One build for the whole module: these tests only read it."""
    dist = tmp_path_factory.mktemp("search") / "dist"
    publish(dist, PROGRAMMES, "b1")
    return dist


@pytest.fixture
async def client(edge_client, shared_dist):
    return await edge_client(dist=shared_dist)


QUERIES = [
    {"q": "Académie"},
    {"q": "acad vid", "sort": "name"},
    {"q": "STRASSE", "sort": "createdAt"},
    {"q": "l'équipe café", "market": "fr"},
    {"q": "aff", "cookieDaysMin": "30", "sort": "cookieDays"},
    {"cookieDaysMin": "31", "minPayoutMax": "50"},
    {"payout": "monthly", "platform": "AWIN", "sort": "name"},
    {"platform": "affilae"},
    {"commissionMode": "tiered", "recurring": "true", "minScore": "50"},
    {"verifiedWithinDays": "120", "sort": "createdAt"},
    {"vertical": "saas", "sort": "cookieDays"},
    {"q": "zzz"},
    {"q": "formation", "minScore": "100", "model": "cps"},
]


@pytest.mark.parametrize("params", QUERIES, ids=lambda p: urllib.parse.urlencode(p))
async def test_pages_walk_to_the_reference_answer(client, params):
    for limit in (1, 4, 25):
        rows, _ = await walk(client, params, [limit] * 200)
        assert [row["slug"] for row in rows] == reference(PROGRAMMES, params)


@pytest.mark.parametrize("sort", searchindex.SORTS)
async def test_every_sort_pages_through_every_programme_once(client, sort):
    rows, _ = await walk(client, {"sort": sort}, [7] * 100)
    slugs = [row["slug"] for row in rows]
    assert len(set(slugs)) == len(PROGRAMMES) == len(slugs)
    assert slugs == reference(PROGRAMMES, {"sort": sort})


async def test_the_default_sort_is_the_directory_order_and_shares_its_cursors(client):
    plain = await (await client.get("/v1/programs?limit=3", headers=AUTH)).json()
    named = await (await client.get("/v1/programs?limit=3&sort=score", headers=AUTH)).json()
    assert plain == named
    token = plain["page"]["nextCursor"]
    resp = await client.get(f"/v1/programs?sort=score&limit=3&cursor={token}", headers=AUTH)
    assert resp.status == 200


async def test_q_is_compared_by_its_words_for_cursors_and_etags(client):
    first = await client.get("/v1/programs", params={"q": "Vidéo", "limit": "1"}, headers=AUTH)
    body = await first.json()
    assert body["page"]["hasMore"]
    again = await client.get(
        "/v1/programs",
        params={"q": "  VIDEO!", "limit": "1", "cursor": body["page"]["nextCursor"]},
        headers=AUTH,
    )
    assert again.status == 200
    same = await client.get("/v1/programs", params={"q": "video", "limit": "1"}, headers=AUTH)
    assert same.headers["ETag"] == first.headers["ETag"]


async def test_the_next_link_percent_encodes_free_text(client):
    resp = await client.get("/v1/programs", params={"q": "café & été", "limit": "1"}, headers=AUTH)
    link = resp.headers["Link"]
    assert "q=caf%C3%A9%20%26%20%C3%A9t%C3%A9&" in link
    url = link[1 : link.index(">")]
    followed = await client.get(
        urllib.parse.urlsplit(url).path + "?" + url.split("?", 1)[1], headers=AUTH
    )
    assert followed.status == 200


@pytest.mark.parametrize(
    ("made_with", "used_with"),
    [
        ("sort=name", "sort=cookieDays"),
        ("sort=name", ""),
        ("q=cafe", "q=cafes"),
        ("q=cafe", ""),
        ("payout=monthly", "payout=weekly"),
        ("cookieDaysMin=30", "cookieDaysMin=31"),
        ("platform=awin", "platform=rakuten"),
        ("verifiedWithinDays=400", "verifiedWithinDays=401"),
        ("commissionMode=flat", "commissionMode=flat&sort=name"),
        ("minPayoutMax=100", "minPayoutMax=100&q=cafe"),
    ],
)
async def test_a_cursor_is_bound_to_its_sort_and_filters(client, made_with, used_with):
    body = await (await client.get(f"/v1/programs?{made_with}&limit=1", headers=AUTH)).json()
    token = body["page"]["nextCursor"]
    assert token is not None
    resp = await client.get(f"/v1/programs?{used_with}&cursor={token}", headers=AUTH)
    await assert_api_error(resp, 400, "invalid_cursor", "cursor")
    resp = await client.get(f"/v1/programs?{made_with}&limit=2&cursor={token}", headers=AUTH)
    assert resp.status == 200


@pytest.mark.parametrize(
    ("sort", "position"),
    [
        ("name", [5, "slug"]),
        ("cookieDays", ["abc", "slug"]),
        ("createdAt", [True, "slug"]),
        ("score", ["name", "slug"]),
        ("name", ["a", "b", "c"]),
    ],
)
async def test_a_signed_cursor_of_the_wrong_shape_is_refused(client, sort, position):
    token = cursor.encode(client.app[appkeys.SECRET], "programs", {"sort": sort}, position)
    if sort == "score":  # the default sort is left out of what cursors are bound to
        token = cursor.encode(client.app[appkeys.SECRET], "programs", {}, position)
    resp = await client.get(f"/v1/programs?sort={sort}&cursor={token}", headers=AUTH)
    await assert_api_error(resp, 400, "invalid_cursor", "cursor")


SEARCH_CASES = [
    ("q=", "q"),
    ("q=a", "q"),
    ("q=%21%21%21", "q"),
    ("q=x%20y%20z", "q"),
    ("q=" + "%20".join(f"w{i}" for i in range(textsearch.MAX_TERMS + 1)), "q"),
    ("q=" + "a" * 201, "q"),
    ("q=caf%00e", "q"),
    ("q=cafe&q=cafe", "q"),
    ("cookieDaysMin=-1", "cookieDaysMin"),
    ("cookieDaysMin=3651", "cookieDaysMin"),
    ("cookieDaysMin=1.5", "cookieDaysMin"),
    ("cookieDaysMin=", "cookieDaysMin"),
    ("minPayoutMax=1000001", "minPayoutMax"),
    ("minPayoutMax=ten", "minPayoutMax"),
    ("minPayoutMax=49.99", "minPayoutMax"),
    ("payout=Monthly", "payout"),
    ("payout=yearly", "payout"),
    ("payout=", "payout"),
    ("platform=", "platform"),
    ("platform=" + "a" * 201, "platform"),
    ("platform=a%0Ab", "platform"),
    ("commissionMode=percent", "commissionMode"),
    ("commissionMode=FLAT", "commissionMode"),
    ("verifiedWithinDays=3651", "verifiedWithinDays"),
    ("verifiedWithinDays=-5", "verifiedWithinDays"),
    ("sort=relevance", "sort"),
    ("sort=Name", "sort"),
    ("sort=-score", "sort"),
    ("sort=", "sort"),
    ("sort=name&sort=name", "sort"),
    # The documented order: the table's.
    ("sort=nope&q=a", "q"),
    ("limit=0&sort=nope", "sort"),
    ("payout=x&cookieDaysMin=x", "cookieDaysMin"),
]


@pytest.mark.parametrize(("query", "param"), SEARCH_CASES)
async def test_bad_values_name_their_parameter(client, query, param):
    for path in ("/v1/programs", "/v1/programs/facets"):
        if path.endswith("facets") and "sort=" in query:
            continue  # facets take no sort: that is unknown_parameter, tested below
        resp = await client.get(f"{path}?{query}", headers=AUTH)
        await assert_api_error(resp, 400, "invalid_parameter", param)
        assert resp.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("query", ["sort=name", "limit=5", "cursor=abc", "facet=vertical"])
async def test_facets_refuse_what_they_do_not_take(client, query):
    resp = await client.get(f"/v1/programs/facets?{query}", headers=AUTH)
    await assert_api_error(resp, 400, "unknown_parameter", query.split("=")[0])


FACET_QUERIES = [
    {},
    {"vertical": "saas"},
    {"q": "café", "market": "be"},
    {"cookieDaysMin": "30", "payout": "monthly", "platform": "Awin"},
    {"commissionMode": "hybrid", "verifiedWithinDays": "300", "minScore": "50"},
    {"q": "zzz"},
]


@pytest.mark.parametrize("params", FACET_QUERIES, ids=lambda p: urllib.parse.urlencode(p) or "none")
async def test_facets_count_the_reference_answer(client, params):
    resp = await client.get("/v1/programs/facets", params=params, headers=AUTH)
    assert resp.status == 200, await resp.text()
    assert await resp.json() == {"data": reference_facets(PROGRAMMES, params)}
    # The total is the number of rows the same filters list.
    rows, _ = await walk(client, params, [100] * 10)
    assert (await resp.json())["data"]["total"] == len(rows)


@pytest.mark.parametrize("path", ["/v1/programs?q=aff&sort=name", "/v1/programs/facets?q=aff"])
async def test_etag_304_and_gzip_as_every_directory_answer(client, path):
    plain = await client.get(path, headers={**AUTH, "Accept-Encoding": "identity"})
    assert plain.status == 200
    etag = plain.headers["ETag"]
    assert plain.headers["Cache-Control"].startswith("private")
    again = await client.get(
        path, headers={**AUTH, "If-None-Match": etag, "Accept-Encoding": "identity"}
    )
    assert again.status == 304 and again.headers["ETag"] == etag
    zipped = await client.get(path, headers={**AUTH, "Accept-Encoding": "gzip"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert zipped.headers["ETag"] != etag
    assert await zipped.read() == await plain.read()  # aiohttp decodes it


async def test_facets_answer_503_without_a_build(edge_client, dist):
    client = await edge_client()  # dist/ holds nothing yet
    resp = await client.get("/v1/programs/facets", headers=AUTH)
    await assert_api_error(resp, 503, "unavailable")
    assert "Retry-After" in resp.headers
