"""The Redis limiter against a real Redis: same decisions as the in-memory GCRA, atomic
across clients, keys that expire, a script that survives a script cache flush."""

from __future__ import annotations

import asyncio
import random

import pytest
from aiohttp import web
from support.clock import FakeClock

from edge import appkeys
from edge.config import Config, ConfigError
from edge.http.limiter import MemoryLimiter, RateState
from edge.http.ratelimit_redis import KEY_PREFIX, RedisLimiter, connect
from edge.lifecycle import limiter_context

pytestmark = pytest.mark.usefixtures("redis_url")


@pytest.mark.parametrize(("limit", "window"), [(60, 60), (600, 60), (7, 60), (3, 2), (1, 1)])
async def test_same_decisions_as_the_memory_limiter(redis_url, limit, window):
    # Epoch-sized times: the Redis limiter works on the server's Unix time.
    clock = FakeClock(mono=1_700_000_000.0)
    memory = MemoryLimiter(clock=clock)
    shared = RedisLimiter(connect(redis_url, 1.0), clock=clock)
    rng = random.Random(f"{limit}/{window}")
    interval = window / limit
    try:
        for step in range(300):
            key = f"k{rng.randrange(3)}"
            expected = await memory.hit(key, limit, window)
            assert await shared.hit(key, limit, window) == expected, step
            # Bursts, exact multiples of the interval, and idle gaps past the window.
            clock.advance(rng.choice((0.0, 0.0, interval, interval / 3, window * 1.5, 0.001)))
    finally:
        await shared.close()


async def test_the_limit_holds_across_clients_hitting_at_once(redis_url):
    # Three clients are three processes as far as Redis can tell.
    # More requests at once than a client has connections: they queue for one. A generous
    # timeout: this machine may be busy, and a fallback would spoil the count.
    limiters = [
        RedisLimiter(connect(redis_url, 10.0, max_connections=8), timeout=10.0) for _ in range(3)
    ]
    try:
        states = await asyncio.gather(*(limiters[n % 3].hit("busy", 50, 60) for n in range(150)))
    finally:
        for limiter in limiters:
            await limiter.close()
    assert not any(limiter.degraded for limiter in limiters)
    allowed = [s for s in states if s.allowed]
    assert len(allowed) == 50
    assert sorted(s.remaining for s in allowed) == list(range(50))
    assert all(s.retry_after_seconds >= 1 for s in states if not s.allowed)


async def test_server_clock_and_headers(redis_url):
    limiter = RedisLimiter(connect(redis_url, 1.0))
    try:
        first = await limiter.hit("fresh", 3, 60)
        assert first == RateState(limit=3, window_seconds=60, remaining=2, reset_seconds=20)
        await limiter.hit("fresh", 3, 60)
        third = await limiter.hit("fresh", 3, 60)
        assert (third.allowed, third.remaining, third.reset_seconds) == (True, 0, 60)
        refused = await limiter.hit("fresh", 3, 60)
        assert not refused.allowed
        assert refused.remaining == 0 and 19 <= refused.retry_after_seconds <= 20
    finally:
        await limiter.close()


async def test_keys_expire_when_the_bucket_is_full_again(redis_url, redis_client):
    limiter = RedisLimiter(connect(redis_url, 1.0))
    try:
        await limiter.hit("ttl", 60, 60)
        assert 900 <= await redis_client.pttl(KEY_PREFIX + "ttl") <= 1000
        await limiter.hit("ttl", 60, 60)
        assert 1900 <= await redis_client.pttl(KEY_PREFIX + "ttl") <= 2000
        await limiter.hit("short", 1, 1)
        assert not (await limiter.hit("short", 1, 1)).allowed
        await asyncio.sleep(1.1)
        assert await redis_client.exists(KEY_PREFIX + "short") == 0
        assert (await limiter.hit("short", 1, 1)).allowed
    finally:
        await limiter.close()


async def test_a_refused_request_costs_nothing(redis_url, redis_client):
    limiter = RedisLimiter(connect(redis_url, 1.0))
    try:
        await limiter.hit("one", 1, 60)
        stored = await redis_client.get(KEY_PREFIX + "one")
        for _ in range(5):
            assert not (await limiter.hit("one", 1, 60)).allowed
        assert await redis_client.get(KEY_PREFIX + "one") == stored
    finally:
        await limiter.close()


async def test_the_script_is_loaded_again_after_a_flush(redis_url, redis_client):
    limiter = RedisLimiter(connect(redis_url, 1.0))
    try:
        assert (await limiter.hit("s", 2, 60)).remaining == 1
        await redis_client.script_flush()  # what a Redis restart or failover does too
        assert (await limiter.hit("s", 2, 60)).remaining == 0
        assert not limiter.degraded
    finally:
        await limiter.close()


def limiter_app(redis_url: str | None) -> web.Application:
    app = web.Application()
    app[appkeys.CONFIG] = Config(redis_url=redis_url)
    return app


@pytest.mark.parametrize("url", ["http://127.0.0.1:6379", "redis://host:notaport/0"])
async def test_an_unusable_url_stops_the_edge_at_start(url):
    with pytest.raises(ConfigError, match="--redis-url"):
        await anext(limiter_context(limiter_app(url)))


@pytest.mark.parametrize("shared", [True, False])
async def test_a_redis_url_makes_a_redis_limiter(redis_url, shared):
    app = limiter_app(redis_url if shared else None)
    steps = limiter_context(app)
    await anext(steps)
    assert isinstance(app[appkeys.LIMITER], RedisLimiter if shared else MemoryLimiter)
    assert await anext(steps, None) is None  # the cleanup closes a Redis one


@pytest.mark.parametrize(("limit", "window"), [(60, 60), (7, 60), (3, 2), (1, 1)])
async def test_refunds_give_the_same_state_as_the_memory_limiter(redis_url, limit, window):
    # A 304's cost is given back: Redis and memory agree on every hit and every refund.
    clock = FakeClock(mono=1_700_000_000.0)
    memory = MemoryLimiter(clock=clock)
    shared = RedisLimiter(connect(redis_url, 1.0), clock=clock, prefix=f"refund:{limit}:")
    rng = random.Random(f"refund {limit}/{window}")
    interval = window / limit
    try:
        for step in range(300):
            key = f"k{rng.randrange(2)}"
            if rng.random() < 0.4:
                expected = await memory.refund(key, limit, window)
                assert await shared.refund(key, limit, window) == expected, step
            else:
                expected = await memory.hit(key, limit, window)
                assert await shared.hit(key, limit, window) == expected, step
            clock.advance(rng.choice((0.0, 0.0, interval, interval / 3, window * 1.5, 0.001)))
    finally:
        await shared.close()


async def test_a_refund_undoes_a_hit_and_never_more(redis_url, redis_client):
    clock = FakeClock(mono=1_700_000_000.0)
    shared = RedisLimiter(connect(redis_url, 1.0), clock=clock, prefix="undo:")
    try:
        first = await shared.hit("k", 3, 3600)
        assert first.remaining == 2
        for _ in range(5):
            await shared.hit("k", 3, 3600)
            assert await shared.refund("k", 3, 3600) == first
        # Refunds past a full bucket leave it full, and leave no key behind.
        assert (await shared.refund("k", 3, 3600)).remaining == 3
        assert (await shared.refund("k", 3, 3600)).remaining == 3
        assert await redis_client.exists("undo:k") == 0
    finally:
        await shared.close()


async def test_not_modified_is_free_through_redis(aiohttp_client, redis_url, built_dist, tmp_path):
    from support.edgeprocess import bearer, seed_key

    from edge import appkeys
    from edge.app import create_app
    from edge.config import Config

    database = str(tmp_path / "edge.sqlite3")
    key = await seed_key(database)
    config = Config(
        dist=built_dist,
        database=database,
        secret_key="s" * 48,
        secret_file=tmp_path / "secret.key",
        access_log=False,
        redis_url=redis_url,
        rate_limit_free=(3, 3600),
    )
    client = await aiohttp_client(create_app(config))
    first = await client.get("/v1/programs?limit=2", headers=bearer(key))
    assert first.status == 200 and first.headers["RateLimit-Remaining"] == "2"
    conditional = {**bearer(key), "If-None-Match": first.headers["ETag"]}
    for _ in range(6):
        resp = await client.get("/v1/programs?limit=2", headers=conditional)
        assert resp.status == 304
        assert resp.headers["RateLimit-Remaining"] == "2"
        assert resp.headers["RateLimit"] == first.headers["RateLimit"]
    assert not client.app[appkeys.LIMITER].degraded  # counted in Redis, not the fallback
