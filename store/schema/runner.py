"""The one runner of the schema history, for either database: the steps a database has not
applied yet, each with its version row, in the caller's write transaction.

The engines call it when a store opens (store.engines.sqlite.migrate under SQLite's write
lock, store.engines.postgres.migrate under the advisory lock `MIGRATION_LOCK`, so edge
workers starting together apply each step once and the others wait, then find it done).
"""

from __future__ import annotations

from typing import Any

from store.base import StoreError
from store.core import Session, lock_key
from store.schema import LATEST, statements
from store.schema.step import Engine

VERSION_SQL = "SELECT coalesce(max(version), 0) FROM schema_migrations"
# The version table itself: made by the runner before the first step, never by a step.
VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    "version integer PRIMARY KEY, applied_at text NOT NULL)"
)
MIGRATION_LOCK = lock_key("schema_migrations")


def check_version(version: int) -> None:
    """StoreError for a database migrated by newer code than this."""
    if version > LATEST:
        raise StoreError(
            f"the database schema is version {version}, newer than this code ({LATEST}); "
            "upgrade the edge"
        )


async def apply(s: Session, engine: Engine, upto: int = LATEST) -> int:
    """Apply the steps after the recorded version up to `upto` (the tests' earlier releases
    stop before the latest), each with its version row; return the schema version. The
    caller holds the transaction (and whatever lock it needs)."""
    steps = statements(engine, upto)
    await s.execute(VERSION_TABLE)
    version = int(await s.fetchval(VERSION_SQL))
    check_version(version)
    for number in range(version + 1, upto + 1):
        for statement in steps[number - 1]:
            await s.execute(statement)
        await s.execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", number, s.now()
        )
    return max(version, upto)


async def postgres_version(conn: Any) -> int:
    """The applied version of a PostgreSQL database (an asyncpg connection); 0 for an
    empty one. A plain read: no lock, no DDL."""
    if not await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL"):
        return 0
    return int(await conn.fetchval(VERSION_SQL))
