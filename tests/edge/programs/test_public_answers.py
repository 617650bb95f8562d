"""A public answer (no key, `Cache-Control: public`) is stored by shared caches and replayed
to everyone: it carries only what is the same for every reader. No rate limit headers, no
request id, no link built from the request's Host; per-client headers stay on private
(keyed) answers and on errors, which no cache keeps."""

from __future__ import annotations

import random
import re

import pytest
from support.apierror import assert_api_error
from support.distwriter import publish, random_catalogue
from support.programkit import AUTH

from contract import ratelimit
from edge import appkeys
from edge.http.clientaddress import parse_networks
from edge.http.httpcache import PUBLIC_CACHE_CONTROL
from edge.http.requestid import REQUEST_ID_HEADER

PER_CLIENT = (REQUEST_ID_HEADER, *ratelimit.NAMES)
CODINGS = [{"Accept-Encoding": "identity"}, {"Accept-Encoding": "gzip"}]
HOSTS = ["api.example.com", "evil.example:666", "bad host", "x>; rel=next, <http://y"]
LINK_RE = re.compile(r'<([^<>\s]+)>; rel="next"')


@pytest.fixture(scope="module")
def shared_dist(tmp_path_factory):
    dist = tmp_path_factory.mktemp("public") / "dist"
    publish(dist, random_catalogue(random.Random(31), 30), "b1")
    return dist


def paths(client) -> list[str]:
    slug = client.app[appkeys.DIRECTORY].current.directory.slugs[0]
    return [
        "/v1/programs?limit=5",
        "/v1/programs?vertical=saas&limit=2",
        "/v1/programs/facets",
        f"/v1/programs/{slug}",
    ]


@pytest.mark.parametrize("coding", CODINGS, ids=["identity", "gzip"])
async def test_a_public_answer_carries_no_per_client_header(edge_client, shared_dist, coding):
    client = await edge_client(dist=shared_dist)
    for path in paths(client):
        public = await client.get(path, headers=coding)
        assert public.status == 200, path
        assert public.headers["Cache-Control"] == PUBLIC_CACHE_CONTROL
        for name in PER_CLIENT:
            assert name not in public.headers, (path, name)
        again = await client.get(path, headers={**coding, "If-None-Match": public.headers["ETag"]})
        assert again.status == 304, path
        for name in PER_CLIENT:
            assert name not in again.headers, (path, name)


async def test_a_keyed_answer_keeps_its_per_client_headers(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist)
    for path in paths(client):
        keyed = await client.get(path, headers=AUTH)
        assert keyed.status == 200, path
        for name in PER_CLIENT:
            assert name in keyed.headers, (path, name)


async def test_errors_to_the_public_keep_their_request_id_and_limits(edge_client, shared_dist):
    client = await edge_client(
        dist=shared_dist,
        rate_limit_anonymous=(1, 3600),
        trusted_proxies=parse_networks("127.0.0.1"),
    )
    invalid = await client.get("/v1/programs?limit=0", headers={"X-Forwarded-For": "192.0.2.1"})
    body = await assert_api_error(invalid, 400, "invalid_parameter", "limit")
    assert invalid.headers[REQUEST_ID_HEADER] == body["requestId"]
    assert invalid.headers["Cache-Control"] == "no-store"
    limited = await client.get("/v1/programs", headers={"X-Forwarded-For": "192.0.2.1"})
    body = await assert_api_error(limited, 429, "rate_limited")
    assert limited.headers[REQUEST_ID_HEADER] == body["requestId"]
    assert limited.headers[ratelimit.REMAINING] == "0" and "Retry-After" in limited.headers


@pytest.mark.parametrize("coding", CODINGS, ids=["identity", "gzip"])
async def test_without_a_public_url_the_link_is_relative_whatever_the_host(
    edge_client, shared_dist, coding
):
    client = await edge_client(dist=shared_dist)
    answers = []
    for host in HOSTS:
        for auth in ({}, AUTH):
            resp = await client.get(
                "/v1/programs?limit=2", headers={**coding, **auth, "Host": host}
            )
            assert resp.status == 200
            match = LINK_RE.fullmatch(resp.headers["Link"])
            assert match, resp.headers["Link"]
            assert match[1].startswith("/v1/programs?limit=2&cursor="), match[1]
            if not auth:
                answers.append((await resp.read(), resp.headers["Link"], resp.headers["ETag"]))
    # What a shared cache stores does not depend on the Host the request named.
    assert len(set(answers)) == 1


async def test_a_public_304_carries_the_relative_link(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist)
    first = await client.get("/v1/programs?limit=2", headers={"Host": "evil.example"})
    again = await client.get(
        "/v1/programs?limit=2",
        headers={"Host": "other.example", "If-None-Match": first.headers["ETag"]},
    )
    assert again.status == 304
    assert again.headers["Link"] == first.headers["Link"]
    assert again.headers["Link"].startswith("</v1/programs?")


async def test_with_a_public_url_every_link_starts_with_it(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist, public_url="https://api.example.com")
    for host in HOSTS:
        for auth in ({}, AUTH):
            resp = await client.get("/v1/programs?limit=2", headers={**auth, "Host": host})
            match = LINK_RE.fullmatch(resp.headers["Link"])
            assert match and match[1].startswith("https://api.example.com/v1/programs?limit=2&")
