"""Bad input for both directory endpoints: the right status, `code` and `param`, in order."""

from __future__ import annotations

import random

import pytest
from multidict import CIMultiDict
from support.apierror import assert_api_error
from support.distwriter import publish, random_catalogue
from support.programkit import AUTH, TEST_KEY

from edge import appkeys
from edge.request import cursor

LIST_CASES = [
    # (query string, code, param)
    ("vertical=SAAS", "invalid_parameter", "vertical"),
    ("vertical=nope", "invalid_parameter", "vertical"),
    ("vertical=", "invalid_parameter", "vertical"),
    ("vertical", "invalid_parameter", "vertical"),
    ("vertical=saas&vertical=mode", "invalid_parameter", "vertical"),
    ("vertical=saas&vertical=saas", "invalid_parameter", "vertical"),
    ("model=CPS", "invalid_parameter", "model"),
    ("model=", "invalid_parameter", "model"),
    ("model=cps&model=cpa", "invalid_parameter", "model"),
    ("market=fra", "invalid_parameter", "market"),
    ("market=f1", "invalid_parameter", "market"),
    ("market=f", "invalid_parameter", "market"),
    ("market=%C3%A9t", "invalid_parameter", "market"),
    ("market=", "invalid_parameter", "market"),
    ("market=zz", "invalid_parameter", "market"),
    ("market=UK", "invalid_parameter", "market"),
    ("market=fr&market=FR", "invalid_parameter", "market"),
    ("recurring=True", "invalid_parameter", "recurring"),
    ("recurring=1", "invalid_parameter", "recurring"),
    ("recurring=yes", "invalid_parameter", "recurring"),
    ("recurring=", "invalid_parameter", "recurring"),
    ("recurring=true&recurring=true", "invalid_parameter", "recurring"),
    ("minScore=-1", "invalid_parameter", "minScore"),
    ("minScore=101", "invalid_parameter", "minScore"),
    ("minScore=1.5", "invalid_parameter", "minScore"),
    ("minScore=%2B5", "invalid_parameter", "minScore"),
    ("minScore=%205", "invalid_parameter", "minScore"),
    ("minScore=0x10", "invalid_parameter", "minScore"),
    ("minScore=abc", "invalid_parameter", "minScore"),
    ("minScore=99999999999999999999", "invalid_parameter", "minScore"),
    ("minScore=", "invalid_parameter", "minScore"),
    ("minScore=5&minScore=6", "invalid_parameter", "minScore"),
    ("limit=0", "invalid_parameter", "limit"),
    ("limit=101", "invalid_parameter", "limit"),
    ("limit=-1", "invalid_parameter", "limit"),
    ("limit=1e2", "invalid_parameter", "limit"),
    ("limit=ten", "invalid_parameter", "limit"),
    ("limit=%D9%A3", "invalid_parameter", "limit"),  # an Arabic-Indic digit
    ("limit=", "invalid_parameter", "limit"),
    ("limit=5&limit=5", "invalid_parameter", "limit"),
    ("cursor=", "invalid_parameter", "cursor"),
    ("cursor=a&cursor=b", "invalid_parameter", "cursor"),
    ("cursor=garbage", "invalid_cursor", "cursor"),
    ("cursor=abc.def", "invalid_cursor", "cursor"),
    ("cursor=.", "invalid_cursor", "cursor"),
    ("cursor=%E2%82%AC.%E2%82%AC", "invalid_cursor", "cursor"),
    ("cursor=" + "A" * 2000 + ".AAAA", "invalid_cursor", "cursor"),
    ("foo=1", "unknown_parameter", "foo"),
    ("Vertical=saas", "unknown_parameter", "Vertical"),
    ("min_score=5", "unknown_parameter", "min_score"),
    ("page=2", "unknown_parameter", "page"),
    # Not printable: still the one parameter at fault, so named (JSON escapes it).
    ("%00=1", "unknown_parameter", "\x00"),
    ("a%0Ab=1", "unknown_parameter", "a\nb"),
    ("limit=" + "0" * 30 + "1000", "invalid_parameter", "limit"),
    ("limit=" + "9" * 5000, "invalid_parameter", "limit"),
    # The documented order: unknown names first, then each parameter in table order.
    ("limit=0&foo=1", "unknown_parameter", "foo"),
    ("limit=0&vertical=nope", "invalid_parameter", "vertical"),
    ("minScore=200&market=x", "invalid_parameter", "market"),
    ("cursor=garbage&limit=0", "invalid_parameter", "limit"),
]


@pytest.fixture(scope="module")
def shared_dist(tmp_path_factory):
    """One build for the whole module: these tests only read it."""
    dist = tmp_path_factory.mktemp("bad-input") / "dist"
    publish(dist, random_catalogue(random.Random(1), 40), "b1")
    return dist


@pytest.fixture
async def client(edge_client, shared_dist):
    return await edge_client(dist=shared_dist)


async def assert_error(resp, status, code, param):
    """The error, and never a cacheable one."""
    await assert_api_error(resp, status, code, param)
    assert resp.headers["Cache-Control"] == "no-store"
    assert "ETag" not in resp.headers


@pytest.mark.parametrize("limit", ["05", "0000000005", "0" * 40 + "5", "0" * 5000 + "5"])
async def test_leading_zeros_are_digits_like_any_other(client, limit):
    resp = await client.get(f"/v1/programs?limit={limit}", headers=AUTH)
    assert resp.status == 200
    assert (await resp.json())["page"]["limit"] == 5


@pytest.mark.parametrize(("query", "code", "param"), LIST_CASES)
async def test_list_rejects_bad_parameters(client, query, code, param):
    resp = await client.get(f"/v1/programs?{query}", headers=AUTH)
    await assert_error(resp, 400, code, param)


def _cursor_with(client, endpoint, filters, position):
    return cursor.encode(client.app[appkeys.SECRET], endpoint, filters, position)


async def _real_cursor(client, query):
    body = await (await client.get(f"/v1/programs?{query}&limit=2", headers=AUTH)).json()
    return body["page"]["nextCursor"]


async def test_a_cursor_is_bound_to_its_filters(client):
    token = await _real_cursor(client, "market=FR")
    for other in ("", "market=BE", "market=FR&vertical=saas", "market=FR&minScore=0"):
        resp = await client.get(f"/v1/programs?{other}&cursor={token}", headers=AUTH)
        await assert_error(resp, 400, "invalid_cursor", "cursor")
    resp = await client.get(f"/v1/programs?market=fr&limit=7&cursor={token}", headers=AUTH)
    assert resp.status == 200  # the same filters (market normalised); limit may change


async def test_tampered_and_foreign_cursors_are_refused(client):
    token = await _real_cursor(client, "")
    body, sig = token.split(".")
    flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    candidates = [
        f"{flipped}.{sig}",
        f"{body}.{sig[:-1]}",
        f"{body}.{sig}x",
        f"{body}{sig}",
        # Characters base64 decoding would skip, and padding: not the text we wrote.
        f"{body}.{sig}=",
        f"{body}.{sig}==",
        f"{body}=.{sig}",
        f"{body}.{sig} ",
        f"{body}.{sig}\n",
        f"{body[:5]}!{body[5:]}.{sig}",
        f"{body[:5]}+{body[5:]}.{sig}",
        f"{body}.{sig[:3]}={sig[3:]}",
        # Made with another secret.
        cursor.encode(b"another-secret-" + b"y" * 40, "programs", {}, [50, "x"]),
        # Made for the other list endpoint.
        _cursor_with(client, "commissions", {}, ["2025-01-01T00:00:00Z", "c_1"]),
        # Signed, but not a position this endpoint ever writes.
        _cursor_with(client, "programs", {}, ["50", "x"]),
        _cursor_with(client, "programs", {}, [50]),
        _cursor_with(client, "programs", {}, [101, "x"]),
        _cursor_with(client, "programs", {}, [True, "x"]),
        _cursor_with(client, "programs", {}, [50, "x", "y"]),
    ]
    for bad in candidates:
        resp = await client.get("/v1/programs", params={"cursor": bad}, headers=AUTH)
        await assert_error(resp, 400, "invalid_cursor", "cursor")


AUTH_CASES: list[tuple[str, str | None]] = [
    # (Authorization header, code): a header, even an empty one, is a key to check (no header
    # at all is the public: test_anonymous.py).
    ("", "missing_api_key"),
    ("Bearer", "missing_api_key"),
    ("Bearer ", "missing_api_key"),
    (f"Basic {TEST_KEY}", "missing_api_key"),
    (f"Token {TEST_KEY}", "missing_api_key"),
    (TEST_KEY, "missing_api_key"),
    ("Bearer wrong-key", "invalid_api_key"),
    (f"Bearer {TEST_KEY}x", "invalid_api_key"),
    (f"Bearer {TEST_KEY[:-1]}", "invalid_api_key"),
    # The key is exact: only spaces and tabs around it are HTTP's, other spaces are not.
    (f"Bearer {TEST_KEY}\u00a0", "invalid_api_key"),
    (f"Bearer \u2003{TEST_KEY}", "invalid_api_key"),
    (f"Bearer {TEST_KEY}\u3000", "invalid_api_key"),
    (f"Bearer  {TEST_KEY}\t", None),  # extra ASCII whitespace is fine
]


@pytest.mark.parametrize("path", ["/v1/programs", "/v1/programs/{slug}"])
@pytest.mark.parametrize(("header", "code"), AUTH_CASES)
async def test_both_endpoints_need_a_valid_key(client, path, header, code):
    slug = client.app[appkeys.DIRECTORY].current.directory.slugs[0]
    headers = {"Authorization": header}
    # Bad parameters too: the key is checked first.
    resp = await client.get(path.format(slug=slug) + "?limit=0", headers=headers)
    if code is None:  # a good key: then the bad parameter is what fails (the list has one)
        assert resp.status in (200, 400)
        return
    await assert_error(resp, 401, code, None)
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("path", ["/v1/programs", "/v1/programs/{slug}"])
@pytest.mark.parametrize(
    "second", [f"Bearer {TEST_KEY}", "Bearer garbage", "Basic eDp5"], ids=["same", "bad", "basic"]
)
async def test_several_authorization_headers_are_no_usable_key(client, path, second):
    slug = client.app[appkeys.DIRECTORY].current.directory.slugs[0]
    headers = CIMultiDict([("Authorization", f"Bearer {TEST_KEY}"), ("Authorization", second)])
    resp = await client.get(path.format(slug=slug), headers=headers)
    await assert_error(resp, 401, "missing_api_key", None)


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
async def test_the_scheme_word_is_case_insensitive(client, scheme):
    resp = await client.get("/v1/programs", headers={"Authorization": f"{scheme} {TEST_KEY}"})
    assert resp.status == 200


ODD_SLUGS = [
    "nope",
    "{upper}",
    "{slug}-",
    "-{slug}",
    "{slug}%20",
    "{slug}%00",
    "{slug}%2Fx",
    "a" * 65,
    "a" * 4000,
    "%C3%A9t%C3%A9",
    "%FF%FE",
    "{slug}.json",
]


@pytest.mark.parametrize("odd", ODD_SLUGS)
async def test_odd_slugs_are_the_same_404(client, odd):
    slug = client.app[appkeys.DIRECTORY].current.directory.slugs[0]
    path = "/v1/programs/" + odd.format(slug=slug, upper=slug.upper())
    resp = await client.get(path, headers=AUTH)
    await assert_error(resp, 404, "not_found", None)
    reference = await client.get("/v1/programs/nope", headers=AUTH)
    strip = {"requestId": None}
    assert {**(await resp.json()), **strip} == {**(await reference.json()), **strip}


async def test_dot_segments_are_a_404_too(client):
    resp = await client.get("/v1/programs/%2e%2e", headers=AUTH)
    await assert_error(resp, 404, "not_found", None)


async def test_the_by_slug_endpoint_ignores_query_parameters(client):
    # It takes none, and 400 is not among its statuses.
    slug = client.app[appkeys.DIRECTORY].current.directory.slugs[0]
    resp = await client.get(f"/v1/programs/{slug}?limit=0&foo=bar", headers=AUTH)
    assert resp.status == 200
    assert (await resp.json())["data"]["slug"] == slug


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
async def test_other_methods_are_405_with_allow(client, method):
    resp = await client.request(method, "/v1/programs", headers=AUTH)
    await assert_error(resp, 405, "method_not_allowed", None)
    assert resp.headers["Allow"] == "GET, HEAD"


@pytest.mark.parametrize("target", [b"/v1/programs", b"/v1/nope", b"api.example:443"])
async def test_connect_is_405_whatever_its_target(client, target):
    # CONNECT names a host and port, not a path: it is a method the API does not take,
    # never an unknown path (a 404 would have no Allow).
    import asyncio
    import json

    reader, writer = await asyncio.open_connection("127.0.0.1", client.port)
    writer.write(b"CONNECT " + target + b" HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 405 ")
    assert b"\r\nAllow: GET, HEAD" in head
    assert json.loads(body)["code"] == "method_not_allowed"


@pytest.mark.parametrize(
    ("market", "hint"),
    [("zz", "ZZ is none"), ("UK", "the United Kingdom is GB"), ("el", "Greece is GR")],
)
async def test_a_market_that_is_no_country_is_refused_with_a_hint(client, market, hint):
    # It answered an empty page, which reads as "no programme there" rather than a typo.
    resp = await client.get(f"/v1/programs?market={market}", headers=AUTH)
    await assert_error(resp, 400, "invalid_parameter", "market")
    assert hint in (await resp.json())["message"]
