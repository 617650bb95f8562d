"""Fixtures of the contract tests (helpers live in contract_support.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from contract_support import FakeClock, install_test_authenticator

from edge import appkeys
from edge.app import create_app
from edge.config import Config
from edge.ratelimit import MemoryLimiter

ClientFactory = Callable[..., Awaitable[TestClient]]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def limited_client(aiohttp_client: Any, edge_config: Config, clock: FakeClock) -> ClientFactory:
    """`await limited_client(routes=..., **config)`: a real edge, test keys, a fake clock.

    `routes` (path -> handler) adds routes, to exercise the middleware on answers the real
    handlers may not give on demand.
    """

    async def make(routes: dict[str, Any] | None = None, **overrides: Any) -> TestClient:
        app = create_app(dataclasses.replace(edge_config, **overrides))
        for path, handler in (routes or {}).items():
            app.router.add_get(path, handler)

        async def startup(app: web.Application) -> None:
            await install_test_authenticator(app)
            app[appkeys.LIMITER] = MemoryLimiter(clock=clock)

        app.on_startup.append(startup)
        return await aiohttp_client(app)

    return make
