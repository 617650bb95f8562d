"""GET /healthz and GET /readyz: no key, never rate-limited, never cached, exact causes."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import orjson
import pytest
from aiohttp import web
from support.apierror import assert_api_error
from support.edgeprocess import bearer, seed_key

from contract.version import VERSION
from edge import appkeys
from edge.app import create_app
from edge.handlers.health import READY_TIMEOUT
from store import StoreUnavailable

ERROR_MEMBERS = {"code", "message", "status", "param", "requestId"}


@pytest.fixture
async def ready_config(edge_config, built_dist):
    await seed_key(edge_config.database)  # creates and migrates the store
    return dataclasses.replace(edge_config, dist=built_dist, rate_limit_free=(1, 60))


async def test_healthz_is_ok_without_a_key_and_uncached(edge_client):
    client = await edge_client()  # no build, a fresh store: alive all the same
    resp = await client.get("/healthz")
    assert resp.status == 200
    assert await resp.json() == {"status": "ok", "version": VERSION, "build": None}
    assert resp.headers["Content-Type"] == "application/json"
    assert resp.headers["Cache-Control"] == "no-store"
    assert resp.headers["X-Request-Id"].startswith("req_")
    head = await client.head("/healthz")
    assert head.status == 200


async def test_readyz_without_a_build_says_so(edge_client):
    client = await edge_client()
    resp = await client.get("/readyz")
    assert resp.status == 503
    body = await resp.json()
    assert set(body) == ERROR_MEMBERS
    assert body["code"] == "unavailable" and body["status"] == 503
    assert body["message"] == "not ready: no build loaded"
    assert body["requestId"] == resp.headers["X-Request-Id"]
    assert resp.headers["Cache-Control"] == "no-store"
    assert resp.headers["Retry-After"] == "5"


async def test_readyz_with_a_build_and_a_store(edge_client, ready_config):
    client = await edge_client(ready_config)
    resp = await client.get("/readyz")
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert body == {"status": "ok", "build": client.app[appkeys.DIRECTORY].current.build_id}
    assert resp.headers["Cache-Control"] == "no-store"


async def test_healthz_names_the_version_and_the_build_it_serves(edge_client, ready_config):
    client = await edge_client(ready_config)
    resp = await client.get("/healthz")
    assert resp.status == 200
    manifest = orjson.loads((ready_config.dist / "manifest.json").read_bytes())
    assert await resp.json() == {"status": "ok", "version": VERSION, "build": manifest["buildId"]}


class DownStore:
    async def read(self, fn: Any, *args: Any) -> None:
        raise StoreUnavailable("connection refused")


class StuckStore:
    async def read(self, fn: Any, *args: Any) -> None:
        await asyncio.sleep(3600)


class BrokenStore:
    async def read(self, fn: Any, *args: Any) -> None:
        raise RuntimeError("a bug")


@pytest.mark.parametrize(
    ("store", "message"),
    [
        (DownStore(), "not ready: account store unreachable (connection refused)"),
        (StuckStore(), "not ready: account store did not answer within 0.3 s"),
        (BrokenStore(), "not ready: account store failed"),
    ],
)
async def test_readyz_names_an_unusable_store(edge_client, ready_config, store, message):
    client = await edge_client(ready_config, store=store, store_timeout=0.3)
    resp = await client.get("/readyz")
    assert resp.status == 503
    assert (await resp.json())["message"] == message


async def test_readyz_waits_at_most_the_ready_timeout(edge_client, ready_config):
    config = dataclasses.replace(ready_config, store_timeout=30.0)
    client = await edge_client(config, store=StuckStore())
    loop = asyncio.get_running_loop()
    started = loop.time()
    resp = await client.get("/readyz")
    assert resp.status == 503
    assert loop.time() - started < READY_TIMEOUT + 0.5


async def test_both_problems_are_named(edge_client, edge_config):
    client = await edge_client(edge_config, store=DownStore())
    resp = await client.get("/readyz")
    message = (await resp.json())["message"]
    assert message.startswith("not ready: no build loaded; account store unreachable")


async def test_health_checks_are_never_rate_limited(edge_client, ready_config):
    client = await edge_client(ready_config)  # free plan: 1 request per 60 s
    key = await seed_key(ready_config.database)
    assert (await client.get("/v1/me", headers=bearer(key))).status == 200
    assert (await client.get("/v1/me", headers=bearer(key))).status == 429
    for path in ("/healthz", "/readyz") * 5:
        resp = await client.get(path, headers=bearer(key))
        assert resp.status == 200
        assert "RateLimit-Limit" not in resp.headers
    # A bad key does not matter either: these paths are outside /v1.
    resp = await client.get("/healthz", headers=bearer("afk_nonsense"))
    assert resp.status == 200


async def test_only_get_and_head(edge_client):
    client = await edge_client()
    resp = await client.post("/healthz")
    await assert_api_error(resp, 405, "method_not_allowed")


async def test_readyz_answers_503_once_a_shutdown_begins_while_requests_finish(
    aiohttp_client, ready_config
):
    app = create_app(ready_config)
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(request):
        started.set()
        await release.wait()
        return web.json_response({"data": "done"})

    app.router.add_get("/slow", slow)
    client = await aiohttp_client(app)
    assert (await client.get("/readyz")).status == 200
    in_flight = asyncio.ensure_future(client.get("/slow"))
    await started.wait()
    # What aiohttp's runner does on SIGTERM, once the listening sockets are closed.
    await app.shutdown()
    resp = await client.get("/readyz")
    assert resp.status == 503
    body = await resp.json()
    assert set(body) == ERROR_MEMBERS
    assert body["message"] == "not ready: shutting down"
    assert resp.headers["Cache-Control"] == "no-store" and resp.headers["Retry-After"] == "5"
    assert (await client.get("/healthz")).status == 200  # alive: finishing its requests
    release.set()
    finished = await in_flight
    assert finished.status == 200 and await finished.json() == {"data": "done"}
