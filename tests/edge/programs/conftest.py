"""Fixtures of the directory tests: a real edge on a dist/ written by the mini-writer."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
from support.programkit import make_accounts

from edge.config import Config


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
def client_config(edge_config: Config, accounts_db: Path) -> Config:
    """`edge_client` serves `dist` with the session's account store, polling every 20 ms,
    with a rate limit no test reaches."""
    return dataclasses.replace(
        edge_config,
        reload_interval=0.02,
        rate_limit_pro=(10**9, 60),
        database=str(accounts_db),
    )
