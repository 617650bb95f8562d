"""Rows a test module's tests only read, written once per backend and copied into the
database of each test that asks for them (tests/support/accountfixtures.py, `stored_rows`).

The rows are written as the tests would write them, through the store's own operations, into
a database of their own; each test then gets a copy, so what one test writes no other sees.
SQLite: the closed store's file, copied. PostgreSQL: every table's rows (COPY, binary) and
its identities' positions, put back into the emptied test database with the triggers off, so
derived tables (totals, history, events) come back as they were written, not derived again.
"""

from __future__ import annotations

import asyncio
import io
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg

from store import AccountStore, open_store

TABLES = """SELECT tablename FROM pg_tables
WHERE schemaname = current_schema() AND tablename <> 'schema_migrations' ORDER BY tablename"""
SEQUENCES = """SELECT sequencename, last_value FROM pg_sequences
WHERE schemaname = current_schema() AND last_value IS NOT NULL"""


def run_apart(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run `coroutine` to its end in a loop of its own thread: a fixture may call this
    between the async fixtures of a test, whose loop this thread keeps."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def backend(database: str) -> str:
    return "postgresql" if database.startswith("postgresql://") else "sqlite"


@dataclass
class PgRows:
    tables: list[tuple[str, bytes]]  # (table, its rows in COPY's binary format): none empty
    sequences: list[tuple[str, int]]  # (sequence, its last value)


@dataclass
class StoredRows:
    """`write(store)` run once per backend; `copy_into(database)` gives a test the rows and
    what `write` returned."""

    write: Callable[[AccountStore], Awaitable[Any]]
    root: Path
    values: dict[str, Any] = field(default_factory=dict)
    sqlite: Path | None = None
    postgresql: PgRows | None = None

    def value(self, database: str) -> Any:
        """What `write` returned on `database`'s backend."""
        return self.values[backend(database)]

    def copy_into(self, database: str, migrated_sqlite: Path | None) -> None:
        """Put the rows into `database`: a SQLite path not made yet (`migrated_sqlite`: the
        empty store to write them into first), or the emptied PostgreSQL test database."""
        if migrated_sqlite is None:
            if self.postgresql is None:
                self.values["postgresql"] = run_apart(self._write(database))
                self.postgresql = run_apart(_dump(database))
            else:
                run_apart(_load(database, self.postgresql))
            return
        if self.sqlite is None:
            made = self.root / "rows.sqlite3"
            shutil.copy(migrated_sqlite, made)
            self.values["sqlite"] = run_apart(self._write(str(made)))
            assert not made.with_name(made.name + "-wal").exists()  # closed: all in the file
            self.sqlite = made
        shutil.copy(self.sqlite, database)  # mode too: 0600

    async def _write(self, database: str) -> Any:
        store = await open_store(database, writable=True, readers=1)
        try:
            return await self.write(store)
        finally:
            await store.close()


async def _dump(url: str) -> PgRows:
    conn = await asyncpg.connect(url)
    try:
        tables = []
        for (table,) in await conn.fetch(TABLES):
            chunks: list[bytes] = []

            async def keep(chunk: bytes, chunks: list[bytes] = chunks) -> None:
                chunks.append(chunk)

            status = await conn.copy_from_table(table, output=keep, format="binary")
            if status != "COPY 0":
                tables.append((table, b"".join(chunks)))
        sequences = [(name, int(value)) for name, value in await conn.fetch(SEQUENCES)]
        return PgRows(tables, sequences)
    finally:
        await conn.close()


async def _load(url: str, rows: PgRows) -> None:
    conn = await asyncpg.connect(url)
    try:
        async with conn.transaction():
            # Superuser: no trigger derives anything again, no foreign key needs an order.
            await conn.execute("SET LOCAL session_replication_role = replica")
            for table, data in rows.tables:
                await conn.copy_to_table(table, source=_chunks(data), format="binary")
            for name, value in rows.sequences:
                await conn.execute(
                    "SELECT setval(format('%I', $1::text)::regclass, $2)", name, value
                )
    finally:
        await conn.close()


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    view = io.BytesIO(data)
    while chunk := view.read(1 << 16):
        yield chunk
