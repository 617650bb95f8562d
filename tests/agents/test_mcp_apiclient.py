"""The MCP server's HTTP client against a real aiohttp server on loopback: what it sends,
and how it bounds what comes back (time, size, type, redirects)."""

from __future__ import annotations

import asyncio
import gzip
from typing import Any

import orjson
import pytest
from aiohttp import web
from yarl import URL

from agents.apiclient import ApiClient, ApiError

KEY = "afk_" + "k" * 38


async def start(aiohttp_server: Any, handler: Any) -> URL:
    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    server = await aiohttp_server(app)
    return URL(str(server.make_url("/")))


async def test_sends_the_key_accepts_gzip_and_keeps_the_base_path(aiohttp_server):
    seen: dict[str, Any] = {}

    async def handler(request: web.Request) -> web.Response:
        seen.update(path=request.path, query=list(request.query.items()), headers=request.headers)
        body = gzip.compress(orjson.dumps({"data": {"x": "y" * 2000}}))
        return web.Response(
            body=body, content_type="application/json", headers={"Content-Encoding": "gzip"}
        )

    base = await start(aiohttp_server, handler)
    async with ApiClient(base / "api", KEY) as api:
        answer = await api.get("/v1/programs", [("vertical", "saas"), ("limit", "5")])
    assert answer.status == 200 and answer.document == {"data": {"x": "y" * 2000}}
    assert seen["path"] == "/api/v1/programs"
    assert seen["query"] == [("vertical", "saas"), ("limit", "5")]
    assert seen["headers"]["Authorization"] == f"Bearer {KEY}"
    assert "gzip" in seen["headers"]["Accept-Encoding"]
    assert seen["headers"]["Accept"] == "application/json"


async def test_without_a_key_no_authorization_is_sent(aiohttp_server):
    async def handler(request: web.Request) -> web.Response:
        return web.json_response({"data": "Authorization" in request.headers})

    async with ApiClient(await start(aiohttp_server, handler), None) as api:
        assert (await api.get("/v1/programs", [])).document == {"data": False}


async def test_an_error_status_is_an_answer_with_retry_after(aiohttp_server):
    error = {"code": "unavailable", "message": "m", "status": 503, "param": None, "requestId": "r"}

    async def handler(request: web.Request) -> web.Response:
        return web.json_response(error, status=503, headers={"Retry-After": "5"})

    async with ApiClient(await start(aiohttp_server, handler), KEY) as api:
        answer = await api.get("/v1/commissions", [])
    assert (answer.status, answer.document, answer.retry_after) == (503, error, 5)


async def _refusal(aiohttp_server: Any, handler: Any, **options: Any) -> ApiError:
    async with ApiClient(await start(aiohttp_server, handler), KEY, **options) as api:
        with pytest.raises(ApiError) as caught:
            await api.get("/v1/me", [])
    assert KEY not in caught.value.message
    return caught.value


async def test_an_answer_past_the_size_bound_is_refused(aiohttp_server):
    async def declared(request: web.Request) -> web.Response:
        return web.json_response({"data": "x" * 5000})

    async def streamed(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for _ in range(10):
            await response.write(b" " * 1000)
        return response

    async def bomb(request: web.Request) -> web.Response:
        body = gzip.compress(b'{"data": "' + b"0" * 100_000 + b'"}')
        return web.Response(
            body=body, content_type="application/json", headers={"Content-Encoding": "gzip"}
        )

    for handler in (declared, streamed, bomb):
        refused = await _refusal(aiohttp_server, handler, max_answer_bytes=4096)
        assert refused.code == "api_answer_invalid" and "4096 bytes" in refused.message


async def test_a_slow_api_times_out(aiohttp_server):
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.json_response({"data": None})

    refused = await _refusal(aiohttp_server, slow, timeout=0.3)
    assert refused.code == "api_timeout" and "0.3 s" in refused.message


@pytest.mark.parametrize(
    "response",
    [
        web.Response(text="<html>bad gateway</html>", status=502, content_type="text/html"),
        web.Response(text="{not json", content_type="application/json"),
        web.Response(status=302, headers={"Location": "http://127.0.0.1:9/elsewhere"}),
    ],
    ids=["html", "broken-json", "redirect"],
)
async def test_what_is_not_a_json_answer_is_refused(aiohttp_server, response):
    async def handler(request: web.Request) -> web.Response:
        return response

    refused = await _refusal(aiohttp_server, handler)
    assert refused.code == "api_answer_invalid"
