"""Link: rel="next" never carries the request's Host: relative, or under --public-url."""

from __future__ import annotations

import asyncio
import random
import re

import pytest
from support.distwriter import publish, random_catalogue
from support.programkit import AUTH
from yarl import URL

from edge.links import valid_authority

LINK_RE = re.compile(r'<([^<>\s]+)>; rel="next"')


@pytest.fixture(scope="module")
def shared_dist(tmp_path_factory):
    dist = tmp_path_factory.mktemp("links") / "dist"
    publish(dist, random_catalogue(random.Random(21), 12), "b1")
    return dist


def only_link(header: str) -> URL:
    """The one URL of a Link header that must hold exactly one, well-formed."""
    match = LINK_RE.fullmatch(header)
    assert match, header
    return URL(match[1])


@pytest.mark.parametrize(
    "host",
    [
        "api.example.com",
        "api.example.com.",
        "two.example:8443",
        "127.0.0.1:9",
        "[::1]:8080",
        "[2001:db8::1]",
        "localhost",
        "xn--bcher-kva.example",
        "[fe80::1%25eth0]:8080",
    ],
)
def test_well_formed_authorities(host):
    assert valid_authority(host)


@pytest.mark.parametrize(
    "host",
    [
        None,
        "",
        "a b",
        "user@evil.example",
        'evil.example/phish?x=>; rel="next", <http://ok',
        "evil.example/path",
        "evil.example:",
        "evil.example:123456",
        "evil.example?x",
        "evil.example#x",
        "-evil.example",
        "evil-.example",
        "evil..example",
        "[::1",
        "[not:an:ip]x",
        "émoji.example",
        "[fe80::1%eth0]:8080",  # a zone is written %25 in a URL
        "a" * 64 + ".example",
        ("a" * 60 + ".") * 5 + "example",
    ],
)
def test_malformed_authorities(host):
    assert not valid_authority(host)


@pytest.mark.parametrize(
    "host",
    [
        'evil.example/phish?x=>; rel="next", <http://ok',
        "a b",
        "user@evil.example",
        "evil.example/path",
        "",
    ],
)
async def test_a_malformed_host_never_gets_into_the_link(edge_client, shared_dist, host):
    client = await edge_client(dist=shared_dist)
    for encoding in ("identity", "gzip"):
        resp = await client.get(
            "/v1/programs?limit=2",
            headers={**AUTH, "Host": host, "Accept-Encoding": encoding},
        )
        assert resp.status == 200
        url = only_link(resp.headers["Link"])
        # Without --public-url: relative to the request's own URL, whatever its Host.
        assert not url.is_absolute()
        assert url.path == "/v1/programs" and url.query["limit"] == "2"
    # A 304 carries the Link too, built the same way.
    etag = resp.headers["ETag"]
    resp = await client.get(
        "/v1/programs?limit=2", headers={**AUTH, "Host": host, "If-None-Match": etag}
    )
    assert resp.status == 304
    assert not only_link(resp.headers["Link"]).is_absolute()


async def test_public_url_overrides_every_host(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist, public_url="https://api.example.com")
    for host in ("one.example", 'x>; rel="next", <http://y'):
        for encoding in ("identity", "gzip"):
            resp = await client.get(
                "/v1/programs?limit=2",
                headers={**AUTH, "Host": host, "Accept-Encoding": encoding},
            )
            url = only_link(resp.headers["Link"])
            assert str(url.origin()) == "https://api.example.com"
            assert url.path == "/v1/programs"


async def test_http_1_0_without_host_gets_a_relative_link(edge_client, shared_dist):
    client = await edge_client(dist=shared_dist)
    reader, writer = await asyncio.open_connection("127.0.0.1", client.port)
    try:
        writer.write(
            b"GET /v1/programs?limit=2 HTTP/1.0\r\n"
            + f"Authorization: {AUTH['Authorization']}\r\n\r\n".encode()
        )
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    head = raw.split(b"\r\n\r\n", 1)[0].decode()
    assert head.startswith("HTTP/1.0 200")
    link = next(line for line in head.split("\r\n") if line.lower().startswith("link:"))
    url = only_link(link.split(":", 1)[1].strip())
    assert not url.is_absolute() and url.path == "/v1/programs"
