"""Fixtures of the sync tests: a fake clock, an in-memory store, the real account stores
(a SQLite file and PostgreSQL), the loopback fake networks, and a guard that no planted
credential reaches a log line, an exception text or a command's output."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from fakes import FAKES
from support.clock import FakeClock
from sync_support import (
    CREDENTIALS,
    PLANTED,
    SECRET,
    FakeNetworks,
    MemoryStore,
    connection,
    decrypt,
    seal,
    seed_store,
)

from accounts.keyring import Keyring, keyring_from_env
from accounts.statusmap import load_status_map
from edge.config import Config
from store import AccountStore, open_store
from sync.connectors import CONNECTORS
from sync.http import NetworkClient, RetryPolicy
from sync.lease import Lease
from sync.model import SyncReport
from sync.ratelimit import Limiters
from sync.runner import Syncer, SyncSettings, sync_connection
from sync.storage import credential_opener, credential_sealer

# Small pages so that a handful of recorded records spans several pages.
TEST_PAGE_SIZES = {n: f.page_size for n, f in FAKES.items() if f.page_size is not None}


@pytest.fixture
def transcript() -> list[str]:
    """What a test's commands printed and the exception texts it caught: the guard below
    greps them with the log lines."""
    return []


@pytest.fixture(autouse=True)
def no_credentials_in_logs(caplog: pytest.LogCaptureFixture, transcript: list[str]):
    """Every log line of every sync test (tracebacks included), every output of a command
    it ran and every exception text it kept is free of planted secrets."""
    caplog.set_level(logging.DEBUG)
    yield
    # In teardown caplog.records is the teardown's: read the earlier phases by name.
    records = caplog.get_records("setup") + caplog.get_records("call")
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    text = "\n".join([*(formatter.format(r) for r in records), *transcript])
    leaked = [v for v in PLANTED if v in text]
    assert not leaked, f"credentials in log lines or command output: {leaked}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """A failure whose traceback quotes a planted credential is reported without it: the
    report is part of the transcript too."""
    report = yield
    if call.excinfo is not None and any(v in str(report.longrepr) for v in PLANTED):
        report.longrepr = "the failure's text names a planted credential (hidden)"
    return report


@pytest.fixture
def keyring() -> Keyring:
    return keyring_from_env({"EDGE_SECRET_KEY": SECRET})


@pytest.fixture
async def real_store(
    account_config: Config, clock: FakeClock, keyring: Keyring
) -> AsyncIterator[AccountStore]:
    """The account store on the test's database (migrated and empty: `account_config`), on
    the test clock, with the test account connected to every network (credentials sealed
    under `keyring`)."""
    store = await open_store(
        account_config.database, writable=True, readers=1, timeout=10.0, clock=lambda: clock.now()
    )
    try:
        await seed_store(store, keyring)
        yield store
    finally:
        await store.close()


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
    return load_status_map().status


SyncRun = Callable[..., Awaitable[SyncReport]]


@pytest.fixture
async def run_sync(
    store: MemoryStore, clock: FakeClock, settings: SyncSettings, map_status, keyring: Keyring
) -> SyncRun:
    """`await run_sync(network, **overrides)`: one sync of the test connection, on one shared
    session and limiter set (as a worker has), able to store the credentials a network
    rotates as a worker does: sealed like the credentials it opens (`seal=None` runs without)."""
    session = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())  # as the worker's
    limiters = Limiters(clock)

    async def run(network: str, deadline: float | None = None, **overrides: Any) -> SyncReport:
        conn = overrides.pop("connection", None) or connection(network)
        lease = overrides.pop("lease", None)
        cfg = overrides.pop("settings", settings)
        if "seal" not in overrides:
            # The sealer that matches the opener: the keyring's for the real stores.
            sealer = credential_sealer(keyring) if "decrypt" in overrides else seal
            overrides["seal"] = sealer
        syncer = Syncer(
            overrides.pop("store", store),
            overrides.pop("decrypt", decrypt),
            overrides.pop("map_status", map_status),
            NetworkClient(session, clock, cfg.retry, rand=lambda: 0.5),
            limiters,
            cfg,
            **overrides,
        )
        return await sync_connection(syncer, conn, deadline=deadline, lease=lease)

    yield run
    await session.close()


LEASE_SECONDS = 3600.0


@pytest.fixture
def leased_run(run_sync: SyncRun, clock: FakeClock, keyring: Keyring):
    """`await leased_run(network, sync_store, **overrides)`: one sync into a real store as a
    worker runs it: claimed, its lease renewed while it works (a first sync of a network
    with one-day windows and a call a minute outlasts any fixed lease), released."""

    async def run(network: str, sync_store: Any, worker: str = "w1", **overrides: Any):
        conn = overrides.get("connection") or connection(network)
        assert await sync_store.claim(conn, worker, LEASE_SECONDS)
        lease = Lease(sync_store, conn, worker, LEASE_SECONDS, clock)
        overrides.setdefault("decrypt", credential_opener(keyring))
        try:
            return await run_sync(network, store=sync_store, lease=lease, **overrides)
        finally:
            await sync_store.release(conn, worker)

    return run
