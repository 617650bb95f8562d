"""Every answer says `X-Content-Type-Options: nosniff` and `Server: affdir`, never the
framework's name and version: API answers, the site's pages and files, errors and 304s."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from support.distwriter import publish, random_catalogue
from support.programkit import AUTH

from edge.http.errors import protocol_error_response
from edge.http.security import SECURITY_HEADERS


@pytest.fixture(scope="module")
def site_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("security") / "dist"
    publish(dist, random_catalogue(random.Random(3), 10), "b1")
    (dist / "index.html").write_text("<!doctype html><title>affdir</title>")
    (dist / "404.html").write_text("<!doctype html><title>not found</title>")
    (dist / "site.css").write_text("body { margin: 0 }")
    return dist


def assert_stamped(resp, what: str) -> None:
    assert resp.headers.getall("X-Content-Type-Options") == ["nosniff"], what
    assert resp.headers.getall("Server") == ["affdir"], what


@pytest.mark.parametrize(
    ("method", "path", "headers", "status"),
    [
        ("GET", "/v1/programs?limit=2", AUTH, 200),
        ("HEAD", "/v1/programs?limit=2", AUTH, 200),
        ("GET", "/v1/programs?limit=0", AUTH, 400),
        ("GET", "/v1/programs", {}, 200),
        ("GET", "/v1/me", {}, 401),
        ("GET", "/v1/programs/no-such-programme", AUTH, 404),
        ("POST", "/v1/programs", AUTH, 405),
        ("GET", "/openapi.json", {}, 200),
        ("GET", "/", {}, 200),
        ("GET", "/site.css", {}, 200),
        ("GET", "/no/such/page", {}, 404),
        ("OPTIONS", "/v1/programs", {"Origin": "https://a.example", "Access-Control-Request-Method": "GET"}, 200),
    ],
)  # fmt: skip
async def test_every_answer_carries_the_headers(
    edge_client, site_dist, method, path, headers, status
):
    client = await edge_client(dist=site_dist, serve_site=True)
    resp = await client.request(method, path, headers=headers)
    assert resp.status == status, await resp.text()
    assert_stamped(resp, f"{method} {path}")


@pytest.mark.parametrize("path", ["/v1/programs?limit=2", "/", "/site.css"])
async def test_a_304_carries_them_too(edge_client, site_dist, path):
    client = await edge_client(dist=site_dist, serve_site=True)
    first = await client.get(path, headers=AUTH)
    assert first.status == 200
    again = await client.get(path, headers={**AUTH, "If-None-Match": first.headers["ETag"]})
    assert again.status == 304
    assert_stamped(again, path)


async def test_an_unexpected_failure_carries_them(edge_client, site_dist):
    async def broken(_request):
        raise RuntimeError("a bug")

    client = await edge_client(dist=site_dist, routes={"/boom": broken})
    resp = await client.get("/boom")
    assert resp.status == 500
    assert_stamped(resp, "500")


def test_an_answer_made_outside_the_application_carries_them():
    # What the HTTP parser refused never reaches the app's on_response_prepare signal.
    for status in (400, 500):
        response = protocol_error_response(status)
        for name, value in SECURITY_HEADERS.items():
            assert response.headers[name] == value
