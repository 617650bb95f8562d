"""What clients receive from a directory page, gzip or not, served through aiohttp's
public API only: the headers and bodies, and how they are made (once per page)."""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import json
import random

import pytest
from aiohttp import web
from support.distwriter import publish, random_catalogue
from support.programkit import AUTH, TEST_KEY, directory_state

from edge import serving
from edge.http import errors

IDENTITY = {**AUTH, "Accept-Encoding": "identity"}
GZIP = {**AUTH, "Accept-Encoding": "gzip"}


@pytest.fixture(scope="module")
def shared_dist(tmp_path_factory):
    dist = tmp_path_factory.mktemp("answers") / "dist"
    publish(dist, random_catalogue(random.Random(5), 60), "b1")
    return dist


async def test_gzip_and_identity_carry_the_same_page(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist)
    plain = await client.get("/v1/programs", headers=IDENTITY)
    # auto_decompress off: the bytes as they were sent.
    coded = await client.get("/v1/programs", headers=GZIP, auto_decompress=False)
    assert plain.status == coded.status == 200
    assert "Content-Encoding" not in plain.headers
    assert coded.headers["Content-Encoding"] == "gzip"
    for resp in (plain, coded):
        assert resp.headers["Vary"] == "Accept-Encoding"
        assert resp.headers["Content-Type"] == "application/json"
        assert resp.headers["X-Request-Id"].startswith("req_")
        assert resp.headers["Access-Control-Allow-Origin"] == "*"
        assert int(resp.headers["RateLimit-Remaining"]) >= 0
    assert coded.headers["ETag"] == plain.headers["ETag"][:-1] + '-gz"'
    body = await plain.read()
    sent = await coded.read()
    assert int(coded.headers["Content-Length"]) == len(sent) < len(body)
    assert gzip.decompress(sent) == body
    assert json.loads(body)["data"]


@pytest.mark.parametrize("asked", [IDENTITY, GZIP], ids=["identity", "gzip"])
@pytest.mark.parametrize("auth", [AUTH, {}], ids=["keyed", "public"])
async def test_a_page_is_made_once_then_sent_as_kept(edge_client, shared_dist, asked, auth):
    """A repeat of a page sends the same body object and the same header dict each time,
    whatever Host it names: nothing is serialised, compressed or formatted per request."""
    client = await edge_client(dist=shared_dist)
    headers = {**asked, **auth, "Host": "api.example"}
    first = await client.get("/v1/programs?limit=3", headers=headers, auto_decompress=False)
    first_body = await first.read()
    page = directory_state(client).current.pages.get("limit=3")
    assert page is not None
    (kept,) = page.headers.values()
    coded = page.gzipped
    for host in ("api.example", "b.example"):
        again = await client.get(
            "/v1/programs?limit=3", headers={**headers, "Host": host}, auto_decompress=False
        )
        assert await again.read() == first_body
        assert len(page.headers) == 1 and next(iter(page.headers.values())) is kept
        assert page.gzipped is coded  # compressed once (or never, for identity)
        assert again.headers["Link"].startswith("</v1/programs?limit=3&cursor=")


@pytest.mark.parametrize("asked", [IDENTITY, GZIP], ids=["identity", "gzip"])
async def test_if_none_match_of_the_coding_sent_is_a_304(edge_client, shared_dist, asked):
    client = await edge_client(dist=shared_dist)
    first = await client.get("/v1/programs", headers=asked)
    etag = first.headers["ETag"]
    again = await client.get("/v1/programs", headers={**asked, "If-None-Match": etag})
    assert again.status == 304
    assert again.headers["ETag"] == etag and again.headers["Vary"] == "Accept-Encoding"
    assert "RateLimit-Remaining" in again.headers and "X-Request-Id" in again.headers
    assert await again.read() == b""
    # The other coding's tag does not match this one.
    other = etag[:-4] + '"' if etag.endswith('-gz"') else etag[:-1] + '-gz"'
    third = await client.get("/v1/programs", headers={**asked, "If-None-Match": other})
    assert third.status == 200


async def test_head_answers_the_headers_of_get_without_a_body(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist)
    got = await client.get("/v1/programs", headers=IDENTITY)
    head = await client.head("/v1/programs", headers=IDENTITY)
    assert head.status == 200 and await head.read() == b""
    assert head.headers["ETag"] == got.headers["ETag"]
    assert head.headers["Content-Length"] == got.headers["Content-Length"]


async def test_listed_origins_are_echoed_with_vary(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist, cors_origins="https://app.example")
    resp = await client.get("/v1/programs", headers={**GZIP, "Origin": "https://app.example"})
    assert resp.headers["Access-Control-Allow-Origin"] == "https://app.example"
    assert resp.headers["Vary"] == "Accept-Encoding, Origin"
    other = await client.get("/v1/programs", headers={**GZIP, "Origin": "https://x.example"})
    assert "Access-Control-Allow-Origin" not in other.headers


async def test_errors_are_the_one_shape_with_their_headers(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist)
    for path, status, code in [
        ("/v1/programs?limit=0", 400, "invalid_parameter"),
        ("/v1/programs/nope", 404, "not_found"),
        ("/nope", 404, "not_found"),
    ]:
        resp = await client.get(path, headers=AUTH)
        body = await resp.json()
        assert (resp.status, body["code"]) == (status, code), path
        assert body["requestId"] == resp.headers["X-Request-Id"]
        assert resp.headers["Cache-Control"] == "no-store"
    resp = await client.post("/v1/programs", headers=AUTH)
    assert resp.status == 405 and resp.headers["Allow"] == "GET, HEAD"
    resp = await client.get("/v1/programs", headers={"Authorization": "Bearer"})
    assert resp.status == 401 and resp.headers["WWW-Authenticate"] == 'Bearer realm="api"'


def test_unavailable_is_a_503_with_retry_after():
    error = errors.unavailable("later", 7, {"Cache-Control": "no-store"})
    assert (error.status, error.code) == (503, "unavailable")
    assert error.headers == {"Cache-Control": "no-store", "Retry-After": "7"}
    response = errors.error_response(error, "req_1")
    assert response.status == 503 and response.headers["Retry-After"] == "7"


async def test_the_runner_serves_through_edge_connections(edge_config, accounts_db):
    """EdgeRunner's public hook: sites call `runner.server` as their protocol factory, so
    every connection is an EdgeRequestHandler and a request the parser refuses gets the
    API's JSON error (this fails if an aiohttp release stops calling it so)."""
    runner = serving.make_runner(dataclasses.replace(edge_config, database=str(accounts_db)))
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            f"GET /v1/programs HTTP/1.1\r\nAuthorization: Bearer {TEST_KEY}\x01\r\n\r\n".encode()
        )
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(-1), 10)
        writer.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.split(b"\r\n")[0].endswith(b" 400 Bad Request")
        assert json.loads(body)["code"] == "invalid_parameter"
        assert TEST_KEY.encode() not in answer
    finally:
        await runner.cleanup()
