"""edge.http.wire and edge.app.direct_handler: the same bytes as aiohttp's own paths.

Every request of a matrix (methods, HTTP versions, keep-alive and close, gzip,
If-None-Match, Origin, Host, query strings, preflights, Expect, unknown paths and
methods, errors) is sent twice over raw sockets to an edge as it is and to the same edge
with `web.Response` and `headers.update` in place of edge.http.wire, served by aiohttp's own
`Application._handle` and middleware chain (the code before both); the bytes received
must be equal, up to the Date value.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import random
import re

import pytest
from aiohttp import web

from edge import app as app_module
from edge.handlers import programs
from edge.http import wire

from .distwriter import publish, random_catalogue
from .support import TEST_KEY

KEY = f"Authorization: Bearer {TEST_KEY}\r\n"


@pytest.fixture(scope="module")
def shared_dist(tmp_path_factory):
    dist = tmp_path_factory.mktemp("wire") / "dist"
    publish(dist, random_catalogue(random.Random(5), 60), "b1")
    return dist


def plain_aiohttp(monkeypatch: pytest.MonkeyPatch) -> None:
    """The edge as it was before edge.http.wire: aiohttp builds and writes every header."""

    def response(body: bytes, headers: dict[str, str], head: bytes | None) -> web.Response:
        return web.Response(body=body, headers=headers)

    monkeypatch.setattr(programs, "page_response", response)
    # aiohttp's Application._handle, with edge_middleware in its middleware chain.
    monkeypatch.setattr(app_module, "use_direct_handler", lambda app: None)


async def exchange(port: int, raw: bytes, answers: int = 1, head: bool = False) -> bytes:
    """Send `raw`; the bytes of `answers` responses (read by their Content-Length), then
    what a last request on the same connection gets (nothing: it was closed)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    received = b""
    try:
        writer.write(raw)
        await writer.drain()
        for _ in range(answers):
            try:
                header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            except asyncio.IncompleteReadError as exc:
                return received + exc.partial + b"<closed>"
            received += header
            length = re.search(rb"\r\nContent-Length: (\d+)\r\n", header)
            if length is not None and not head and b" 304 " not in header.split(b"\r\n")[0]:
                received += await asyncio.wait_for(reader.readexactly(int(length[1])), 10)
        # Open or closed: a last request is answered (an open connection), or not.
        try:
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            await writer.drain()
        except ConnectionError:
            return received + b"<closed>"
        try:
            return received + b"<then>" + await asyncio.wait_for(reader.read(-1), 10)
        except ConnectionError:
            return received + b"<closed>"
    finally:
        writer.close()


def requests(etag: str) -> list[tuple[bytes, int, bool]]:
    """The matrix: (raw request or two pipelined, answers, HEAD)."""
    lines = {
        "1.1": ("HTTP/1.1", "Host: api.example\r\n"),
        "1.1 close": ("HTTP/1.1", "Host: api.example\r\nConnection: close\r\n"),
        "1.0": ("HTTP/1.0", ""),
        "1.0 host": ("HTTP/1.0", "Host: api.example:8080\r\n"),
        "1.0 keep-alive": ("HTTP/1.0", "Host: api.example\r\nConnection: keep-alive\r\n"),
        "1.1 bad host": ("HTTP/1.1", "Host: evil.example/x?>\r\n"),
    }
    extras = [
        "",
        "Accept-Encoding: gzip\r\n",
        "Accept-Encoding: identity\r\n",
        f"If-None-Match: {etag}\r\n",
        'If-None-Match: "other"\r\n',
        "Origin: https://app.example\r\n",
        "Origin: https://other.example\r\nAccept-Encoding: gzip, deflate\r\n",
        "Expect: 100-continue\r\n",
    ]
    paths = [
        "/v1/programs",
        "/v1/programs?limit=3",
        "/v1/programs?limit=3&market=FR",
        "/v1/programs?limit=100",
        "/v1/programs?limit=0",
        "/v1/programs/nope",
    ]
    out = []
    for (version, host), extra, path, method in itertools.product(
        lines.values(), extras, paths, ["GET", "HEAD"]
    ):
        raw = f"{method} {path} {version}\r\n{host}{KEY}{extra}\r\n".encode()
        out.append((raw, 1, method == "HEAD"))
    # Other routes, methods and unknown paths (404, 405, preflights, Expect, a body).
    for (version, host), extra, path, method in itertools.product(
        [lines["1.1"], lines["1.0"]],
        [
            "",
            "Origin: https://app.example\r\nAccess-Control-Request-Method: GET\r\n",
            "Expect: 100-continue\r\n",
            "Expect: something-else\r\n",
            "Content-Length: 5\r\n\r\nhello",
        ],
        ["/v1/programs", "/v1/programs/", "/v1/me", "/healthz", "/openapi.json", "/nope", "/"],
        ["GET", "HEAD", "POST", "OPTIONS", "DELETE"],
    ):
        raw = f"{method} {path} {version}\r\n{host}{KEY}{extra}"
        raw += "" if extra.startswith("Content-Length") else "\r\n"
        out.append((raw.encode(), 1, method == "HEAD"))
    out.append((f"CONNECT api.example:443 HTTP/1.1\r\nHost: x\r\n{KEY}\r\n".encode(), 1, False))
    # Without a key, and two requests pipelined on one connection.
    out.append((b"GET /v1/programs HTTP/1.1\r\nHost: api.example\r\n\r\n", 1, False))
    pipelined = (
        f"GET /v1/programs?limit=2 HTTP/1.1\r\nHost: a\r\n{KEY}\r\n"
        f"GET /v1/programs?limit=2 HTTP/1.1\r\nHost: b\r\n{KEY}\r\n"
    )
    out.append((pipelined.encode(), 2, False))
    return out


DATE = re.compile(rb"\r\nDate: [^\r]+\r\n")


async def answers(make_client, shared_dist, monkeypatch, **config) -> tuple[list[bytes], bool]:
    ids = itertools.count()
    monkeypatch.setattr(app_module, "new_request_id", lambda: f"req_{next(ids):024x}")
    client = await make_client(dist=shared_dist, **config)
    # Served by edge.app.direct_handler, or by aiohttp's Application._handle.
    direct = "_handle" in vars(client.app)
    port = client.server.port
    assert port is not None
    first = await exchange(port, f"GET /v1/programs HTTP/1.1\r\nHost: h\r\n{KEY}\r\n".encode())
    etag = re.search(rb"ETag: ([^\r]+)", first)[1].decode()  # type: ignore[index]
    got = []
    for raw, count, head in requests(etag) * 2:  # twice: the page cache is filled, then hit
        received = await exchange(port, raw, count, head)
        # The time of day and the test server's port are not the code's.
        assert len(DATE.findall(received)) >= count
        received = DATE.sub(b"\r\nDate: -\r\n", received)
        got.append(received.replace(b":%d/" % port, b":PORT/"))
    await client.close()
    return got, direct


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"cors_origins": "https://app.example, https://www.example"},
        {"public_url": "https://api.example.org"},
        {"serve_site": True},
    ],
    ids=["any origin", "listed origins", "public url", "site"],
)
async def test_the_bytes_on_the_wire_are_aiohttps(make_client, shared_dist, config):
    with pytest.MonkeyPatch.context() as patch:
        kept = spy_on_start(patch)
        fast, direct = await answers(make_client, shared_dist, patch, **config)
    with pytest.MonkeyPatch.context() as patch:
        plain_aiohttp(patch)
        plain, aiohttps = await answers(make_client, shared_dist, patch, **config)
    # With the site's middleware too, aiohttp's own _handle serves both.
    assert direct == ("serve_site" not in config)
    assert not aiohttps
    assert len(fast) == len(plain)
    for mine, theirs in zip(fast, plain, strict=True):
        assert mine == theirs
    assert kept.count(False) >= 100  # HEAD, gzip, unusual hosts...: aiohttp's path
    if "cors_origins" in config:
        # The CORS step writes into the CIMultiDict (Vary: Origin): aiohttp's path always.
        assert True not in kept
    else:
        assert kept.count(True) >= 100  # a GET of a page, no gzip: the kept block


def spy_on_start(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each PreparedResponse went out by the kept header block (True)."""
    taken: list[bool] = []
    start = wire.PreparedResponse._start

    async def spy(self, request):
        writer = await start(self, request)
        taken.append(self._wire is not None)
        return writer

    monkeypatch.setattr(wire.PreparedResponse, "_start", spy)
    return taken


async def test_the_fast_path_is_taken(make_client, shared_dist, monkeypatch):
    """A plain GET of a page is written from the kept header block, not by aiohttp."""
    client = await make_client(dist=shared_dist)
    kept = spy_on_start(monkeypatch)
    asked = {"Authorization": f"Bearer {TEST_KEY}", "Accept-Encoding": "identity"}
    for _ in range(2):
        resp = await client.get("/v1/programs", headers=asked)
        assert resp.status == 200
        await resp.read()
        head = await client.head("/v1/programs", headers=asked)
        assert head.status == 200
    # GET: the kept block; HEAD: aiohttp's path (no body to send).
    assert kept == [True, False, True, False]


def test_encode_head_refuses_what_aiohttp_would_write_otherwise():
    base = {"ETag": '"x"', "Content-Type": "application/json"}
    assert wire.encode_head(base) == b'ETag: "x"\r\nContent-Type: application/json\r\n'
    assert wire.encode_head({"ETag": '"x"'}) is None  # aiohttp would add a Content-Type
    for bad in ["a\r\nX: y", "a\nb", "caf\u00e9", "\x7f", "\ud800"]:
        assert wire.encode_head({**base, "Link": bad}) is None
    for managed in ["Content-Length", "date", "Connection", "Server", "Set-Cookie"]:
        assert wire.encode_head({**base, managed: "1"}) is None


@pytest.mark.parametrize("built", [False, True])
def test_added_lines_become_headers_whenever_the_headers_are_read(built):
    """Lines added before the CIMultiDict is built go into it when it is; after, directly."""
    headers = {"ETag": '"x"', "Content-Type": "application/json"}
    prepared = wire.PreparedResponse(b"{}", dict(headers), wire.encode_head(headers))
    if built:
        assert prepared.headers["ETag"] == '"x"'
    prepared.add_lines("RateLimit-Remaining: 7\r\nX-Request-Id: req_1\r\n")
    prepared.add_lines("Access-Control-Expose-Headers: ETag, Link\r\n")
    assert list(prepared.headers.items()) == [
        ("ETag", '"x"'),
        ("Content-Type", "application/json"),
        ("RateLimit-Remaining", "7"),
        ("X-Request-Id", "req_1"),
        ("Access-Control-Expose-Headers", "ETag, Link"),
    ]


def test_a_prepared_response_has_the_state_of_a_web_response():
    """PreparedResponse sets web.Response(body=...)'s instance state itself (cheaper than
    its __init__): an aiohttp that sets more must fail here, not in production."""
    body = b'{"data":[]}'
    plain = web.Response(body=body)
    headers = {"ETag": '"x"', "Content-Type": "application/json"}
    prepared = wire.PreparedResponse(body, headers, wire.encode_head(headers))
    mine = vars(prepared)
    for name, value in vars(plain).items():
        if name == "_headers":
            continue  # built on first use: compared below
        assert name in mine, name
        assert mine[name] == value, name
    assert prepared.status == 200 and prepared.reason == "OK"
    assert prepared.body is body
    assert list(prepared.headers.items()) == list(
        web.Response(body=body, headers=headers).headers.items()
    )


@pytest.mark.parametrize("change", [None, "subapp", "middleware", "site"])
async def test_the_direct_handler_serves_only_an_app_it_serves_as_aiohttp(edge_config, change):
    """One middleware, edge_middleware, and no sub-application: the direct handler;
    anything else (the site's middleware with serve_site): aiohttp's own `_handle`."""
    if change == "site":
        edge_config = dataclasses.replace(edge_config, serve_site=True)
    app = app_module.create_app(edge_config)
    if change == "subapp":
        app.add_subapp("/sub", web.Application())
    elif change == "middleware":
        app.middlewares.append(web.normalize_path_middleware())
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        direct = getattr(app._handle, "__qualname__", "").startswith("direct_handler")
        assert direct == (change is None)
        assert "_handle" not in vars(app) or direct
    finally:
        await runner.cleanup()


def test_the_installed_aiohttp_is_one_the_fast_path_was_checked_against():
    """pyproject.toml pins the series; whoever moves the pin re-runs this file and adds the
    new series to VERIFIED_AIOHTTP once the bytes still agree."""
    import aiohttp

    assert wire.ENABLED, aiohttp.__version__


async def test_an_unverified_aiohttp_gets_aiohttps_own_paths(
    make_client, shared_dist, edge_config, monkeypatch, caplog
):
    """Under an aiohttp the module was not checked against, neither the kept header block
    nor the direct handler is used, the answers are the same, and the log says why."""
    monkeypatch.setattr(wire, "ENABLED", False)
    kept = spy_on_start(monkeypatch)
    app = app_module.create_app(edge_config)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        assert "_handle" not in vars(app)
    finally:
        await runner.cleanup()
    assert "fast path was checked against (3.14.x)" in caplog.text
    client = await make_client(dist=shared_dist)
    resp = await client.get("/v1/programs", headers={"Authorization": f"Bearer {TEST_KEY}"})
    assert resp.status == 200 and (await resp.json())["data"]
    assert kept == []  # PreparedResponse._start never ran: plain web.Response answers


async def test_fixed_routes_are_the_routes_aiohttp_resolves():
    """edge.app.fixed_routes answers (method, path) with the route aiohttp's `resolve`
    finds, or not at all, for registrations that could tell them apart."""
    from aiohttp.test_utils import make_mocked_request

    async def handler(request):
        return web.Response()

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)  # added first: matches "/" too
    app.router.add_get("/", handler)
    app.router.add_get("/v1/programs", handler)
    app.router.add_get("/v1/programs/{slug}", handler)
    app.router.add_post("/v1/programs", handler)  # a second resource of the same path
    app.router.add_route("*", "/any", handler)
    app.router.add_get("/x{suffix}", handler)
    app.router.add_get("/xy", handler)
    app.freeze()
    fixed = app_module.fixed_routes(app.router)
    assert fixed  # the shortcut applies to some
    for method, path in itertools.product(
        ["GET", "HEAD", "POST", "PUT"],
        ["/", "/v1/programs", "/v1/programs/", "/v1/programs/a", "/any", "/xy", "/xz", "/v1"],
    ):
        resolved = await app.router.resolve(make_mocked_request(method, path, app=app))
        route = fixed.get((method, path))
        if route is not None:
            assert route is resolved.route, (method, path)
    assert ("GET", "/") not in fixed and ("GET", "/any") not in fixed
    assert ("GET", "/v1/programs") in fixed and ("GET", "/xy") in fixed
    # The by-slug resource was indexed under /v1/programs before the POST's: `resolve`.
    assert ("POST", "/v1/programs") not in fixed
