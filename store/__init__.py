"""The account store: accounts, API keys, connected networks and commissions.

`open_store(database)` picks the implementation from the database setting:
`sqlite:///path/to/file`, `sqlite:relative/file` or a plain path open the embedded SQLite
store; `postgresql://user:password@host:port/database` (or `postgres://`) opens the
PostgreSQL store (store.engines.postgres), same schema and semantics. Either is an
`AccountStore` with two doors: `await store.read(commissions.page, query)` runs an
operation on a read connection, `await store.write(accounts.create, email, plan)` in one
write transaction. The operations hold every statement and rule once, for both
databases, in the module of what they touch: store.accounts (accounts,
capabilities, API keys), .connections (connected networks, credentials, the sync's
leases and outcomes), .commissions (commissions and their history) and .summary (totals).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from store.base import (
    About,
    AccountView,
    CapabilityView,
    CommissionDetail,
    CommissionQuery,
    CommissionRow,
    Conflict,
    ConnectionView,
    ImportResult,
    KeyRecord,
    KeyView,
    NetworkView,
    NewCommission,
    NotFound,
    OutcomeUnknown,
    SealedCredentials,
    StatusChange,
    StoreError,
    StoreUnavailable,
    utc_now,
)
from store.core import AccountStore, Session
from store.engines.sqlite import database_path
from store.schema import LATEST

# The schema version this code writes: the number of steps in the schema history.
SCHEMA_VERSION = LATEST

__all__ = [
    "SCHEMA_VERSION",
    "About",
    "AccountStore",
    "AccountView",
    "CapabilityView",
    "CommissionDetail",
    "CommissionQuery",
    "CommissionRow",
    "Conflict",
    "ConnectionView",
    "ImportResult",
    "KeyRecord",
    "KeyView",
    "NetworkView",
    "NewCommission",
    "NotFound",
    "OutcomeUnknown",
    "SealedCredentials",
    "Session",
    "StatusChange",
    "StoreError",
    "StoreUnavailable",
    "UnsupportedDatabaseError",
    "database_path",
    "open_store",
    "reached_over_network",
]


class UnsupportedDatabaseError(StoreError):
    """The database setting names a store this version cannot open."""


def _scheme(database: str) -> str:
    return database.split(":", 1)[0].lower() if "://" in database else ""


def reached_over_network(database: str) -> bool:
    """Whether the store `database` names is a server (PostgreSQL), which can be down for a
    while and come back, rather than a local file, whose failure to open is a setting to fix."""
    return _scheme(database) in {"postgres", "postgresql"}


async def open_store(
    database: str,
    *,
    timeout: float = 2.0,  # noqa: ASYNC109 - the bound of each later store call, kept by the store
    write_timeout: float | None = None,
    writable: bool = False,
    readers: int = 2,
    clock: Callable[[], dt.datetime] = utc_now,
    trace: Callable[[str], None] | None = None,
) -> AccountStore:
    """Open (creating and migrating if needed) the store `database` names.

    The edge opens it read-only (`writable=False`): the API never writes. The admin CLI,
    the importer and the demo seeder open it writable. `timeout` bounds every read and every
    wait for a connection or a lock; `write_timeout` bounds a write's work, none by default:
    a write runs until it commits or fails, and one cut off is rolled back unless it was
    committing already (store.base: a write's caller is told what the store holds).
    """
    scheme = _scheme(database)
    if scheme in {"postgres", "postgresql"}:
        # Imported here: SQLite-only deployments never load asyncpg.
        from store.engines.postgres import PostgresStore

        # `readers` sizes SQLite's thread pool; a PostgreSQL pool is sized by the URL
        # (?pool_min=&pool_max=, see store.engines.postgres).
        return await PostgresStore.open(
            database,
            timeout=timeout,
            write_timeout=write_timeout,
            writable=writable,
            clock=clock,
            trace=trace,
        )
    if scheme not in {"", "sqlite"}:
        raise UnsupportedDatabaseError(
            f"unknown database URL scheme {scheme!r}; use sqlite:///path or postgresql://"
        )
    from store.engines.sqlite import SqliteStore

    return await SqliteStore.open(
        database_path(database),
        timeout=timeout,
        write_timeout=write_timeout,
        writable=writable,
        readers=readers,
        clock=clock,
        trace=trace,
    )
