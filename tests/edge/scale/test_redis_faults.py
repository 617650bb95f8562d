"""Redis failing under the limiter: stopped, frozen, restarted mid-traffic.

The policy (docs/deploy.md): never a 500, never a wait past `redis_timeout`, no 503 either
(/v1/programs/{slug} and /v1/me may not answer it): limits fall back to each process's own
memory and go back to Redis by themselves once it answers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time

import pytest
import redis.asyncio as aioredis
from support.edgeprocess import bearer, seed_key

from edge import appkeys
from edge.http.ratelimit_redis import (
    DEFAULT_COOLDOWN,
    DEFAULT_TRIP_AFTER,
    KEY_PREFIX,
    RedisLimiter,
    connect,
)

TIMEOUT = 0.2
COOLDOWN = 0.3


def limiter_for(url: str) -> RedisLimiter:
    return RedisLimiter(connect(url, TIMEOUT), timeout=TIMEOUT, cooldown=COOLDOWN)


async def timed(coro):
    started = time.monotonic()
    result = await coro
    return result, time.monotonic() - started


async def test_redis_down_falls_back_to_per_process_limits(private_redis, caplog):
    limiter = limiter_for(private_redis.url)
    try:
        assert (await limiter.hit("k", 5, 60)).remaining == 4  # in Redis
        assert limiter.hit_now("k", 5, 60) is None  # Redis needs a round trip: `hit`
        private_redis.stop()
        with caplog.at_level(logging.ERROR, "edge.http.ratelimit"):
            for _ in range(DEFAULT_TRIP_AFTER):
                assert not limiter.degraded
                state, took = await timed(limiter.hit("k", 5, 60))
                # Each failed call falls back at once: refused connections fail fast.
                assert state.allowed and took < TIMEOUT
        assert limiter.degraded  # tripped: Redis is left alone for the cooldown
        assert [r.message for r in caplog.records if "per process" in r.message]
        # Still limited, by this process's own count (which started with the outage).
        states = [await limiter.hit("k", 5, 60) for _ in range(2)]
        states.append(limiter.hit_now("k", 5, 60))  # the same count, without a coroutine
        assert [s.allowed for s in states] == [True, True, False]
        assert states[-1].retry_after_seconds >= 1
    finally:
        await limiter.close()


async def test_a_frozen_redis_costs_a_few_timeouts_per_cooldown(private_redis):
    limiter = limiter_for(private_redis.url)
    try:
        await limiter.hit("k", 100, 60)  # a pooled connection exists
        private_redis.pause()
        for _ in range(DEFAULT_TRIP_AFTER):
            state, took = await timed(limiter.hit("k", 100, 60))
            assert state.allowed and TIMEOUT * 0.9 <= took < TIMEOUT + 0.3
        assert limiter.degraded
        # Within the cooldown Redis is not tried: no wait at all.
        for _ in range(20):
            state, took = await timed(limiter.hit("k", 100, 60))
            assert state.allowed and took < 0.05
        private_redis.resume()
        await asyncio.sleep(COOLDOWN + 0.05)
        # Replies to the abandoned calls arrive now; they must never be read as the answer
        # to a later call (a timed-out connection is dropped, not reused).
        states = [await limiter.hit("k", 100, 60) for _ in range(5)]
        assert not limiter.degraded
        remaining = [s.remaining for s in states]
        assert remaining == list(range(remaining[0], remaining[0] - 5, -1))
        # 1 counted before the freeze; the frozen calls may or may not have run since.
        assert 98 - DEFAULT_TRIP_AFTER <= remaining[0] <= 98
    finally:
        private_redis.resume()
        await limiter.close()


async def test_one_slow_answer_does_not_trip(private_redis):
    limiter = limiter_for(private_redis.url)
    try:
        await limiter.hit("k", 100, 60)
        private_redis.pause()
        state, took = await timed(limiter.hit("k", 100, 60))
        private_redis.resume()
        assert state.allowed and took >= TIMEOUT * 0.9
        assert not limiter.degraded
        assert (await limiter.hit("k", 100, 60)).remaining <= 98  # back in Redis at once
    finally:
        private_redis.resume()
        await limiter.close()


async def test_back_to_redis_by_itself_after_a_restart(private_redis, caplog):
    limiter = limiter_for(private_redis.url)
    try:
        await limiter.hit("k", 10, 60)
        private_redis.stop()
        for _ in range(DEFAULT_TRIP_AFTER):
            await limiter.hit("k", 10, 60)
        assert limiter.degraded
        private_redis.start()  # empty: nothing was saved, and the script cache is gone
        await asyncio.sleep(COOLDOWN + 0.05)
        with caplog.at_level(logging.WARNING, "edge.http.ratelimit"):
            state = await limiter.hit("k", 10, 60)
        assert not limiter.degraded
        assert state.remaining == 9  # counted in the new Redis, from scratch
        assert any("Redis is back" in r.message for r in caplog.records)
    finally:
        await limiter.close()


async def test_an_edge_starting_with_redis_down_starts_degraded(private_redis, caplog):
    private_redis.stop()
    limiter = limiter_for(private_redis.url)
    with caplog.at_level(logging.ERROR, "edge.http.ratelimit"):
        async with limiter:
            assert limiter.degraded
            assert (await limiter.hit("k", 2, 60)).allowed
    assert any("per process" in r.message for r in caplog.records)


@pytest.fixture
async def redis_edge(edge_client, edge_config, built_dist, private_redis):
    """A real edge app on the sample build and a seeded store, limited through Redis."""
    key = await seed_key(edge_config.database)
    config = dataclasses.replace(
        edge_config,
        dist=built_dist,
        redis_url=private_redis.url,
        redis_timeout=TIMEOUT,
        rate_limit_free=(5, 60),
    )
    client = await edge_client(config)
    return client, key


async def test_http_requests_keep_answering_while_redis_restarts(redis_edge, private_redis):
    client, key = redis_edge
    manifest_slug = await first_slug(client, key)
    paths = ["/v1/me", f"/v1/programs/{manifest_slug}", "/v1/programs?limit=1", "/v1/commissions"]

    async def get(path):
        started = time.monotonic()
        resp = await client.get(path, headers=bearer(key))
        await resp.read()
        return resp, time.monotonic() - started

    # Redis has counted the first request already (first_slug): 4 left of 5.
    private_redis.stop()
    for path in paths:
        resp, took = await get(path)
        # Never a 500, never a 503 for Redis: the request is answered as usual.
        assert resp.status == 200, (path, await resp.text())
        assert took < TIMEOUT + 1.0
        assert resp.headers["RateLimit-Limit"] == "5"
    # The per-process fallback still limits: its own 5, then 429.
    statuses = [(await get("/v1/me"))[0].status for _ in range(2)]
    assert statuses == [200, 429]

    private_redis.start()
    limiter = client.app[appkeys.LIMITER]
    await asyncio.sleep(DEFAULT_COOLDOWN + 0.05)
    resp, _ = await get("/v1/me")
    assert resp.status == 200 and not limiter.degraded
    # The new, empty Redis counts again (the shared count restarts with it).
    assert resp.headers["RateLimit-Remaining"] == "4"


async def test_the_edge_starts_with_redis_down(redis_edge, private_redis):
    client, key = redis_edge
    private_redis.stop()
    resp = await client.get("/v1/me", headers=bearer(key))
    assert resp.status == 200
    resp = await client.get("/readyz")
    assert resp.status == 200  # Redis is not part of readiness: limits fail open


async def test_redis_keys_are_per_api_key(redis_edge, private_redis):
    client, key = redis_edge
    await client.get("/v1/me", headers=bearer(key))
    raw = aioredis.Redis.from_url(private_redis.url)
    try:
        keys = await raw.keys(KEY_PREFIX + "*")
    finally:
        await raw.aclose()
    assert len(keys) == 1


async def first_slug(client, key: str) -> str:
    resp = await client.get("/v1/programs?limit=1", headers=bearer(key))
    assert resp.status == 200, await resp.text()
    return (await resp.json())["data"][0]["slug"]
