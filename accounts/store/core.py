"""The account store's one core: every operation, its checks and its SQL, over two layers.

`SqlStore` is the AccountStore (accounts.store.base) once for every database: it checks
the arguments, makes ids and timestamps, and runs the operations below in one read or
write transaction of its layer (`_run_read`, `_run_write`). A layer (accounts.store.sqlite,
accounts.store.postgres) brings only the connections, the transactions, the timeouts and
its `Dialect`; the two never import each other.

An operation is an `async def` over a `Session`: one SQL text per statement, with `?`
placeholders (the PostgreSQL layer numbers them `$1, $2, ...`). It awaits nothing but its
session, so the SQLite layer runs it in its own thread without an event loop (its session
never suspends). A difference between the databases that is real (arrays as parameters,
row locks, how a page of commissions comes back) is a field of `Dialect`, read where it
matters, never a second copy of an operation.

Adding an operation (tables of a later migration): write it in "Operations" as an `async
def` over a Session, then its public method on `SqlStore` (checks, ids, `_now()`) and on
the AccountStore protocol. Operations compose: one that awaits others runs them in its
own transaction. A table's DDL goes into both layers' MIGRATIONS, its text here when it
is the same in both.
"""

from __future__ import annotations

import abc
import datetime as dt
import functools
import hashlib
import re
import secrets
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import orjson

from accounts.store.base import (
    MAX_SYNC_COUNT,
    VALUE_FIELDS,
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
    NewCommission,
    NotFound,
    SealedCredentials,
    StatusChange,
    StoreError,
    account_view,
    check_commission,
    check_email,
    check_label,
    check_network,
    check_plan,
    check_sync,
    check_sync_reason,
    format_timestamp,
    key_view,
    latest_instant,
    with_stored,
)
from accounts.store.summary import (
    SummaryQuery,
    SummaryRow,
    changed_rows_sql,
    summary_json_sql,
    summary_rows,
    summary_sql,
    summed_rows,
)
from contract import vocabulary as v
from contract.resources import HISTORY_MAX

T = TypeVar("T")
P = ParamSpec("P")


# --- What a layer provides --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Dialect:
    """What differs between the databases, as far as the operations care."""

    name: str
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
    there is none); `execute` returns the number of rows the statement touched."""

    @property
    def dialect(self) -> Dialect: ...

    async def fetch(self, sql: str, *args: Any) -> list[Any]: ...

    async def fetchrow(self, sql: str, *args: Any) -> Any: ...

    async def fetchval(self, sql: str, *args: Any) -> Any: ...

    async def execute(self, sql: str, *args: Any) -> int: ...

    async def executemany(self, sql: str, args: Iterable[Sequence[Any]]) -> None: ...


# Coroutines, not any awaitable: the SQLite layer drives them to their end in its threads.
Operation = Callable[[Session], Coroutine[Any, Any, T]]


# --- Identifiers ------------------------------------------------------------------------

_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


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


async def apply_migrations(
    s: Session, migrations: Sequence[Sequence[str]], now: Callable[[], str]
) -> int:
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
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", number, now()
        )
    return len(migrations)


# --- Statements -------------------------------------------------------------------------

COMMISSION_COLUMNS = (
    "id, network, external_id, program_name, program_external_id, status, raw_status, "
    "sale_amount, commission_amount, currency, clicked_at, transacted_at, sub_id"
)


def commissions_sql(query: CommissionQuery) -> tuple[str, list[Any]]:
    """One keyset page: the account's rows strictly after `query.after`, newest first.

    Dates bound the UTC date of transacted_at inclusively; with the fixed timestamp form,
    `date T00:00:00Z <= transacted_at <= date T23:59:59Z` is exact and uses the index.
    The row-value comparison is standard SQL (SQLite and PostgreSQL both seek with it).
    """
    where = ["account_id = (SELECT id FROM accounts WHERE uid = ?)"]
    params: list[Any] = [query.account_uid]
    if query.network is not None:
        where.append("network = ?")
        params.append(query.network)
    if query.status is not None:
        where.append("status = ?")
        params.append(query.status)
    if query.since is not None:
        where.append("transacted_at >= ?")
        params.append(f"{query.since.isoformat()}T00:00:00Z")
    if query.until is not None:
        where.append("transacted_at <= ?")
        params.append(f"{query.until.isoformat()}T23:59:59Z")
    if query.updated_since is not None:
        where.append("updated_at >= ?")
        params.append(query.updated_since)
    if query.after is not None:
        where.append("(transacted_at, id) < (?, ?)")
        params.extend(query.after)
    sql = (
        f"SELECT {COMMISSION_COLUMNS} FROM commissions WHERE {' AND '.join(where)} "
        "ORDER BY transacted_at DESC, id DESC LIMIT ?"
    )
    params.append(query.limit)
    return sql, params


def page_sql(query: CommissionQuery) -> tuple[str, list[Any]]:
    """`commissions_sql` with the page folded into one JSON array (`Dialect.json_pages`).
    Values stay exact: the amounts are text, so they travel as JSON strings."""
    sql, params = commissions_sql(query)
    return f"SELECT json_group_array(json_array({COMMISSION_COLUMNS})) FROM ({sql})", params


def _page_order(row: CommissionRow) -> tuple[str, int]:
    return row.transacted_at, row.seq


# The key's columns in KeyView order, its account's uid second.
_KEY_COLUMNS = "k.id, a.uid, k.prefix, k.label, k.scopes, k.created_at, k.revoked_at"

# Every column an import writes, and what a conflict on its identity updates: `id` (seq)
# and imported_at are never touched, so a re-imported row keeps its place and public id.
# A row whose values are already stored is not updated at all: its updated_at (what
# `updatedSince` reads) moves only when the row changed.
_ROW_COLUMNS = ("external_id", *VALUE_FIELDS)
_ROW = attrgetter(*_ROW_COLUMNS)
_INSERT_COMMISSIONS = (
    f"INSERT INTO commissions (account_id, network, {', '.join(_ROW_COLUMNS)}, "
    "imported_at, updated_at)"
)


def _on_commission_conflict(distinct: str) -> str:
    """The upsert's conflict clause; `distinct`: the database's null-safe `<>`."""
    stored = ", ".join(f"commissions.{name}" for name in VALUE_FIELDS)
    incoming = ", ".join(f"excluded.{name}" for name in VALUE_FIELDS)
    return (
        "ON CONFLICT (account_id, network, external_id) DO UPDATE SET "
        + ", ".join(f"{name} = excluded.{name}" for name in VALUE_FIELDS)
        + f", updated_at = excluded.updated_at WHERE ({stored}) {distinct} ({incoming})"
    )


# One row a statement (a baseline of bench/bench_sync.py; the store writes in chunks).
UPSERT_ROW_SQL = (
    f"{_INSERT_COMMISSIONS} VALUES ({', '.join('?' * (len(_ROW_COLUMNS) + 4))}) "
    f"{_on_commission_conflict('IS NOT')}"
)
# A chunk of rows a statement, so that the database compares and writes them without a
# round trip (PostgreSQL) or a return to Python (SQLite) per row. Python's sqlite3 gives
# up the GIL at every step of a statement; one step per row would take it back from the
# busy event loop each time (up to a switch interval, 5 ms), one per chunk only once.
# PostgreSQL: one text array per column.
UPSERT_ARRAYS_SQL = (
    f"{_INSERT_COMMISSIONS} SELECT ?, ?, r.*, ?, ? "
    f"FROM unnest({', '.join('?::text[]' for _ in _ROW_COLUMNS)}) AS r ({', '.join(_ROW_COLUMNS)}) "
    f"{_on_commission_conflict('IS DISTINCT FROM')}"
)
UPSERT_CHUNK = 10_000  # rows per array statement: bounded messages, any import size
# SQLite: every value bound, ?1 to ?4 the account, the network and the two timestamps,
# then each row's columns. A chunk is cut into powers of two up to this many rows, so a
# connection compiles and caches a dozen statements whatever the row counts; 2,048 rows
# bind 22,532 values, under the 32,766 that SQLite (since 3.32) takes.
VALUES_CHUNK = 2_048


@functools.lru_cache(maxsize=VALUES_CHUNK.bit_length())
def upsert_values_sql(rows: int) -> str:
    """The SQLite upsert of `rows` rows of bound values (see VALUES_CHUNK)."""
    width = len(_ROW_COLUMNS)
    tuples = ", ".join(
        "(?1, ?2, " + ", ".join(f"?{5 + row * width + c}" for c in range(width)) + ", ?3, ?4)"
        for row in range(rows)
    )
    return f"{_INSERT_COMMISSIONS} VALUES {tuples} {_on_commission_conflict('IS NOT')}"


def values_chunks(count: int) -> Iterator[tuple[int, int]]:
    """(start, rows) of the statements that write `count` rows: VALUES_CHUNK rows while
    they last, then the powers of two of the rest, largest first."""
    start = 0
    while count - start >= VALUES_CHUNK:
        yield start, VALUES_CHUNK
        start += VALUES_CHUNK
    size = VALUES_CHUNK
    while start < count:
        size //= 2
        if count - start >= size:
            yield start, size
            start += size


def _one_of(s: Session, values: list[str]) -> tuple[str, list[Any]]:
    """(condition, its one parameter) matching a column against `values`, any number of
    them: an array (PostgreSQL), a JSON text read by json_each (SQLite). Both seek the
    unique key once per value."""
    if s.dialect.arrays:
        return "= ANY(?::text[])", [values]
    # Text, not bytes: SQLite's JSON functions take a BLOB for their binary JSONB form.
    return "IN (SELECT value FROM json_each(?))", [orjson.dumps(values).decode()]


# --- Operations -------------------------------------------------------------------------
# Each runs inside one transaction of its layer; a NotFound or Conflict it raises rolls
# the write back.


async def account_id(s: Session, uid: str) -> int:
    """The row id of account `uid`; NotFound when there is none."""
    found = await s.fetchval("SELECT id FROM accounts WHERE uid = ?", uid)
    if found is None:
        raise NotFound(f"no account {uid}")
    return int(found)


async def account_by_id(s: Session, row_id: int) -> AccountView | None:
    """The account with row id `row_id`, capabilities and networks included."""
    row = await s.fetchrow(
        "SELECT uid, email, plan, suspended, created_at FROM accounts WHERE id = ?", row_id
    )
    if row is None:
        return None
    capabilities = await s.fetch(
        "SELECT name, enabled, configured, enabled_at FROM capabilities WHERE account_id = ?",
        row_id,
    )
    networks = await s.fetch(
        "SELECT network, status, connected_at, last_sync_at, accounts, programs, "
        "transactions, last_attempt_at, last_success_at, reason_code, sync_position "
        "FROM networks WHERE account_id = ? ORDER BY network",
        row_id,
    )
    return account_view(row, capabilities, networks)


async def lookup_key(s: Session, key_hash: str) -> KeyRecord | None:
    """The active key with this hash and its account, or None."""
    row = await s.fetchrow(
        f"SELECT {_KEY_COLUMNS}, a.id FROM api_keys k JOIN accounts a ON a.id = k.account_id "
        "WHERE k.key_hash = ? AND k.revoked_at IS NULL",
        key_hash,
    )
    if row is None:
        return None
    account = await account_by_id(s, row[7])
    assert account is not None  # the foreign key guarantees it
    return KeyRecord(key=key_view(tuple(row)[:7]), account=account)


async def list_commissions(s: Session, query: CommissionQuery) -> list[CommissionRow]:
    """One keyset page of an account's commissions."""
    if not s.dialect.json_pages:
        sql, params = commissions_sql(query)
        return [CommissionRow(*row) for row in await s.fetch(sql, *params)]
    sql, params = page_sql(query)
    rows = [CommissionRow(*row) for row in orjson.loads(await s.fetchval(sql, *params))]
    # The aggregate keeps the subquery's order; sorting 26 rows makes sure of it.
    rows.sort(key=_page_order, reverse=True)
    return rows


# The largest identity both databases hold (PostgreSQL's bigint): a public id past it names
# no commission.
MAX_SEQ = 2**63 - 1


async def find_commission(s: Session, account_uid: str, seq: int) -> CommissionDetail | None:
    """The account's commission `seq` and its latest HISTORY_MAX earlier states."""
    if not 0 < seq <= MAX_SEQ:
        return None
    row = await s.fetchrow(
        f"SELECT {COMMISSION_COLUMNS}, imported_at FROM commissions "
        "WHERE id = ? AND account_id = (SELECT id FROM accounts WHERE uid = ?)",
        seq,
        account_uid,
    )
    if row is None:
        return None
    *columns, imported_at = tuple(row)
    # One more than shown: the state before the first shown one tells when that began.
    changes = await s.fetch(
        f"SELECT {', '.join(HISTORY_FIELDS)}, changed_at FROM commission_history "
        "WHERE commission_id = ? ORDER BY id DESC LIMIT ?",
        seq,
        HISTORY_MAX + 1,
    )
    changes.reverse()
    history = []
    recorded = imported_at
    for n, change in enumerate(changes):
        status, raw_status, commission, sale, currency, replaced = tuple(change)
        if n or len(changes) <= HISTORY_MAX:
            history.append(
                StatusChange(status, raw_status, commission, sale, currency, recorded, replaced)
            )
        recorded = replaced
    return CommissionDetail(CommissionRow(*columns), tuple(history))


async def commission_summary(s: Session, query: SummaryQuery) -> list[SummaryRow]:
    """The account's totals per group: from the per-day totals, never the commission rows;
    with `updated_since`, from the rows changed since (the only ones read)."""
    if query.updated_since is None:
        if not s.dialect.json_pages:
            sql, params = summary_sql(query)
            return summary_rows(query.group_by, await s.fetch(sql, *params))
        sql, params = summary_json_sql(query)
        rows = summary_rows(query.group_by, orjson.loads(await s.fetchval(sql, *params)))
        # The aggregate keeps the subquery's order; sorting makes sure of it.
        rows.sort(key=lambda row: row.key(query.group_by))
        return rows
    sql, params = changed_rows_sql(query)
    return summed_rows(query.group_by, await s.fetch(sql, *params))


async def find_account(s: Session, uid: str) -> AccountView | None:
    """Account `uid`, or None."""
    row_id = await s.fetchval("SELECT id FROM accounts WHERE uid = ?", uid)
    return None if row_id is None else await account_by_id(s, row_id)


async def list_keys(s: Session, account_uid: str) -> list[KeyView]:
    """Every key of an account, oldest first; NotFound for an unknown account."""
    rows = await s.fetch(
        "SELECT id, prefix, label, scopes, created_at, revoked_at FROM api_keys "
        "WHERE account_id = ? ORDER BY created_at, id",
        await account_id(s, account_uid),
    )
    return [key_view((row[0], account_uid, *tuple(row)[1:])) for row in rows]


async def insert_account(s: Session, uid: str, email: str | None, plan: str, now: str) -> None:
    """A new account, every capability disabled and never enabled."""
    row_id = await s.fetchval(
        "INSERT INTO accounts (uid, email, plan, suspended, created_at) "
        "VALUES (?, ?, ?, false, ?) RETURNING id",
        uid,
        email,
        plan,
        now,
    )
    await s.executemany(
        "INSERT INTO capabilities (account_id, name, enabled, configured, enabled_at) "
        "VALUES (?, ?, false, false, NULL)",
        [(row_id, name) for name in v.CAPABILITIES],
    )


async def update_account(s: Session, uid: str, column: str, value: Any) -> None:
    """Set one column of account `uid` (a name from the code, never from input)."""
    if not await s.execute(f"UPDATE accounts SET {column} = ? WHERE uid = ?", value, uid):
        raise NotFound(f"no account {uid}")


async def update_capability(
    s: Session, uid: str, name: str, enabled: bool, now: str
) -> CapabilityView:
    """Enable (now, and configured from then on) or disable a capability."""
    row_id = await account_id(s, uid)
    returning = "RETURNING enabled, configured, enabled_at"
    if enabled:
        row = await s.fetchrow(
            "UPDATE capabilities SET enabled = true, configured = true, enabled_at = ? "
            f"WHERE account_id = ? AND name = ? {returning}",
            now,
            row_id,
            name,
        )
    else:
        row = await s.fetchrow(
            f"UPDATE capabilities SET enabled = false WHERE account_id = ? AND name = ? {returning}",
            row_id,
            name,
        )
    return CapabilityView(bool(row[0]), bool(row[1]), row[2])


async def insert_key(s: Session, key: KeyView, key_hash: str) -> None:
    """Store a new key of an existing account."""
    await s.execute(
        "INSERT INTO api_keys (id, account_id, key_hash, prefix, label, scopes, "
        "created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
        key.id,
        await account_id(s, key.account_uid),
        key_hash,
        key.prefix,
        key.label,
        " ".join(key.scopes),
        key.created_at,
    )


async def revoke_key(s: Session, prefix_or_id: str, now: str) -> KeyView:
    """Revoke the one key with this id or prefix (a revoked one stays as it was)."""
    lock = " FOR UPDATE OF k" if s.dialect.concurrent_writes else ""
    rows = await s.fetch(
        f"SELECT {_KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id "
        f"WHERE k.id = ? OR k.prefix = ? ORDER BY k.id{lock}",
        prefix_or_id,
        prefix_or_id,
    )
    if not rows:
        raise NotFound(f"no key with id or prefix {prefix_or_id}")
    if len(rows) > 1:
        ids = ", ".join(r[0] for r in rows)
        raise Conflict(f"prefix {prefix_or_id} matches several keys ({ids}); use the id")
    key = key_view(tuple(rows[0]))
    if key.revoked_at is not None:
        return key
    await s.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ?", now, key.id)
    return key_view((*tuple(rows[0])[:6], now))


async def connect_network(
    s: Session, account_uid: str, network: str, ciphertext: bytes, now: str
) -> None:
    """Connect a network, or replace its credentials (its last sync outcome stays)."""
    row_id = await account_id(s, account_uid)
    await s.execute(
        "INSERT INTO networks (account_id, network, status, connected_at) "
        "VALUES (?, ?, 'never', ?) "
        "ON CONFLICT (account_id, network) DO UPDATE SET connected_at = excluded.connected_at",
        row_id,
        network,
        now,
    )
    await s.execute(
        "INSERT INTO network_credentials (account_id, network, ciphertext, updated_at) "
        "VALUES (?, ?, ?, ?) ON CONFLICT (account_id, network) DO UPDATE SET "
        "ciphertext = excluded.ciphertext, updated_at = excluded.updated_at",
        row_id,
        network,
        ciphertext,
        now,
    )


async def record_sync(
    s: Session, account_uid: str, network: str, status: str, counts: Sequence[int], now: str
) -> None:
    """Record a sync outcome of a connected network; `counts`: accounts, programs, transactions."""
    updated = await s.execute(
        "UPDATE networks SET status = ?, last_sync_at = ?, "
        "last_success_at = CASE WHEN ? THEN ? ELSE last_success_at END, "
        "accounts = ?, programs = ?, transactions = ? WHERE account_id = ? AND network = ?",
        status,
        now,
        status == "ok",
        now,
        *counts,
        await account_id(s, account_uid),
        network,
    )
    if not updated:
        raise NotFound(f"account {account_uid} has not connected {network}")


async def stored_values(
    s: Session, row_id: int, network: str, external_ids: list[str]
) -> dict[str, tuple[Any, ...]]:
    """external_id -> VALUE_FIELDS, of the rows already stored among `external_ids`."""
    found: dict[str, tuple[Any, ...]] = {}
    if not external_ids:
        return found
    condition, params = _one_of(s, external_ids)
    for row in await s.fetch(
        f"SELECT external_id, {', '.join(VALUE_FIELDS)} FROM commissions "
        f"WHERE account_id = ? AND network = ? AND external_id {condition}",
        row_id,
        network,
        *params,
    ):
        found[row[0]] = tuple(row)[1:]
    return found


async def upsert_commissions(
    s: Session,
    account_uid: str,
    network: str,
    chunks: Iterable[Sequence[NewCommission]],
    now: str,
    *,
    stream: bool = False,
) -> ImportResult:
    """Insert or update by (account, network, external_id), chunk by chunk in the caller's
    one transaction; rows as they stand are left. Each chunk is checked (`check_batch`)
    before it is written: an invalid row raises and rolls the whole transaction back.
    `stream`: `chunks` is an iterator, e.g. a generator reading a file, run between the
    statements (memory holds one chunk at a time), and an external_id of an earlier chunk
    is refused too; otherwise the caller has checked the chunks together."""
    row_id = await account_id(s, account_uid)
    if s.dialect.concurrent_writes:
        # Imports of one (account, network) one at a time: each sees what the one before
        # committed, and counts inserted/updated exactly.
        key = lock_key(f"import:{row_id}:{network}")
        await s.execute("SELECT pg_advisory_xact_lock(?)", key)
    if stream:
        if s.dialect.idle_timeout:
            await s.execute(f"SET LOCAL idle_in_transaction_session_timeout = {STREAM_IDLE * 1000}")
        await s.execute(f"CREATE TEMPORARY TABLE {_STREAMED_IDS} (external_id text PRIMARY KEY)")
    latest = latest_instant()
    inserted = updated = unchanged = 0
    for rows in chunks:
        check_batch(rows, latest)
        if stream:
            # A later chunk's repeat of an id would update a row this transaction wrote and
            # break the counts: the ids written so far are kept by the database, not here.
            await _note_written(s, [r.external_id for r in rows])
        partial = [r.external_id for r in rows if r.stated is not None]
        complete = with_stored(rows, await stored_values(s, row_id, network, partial))
        if s.dialect.arrays:
            statements: Iterable[tuple[int, int]] = (
                (start, UPSERT_CHUNK) for start in range(0, len(complete), UPSERT_CHUNK)
            )
        else:
            statements = values_chunks(len(complete))
        for start, size in statements:
            chunk = complete[start : start + size]
            stored = await count_stored(s, row_id, network, [r.external_id for r in chunk])
            if s.dialect.arrays:
                columns = [[getattr(r, name) for r in chunk] for name in _ROW_COLUMNS]
                written = await s.execute(UPSERT_ARRAYS_SQL, row_id, network, now, now, *columns)
            else:
                bound = [row_id, network, now, now]
                for row in map(_ROW, chunk):
                    bound += row
                written = await s.execute(upsert_values_sql(len(chunk)), *bound)
            # `written` counts the rows inserted and those updated (a row left as it stood
            # is not); no external_id twice, so the new ones are those not stored before.
            new = len(chunk) - stored
            inserted += new
            updated += written - new
            unchanged += stored - (written - new)
    if stream:
        await s.execute(f"DROP TABLE {_STREAMED_IDS}")
    return ImportResult(inserted, updated, unchanged)


# Seconds a stream's transaction may wait for its next chunk (a file's 10,000 rows read
# and checked: about a second); a longer wait is a caller gone, and the server ends it.
STREAM_IDLE = 600

# The external ids a stream of chunks has written, in its transaction: a temporary table
# (rolled back with it, dropped at its end), its primary key finding a repeat.
_STREAMED_IDS = "streamed_external_ids"


async def _note_written(s: Session, external_ids: list[str]) -> None:
    """Add `external_ids` to the ids this stream wrote; ValueError for one written already."""
    condition, params = _one_of(s, external_ids)
    again = await s.fetchval(
        f"SELECT external_id FROM {_STREAMED_IDS} WHERE external_id {condition} LIMIT 1", *params
    )
    if again is not None:
        raise ValueError(f"external_id: {again!r} appears twice")
    values = "SELECT unnest(?::text[])" if s.dialect.arrays else "SELECT value FROM json_each(?)"
    await s.execute(f"INSERT INTO {_STREAMED_IDS} (external_id) {values}", *params)


async def count_stored(s: Session, row_id: int, network: str, external_ids: list[str]) -> int:
    """How many of `external_ids` the account already holds for `network`."""
    condition, params = _one_of(s, external_ids)
    found = await s.fetchval(
        "SELECT count(*) FROM commissions "
        f"WHERE account_id = ? AND network = ? AND external_id {condition}",
        row_id,
        network,
        *params,
    )
    return int(found)


# --- Operations of the sync worker and the operators' connection commands ---------------

_CONNECTION_COLUMNS = (
    "a.uid, n.network, n.status, n.connected_at, n.last_sync_at, n.last_attempt_at, "
    "n.reason_code, n.reason_message, n.currency, n.sync_position, n.lease_owner, "
    "n.lease_expires_at, n.accounts, n.programs, n.transactions"
)
_CONNECTIONS = (
    f"SELECT {_CONNECTION_COLUMNS} FROM networks n JOIN accounts a ON a.id = n.account_id"
)


def _connection(row: Sequence[Any]) -> ConnectionView:
    return ConnectionView(*row)


async def find_connection(s: Session, account_uid: str, network: str) -> ConnectionView | None:
    """One connection, or None."""
    row = await s.fetchrow(
        f"{_CONNECTIONS} WHERE a.uid = ? AND n.network = ?", account_uid, network
    )
    return None if row is None else _connection(row)


async def list_connections(s: Session, account_uid: str | None) -> list[ConnectionView]:
    """Every connection (of one account), by account then network."""
    if account_uid is None:
        rows = await s.fetch(f"{_CONNECTIONS} ORDER BY a.uid, n.network")
    else:
        await account_id(s, account_uid)  # NotFound for an unknown account
        rows = await s.fetch(f"{_CONNECTIONS} WHERE a.uid = ? ORDER BY n.network", account_uid)
    return [_connection(row) for row in rows]


async def due_connections(
    s: Session, attempted_before: str, now: str, limit: int
) -> list[ConnectionView]:
    """Connections to sync: credentials stored, account not suspended, not attempted since
    `attempted_before` or left behind by a worker that died (its lease ended unreleased),
    no live lease; least recently attempted first."""
    rows = await s.fetch(
        f"{_CONNECTIONS} JOIN network_credentials c "
        "ON c.account_id = n.account_id AND c.network = n.network "
        "WHERE NOT a.suspended "
        "AND (n.last_attempt_at IS NULL OR n.last_attempt_at < ? OR n.lease_owner IS NOT NULL) "
        "AND (n.lease_expires_at IS NULL OR n.lease_expires_at <= ?) "
        "ORDER BY coalesce(n.last_attempt_at, ''), a.uid, n.network LIMIT ?",
        attempted_before,
        now,
        limit,
    )
    return [_connection(row) for row in rows]


def lease_end(moment: dt.datetime, lease_seconds: float) -> dt.datetime:
    """When a lease taken at `moment` ends, rounded up to the whole second the store keeps:
    rounding down would end it early, and another worker could take the connection while
    its holder still counts on the time it asked for."""
    end = moment + dt.timedelta(seconds=max(1.0, lease_seconds))
    whole = end.replace(microsecond=0)
    return whole if whole == end else whole + dt.timedelta(seconds=1)


async def claim_connection(
    s: Session,
    account_uid: str,
    network: str,
    worker: str,
    now: str,
    expires: str,
    attempted_before: str | None = None,
) -> bool:
    """Take the lease if it is free, expired or already `worker`'s (and, with
    `attempted_before`, if no one attempted the connection since). One conditional UPDATE:
    of two workers racing, the row lock lets one through and the other finds it taken; a
    worker whose due list predates another's whole sync finds it attempted and leaves it."""
    due = ""
    params: list[Any] = [worker, expires, now, account_uid, network, worker, now]
    if attempted_before is not None:
        # A lease still set was never released: its holder died, the attempt did not end.
        due = "AND (last_attempt_at IS NULL OR last_attempt_at < ? OR lease_owner IS NOT NULL) "
        params += [attempted_before]
    return bool(
        await s.execute(
            "UPDATE networks SET lease_owner = ?, lease_expires_at = ?, last_attempt_at = ? "
            "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ? "
            "AND (lease_owner IS NULL OR lease_owner = ? OR lease_expires_at <= ?) " + due,
            *params,
        )
    )


async def release_connection(s: Session, account_uid: str, network: str, worker: str) -> None:
    """Give the lease up (nothing when `worker` does not hold it)."""
    await s.execute(
        "UPDATE networks SET lease_owner = NULL, lease_expires_at = NULL "
        "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ? "
        "AND lease_owner = ?",
        account_uid,
        network,
        worker,
    )


async def sealed_credentials(s: Session, account_uid: str, network: str) -> SealedCredentials:
    """The connection's ciphertext; NotFound when none is stored."""
    blob = await s.fetchval(
        "SELECT ciphertext FROM network_credentials "
        "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ?",
        account_uid,
        network,
    )
    if blob is None:
        raise NotFound(f"no credentials stored for {account_uid}/{network}")
    return SealedCredentials(account_uid, network, bytes(blob))


async def write_sync_window(
    s: Session,
    account_uid: str,
    network: str,
    rows: Sequence[NewCommission],
    position: str | None,
    worker: str,
    now: str,
) -> ImportResult:
    """A window's rows and the position after it, together, under `worker`'s live lease:
    a worker that lost its lease (it stalled past it, another took over) writes nothing."""
    held = await s.fetchval(
        "SELECT 1 FROM networks WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) "
        "AND network = ? AND lease_owner = ? AND lease_expires_at > ?",
        account_uid,
        network,
        worker,
        now,
    )
    if held is None:
        raise Conflict(f"{account_uid}/{network}: the lease of {worker} has ended")
    result = await upsert_commissions(s, account_uid, network, (rows,), now)
    if position is not None:
        await s.execute(
            "UPDATE networks SET sync_position = ? "
            "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ?",
            position,
            account_uid,
            network,
        )
    return result


async def record_sync_outcome(
    s: Session,
    account_uid: str,
    network: str,
    status: str,
    reason: tuple[str, str] | None,
    now: str,
) -> ConnectionView:
    """The run's outcome, its reason and counts of what is stored for the connection."""
    row_id = await account_id(s, account_uid)
    transactions, programs = await s.fetchrow(
        "SELECT count(*), count(DISTINCT program_external_id) FROM commissions "
        "WHERE account_id = ? AND network = ?",
        row_id,
        network,
    )
    code, message = reason if reason is not None else (None, None)
    updated = await s.execute(
        "UPDATE networks SET status = ?, last_sync_at = ?, reason_code = ?, reason_message = ?, "
        "last_success_at = CASE WHEN ? THEN ? ELSE last_success_at END, "
        "accounts = 1, programs = ?, transactions = ? WHERE account_id = ? AND network = ?",
        status,
        now,
        code,
        message,
        status == "ok",
        now,
        min(int(programs), MAX_SYNC_COUNT),
        min(int(transactions), MAX_SYNC_COUNT),
        row_id,
        network,
    )
    if not updated:
        raise NotFound(f"account {account_uid} has not connected {network}")
    found = await find_connection(s, account_uid, network)
    assert found is not None
    return found


async def set_connection_currency(
    s: Session, account_uid: str, network: str, currency: str | None
) -> None:
    """The account's currency at a network whose records carry none."""
    if not await s.execute(
        "UPDATE networks SET currency = ? "
        "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ?",
        currency,
        account_uid,
        network,
    ):
        raise NotFound(f"account {account_uid} has not connected {network}")


async def credentials_after(
    s: Session, after: tuple[str, str] | None, limit: int
) -> list[SealedCredentials]:
    """Stored ciphertexts in (account uid, network) order, strictly after `after`."""
    where, params = ("", []) if after is None else ("WHERE (a.uid, c.network) > (?, ?) ", [*after])
    rows = await s.fetch(
        "SELECT a.uid, c.network, c.ciphertext FROM network_credentials c "
        f"JOIN accounts a ON a.id = c.account_id {where}ORDER BY a.uid, c.network LIMIT ?",
        *params,
        limit,
    )
    return [SealedCredentials(row[0], row[1], bytes(row[2])) for row in rows]


async def replace_credentials(
    s: Session, account_uid: str, network: str, old: bytes, new: bytes, now: str
) -> bool:
    """Compare and set: a connection re-connected meanwhile keeps its new credentials."""
    return bool(
        await s.execute(
            "UPDATE network_credentials SET ciphertext = ?, updated_at = ? "
            "WHERE account_id = (SELECT id FROM accounts WHERE uid = ?) AND network = ? "
            "AND ciphertext = ?",
            new,
            now,
            account_uid,
            network,
            old,
        )
    )


# --- The store --------------------------------------------------------------------------


def check_batch(rows: Sequence[NewCommission], latest: str | None = None) -> None:
    """Every row valid (instants up to `latest`, default a day from now), no external_id
    twice; ValueError says which is not."""
    seen: set[str] = set()
    latest = latest or latest_instant()
    for row in rows:
        check_commission(row, latest)
        if row.external_id in seen:
            raise ValueError(f"external_id: {row.external_id!r} appears twice")
        seen.add(row.external_id)


class SqlStore(abc.ABC):
    """The AccountStore methods, once. A layer subclasses it with its transactions.

    A method runs the module's operation of its name or of its table (a method's own name
    is not in scope in its body: `lookup_key(s, ...)` there is the operation)."""

    _clock: Callable[[], dt.datetime]  # the wall clock of the timestamps written

    @abc.abstractmethod
    async def _run_read(self, op: Operation[T], *, snapshot: bool = True) -> T:
        """`op` on a read connection; `snapshot`: its statements see one state."""

    @abc.abstractmethod
    async def _run_write(self, op: Operation[T]) -> T:
        """`op` in one write transaction; returns once committed, raises if it was not."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Let running calls end, then close every connection."""

    def _now(self) -> str:
        return format_timestamp(self._clock())

    # --- the two doors: any operation of a session, read-only or in one write transaction ---

    async def read(
        self,
        fn: Callable[Concatenate[Session, P], Coroutine[Any, Any, T]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """`fn(session, *args, **kwargs)` on a read connection, its statements seeing one state."""
        return await self._run_read(lambda s: fn(s, *args, **kwargs))

    async def write(
        self,
        fn: Callable[Concatenate[Session, P], Coroutine[Any, Any, T]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """`fn(session, *args, **kwargs)` in one write transaction; returns once committed."""
        return await self._run_write(lambda s: fn(s, *args, **kwargs))

    # --- reads of the API ---

    async def lookup_key(self, key_hash: str) -> KeyRecord | None:
        """The active (not revoked) key with this hash and its account, or None."""
        return await self._run_read(lambda s: lookup_key(s, key_hash))

    async def list_commissions(self, query: CommissionQuery) -> list[CommissionRow]:
        """One keyset page of the account's commissions (see AccountStore)."""
        # One statement: no snapshot needed.
        return await self._run_read(lambda s: list_commissions(s, query), snapshot=False)

    async def commission(self, account_uid: str, seq: int) -> CommissionDetail | None:
        """The account's commission `seq` with its history, or None."""
        return await self._run_read(lambda s: find_commission(s, account_uid, seq))

    async def commission_summary(self, query: SummaryQuery) -> list[SummaryRow]:
        """The account's commission totals per group and currency (see AccountStore)."""
        # One statement: no snapshot needed.
        return await self._run_read(lambda s: commission_summary(s, query), snapshot=False)

    # --- admin reads ---

    async def account_view(self, uid: str) -> AccountView | None:
        """Account `uid` with its capabilities and networks, or None."""
        return await self._run_read(lambda s: find_account(s, uid))

    async def list_keys(self, account_uid: str) -> list[KeyView]:
        """Every key of the account, revoked ones included."""
        return await self._run_read(lambda s: list_keys(s, account_uid))

    # --- writes ---

    async def create_account(self, email: str | None, plan: str, *, uid: str | None = None) -> str:
        """Create an account (both capabilities disabled, never enabled); return its uid."""
        check_plan(plan)
        check_email(email)
        new_uid = uid or new_id("acc")
        now = self._now()
        await self._run_write(lambda s: insert_account(s, new_uid, email, plan, now))
        return new_uid

    async def set_plan(self, uid: str, plan: str) -> None:
        """Move the account to `plan`."""
        check_plan(plan)
        await self._run_write(lambda s: update_account(s, uid, "plan", plan))

    async def set_suspended(self, uid: str, suspended: bool) -> None:
        """Suspend the account, or lift its suspension."""
        await self._run_write(lambda s: update_account(s, uid, "suspended", bool(suspended)))

    async def set_capability(self, uid: str, name: str, enabled: bool) -> CapabilityView:
        """Enabling sets enabled_at to now and configured to true; disabling keeps both."""
        if name not in v.CAPABILITIES:
            raise ValueError(f"capability must be one of: {', '.join(v.CAPABILITIES)}")
        now = self._now()
        return await self._run_write(lambda s: update_capability(s, uid, name, enabled, now))

    async def create_key(
        self, account_uid: str, key_hash: str, prefix: str, label: str, scopes: Sequence[str]
    ) -> KeyView:
        """Store a new key (its hash only) of the account."""
        if not scopes or any(scope not in v.KEY_SCOPES for scope in scopes):
            raise ValueError(f"scopes must be among: {', '.join(v.KEY_SCOPES)}")
        check_label(label)
        key = KeyView(new_id("key"), account_uid, prefix, label, tuple(scopes), self._now(), None)
        await self._run_write(lambda s: insert_key(s, key, key_hash))
        return key

    async def revoke_key(self, prefix_or_id: str) -> KeyView:
        """Revoke by id or by prefix (Conflict when a prefix matches several keys)."""
        now = self._now()
        return await self._run_write(lambda s: revoke_key(s, prefix_or_id, now))

    async def connect_network(self, account_uid: str, network: str, ciphertext: bytes) -> None:
        """Connect a network (status `never` until a sync is recorded) or replace its
        credentials (the last sync outcome is kept)."""
        check_network(network)
        now = self._now()
        await self._run_write(lambda s: connect_network(s, account_uid, network, ciphertext, now))

    async def record_sync(
        self,
        account_uid: str,
        network: str,
        status: str,
        *,
        accounts: int,
        programs: int,
        transactions: int,
    ) -> None:
        """Record the outcome of a synchronisation of a connected network."""
        counts = (accounts, programs, transactions)
        check_network(network)
        check_sync(status, counts)
        now = self._now()
        await self._run_write(lambda s: record_sync(s, account_uid, network, status, counts, now))

    async def upsert_commissions(
        self, account_uid: str, network: str, rows: Sequence[NewCommission]
    ) -> ImportResult:
        """Insert or update by (account, network, external_id), all rows in one transaction."""
        check_network(network)
        check_batch(rows)
        now = self._now()
        return await self._run_write(
            lambda s: upsert_commissions(s, account_uid, network, (rows,), now)
        )

    async def upsert_commission_stream(
        self, account_uid: str, network: str, chunks: Iterable[Sequence[NewCommission]]
    ) -> ImportResult:
        """`upsert_commissions` of every row of `chunks`, one chunk at a time, all in one
        transaction (see AccountStore)."""
        check_network(network)
        now = self._now()
        return await self._run_write(
            lambda s: upsert_commissions(s, account_uid, network, chunks, now, stream=True)
        )

    # --- the sync worker and the connection commands ---

    async def due_connections(self, attempted_before: str, limit: int) -> list[ConnectionView]:
        """Connections to sync now, least recently attempted first (see AccountStore).

        Read in a write transaction: a read connection's snapshot may predate a claim or a
        release another worker just committed, and the list would offer stale leases."""
        now = self._now()
        return await self._run_write(lambda s: due_connections(s, attempted_before, now, limit))

    async def claim_connection(
        self,
        account_uid: str,
        network: str,
        worker: str,
        lease_seconds: float,
        *,
        attempted_before: str | None = None,
    ) -> bool:
        """Lease the connection to `worker` for `lease_seconds` (False: leased elsewhere, or
        with `attempted_before`, attempted since then: another worker synced it meanwhile)."""
        moment = self._clock()
        now = format_timestamp(moment)
        expires = format_timestamp(lease_end(moment, lease_seconds))
        return await self._run_write(
            lambda s: claim_connection(
                s, account_uid, network, worker, now, expires, attempted_before
            )
        )

    async def release_connection(self, account_uid: str, network: str, worker: str) -> None:
        """Give a lease up."""
        await self._run_write(lambda s: release_connection(s, account_uid, network, worker))

    async def sealed_credentials(self, account_uid: str, network: str) -> SealedCredentials:
        """The ciphertext, read in a write transaction: read connections may never select
        credentials (the SQLite layer's authorizer refuses them)."""
        return await self._run_write(lambda s: sealed_credentials(s, account_uid, network))

    async def write_sync_window(
        self,
        account_uid: str,
        network: str,
        rows: Sequence[NewCommission],
        position: str | None,
        worker: str,
    ) -> ImportResult:
        """Rows and position in one transaction under the worker's live lease."""
        check_network(network)
        check_batch(rows)
        now = self._now()
        return await self._run_write(
            lambda s: write_sync_window(s, account_uid, network, rows, position, worker, now)
        )

    async def record_sync_outcome(
        self, account_uid: str, network: str, status: str, reason: tuple[str, str] | None
    ) -> ConnectionView:
        """Record a run's outcome (ok, partial, auth_failed, error) and its reason."""
        check_sync(status, ())
        check_sync_reason(reason)
        now = self._now()
        return await self._run_write(
            lambda s: record_sync_outcome(s, account_uid, network, status, reason, now)
        )

    async def connection(self, account_uid: str, network: str) -> ConnectionView | None:
        """One connection with its sync state, or None."""
        return await self._run_read(lambda s: find_connection(s, account_uid, network))

    async def list_connections(self, account_uid: str | None = None) -> list[ConnectionView]:
        """Every connection, or one account's (NotFound for an unknown account)."""
        return await self._run_read(lambda s: list_connections(s, account_uid))

    async def set_connection_currency(
        self, account_uid: str, network: str, currency: str | None
    ) -> None:
        """Set (or clear, with None) the connection's currency."""
        if currency is not None and not re.fullmatch(v.CURRENCY_PATTERN, currency):
            raise ValueError("currency must be an ISO 4217 code of 3 capital letters, e.g. USD")
        await self._run_write(lambda s: set_connection_currency(s, account_uid, network, currency))

    async def credentials_after(
        self, after: tuple[str, str] | None, limit: int
    ) -> list[SealedCredentials]:
        """A batch of ciphertexts for re-encryption (a write transaction, as above)."""
        return await self._run_write(lambda s: credentials_after(s, after, limit))

    async def replace_credentials(
        self, account_uid: str, network: str, old: bytes, new: bytes
    ) -> bool:
        """Swap a ciphertext if it is unchanged since it was read."""
        now = self._now()
        return await self._run_write(
            lambda s: replace_credentials(s, account_uid, network, old, new, now)
        )
