"""Fixtures of the scale-out tests: private Redis servers, a seeded account store, a real
build, and real `python -m edge` processes.

Redis: the tests that need it skip when redis-server is not installed, except in CI
(`CI=true`), where its absence is a failure: CI installs it (scripts/ensure-services.sh).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from support.edgeprocess import EdgeProcess
from support.redisserver import RedisServer, find_redis_server
from support.sample import build_sample


@pytest.fixture(scope="session")
def redis_binary() -> str:
    binary = find_redis_server()
    if binary is None:
        message = (
            "redis-server is not installed; `bash scripts/ensure-services.sh` (as root) installs it"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI: {message}, and .ci/run should have run it", pytrace=False)
        pytest.skip(message)
    return binary


@pytest.fixture(scope="session")
def shared_redis(redis_binary: str) -> Iterator[RedisServer]:
    """One Redis for the tests that do not stop it (each starts on an empty database)."""
    server = RedisServer.create(redis_binary)
    yield server
    server.destroy()


@pytest.fixture
async def redis_url(shared_redis: RedisServer) -> str:
    client = aioredis.Redis.from_url(shared_redis.url)
    try:
        await client.flushall()
    finally:
        await client.aclose()
    return shared_redis.url


@pytest.fixture
def private_redis(redis_binary: str) -> Iterator[RedisServer]:
    """A Redis of this test's own, to stop, freeze and restart."""
    server = RedisServer.create(redis_binary)
    yield server
    server.destroy()


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_url)
    yield client
    await client.aclose()


# --- the build and the edge processes ---------------------------------------------------


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real build of the sample content, made once for the session (read-only)."""
    return build_sample(tmp_path_factory.mktemp("scale-build") / "dist")


@pytest.fixture
def edges(tmp_path: Path) -> Iterator[list[EdgeProcess]]:
    """Collects the EdgeProcess objects a test starts, and stops any still running."""
    started: list[EdgeProcess] = []
    yield started
    for edge in started:
        if edge.process.poll() is None:
            edge.process.kill()
            edge.process.wait()
