"""HTTP behaviour of the directory endpoints: ETag/304, caching, gzip, HEAD, Link, CORS."""

from __future__ import annotations

import gzip
import random

import pytest
from support.apierror import assert_api_error
from support.distwriter import publish, random_catalogue
from support.programkit import AUTH, wait_for_build
from yarl import URL

from edge import appkeys
from edge.http.conditional import none_match
from edge.http.httpcache import CACHE_CONTROL, accepts_gzip

IDENTITY = {**AUTH, "Accept-Encoding": "identity"}
GZIP = {**AUTH, "Accept-Encoding": "gzip"}


@pytest.fixture(scope="module")
def shared_dist(tmp_path_factory):
    dist = tmp_path_factory.mktemp("http") / "dist"
    publish(dist, random_catalogue(random.Random(2), 60), "b1")
    return dist


@pytest.fixture
async def client(edge_client, shared_dist):
    return await edge_client(dist=shared_dist)


def a_slug(client) -> str:
    return client.app[appkeys.DIRECTORY].current.directory.slugs[0]


# --- pure helpers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "matches"),
    [
        (None, False),
        ("", False),
        ('"abc"', True),
        ('W/"abc"', True),
        ('"x", "abc"', True),
        ('"x",W/"abc" , "y"', True),
        ("*", True),
        (" * ", True),
        ('"ab"', False),
        ('"abcd"', False),
        ("abc", False),
        ('"x, abc"', False),
        (' , "abc" , ', True),  # empty list elements are allowed
        ('"x",, "abc"', True),
        # Malformed: ignored as a whole, never read as the parts that look valid.
        ('w/"abc"', False),
        ('x"abc"', False),
        ('"x""abc"', False),
        ('"x" junk, "abc"', False),
        ('"abc" "x"', False),
    ],
)
def test_if_none_match_uses_the_weak_comparison(header, matches):
    assert none_match(header, '"abc"') is matches


@pytest.mark.parametrize(
    ("header", "accepted"),
    [
        ("gzip", True),
        ("GZIP", True),
        ("gzip, deflate, br", True),
        ("br;q=1.0, gzip;q=0.8, *;q=0.1", True),
        ("x-gzip", True),
        ("*", True),
        ("", False),
        ("identity", False),
        ("br", False),
        ("gzip;q=0", False),
        ("gzip;q=0.000", False),
        ("*;q=0", False),
        ("gzip;q=0, *", False),
        ("*, gzip;q=0", False),
        ("gzip;q=nan", False),
        ("gzip;q=2", False),
        ("gzip;q=bogus", False),
    ],
)
def test_accept_encoding_is_parsed_with_qualities(header, accepted):
    assert accepts_gzip(header) is accepted


# --- ETag and 304 ----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/programs?limit=5&market=FR", "/v1/programs/{slug}"])
async def test_etag_and_not_modified(client, path):
    url = path.format(slug=a_slug(client))
    first = await client.get(url, headers=IDENTITY)
    assert first.status == 200
    etag = first.headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"') and not etag.startswith("W/")
    assert first.headers["Cache-Control"] == CACHE_CONTROL
    assert "Accept-Encoding" in first.headers["Vary"]
    again = await client.get(url, headers=IDENTITY)
    assert again.headers["ETag"] == etag
    for header in (etag, f"W/{etag}", f'"nope", {etag}', "*"):
        resp = await client.get(url, headers={**IDENTITY, "If-None-Match": header})
        assert resp.status == 304, header
        assert await resp.read() == b""
        assert resp.headers["ETag"] == etag
        assert resp.headers["Cache-Control"] == CACHE_CONTROL
        assert "Accept-Encoding" in resp.headers["Vary"]
        assert "Content-Encoding" not in resp.headers
    stale = await client.get(url, headers={**IDENTITY, "If-None-Match": '"stale"'})
    assert stale.status == 200
    assert await stale.read() == await first.read()


async def test_list_etags_differ_by_query_and_agree_on_normalised_ones(client):
    async def tag(query):
        return (await client.get(f"/v1/programs?{query}", headers=IDENTITY)).headers["ETag"]

    assert await tag("market=fr") == await tag("market=FR")
    tags = {await tag(q) for q in ("", "limit=5", "market=FR", "minScore=50", "recurring=true")}
    assert len(tags) == 5


async def test_a_304_still_needs_a_good_key_and_valid_parameters(client):
    url = "/v1/programs?limit=3"
    etag = (await client.get(url, headers=IDENTITY)).headers["ETag"]
    wrong = {"If-None-Match": etag, "Authorization": "Bearer wrong-key"}
    assert (await client.get(url, headers=wrong)).status == 401
    bad = await client.get("/v1/programs?limit=0", headers={**IDENTITY, "If-None-Match": "*"})
    assert bad.status == 400


@pytest.mark.process
async def test_a_new_build_changes_the_list_etag(edge_client, dist):
    programmes = random_catalogue(random.Random(3), 20)
    publish(dist, programmes, "b1")
    client = await edge_client()
    before = (await client.get("/v1/programs", headers=IDENTITY)).headers["ETag"]
    slug = programmes[0]["slug"]
    doc_before = (await client.get(f"/v1/programs/{slug}", headers=IDENTITY)).headers["ETag"]
    publish(dist, programmes, "b2")
    await wait_for_build(client, "b2")
    resp = await client.get("/v1/programs", headers={**IDENTITY, "If-None-Match": before})
    assert resp.status == 200 and resp.headers["ETag"] != before
    # A by-slug tag comes from the document itself: an unchanged programme keeps it.
    resp = await client.get(
        f"/v1/programs/{slug}", headers={**IDENTITY, "If-None-Match": doc_before}
    )
    assert resp.status == 304


# --- gzip --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/programs?limit=20", "/v1/programs/{slug}"])
async def test_gzip_when_accepted(client, path):
    url = path.format(slug=a_slug(client))
    plain = await client.get(url, headers=IDENTITY)
    packed = await client.get(url, headers=GZIP, auto_decompress=False)
    assert "Content-Encoding" not in plain.headers
    assert packed.headers["Content-Encoding"] == "gzip"
    assert packed.headers["Vary"] == plain.headers["Vary"] == "Accept-Encoding"
    raw = await packed.read()
    assert gzip.decompress(raw) == await plain.read()
    assert len(raw) < len(await plain.read())
    # A different representation has a different strong tag, and revalidates on its own.
    assert packed.headers["ETag"] != plain.headers["ETag"]
    etag = packed.headers["ETag"]
    again = await client.get(url, headers={**GZIP, "If-None-Match": etag}, auto_decompress=False)
    assert again.status == 304
    # Refused codings are honoured.
    for refusal in ("gzip;q=0", "br", "identity"):
        resp = await client.get(url, headers={**AUTH, "Accept-Encoding": refusal})
        assert "Content-Encoding" not in resp.headers


async def test_small_bodies_are_not_compressed(client):
    resp = await client.get("/v1/programs?vertical=autre&model=cpl&market=JP", headers=GZIP)
    assert (await resp.json())["data"] == []
    assert "Content-Encoding" not in resp.headers
    assert resp.headers["Vary"] == "Accept-Encoding"


# --- HEAD and Link -------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/programs?limit=5", "/v1/programs/{slug}"])
async def test_head_has_the_headers_of_get_and_no_body(client, path):
    url = path.format(slug=a_slug(client))
    got = await client.get(url, headers=IDENTITY)
    head = await client.head(url, headers=IDENTITY)
    assert head.status == 200
    assert await head.read() == b""
    for name in ("ETag", "Content-Type", "Content-Length", "Cache-Control", "Vary"):
        assert head.headers[name] == got.headers[name], name


async def test_head_also_needs_a_good_key(client):
    resp = await client.head("/v1/programs", headers={"Authorization": "Bearer wrong-key"})
    assert resp.status == 401


async def test_link_header_keeps_the_query_and_replaces_the_cursor(client):
    first = await client.get("/v1/programs?market=fr&limit=3&minScore=1", headers=IDENTITY)
    body = await first.json()
    link = first.headers["Link"]
    target, rel = link.split(";", 1)
    assert rel.strip() == 'rel="next"'
    url = URL(target.strip().removeprefix("<").removesuffix(">"))
    # Relative to the request's URL (no --public-url): never the request's Host.
    assert not url.is_absolute() and url.path == "/v1/programs"
    assert dict(url.query) == {
        "market": "fr",
        "limit": "3",
        "minScore": "1",
        "cursor": body["page"]["nextCursor"],
    }
    second = await client.get(url.path_qs, headers=IDENTITY)
    assert second.status == 200
    link2 = URL(second.headers["Link"].split(";")[0].strip("<>"))
    assert list(link2.query.getall("cursor")) == [(await second.json())["page"]["nextCursor"]]


@pytest.mark.parametrize("coding", ["identity", "gzip"])
async def test_a_cached_page_links_the_same_whatever_the_host(client, coding):
    # The page and its headers are cached after the first request: no request's Host may
    # get into them, the first one's included.
    path = "/v1/programs?limit=2"
    hosts = ["a.example", "b.example:8443", "a.example"]
    links = []
    for host in hosts:
        resp = await client.get(path, headers={**AUTH, "Accept-Encoding": coding, "Host": host})
        assert resp.status == 200
        links.append(resp.headers["Link"])
    assert len(set(links)) == 1 and links[0].startswith("</v1/programs?limit=2&cursor=")


# --- CORS ----------------------------------------------------------------------------------

PREFLIGHT = {"Origin": "https://app.example", "Access-Control-Request-Method": "GET"}
EXPOSED = {
    "etag",
    "link",
    "x-request-id",
    "ratelimit-limit",
    "ratelimit-remaining",
    "ratelimit-reset",
    "ratelimit-policy",
    "ratelimit",
    "retry-after",
}


def exposed(resp) -> set[str]:
    return {h.strip().lower() for h in resp.headers["Access-Control-Expose-Headers"].split(",")}


@pytest.mark.parametrize("path", ["/v1/programs", "/v1/programs/{slug}"])
async def test_preflight_needs_no_key_and_allows_get(client, path):
    resp = await client.options(
        path.format(slug=a_slug(client)),
        headers={**PREFLIGHT, "Access-Control-Request-Headers": "authorization,if-none-match"},
    )
    assert resp.status == 200 and await resp.read() == b""
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    assert resp.headers["Access-Control-Allow-Methods"] == "GET, HEAD"
    allowed = {h.strip().lower() for h in resp.headers["Access-Control-Allow-Headers"].split(",")}
    assert allowed == {"authorization", "if-none-match"}
    assert int(resp.headers["Access-Control-Max-Age"]) > 0
    assert resp.headers["X-Request-Id"].startswith("req_")


async def test_options_to_an_unknown_path_is_still_404(client):
    resp = await client.options("/v1/nowhere", headers=PREFLIGHT)
    await assert_api_error(resp, 404, "not_found")


async def test_options_that_is_not_a_preflight_is_405(client):
    resp = await client.options("/v1/programs")
    assert resp.status == 405
    assert resp.headers["Allow"] == "GET, HEAD"


@pytest.mark.parametrize(
    ("path", "headers", "status"),
    [
        ("/v1/programs", AUTH, 200),
        ("/v1/programs/{slug}", AUTH, 200),
        ("/v1/programs", {}, 200),
        ("/v1/programs", {"Authorization": "Bearer wrong-key"}, 401),
        ("/v1/programs?limit=0", AUTH, 400),
        ("/v1/programs/nope", AUTH, 404),
        ("/v1/nowhere", AUTH, 404),
    ],
)
async def test_answers_and_errors_carry_cors_headers(client, path, headers, status):
    resp = await client.get(
        path.format(slug=a_slug(client)), headers={**headers, "Origin": "https://app.example"}
    )
    assert resp.status == status
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    assert exposed(resp) == EXPOSED


@pytest.fixture
async def listed_client(edge_client, shared_dist):
    origins = "https://app.example, https://admin.example/"
    return await edge_client(dist=shared_dist, cors_origins=origins)


async def test_a_listed_origin_is_echoed_with_vary_origin(listed_client):
    for origin in ("https://app.example", "https://admin.example"):
        resp = await listed_client.get("/v1/programs", headers={**IDENTITY, "Origin": origin})
        assert resp.headers["Access-Control-Allow-Origin"] == origin
        assert {v.strip() for v in resp.headers["Vary"].split(",")} == {"Accept-Encoding", "Origin"}
        assert exposed(resp) == EXPOSED
        pre = await listed_client.options("/v1/programs", headers={**PREFLIGHT, "Origin": origin})
        assert pre.status == 200 and pre.headers["Access-Control-Allow-Origin"] == origin
        assert "Origin" in pre.headers["Vary"]


async def test_an_unlisted_origin_gets_no_cors_grant(listed_client):
    evil = {"Origin": "https://evil.example"}
    resp = await listed_client.get("/v1/programs", headers={**IDENTITY, **evil})
    assert resp.status == 200
    assert "Access-Control-Allow-Origin" not in resp.headers
    assert "Origin" in resp.headers["Vary"]
    pre = await listed_client.options("/v1/programs", headers={**PREFLIGHT, **evil})
    assert pre.status == 200
    assert "Access-Control-Allow-Origin" not in pre.headers
    # A plain request still says the answer depends on Origin, for caches.
    plain = await listed_client.get("/v1/programs", headers=IDENTITY)
    assert "Origin" in plain.headers["Vary"]
