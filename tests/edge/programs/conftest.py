"""Fixtures of the directory tests: a real edge on a dist/ written by the mini-writer."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from support.programkit import make_accounts

from edge.app import create_app
from edge.config import Config

ClientFactory = Callable[..., Awaitable[TestClient]]


@pytest.fixture
def dist(edge_config: Config) -> Path:
    return Path(edge_config.dist)


@pytest.fixture(scope="session")
def accounts_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real account store for the session, holding TEST_KEY (the edge opens it read-only)."""
    path = tmp_path_factory.mktemp("accounts") / "edge.sqlite3"
    asyncio.run(make_accounts(path))
    return path


@pytest.fixture
def make_client(aiohttp_client: Any, edge_config: Config, accounts_db: Path) -> ClientFactory:
    """`await make_client(**config overrides)`: a real edge on `dist` and the session's
    account store, polling every 20 ms, with a rate limit no test reaches."""

    async def make(**overrides: Any) -> TestClient:
        defaults = {
            "reload_interval": 0.02,
            "rate_limit_pro": (10**9, 60),
            "database": str(accounts_db),
        }
        cfg = dataclasses.replace(edge_config, **{**defaults, **overrides})
        return await aiohttp_client(create_app(cfg))

    return make
