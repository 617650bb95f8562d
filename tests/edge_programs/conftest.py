"""Fixtures of the directory tests: a real edge on a dist/ written by the mini-writer."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from edge.app import create_app
from edge.config import Config

from .support import install_authenticator

ClientFactory = Callable[..., Awaitable[TestClient]]


@pytest.fixture
def dist(edge_config: Config) -> Path:
    return Path(edge_config.dist)


@pytest.fixture
def make_client(aiohttp_client: Any, edge_config: Config) -> ClientFactory:
    """`await make_client(**config overrides)`: a real edge on `dist`, polling every 20 ms,
    with a rate limit no test reaches."""

    async def make(**overrides: Any) -> TestClient:
        defaults = {"reload_interval": 0.02, "rate_limit_pro": (10**9, 60)}
        cfg = dataclasses.replace(edge_config, **{**defaults, **overrides})
        app = create_app(cfg)
        app.on_startup.append(install_authenticator)
        return await aiohttp_client(app)

    return make
