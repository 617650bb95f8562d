"""The account store's schema version, read without migrating: what `affdir-admin migrate
--status` reports, and what `migrate` compares before and after.

Opening a store (store.open_store) applies the missing steps of the history (store.schema),
each a migration to its version; this module
only reads the `schema_migrations` table (SQLite: the file opened read-only, never made;
PostgreSQL: one plain connection), so that a status never changes the database.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from store.base import StoreError, StoreUnavailable
from store.schema import statements
from store.schema.runner import VERSION_SQL, postgres_version

SUMMARY_PARTS = re.compile(
    r"\s*(CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX)\s+(?:IF\s+NOT\s+EXISTS\s+)?\S+"
    r"|ALTER\s+TABLE\s+\S+\s+\S+(?:\s+COLUMN)?\s+\S+|DROP\s+\S+\s+\S+|UPDATE\s+\S+|\S+\s+\S+)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Migration:
    version: int
    summary: str  # what its statements do, e.g. "CREATE TABLE accounts, CREATE INDEX ..."


@dataclass(frozen=True)
class SchemaStatus:
    current: int  # the applied version: 0 for an empty (or absent) database
    migrations: tuple[Migration, ...]  # every migration this code has, by version

    @property
    def latest(self) -> int:
        return len(self.migrations)

    @property
    def pending(self) -> tuple[Migration, ...]:
        return self.migrations[self.current :]

    @property
    def newer_than_code(self) -> bool:
        return self.current > self.latest


def summary(statements: Sequence[str]) -> str:
    """A migration in one line: the head of each of its statements."""
    heads = []
    for statement in statements:
        match = SUMMARY_PARTS.match(statement)
        heads.append(" ".join(match.group(1).split()) if match else statement.split()[0])
    return ", ".join(heads)


def described(migrations: Sequence[Sequence[str]]) -> tuple[Migration, ...]:
    return tuple(Migration(n, summary(m)) for n, m in enumerate(migrations, 1))


def _sqlite_version(path: str) -> int:
    try:
        # mode=ro: a status never creates the file, nor writes to it.
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.OperationalError as exc:
        if "unable to open" in str(exc):
            return 0  # no file yet: the first open creates and migrates it
        raise StoreError(f"cannot read the schema version of {path}: {exc}") from None
    try:
        (exists,) = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        ).fetchone()
        return int(conn.execute(VERSION_SQL).fetchone()[0]) if exists else 0
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot read the schema version of {path}: {exc}") from None
    finally:
        conn.close()


async def _postgres_version(database: str, timeout: float) -> int:  # noqa: ASYNC109
    import asyncpg

    from store.engines.postgres import parse_url, redact

    dsn, _ = parse_url(database)
    try:
        async with asyncio.timeout(timeout):
            conn = await asyncpg.connect(dsn, timeout=timeout)
            try:
                return await postgres_version(conn)
            finally:
                await conn.close(timeout=timeout)
    except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
        reason = type(exc).__name__ if isinstance(exc, TimeoutError) else exc
        raise StoreUnavailable(f"cannot reach {redact(database)}: {reason}") from None


async def schema_status(database: str, *, timeout: float = 60.0) -> SchemaStatus:  # noqa: ASYNC109
    """The applied version of the store `database` names, and this code's migrations."""
    scheme = database.split(":", 1)[0].lower() if "://" in database else ""
    if scheme in {"postgres", "postgresql"}:
        current = await _postgres_version(database, timeout)
        return SchemaStatus(current, described(statements("postgres")))
    from store.engines.sqlite import database_path

    current = await asyncio.to_thread(_sqlite_version, str(database_path(database)))
    return SchemaStatus(current, described(statements("sqlite")))
