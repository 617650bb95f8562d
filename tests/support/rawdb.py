"""Raw access to a store's database, SQLite or PostgreSQL by its URL: what no API reads
(the stored rows themselves), and writes no operation makes."""

from __future__ import annotations

import sqlite3
from typing import Any

import asyncpg

from store.engines.sqlite import database_path


async def raw_fetch(database: str, sql: str) -> list[tuple[Any, ...]]:
    """Every row of `sql`, in a connection of its own."""
    if database.startswith("postgresql://"):
        conn = await asyncpg.connect(database)
        try:
            return [tuple(row) for row in await conn.fetch(sql)]
        finally:
            await conn.close()
    conn3 = sqlite3.connect(database_path(database))
    try:
        return list(conn3.execute(sql).fetchall())
    finally:
        conn3.close()


async def raw_execute(database: str, sql: str) -> None:
    """Run `sql` in a connection of its own (foreign keys on, committed)."""
    if database.startswith("postgresql://"):
        conn = await asyncpg.connect(database)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()
        return
    conn3 = sqlite3.connect(database_path(database), isolation_level=None)
    try:
        conn3.execute("PRAGMA foreign_keys = ON")
        conn3.execute(sql)
    finally:
        conn3.close()
