"""The account store's core: what an operation sees (`Session`), what differs between the
databases (`Dialect`), the two doors every caller goes through (`AccountStore`), and the
schema text both databases share.

An operation is a plain `async def op(s: Session, ...)` in the module of what it touches
(store.accounts, .connections, .commissions, .summary), written once for both
databases: one SQL text per statement with `?` placeholders (the PostgreSQL layer numbers
them `$1, $2, ...`). A caller runs it through one of the store's two doors:

    rows = await store.read(commissions.page, query)
    uid = await store.write(accounts.create, email, "pro")

`read` runs it on a read connection, its statements seeing one state (a snapshot
transaction), unless the operation is marked `@one_statement` (one statement sees one
state by itself: no BEGIN and COMMIT around it). `write` runs it in one write transaction
and returns once that committed. An operation awaits nothing but its session, so the
SQLite layer drives it in its connection's thread without an event loop
(store.engines.sqlite). A real difference between the databases (arrays as parameters,
row locks, how a page comes back) is a field of `Dialect`, read where it matters, never a
second copy of an operation. Operations compose: one that awaits another runs it in the
same transaction. The wall clock is the session's (`s.now()`, `s.moment()`), so that a
store opened with a test clock writes that clock's time.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from store.base import StoreError

T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class Dialect:
    """What differs between the databases, as far as the operations care."""

    # A list of values travels as one array parameter (`= ANY(?::text[])`, `unnest`);
    # otherwise as one JSON text (`json_each`), and rows to write as chunks of bound values.
    arrays: bool
    # Write transactions run side by side: one that decides on what it read locks those
    # rows (FOR UPDATE), and imports of one (account, network) queue on an advisory lock.
    # A database that runs one write at a time (SQLite's BEGIN IMMEDIATE) needs neither.
    concurrent_writes: bool
    # A page of commissions comes back as one JSON array made by the database: Python's
    # sqlite3 gives up the GIL at every row, and each row then waits for the busy event
    # loop's thread; one aggregated row waits once.
    json_pages: bool
    # The server ends a transaction left idle past a limit (PostgreSQL's
    # idle_in_transaction_session_timeout, the store's timeout plus a second): a stream of
    # chunks, idle while its caller reads the next one, sets STREAM_IDLE for its own.
    idle_timeout: bool


class Session(Protocol):
    """One connection inside the layer's transaction, as the operations use it.

    SQL has `?` placeholders. `fetchrow` and `fetchval` read the first row (None if
    there is none); `execute` returns the number of rows the statement touched. `moment()`
    is the store's wall clock, `now()` the same as a stored timestamp."""

    @property
    def dialect(self) -> Dialect: ...

    def now(self) -> str: ...

    def moment(self) -> dt.datetime: ...

    async def fetch(self, sql: str, *args: Any) -> list[Any]: ...

    async def fetchrow(self, sql: str, *args: Any) -> Any: ...

    async def fetchval(self, sql: str, *args: Any) -> Any: ...

    async def execute(self, sql: str, *args: Any) -> int: ...

    async def executemany(self, sql: str, args: Iterable[Sequence[Any]]) -> None: ...


# What a door runs: a coroutine function of a session and the caller's arguments.
# Coroutines, not any awaitable: the SQLite layer drives them to their end in its threads.
Op = Callable[Concatenate[Session, P], Coroutine[Any, Any, T]]

F = TypeVar("F", bound=Callable[..., Any])


def one_statement(fn: F) -> F:
    """Mark a read operation of one statement: the read door runs it without the snapshot
    transaction a read of several statements needs (one BEGIN and COMMIT less)."""
    vars(fn)["one_statement"] = True
    return fn


class AccountStore(Protocol):
    """The account store as every caller sees it: two doors and `close`.

    Every call may raise StoreUnavailable; a write raises only when it did not commit (or
    OutcomeUnknown: see store.base)."""

    async def read(self, fn: Op[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(session, *args, **kwargs)` on a read connection, seeing one state."""
        ...

    async def write(self, fn: Op[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(session, *args, **kwargs)` in one write transaction; returns once committed."""
        ...

    async def close(self) -> None:
        """Let running calls end, then close every connection."""
        ...


# --- Identifiers ------------------------------------------------------------------------

_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def account_filters(
    account_uid: str, network: str | None, status: str | None
) -> tuple[list[str], list[Any]]:
    """The conditions (and their parameters) a read of one account's commissions or totals
    starts from: the account, and the network and status when given."""
    where = ["account_id = (SELECT id FROM accounts WHERE uid = ?)"]
    params: list[Any] = [account_uid]
    if network is not None:
        where.append("network = ?")
        params.append(network)
    if status is not None:
        where.append("status = ?")
        params.append(status)
    return where, params


def new_id(kind: str) -> str:
    """A random identifier like `acc_7k2m...` (80 bits)."""
    return kind + "_" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(16))


def lock_key(name: str) -> int:
    """A stable signed 64-bit advisory-lock key for `name` (pg_advisory_xact_lock(bigint))."""
    digest = hashlib.blake2b(f"affdir:{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


# --- Schema text both databases share ---------------------------------------------------

API_KEY_INDEXES = (
    "CREATE INDEX api_keys_account ON api_keys (account_id)",
    "CREATE INDEX api_keys_prefix ON api_keys (prefix)",
)
# Keyset pagination: equality on the account (and filter), then the sort key.
COMMISSION_INDEXES = (
    """CREATE INDEX commissions_page
            ON commissions (account_id, transacted_at DESC, id DESC)""",
    """CREATE INDEX commissions_network_page
            ON commissions (account_id, network, transacted_at DESC, id DESC)""",
    """CREATE INDEX commissions_status_page
            ON commissions (account_id, status, transacted_at DESC, id DESC)""",
)
SCHEMA_VERSION_SQL = "SELECT coalesce(max(version), 0) FROM schema_migrations"
# Tables of ciphertext no read path selects: each layer refuses them on its read connections.
SECRET_TABLES = ("network_credentials", "webhook_secrets")


def sync_migration(text_type: str) -> tuple[str, ...]:
    """Migration 2, the sync worker's state per connection: its committed position, its
    lease, its last attempt and the reason of its outcome; and the index that answers
    `updatedSince`. `text_type`: the layer's spelling of a text column."""
    columns = (
        "currency",
        "sync_position",
        "lease_owner",
        "lease_expires_at",
        "last_attempt_at",
        "reason_code",
        "reason_message",
    )
    return (
        *(f"ALTER TABLE networks ADD COLUMN {name} {text_type}" for name in columns),
        "CREATE INDEX commissions_updated ON commissions (account_id, updated_at)",
    )


# What a history row keeps of the state a change replaced: the status with the network's
# word for it, and the amounts with their currency.
HISTORY_FIELDS = ("status", "raw_status", "commission_amount", "sale_amount", "currency")
# A change of any of them writes the replaced values to commission_history.
HISTORY_CHANGED = " OR ".join(f"OLD.{name} IS NOT NEW.{name}" for name in HISTORY_FIELDS)


def history_migration(text_type: str, tail: Sequence[str]) -> tuple[str, ...]:
    """Migration 3, the start of what the two databases share: the connection's last
    successful run (filled from the last `ok` outcome), then the layer's `tail`: its
    commission_history table and the trigger that writes it. `text_type`: the layer's
    spelling of a text column."""
    return (
        f"ALTER TABLE networks ADD COLUMN last_success_at {text_type}",
        "UPDATE networks SET last_success_at = last_sync_at WHERE status = 'ok'",
        *tail,
        "CREATE INDEX commission_history_commission ON commission_history (commission_id, id)",
    )


def check_schema_version(version: int, latest: int) -> None:
    """StoreError for a database migrated by newer code than this."""
    if version > latest:
        raise StoreError(
            f"the database schema is version {version}, newer than this code ({latest}); "
            "upgrade the edge"
        )


async def apply_migrations(s: Session, migrations: Sequence[Sequence[str]]) -> int:
    """Apply the migrations after the recorded version, each with its version row; return
    the schema version. The caller holds the transaction (and whatever lock it needs)."""
    await s.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version integer PRIMARY KEY, applied_at text NOT NULL)"
    )
    version = int(await s.fetchval(SCHEMA_VERSION_SQL))
    check_schema_version(version, len(migrations))
    for number in range(version + 1, len(migrations) + 1):
        for statement in migrations[number - 1]:
            await s.execute(statement)
        await s.execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", number, s.now()
        )
    return len(migrations)
