"""Fixtures of the contract tests (helpers live in contract_support.py)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from contract_support import FakeClock, make_accounts

from edge import appkeys
from edge.app import create_app
from edge.config import Config
from edge.http.limiter import MemoryLimiter

ClientFactory = Callable[..., Awaitable[TestClient]]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="session")
def accounts_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real account store for the session: free, pro and suspended accounts and keys."""
    path = tmp_path_factory.mktemp("accounts") / "edge.sqlite3"
    asyncio.run(make_accounts(path))
    return path


@pytest.fixture
def limited_client(
    aiohttp_client: Any, edge_config: Config, clock: FakeClock, accounts_db: Path
) -> ClientFactory:
    """`await limited_client(routes=..., **config)`: a real edge, test keys, a fake clock.

    `routes` (path -> handler) adds routes, to exercise the middleware on answers the real
    handlers may not give on demand.
    """

    async def make(routes: dict[str, Any] | None = None, **overrides: Any) -> TestClient:
        overrides.setdefault("database", str(accounts_db))
        app = create_app(dataclasses.replace(edge_config, **overrides))
        for path, handler in (routes or {}).items():
            app.router.add_get(path, handler)

        async def startup(app: web.Application) -> None:
            # The real limiter, on a clock the test moves: no sleeps.
            app[appkeys.LIMITER] = MemoryLimiter(clock=clock)

        app.on_startup.append(startup)
        return await aiohttp_client(app)

    return make
