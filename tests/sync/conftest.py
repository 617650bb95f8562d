"""Fixtures of the sync tests: a fake clock, an in-memory store, the loopback fake networks,
and a guard that no planted credential reaches a log line."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from support.clock import FakeClock
from sync_support import (
    CREDENTIALS,
    PLANTED,
    FakeNetworks,
    MemoryStore,
    connection,
    decrypt,
)

from sync.connectors import CONNECTORS
from sync.http import NetworkClient, RetryPolicy
from sync.model import SyncReport
from sync.ratelimit import Limiters
from sync.runner import SyncSettings, sync_connection
from sync.statuses import mapper, tables_from_specs

# Small pages so that a handful of recorded records spans several pages.
TEST_PAGE_SIZES = {"impact": 1, "tradedoubler": 1, "partnerize": 1, "affilae": 1, "admitad": 1}


@pytest.fixture(autouse=True)
def no_credentials_in_logs(caplog: pytest.LogCaptureFixture):
    """Every log line of every sync test (tracebacks included) is free of planted secrets."""
    caplog.set_level(logging.DEBUG)
    yield
    # In teardown caplog.records is the teardown's: read the earlier phases by name.
    records = caplog.get_records("setup") + caplog.get_records("call")
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    text = "\n".join(formatter.format(r) for r in records)
    leaked = [v for v in PLANTED if v in text]
    assert not leaked, f"credentials in log lines: {leaked}"


@pytest.fixture
def store(clock: FakeClock) -> MemoryStore:
    memory = MemoryStore(clock)
    for network, creds in CREDENTIALS.items():
        memory.add(connection(network), creds)
    return memory


@pytest.fixture
async def networks(aiohttp_server: Any, clock: FakeClock) -> FakeNetworks:
    fake = FakeNetworks(clock)
    # No access log: the fake network's own log is the network's, and shows its keys.
    server = await aiohttp_server(fake.app, access_log=None)
    fake.url = str(server.make_url("")).rstrip("/")  # type: ignore[attr-defined]
    return fake


@pytest.fixture
def settings(networks: FakeNetworks) -> SyncSettings:
    return SyncSettings(
        base_urls={n: f"{networks.url}/{n}" for n in CONNECTORS},  # type: ignore[attr-defined]
        page_sizes=TEST_PAGE_SIZES,
        retry=RetryPolicy(attempts=4, backoff_base=1.0, backoff_cap=30.0, max_retry_after=600.0),
    )


@pytest.fixture
def map_status():
    return mapper(tables_from_specs(c.spec for c in CONNECTORS.values()))


SyncRun = Callable[..., Awaitable[SyncReport]]


@pytest.fixture
async def run_sync(
    store: MemoryStore, clock: FakeClock, settings: SyncSettings, map_status
) -> SyncRun:
    """`await run_sync(network, **overrides)`: one sync of the test connection, on one shared
    session and limiter set (as a worker has)."""
    session = aiohttp.ClientSession()
    limiters = Limiters(clock)

    async def run(network: str, **overrides: Any) -> SyncReport:
        conn = overrides.pop("connection", None) or connection(network)
        cfg = overrides.pop("settings", settings)
        client = NetworkClient(session, clock, cfg.retry, rand=lambda: 0.5)
        return await sync_connection(
            overrides.pop("store", store),
            conn,
            decrypt=decrypt,
            map_status=overrides.pop("map_status", map_status),
            clock=clock,
            settings=cfg,
            client=client,
            limiters=limiters,
            **overrides,
        )

    yield run
    await session.close()
