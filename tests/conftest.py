"""Fixtures shared by every test package: a real edge server on real files."""

from __future__ import annotations

import dataclasses
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from support.clock import FakeClock
from support.collected import COLLECTED_FOLDERS
from support.edgeclient import EdgeClientFactory

from edge import appkeys
from edge.app import create_app
from edge.config import Config
from edge.http.limiter import MemoryLimiter

# PostgreSQL fixtures (pg_server, pg_url, pg_fresh_url) and the account fixtures (a real
# account database on either backend) for any test folder that asks for them.
pytest_plugins = ("support.pgfixtures", "support.accountfixtures")

ROOT = Path(__file__).resolve().parent.parent
TEST_SECRET = "test-secret-" + "x" * 40

# The tiers (markers in pyproject.toml): a test that uses one of these fixtures, directly or
# through another, gets the marker, so `dev.py test --fast` leaves it out without anyone
# remembering to mark it.
FIXTURE_TIERS = {
    "pg_server": "postgresql",
    "pg_databases": "postgresql",
    "pg_url": "postgresql",
    "pg_fresh_url": "postgresql",
    "redis_binary": "redis",
    "browser": "browser",
    # `python build.py` runs (tests/catalog/conftest.py).
    "run_cli": "process",
    # `python -m edge` processes (tests/edge/scale/conftest.py, tests/agents/conftest.py).
    "edges": "process",
    "live_api": "process",
}
# A test carrying one of these may start processes; any other test that does fails.
STARTS_PROCESSES = ("process", "postgresql", "redis", "browser")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    config.stash[COLLECTED_FOLDERS] = frozenset(
        Path(item.nodeid.split("::")[0]).parent.as_posix() for item in items
    )
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for tier in {tier for name, tier in FIXTURE_TIERS.items() if name in used}:
            item.add_marker(tier)
    # The long tests first: xdist hands out tests in this order, so a minute-long test starts
    # while the other workers still have many short ones to take, instead of running alone
    # at the end (dev.py's `--dist worksteal` lets an idle worker take over queued tests,
    # so the long ones handed out together do not stay with one worker). The `slow` ones, then those that start a process or a server (seconds
    # each, much of it waiting: a startup, a shutdown timeout), then the rest; otherwise
    # the order stays the collection's (which ends with tests/test_*.py and tests/webhooks).
    items.sort(
        key=lambda item: (
            item.get_closest_marker("slow") is None,
            not any(item.get_closest_marker(tier) for tier in STARTS_PROCESSES),
        )
    )


@pytest.fixture(autouse=True)
def processes_need_a_tier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail a test that starts a process (subprocess, asyncio's subprocesses) without one of
    the STARTS_PROCESSES markers: `--fast` promises no process, and would run it."""
    if any(request.node.get_closest_marker(tier) for tier in STARTS_PROCESSES):
        return
    nodeid = request.node.nodeid

    def refuse(self: subprocess.Popen[Any], args: Any, *_: Any, **__: Any) -> None:
        raise AssertionError(
            f"{nodeid} starts a process ({args!r}): mark it `process` (or postgresql, redis, "
            "browser: see FIXTURE_TIERS in tests/conftest.py), or test it in process"
        )

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)


@pytest.fixture
def edge_config(tmp_path: Path) -> Config:
    """A config whose every file lives in this test's tmp_path."""
    return Config(
        dist=tmp_path / "dist",
        database=str(tmp_path / "edge.sqlite3"),
        secret_key=TEST_SECRET,
        secret_file=tmp_path / "secret.key",
        access_log=False,
    )


@pytest.fixture
def clock() -> FakeClock:
    """The test's fake clock (support/clock.py): `edge_client`'s key cache runs on it."""
    return FakeClock()


@pytest.fixture
def client_config(edge_config: Config) -> Config:
    """The config `edge_client` starts from. A test folder's conftest.py overrides it with
    what its tests share (their account database, their dist/, their limits)."""
    return edge_config


@pytest.fixture
def limiter_clock() -> Callable[[], float] | None:
    """The clock of `edge_client`'s in-memory rate limiter: None keeps the edge's own limiter
    (real time, or Redis). A folder whose tests move the limiter's time returns `clock`."""
    return None


@pytest.fixture
def edge_client(
    aiohttp_client: Any,
    client_config: Config,
    clock: FakeClock,
    limiter_clock: Callable[[], float] | None,
) -> EdgeClientFactory:
    """`await edge_client(config=None, *, routes=None, store=None, server_kwargs=None,
    **overrides)`: a client of a real edge server on `config` (default `client_config`) with
    `overrides` replaced, whose key cache runs on `clock`.

    `routes` (path -> handler) adds GET routes, to exercise the middleware on answers the real
    handlers may not give on demand; `store` replaces the opened account store (a store that
    fails on purpose); `server_kwargs` go to the test server's runner (an access logger).
    """

    async def make(
        config: Config | None = None,
        *,
        routes: dict[str, Any] | None = None,
        store: Any = None,
        server_kwargs: dict[str, Any] | None = None,
        **overrides: Any,
    ) -> TestClient:
        app = create_app(dataclasses.replace(config or client_config, **overrides))
        app[appkeys.AUTH_CLOCK] = clock
        for path, handler in (routes or {}).items():
            app.router.add_get(path, handler)

        async def startup(app: web.Application) -> None:
            # on_startup runs after the cleanup contexts: the real limiter and store are
            # open (and closed at cleanup), but requests see these.
            if limiter_clock is not None:
                app[appkeys.LIMITER] = MemoryLimiter(clock=limiter_clock)
            if store is not None:
                app[appkeys.STORE] = store

        app.on_startup.append(startup)
        if not server_kwargs:
            return await aiohttp_client(app)
        # TestServer passes runner options (e.g. the access logger) only through start_server.
        server = TestServer(app)
        await server.start_server(**server_kwargs)
        return await aiohttp_client(server)

    return make


@pytest.fixture
def sigint_delivered() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt during the test, even when the suite runs with it
    ignored (a background job, `nohup`, some CI runners): a test that sends itself SIGINT
    tests the program, not how it was started. The disposition is restored afterwards."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
