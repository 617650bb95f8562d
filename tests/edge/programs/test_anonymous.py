"""The directory answers the public: a request without an Authorization header gets the same
bytes as a keyed one, cacheable by shared caches (a CDN), under a per-address limit whose
memory stays bounded; a request with the header is authenticated as always."""

from __future__ import annotations

import functools
import random

import pytest
from support.apierror import assert_api_error
from support.distwriter import publish, random_catalogue
from support.programkit import AUTH

from contract import ratelimit
from edge import appkeys, lifecycle
from edge.http.clientaddress import parse_networks
from edge.http.httpcache import CACHE_CONTROL, PUBLIC_CACHE_CONTROL
from edge.http.limiter import MemoryLimiter

GZIP = {"Accept-Encoding": "gzip"}
IDENTITY = {"Accept-Encoding": "identity"}
TRUSTED = parse_networks("127.0.0.1")


@pytest.fixture(scope="module")
def shared_dist(tmp_path_factory):
    dist = tmp_path_factory.mktemp("anonymous") / "dist"
    publish(dist, random_catalogue(random.Random(11), 40), "b1")
    return dist


def from_address(address: str, headers: dict[str, str] | None = None) -> dict[str, str]:
    return {**(headers or {}), "X-Forwarded-For": address}


def paths(client) -> list[str]:
    slug = client.app[appkeys.DIRECTORY].current.directory.slugs[0]
    return ["/v1/programs?limit=5", "/v1/programs?vertical=saas&limit=2", f"/v1/programs/{slug}"]


@pytest.mark.parametrize("coding", [IDENTITY, GZIP], ids=["identity", "gzip"])
async def test_the_public_gets_the_keyed_bytes_with_public_caching(
    edge_client, shared_dist, coding
):
    client = await edge_client(dist=shared_dist)
    for path in paths(client):
        keyed = await client.get(path, headers={**AUTH, **coding}, auto_decompress=False)
        public = await client.get(path, headers=coding, auto_decompress=False)
        assert (keyed.status, public.status) == (200, 200), path
        assert await public.read() == await keyed.read(), path
        assert public.headers["ETag"] == keyed.headers["ETag"]
        assert public.headers.get("Content-Encoding") == keyed.headers.get("Content-Encoding")
        assert keyed.headers["Cache-Control"] == CACHE_CONTROL
        assert public.headers["Cache-Control"] == PUBLIC_CACHE_CONTROL
        directives = {d.strip().split("=")[0] for d in PUBLIC_CACHE_CONTROL.split(",")}
        assert {"public", "s-maxage", "stale-while-revalidate"} <= directives
        for answer in (keyed, public):
            # A shared cache keys on the URL and the coding only: never on who asked.
            assert answer.headers["Vary"] == "Accept-Encoding"


async def test_the_public_revalidates_and_gets_a_public_304(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist)
    for path in paths(client):
        first = await client.get(path, headers=IDENTITY)
        again = await client.get(path, headers={**IDENTITY, "If-None-Match": first.headers["ETag"]})
        assert again.status == 304, path
        assert again.headers["Cache-Control"] == PUBLIC_CACHE_CONTROL
        assert again.headers["ETag"] == first.headers["ETag"]
        keyed = await client.get(
            path, headers={**AUTH, **IDENTITY, "If-None-Match": first.headers["ETag"]}
        )
        assert keyed.status == 304 and keyed.headers["Cache-Control"] == CACHE_CONTROL


@pytest.mark.parametrize(
    ("header", "code"),
    [
        ("", "missing_api_key"),
        ("Bearer", "missing_api_key"),
        ("Basic eDp5", "missing_api_key"),
        ("Bearer afk_not_a_key", "invalid_api_key"),
    ],
)
async def test_any_authorization_header_is_checked_never_downgraded(
    edge_client, shared_dist, header, code
):
    client = await edge_client(dist=shared_dist)
    for path in paths(client):
        resp = await client.get(path, headers={"Authorization": header})
        body = await assert_api_error(resp, 401, code)
        assert body["code"] == code
        assert resp.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("path", ["/v1/me", "/v1/commissions", "/v1/commissions/com_00000001"])
async def test_the_account_paths_still_need_a_key(edge_client, shared_dist, path):
    client = await edge_client(dist=shared_dist)
    await assert_api_error(await client.get(path), 401, "missing_api_key")


async def test_errors_to_the_public_are_not_cached(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist)
    for path, status, code, param in [
        ("/v1/programs?limit=0", 400, "invalid_parameter", "limit"),
        ("/v1/programs/no-such-programme", 404, "not_found", None),
    ]:
        resp = await client.get(path)
        await assert_api_error(resp, status, code, param)
        assert resp.headers["Cache-Control"] == "no-store"


async def test_the_public_is_limited_per_address(edge_client, shared_dist):
    client = await edge_client(
        dist=shared_dist, rate_limit_anonymous=(2, 3600), trusted_proxies=TRUSTED
    )
    for _ in range(2):
        resp = await client.get("/v1/programs", headers=from_address("203.0.113.7"))
        assert resp.status == 200
        # A public answer is replayed by shared caches: it says nothing of one client's quota.
        assert ratelimit.LIMIT not in resp.headers
    limited = await client.get("/v1/programs", headers=from_address("203.0.113.7"))
    body = await assert_api_error(limited, 429, "rate_limited")
    assert "2 requests per 3600 s" in body["message"]
    assert limited.headers[ratelimit.LIMIT] == "2" and limited.headers[ratelimit.REMAINING] == "0"
    assert int(limited.headers["Retry-After"]) >= 1
    # Another address has its own allowance; a key from the limited address has its own.
    other = await client.get("/v1/programs", headers=from_address("198.51.100.9"))
    assert other.status == 200
    keyed = await client.get("/v1/programs", headers=from_address("203.0.113.7", AUTH))
    assert keyed.status == 200 and keyed.headers[ratelimit.LIMIT] != "2"


async def test_a_forwarded_address_counts_only_from_a_trusted_proxy(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist, rate_limit_anonymous=(2, 3600))
    # No trusted proxy: X-Forwarded-For is the client's own writing, and the peer counts.
    for address in ("203.0.113.1", "203.0.113.2"):
        assert (await client.get("/v1/programs", headers=from_address(address))).status == 200
    spoofed = await client.get("/v1/programs", headers=from_address("203.0.113.3"))
    await assert_api_error(spoofed, 429, "rate_limited")


async def test_memory_stays_bounded_under_many_addresses(edge_client, shared_dist, monkeypatch):
    capacity = 64
    monkeypatch.setattr(lifecycle, "MemoryLimiter", functools.partial(MemoryLimiter, capacity))
    client = await edge_client(
        dist=shared_dist, rate_limit_anonymous=(1, 3600), trusted_proxies=TRUSTED
    )
    limiter = client.app[appkeys.LIMITER]
    for number in range(400):
        address = f"10.{number // 65536}.{number // 256 % 256}.{number % 256}"
        resp = await client.get("/v1/programs?limit=1", headers=from_address(address))
        assert resp.status == 200, address  # each address's first request
        assert len(limiter) <= capacity
    # The most recent addresses are still remembered, and still limited.
    again = await client.get("/v1/programs?limit=1", headers=from_address("10.0.1.143"))
    await assert_api_error(again, 429, "rate_limited")
