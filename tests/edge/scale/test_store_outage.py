"""A real `python -m edge` process whose PostgreSQL (and Redis) is down when it starts and
comes back later: it starts, serves what it can, says what is missing, and connects by
itself (docs/deploy.md, "When PostgreSQL is down").

These tests stop and start the session's PostgreSQL server; `pg_url` starts it again for
the next test if one fails midway.
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
from support.edgeprocess import EdgeProcess, bearer, seed_key, start_edge, wait_healthy

RETRY_AFTER = "3"
RECONNECT_WITHIN = 60.0  # seconds: the store handle's backoff is capped at 30 s


async def get(
    edge: EdgeProcess, path: str, key: str | None = None
) -> tuple[int, dict[str, str], dict]:
    headers = bearer(key) if key else {}
    async with (
        aiohttp.ClientSession() as session,
        session.get(edge.base_url + path, headers=headers) as resp,
    ):
        return resp.status, dict(resp.headers), await resp.json()


async def expect_error(edge: EdgeProcess, path: str, key: str, status: int, code: str) -> None:
    got, headers, body = await get(edge, path, key)
    assert (got, body["code"]) == (status, code), (path, body)
    assert headers["Retry-After"] == RETRY_AFTER, path


async def wait_ready(edge: EdgeProcess) -> None:
    deadline = time.monotonic() + RECONNECT_WITHIN
    while time.monotonic() < deadline:
        status, _, _ = await get(edge, "/readyz")
        if status == 200:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"edge not ready again\n{edge.log_text()[-3000:]}")


async def expect_store_missing(edge: EdgeProcess) -> None:
    status, headers, body = await get(edge, "/readyz")
    assert status == 503 and body["code"] == "unavailable"
    assert body["message"].startswith("not ready: account store unreachable"), body
    assert "Retry-After" in headers
    assert (await get(edge, "/healthz"))[0] == 200  # alive: nothing to restart


async def test_an_edge_starts_without_its_stores_and_connects_when_they_come_back(
    tmp_path, edges, built_dist, pg_url, pg_server, private_redis
):
    known = await seed_key(pg_url)
    stranger = await seed_key(pg_url)  # a real key this edge never verifies before the outage
    args = [
        "--database",
        pg_url,
        "--dist",
        str(built_dist),
        "--redis-url",
        private_redis.url,
        "--store-timeout",
        "0.5",
        "--retry-after",
        RETRY_AFTER,
        "--key-cache-seconds",
        "0.2",  # every request past 0.2 s asks the store again, and meets the outage
    ]
    await asyncio.to_thread(pg_server.stop)
    private_redis.stop()
    try:
        edge = start_edge(tmp_path, args)
        edges.append(edge)
        await wait_healthy(edge)
        await expect_store_missing(edge)
        # Never verified (the store was never up for this edge): it cannot be trusted.
        await expect_error(edge, "/v1/programs", known, 503, "unavailable")
        await expect_error(edge, "/v1/me", known, 401, "invalid_api_key")
    finally:
        await asyncio.to_thread(pg_server.start)
        private_redis.start()

    await wait_ready(edge)  # no restart
    status, _, body = await get(edge, "/v1/me", known)
    assert status == 200, body
    status, _, listing = await get(edge, "/v1/programs?limit=1", known)
    assert status == 200, listing
    slug = listing["data"][0]["slug"]

    await asyncio.to_thread(pg_server.stop)
    try:
        await asyncio.sleep(0.3)  # past the key cache: each request now asks the store
        # The directory keeps answering the key it verified, within --key-stale-seconds.
        for path in ("/v1/programs?limit=1", f"/v1/programs/{slug}"):
            status, _, body = await get(edge, path, known)
            assert status == 200, (path, body)
        # What needs the store says so, with the statuses the spec lists per endpoint.
        await expect_error(edge, "/v1/me", known, 401, "invalid_api_key")
        await expect_error(edge, "/v1/commissions", known, 503, "unavailable")
        await expect_error(edge, "/v1/programs", stranger, 503, "unavailable")
        await expect_error(edge, f"/v1/programs/{slug}", stranger, 401, "invalid_api_key")
        await expect_store_missing(edge)
    finally:
        await asyncio.to_thread(pg_server.start)

    await wait_ready(edge)
    for key in (known, stranger):
        status, _, body = await get(edge, "/v1/me", key)
        assert status == 200, body
    assert edge.stop() == 0
    log = edge.log_text()
    assert "account store unreachable" in log and "starting without it" in log
    assert "reachable: connected" in log


async def test_with_no_stale_trust_a_verified_key_needs_the_store(
    tmp_path, edges, built_dist, pg_url, pg_server
):
    key = await seed_key(pg_url)
    args = ["--database", pg_url, "--dist", str(built_dist), "--retry-after", RETRY_AFTER]
    args += ["--store-timeout", "0.5", "--key-cache-seconds", "0.2", "--key-stale-seconds", "0"]
    edge = start_edge(tmp_path, args)
    edges.append(edge)
    await wait_healthy(edge)
    assert (await get(edge, "/v1/programs?limit=1", key))[0] == 200
    await asyncio.to_thread(pg_server.stop)
    try:
        await asyncio.sleep(0.3)
        await expect_error(edge, "/v1/programs?limit=1", key, 503, "unavailable")
    finally:
        await asyncio.to_thread(pg_server.start)
    await wait_ready(edge)
    assert (await get(edge, "/v1/programs?limit=1", key))[0] == 200
    assert edge.stop() == 0
