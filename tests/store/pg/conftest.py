"""Fixtures of the PostgreSQL store tests: stores and a real edge on the session's server
(tests/support/pgfixtures.py: `pg_server`, `pg_url`, `pg_fresh_url`)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import asyncpg
import pytest
from support.accountfixtures import UNLIMITED

from edge.config import Config
from store.engines.postgres import PostgresStore


@pytest.fixture
async def store(pg_url: str) -> AsyncIterator[PostgresStore]:
    """A writable store (what the admin CLI opens)."""
    opened = await PostgresStore.open(pg_url, writable=True, timeout=10.0)
    yield opened
    await opened.close()


@pytest.fixture
async def reader(pg_url: str) -> AsyncIterator[PostgresStore]:
    """A read-only store (what the edge opens)."""
    opened = await PostgresStore.open(pg_url)
    yield opened
    await opened.close()


@pytest.fixture
async def admin_conn(pg_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain superuser connection to the test database (locks, inspection)."""
    conn = await asyncpg.connect(pg_url)
    yield conn
    await conn.close()


@pytest.fixture
def pg_config(edge_config: Config, pg_url: str) -> Config:
    """The root fixture's config (files in tmp_path), on the PostgreSQL test database."""
    return dataclasses.replace(
        edge_config, database=pg_url, rate_limit_free=UNLIMITED, rate_limit_pro=UNLIMITED
    )


@pytest.fixture
def client_config(pg_config: Config) -> Config:
    """`edge_client` serves the PostgreSQL test database."""
    return pg_config
