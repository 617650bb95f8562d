"""Link: rel="next" never carries a malformed Host; --public-url overrides the request's."""

from __future__ import annotations

import asyncio
import random
import re
from types import SimpleNamespace

import pytest
from support.distwriter import publish, random_catalogue
from support.programkit import AUTH, directory_state
from yarl import URL

from edge.config import Config
from edge.links import request_origin, valid_authority

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
        # The address and port the connection reached, then the request's own path.
        assert (url.scheme, url.host, url.port) == ("http", "127.0.0.1", client.port)
        assert url.path == "/v1/programs" and url.query["limit"] == "2"
    # A 304 carries the Link too, built the same way.
    etag = resp.headers["ETag"]
    resp = await client.get(
        "/v1/programs?limit=2", headers={**AUTH, "Host": host, "If-None-Match": etag}
    )
    assert resp.status == 304
    assert only_link(resp.headers["Link"]).host == "127.0.0.1"


async def test_a_well_formed_host_is_followed_and_the_cache_does_not_mix_them(
    edge_client, shared_dist
):
    client = await edge_client(dist=shared_dist)
    hosts = ["one.example", "bad host", "[::1]:8443", "one.example"]
    got = []
    for host in hosts:
        resp = await client.get("/v1/programs?limit=2", headers={**AUTH, "Host": host})
        got.append(only_link(resp.headers["Link"]))
    assert [u.host for u in got] == ["one.example", "127.0.0.1", "::1", "one.example"]
    assert got[2].port == 8443


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


async def test_http_1_0_without_host_gets_the_address_and_port_reached(edge_client, shared_dist):
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
    assert (url.host, url.port) == ("127.0.0.1", client.port)


@pytest.mark.parametrize(
    ("sockname", "authority"),
    [
        (("127.0.0.2", 8080), "127.0.0.2:8080"),
        (("::1", 8443, 0, 0), "[::1]:8443"),
        (("fe80::1%eth0", 8080, 0, 2), "[fe80::1%25eth0]:8080"),
    ],
)
def test_the_address_reached_is_written_as_an_authority(sockname, authority):
    transport = SimpleNamespace(get_extra_info=lambda name: sockname)
    request = SimpleNamespace(transport=transport, headers={}, scheme="http")
    origin = request_origin(request, Config())
    assert origin == f"http://{authority}"
    assert valid_authority(origin.removeprefix("http://"))


async def test_a_link_from_the_address_reached_is_not_kept_for_the_next_request(
    edge_client, shared_dist
):
    # Another connection may have reached another address (an edge bound to 0.0.0.0).
    client = await edge_client(dist=shared_dist)
    identity = {**AUTH, "Accept-Encoding": "identity"}  # the answer whose headers are kept
    resp = await client.get("/v1/programs?limit=2", headers={**identity, "Host": "bad host"})
    assert only_link(resp.headers["Link"]).host == "127.0.0.1"
    page = directory_state(client).current.pages.get("limit=2")
    assert page is not None and page.identity_headers is None
    resp = await client.get("/v1/programs?limit=2", headers={**identity, "Host": "ok.example"})
    assert only_link(resp.headers["Link"]).host == "ok.example"
    assert page.headers_origin == ("http", "ok.example")
