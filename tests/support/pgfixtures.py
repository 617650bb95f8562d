"""pytest fixtures of a real PostgreSQL server, for every test package (a plugin named in
tests/conftest.py).

- `pg_server` (session): one private server (tests/support/pgserver.py) for the whole run.
- `pg_url` (function): the URL of the shared test database, migrated, every table emptied
  (identities restarted) before the test: a fresh store in ~30 ms where a new database
  would take ~200 ms.
- `pg_fresh_url` (function): a new empty database of its own, dropped after the test
  (migration tests).

Without the server binaries the tests that use them are skipped, unless `CI` is set: CI
installs PostgreSQL (scripts/ensure-services.sh), so a missing server there is a failure.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import NoReturn

import asyncpg
import pytest

from support.pgserver import PgServer, find_bin_dir

TEST_DATABASE = "affdir_test"
# Every relation (tables, indexes, sequences) and column of the schema, in one digest.
SCHEMA_FINGERPRINT = """
SELECT md5(string_agg(c.relname || ':' || c.relkind::text || '.' || a.attname || ':'
                      || a.atttypid::regtype::text, ',' ORDER BY c.relname, a.attnum))
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
WHERE c.relnamespace = current_schema()::regnamespace AND a.attnum > 0 AND NOT a.attisdropped"""
# One round trip: every table but the schema version emptied, every identity restarted.
# DELETE, not TRUNCATE: a few rows per test, and TRUNCATE makes new files for every table
# and index (3x slower here). Triggers off (superuser): foreign keys need no order.
EMPTY_EVERY_TABLE = """
DO $$
DECLARE item record;
BEGIN
    SET LOCAL session_replication_role = replica;
    FOR item IN SELECT tablename FROM pg_tables
            WHERE schemaname = current_schema() AND tablename <> 'schema_migrations' LOOP
        EXECUTE format('DELETE FROM %I', item.tablename);
    END LOOP;
    FOR item IN SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema() LOOP
        EXECUTE format('ALTER SEQUENCE %I RESTART', item.sequencename);
    END LOOP;
END $$"""
CLEANUP_LOCK_TIMEOUT = "5s"  # a store a test forgot to close must fail the next, not hang it


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


def no_server(reason: str) -> NoReturn:
    """Skip the test, or fail it in CI, where PostgreSQL is installed on purpose."""
    if in_ci():
        pytest.fail(
            f"{reason}, and CI is set: CI installs PostgreSQL (scripts/ensure-services.sh, "
            "apt-get install postgresql); the PostgreSQL tests must run there",
            pytrace=False,
        )
    pytest.skip(f"{reason}: install PostgreSQL (apt-get install postgresql) to run these tests")


@dataclass
class PgTestDatabases:
    """The session's databases on `server`: the shared one (migrated once) and fresh ones."""

    server: PgServer
    schema: str | None = None  # fingerprint of the migrated schema; None: not made yet
    numbers: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def url(self) -> str:
        return self.server.url(TEST_DATABASE)

    async def reset(self) -> str:
        """The shared database, migrated and empty; its URL. A test that altered the schema
        (e.g. renamed a table to break the store) gets the database remade from scratch."""
        conn = None
        if self.schema is not None:
            conn = await asyncpg.connect(
                self.url, server_settings={"lock_timeout": CLEANUP_LOCK_TIMEOUT}
            )
            if await conn.fetchval(SCHEMA_FINGERPRINT) != self.schema:
                await conn.close()
                conn = None
        if conn is None:
            await self._create(TEST_DATABASE)
            # Imported here: a run without PostgreSQL never needs the store module.
            from store.engines.postgres import PostgresStore

            store = await PostgresStore.open(self.url, writable=True, timeout=30.0)
            await store.close()
            conn = await asyncpg.connect(
                self.url, server_settings={"lock_timeout": CLEANUP_LOCK_TIMEOUT}
            )
            self.schema = await conn.fetchval(SCHEMA_FINGERPRINT)
        try:
            await conn.execute(EMPTY_EVERY_TABLE)
        finally:
            await conn.close()
        return self.url

    async def fresh(self) -> str:
        name = f"affdir_fresh_{next(self.numbers)}"
        await self._create(name)
        return self.server.url(name)

    async def drop(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        conn = await asyncpg.connect(self.server.url("postgres"))
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()

    async def _create(self, name: str) -> None:
        conn = await asyncpg.connect(self.server.url("postgres"))
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The session's PostgreSQL server (started on first use, destroyed at the end)."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        no_server("no PostgreSQL server binaries (initdb, pg_ctl, postgres, psql) found")
    server = PgServer.create(bin_dir)
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture(scope="session")
def pg_databases(pg_server: PgServer) -> PgTestDatabases:
    return PgTestDatabases(pg_server)


def require_tier(request: pytest.FixtureRequest) -> None:
    """A test reaching the server without the `postgresql` marker (e.g. through
    request.getfixturevalue) would run under `dev.py test --fast`: fail it, saying so."""
    if request.node.get_closest_marker("postgresql") is None:
        pytest.fail(
            f"{request.node.nodeid} uses PostgreSQL: mark it `postgresql` (a fixture param "
            "can carry it: pytest.param(..., marks=pytest.mark.postgresql))",
            pytrace=False,
        )


@pytest.fixture
async def pg_url(request: pytest.FixtureRequest, pg_databases: PgTestDatabases) -> str:
    """postgresql:// URL of a migrated, empty database for this test."""
    require_tier(request)
    if not pg_databases.server.running:  # a previous test stopped it and failed
        pg_databases.server.start()
    return await pg_databases.reset()


@pytest.fixture
async def pg_fresh_url(
    request: pytest.FixtureRequest, pg_databases: PgTestDatabases
) -> AsyncIterator[str]:
    """postgresql:// URL of a new, empty (unmigrated) database, dropped after the test."""
    require_tier(request)
    if not pg_databases.server.running:
        pg_databases.server.start()
    url = await pg_databases.fresh()
    try:
        yield url
    finally:
        await pg_databases.drop(url)
