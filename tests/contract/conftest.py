"""Fixtures of the contract tests (helpers live in contract_support.py): `edge_client` serves
the session's test keys, and its rate limiter runs on the test's `clock`."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from contract_support import make_accounts
from support.clock import FakeClock

from edge.config import Config


@pytest.fixture(scope="session")
def accounts_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real account store for the session: free, pro and suspended accounts and keys."""
    path = tmp_path_factory.mktemp("accounts") / "edge.sqlite3"
    asyncio.run(make_accounts(path))
    return path


@pytest.fixture
def client_config(edge_config: Config, accounts_db: Path) -> Config:
    return dataclasses.replace(edge_config, database=str(accounts_db))


@pytest.fixture
def limiter_clock(clock: FakeClock) -> Callable[[], float]:
    """The real in-memory limiter, on a clock the test moves: no sleeps."""
    return clock
