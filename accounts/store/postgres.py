"""The PostgreSQL account store: an asyncpg connection pool, the SQLite store's semantics.

`open_store("postgresql://user:password@host:port/database")` makes one. Same schema
versions (accounts.store.migrations_pg), same statements where SQL allows (the keyset query
comes from accounts.store.sqlite, with numbered parameters), same values out: the
two stores are interchangeable, and tests/edge_account runs against both.

Pool: `pool_min` (default 1) to `pool_max` (default 10) connections per process, settable
as query parameters of the URL (`...?pool_max=20`; every other query parameter goes to
asyncpg/PostgreSQL as usual). N edge workers hold at most N * pool_max connections: keep
that under the server's max_connections.

Timeouts: each read (waiting for a connection, connecting, the statements) has `timeout`
seconds, after which it raises StoreUnavailable (the API answers 503); the connection it
held is dropped, since a statement may still be running on it. The server also gets
`statement_timeout` and `idle_in_transaction_session_timeout`, so it stops work the client
abandoned even when the client cannot tell it (network gone). A write has `timeout` to get
its connection, then `write_timeout` for its work (none by default; each statement still
has the server's `statement_timeout`). A write asked to stop (its deadline, or its caller
cancelled: Ctrl-C) has its connection dropped, so it is rolled back unless its COMMIT had
been sent: then the store asks the server what became of its transaction id
(`txid_status`) and returns the result of a committed one. OutcomeUnknown is left for a
server that cannot say within `timeout`.

Outages: every connection-level failure (refused, reset, server shutting down or starting,
pool closing, too many connections, timeout) is StoreUnavailable; the pool reconnects by
itself on the next call once the server answers again. A read that fails because its
pooled connection had died meanwhile is retried once on a fresh connection (a restarted
server then costs no request an error). Writes are never retried: each runs in one
transaction, so an outage leaves it wholly applied or not at all, and its caller is told
which (a connection lost during COMMIT is settled by `txid_status`, as above).

Read-only (the edge): every session runs with `default_transaction_read_only`, so no
statement of the API can write. Read paths refuse any statement naming
`network_credentials` before sending it (the SQLite store's authorizer does the same);
a deployment enforces it in the database too by revoking that table from the edge's role
(docs/accounts.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
import re
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import asyncpg

from accounts.store.base import (
    VALUE_FIELDS,
    AccountView,
    CapabilityView,
    CommissionQuery,
    CommissionRow,
    Conflict,
    ImportResult,
    KeyRecord,
    KeyView,
    NewCommission,
    NotFound,
    OutcomeUnknown,
    StoreError,
    StoreUnavailable,
    WriteWait,
    account_view,
    check_commission,
    check_email,
    check_label,
    check_network,
    check_plan,
    check_sync,
    format_timestamp,
    import_result,
    key_view,
    utc_now,
    values,
    with_stored,
)
from accounts.store.migrations_pg import lock_key, migrate
from accounts.store.sqlite import commissions_sql, new_id
from contract import vocabulary as v

T = TypeVar("T")

SCHEMES = ("postgresql", "postgres")
DEFAULT_POOL_MIN = 1
DEFAULT_POOL_MAX = 10
MIGRATION_TIMEOUT = 300.0  # seconds: a future migration may rebuild an index on many rows
APPLICATION_NAME = "affdir-edge"
FATE_POLL = 0.05  # seconds between two questions about a cut-off COMMIT still in progress
CREDENTIALS_TABLE = "network_credentials"

# Failures that say nothing about the statement, only that its connection is gone: a read
# hit by one on a connection that sat in the pool is worth one more try on a new one.
_CONNECTION_LOST: tuple[type[BaseException], ...] = (
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CrashShutdownError,
    ConnectionError,
)


# --- Settings ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PoolSize:
    min_size: int = DEFAULT_POOL_MIN
    max_size: int = DEFAULT_POOL_MAX


def parse_url(database: str) -> tuple[str, PoolSize]:
    """Split our own pool settings off a postgresql:// URL; the rest goes to asyncpg."""
    parts = urllib.parse.urlsplit(database)
    if parts.scheme.lower() not in SCHEMES:
        raise ValueError(f"{redact(database)} is not a postgresql:// URL")
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    ours = {name: value for name, value in query if name in {"pool_min", "pool_max"}}
    rest = [(name, value) for name, value in query if name not in ours]
    try:
        size = PoolSize(
            int(ours.get("pool_min", DEFAULT_POOL_MIN)), int(ours.get("pool_max", DEFAULT_POOL_MAX))
        )
    except ValueError:
        raise ValueError("pool_min and pool_max must be integers") from None
    if not 0 <= size.min_size <= size.max_size or size.max_size < 1:
        raise ValueError("need 0 <= pool_min <= pool_max and pool_max >= 1")
    dsn = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(rest)))
    return dsn, size


def redact(database: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urllib.parse.urlsplit(database)
    if parts.password is None:
        return database
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


def session_settings(timeout: float, *, read_only: bool) -> dict[str, str]:
    """Server settings of every pooled session (startup parameters: RESET ALL keeps them)."""
    backstop = str(int(timeout * 1000) + 1000)  # ms; the client gives up first
    settings = {
        "application_name": APPLICATION_NAME,
        "statement_timeout": backstop,
        "idle_in_transaction_session_timeout": backstop,
        # Keyset pages are short index scans; a JIT compile would cost more than the query.
        "jit": "off",
    }
    if read_only:
        settings["default_transaction_read_only"] = "on"
    return settings


def numbered(sql: str) -> str:
    """`?` placeholders (SQLite's) as `$1, $2, ...` (PostgreSQL's). Our SQL has no `?` in
    literals, so a plain left-to-right replacement is exact."""
    counter = itertools.count(1)
    return re.sub(r"\?", lambda _: f"${next(counter)}", sql)


# The SQLite store's upsert, one statement per chunk instead of one per row: the rows
# travel as one text array per column (a few round trips for any import size). Same
# conflict target, same updated columns: `id` (seq) and imported_at are never touched.
_ROW_COLUMNS = ("external_id", *VALUE_FIELDS)
UPSERT_SQL = f"""
INSERT INTO commissions (
    account_id, network, {", ".join(_ROW_COLUMNS)}, imported_at, updated_at
)
SELECT $1, $2, r.*, $3, $3
FROM unnest({", ".join(f"${n}::text[]" for n in range(4, 4 + len(_ROW_COLUMNS)))})
    AS r ({", ".join(_ROW_COLUMNS)})
ON CONFLICT (account_id, network, external_id) DO UPDATE SET
    {", ".join(f"{name} = excluded.{name}" for name in VALUE_FIELDS)},
    updated_at = excluded.updated_at
"""
UPSERT_CHUNK = 10_000  # rows per statement: bounded messages, any import size


def import_lock(account_id: int, network: str) -> int:
    """Advisory lock of one (account, network) import: imports of it run one at a time,
    so each sees what the previous one committed and counts inserted/updated exactly."""
    return lock_key(f"import:{account_id}:{network}")


# --- Sessions ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Commit:
    """How far one write transaction got: what decides its outcome when it is cut off."""

    xid: int | None = None  # its transaction id; None while (or if) it has written nothing
    result: Any = None  # what the write returns, once it has run
    committing: bool = False  # COMMIT may have reached the server
    committed: bool = False  # the server confirmed the COMMIT


@dataclass(frozen=True, slots=True)
class _Session:
    """A pooled connection as the store's queries use it; reports each statement to
    `trace` (the SQLite store's trace hook: tests see what the read paths run).

    On read paths (`reading`) a statement naming the credentials table is refused before
    it is sent: the twin of the SQLite store's authorizer. The database-level guarantee is
    the edge's role having no SELECT on it (docs/accounts.md)."""

    conn: Any  # asyncpg's PoolConnectionProxy
    trace: Callable[[str], None] | None
    reading: bool = False

    def _note(self, sql: str) -> None:
        if self.reading and CREDENTIALS_TABLE in sql.lower():
            raise StoreUnavailable(f"{CREDENTIALS_TABLE} is not authorized on a read path")
        if self.trace is not None:
            self.trace(sql)

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        self._note(sql)
        return list(await self.conn.fetch(sql, *args))

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        self._note(sql)
        return await self.conn.fetchrow(sql, *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        self._note(sql)
        return await self.conn.fetchval(sql, *args)

    async def execute(self, sql: str, *args: Any) -> str:
        self._note(sql)
        return str(await self.conn.execute(sql, *args))

    async def executemany(self, sql: str, args: Iterable[Sequence[Any]]) -> None:
        self._note(sql)
        await self.conn.executemany(sql, args)


async def _keep_session(_conn: Any) -> None:
    """Pool reset hook: nothing to reset. asyncpg still rolls back a transaction left open;
    the default reset would cost a round trip per call to undo state we never create
    (LISTEN, cursors, session SETs, session-level advisory locks)."""


def _rowcount(status: str) -> int:
    """Rows touched, from a command tag such as `UPDATE 1`."""
    return int(status.rsplit(" ", 1)[-1])


# --- The store --------------------------------------------------------------------------


class PostgresStore:
    """The PostgreSQL AccountStore. Make it with `await PostgresStore.open(url, ...)`."""

    def __init__(
        self,
        database: str,
        *,
        timeout: float = 2.0,
        write_timeout: float | None = None,
        writable: bool = False,
        clock: Callable[[], dt.datetime] = utc_now,
        trace: Callable[[str], None] | None = None,
    ) -> None:
        self.dsn, self.pool_size = parse_url(database)
        self.name = redact(database)
        self._timeout = timeout
        self._write_timeout = write_timeout
        self._writable = writable
        self._clock = clock
        self._trace = trace  # sees every statement of the read paths (tests, debugging)
        self._pool: asyncpg.Pool | None = None
        self._closed = False

    @classmethod
    async def open(cls, database: str, **options: Any) -> PostgresStore:
        store = cls(database, **options)
        try:
            await store.start()
        except BaseException:
            await store.close()
            raise
        return store

    # --- lifecycle ---

    async def start(self) -> None:
        """Migrate (on a connection of its own, with a generous deadline), then fill the pool."""
        try:
            async with asyncio.timeout(max(self._timeout, MIGRATION_TIMEOUT)):
                conn = await asyncpg.connect(
                    self.dsn,
                    timeout=self._timeout,
                    server_settings={"application_name": APPLICATION_NAME + "-migrate"},
                )
                try:
                    await migrate(conn, self._now)
                finally:
                    await conn.close(timeout=self._timeout)
            async with asyncio.timeout(self._timeout):
                self._pool = await asyncpg.create_pool(
                    self.dsn,
                    min_size=self.pool_size.min_size,
                    max_size=self.pool_size.max_size,
                    timeout=self._timeout,  # to connect
                    server_settings=session_settings(self._timeout, read_only=not self._writable),
                    reset=_keep_session,
                )
        except TimeoutError:
            raise StoreUnavailable(
                f"cannot open the account store {self.name}: no answer in time"
            ) from None
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise StoreUnavailable(f"cannot open the account store {self.name}: {exc}") from exc

    async def close(self) -> None:
        """Let running calls finish (at most `timeout`), then close every connection."""
        if self._closed:
            return
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is None:
            return
        try:
            async with asyncio.timeout(self._timeout):
                await pool.close()
        except (TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
            pool.terminate()  # a hung call or a dead server: drop the sockets

    # --- calls ---

    async def _once(
        self,
        pool: asyncpg.Pool,
        fn: Callable[[_Session], Awaitable[T]],
        reading: bool,
        acquire_timeout: float | None = None,
    ) -> T:
        async with asyncio.timeout(acquire_timeout):
            conn = await pool.acquire()
        try:
            return await fn(_Session(conn, self._trace, reading))
        except BaseException as exc:
            if not isinstance(exc, (asyncpg.PostgresError, StoreError, ValueError)):
                # Timed out or cancelled mid-statement, or the connection broke: its state
                # is unknown. Drop it now instead of waiting on a cancel and a reset.
                conn.terminate()
            raise
        finally:
            await pool.release(conn, timeout=self._timeout)

    def _pool_or_closed(self) -> asyncpg.Pool:
        if self._pool is None or self._closed:
            raise StoreUnavailable("the account store is closed")
        return self._pool

    @contextlib.contextmanager
    def _store_errors(self) -> Iterator[None]:
        """asyncpg's and the network's failures (and a timeout) as the store's own errors."""
        try:
            yield
        except TimeoutError:
            raise StoreUnavailable(
                f"the account store did not answer within {self._timeout:g}s"
            ) from None
        except asyncpg.IntegrityConstraintViolationError as exc:
            raise Conflict(str(exc)) from exc
        except (asyncpg.PostgresError, OSError) as exc:  # shutdown, too many connections, ...
            raise StoreUnavailable(f"the account store failed: {exc}") from exc
        except asyncpg.InterfaceError as exc:
            if isinstance(exc, asyncpg.DataError):
                raise  # a value of the wrong type: a bug, not an outage
            raise StoreUnavailable(f"the account store failed: {exc}") from exc

    async def _call(self, fn: Callable[[_Session], Awaitable[T]]) -> T:
        """A read: `fn` on a pooled connection within the timeout, retried once when its
        connection turns out dead (writes never are: see the module docstring)."""
        pool = self._pool_or_closed()
        with self._store_errors():
            async with asyncio.timeout(self._timeout):
                try:
                    return await self._once(pool, fn, True)
                except _CONNECTION_LOST:
                    pass
                # A connection that died while idle (server restarted): once more, anew.
                return await self._once(pool, fn, True)

    async def _read(self, fn: Callable[[_Session], Awaitable[T]], *, snapshot: bool = True) -> T:
        """Run `fn` on a pooled connection; `snapshot`: several statements, one view."""
        if not snapshot:
            return await self._call(fn)

        async def in_snapshot(s: _Session) -> T:
            s._note("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            async with s.conn.transaction(isolation="repeatable_read", readonly=True):
                return await fn(s)

        return await self._call(in_snapshot)

    async def _write(self, fn: Callable[[_Session], Awaitable[T]]) -> T:
        """`fn` in one transaction; returns once it committed, raises if it did not."""
        if not self._writable:
            raise StoreError("this store was opened read-only")
        pool = self._pool_or_closed()
        commit = _Commit()

        async def in_transaction(s: _Session) -> None:
            async with s.conn.transaction():
                commit.result = await fn(s)
                # Asked before COMMIT: should its answer be lost, the server still knows
                # what became of this transaction id.
                commit.xid = await s.fetchval("SELECT txid_current_if_assigned()")
                commit.committing = True
            commit.committed = True

        async def write() -> None:
            with self._store_errors():
                await self._once(pool, in_transaction, False, acquire_timeout=self._timeout)

        # A task of its own: stopping it (dropping its connection) leaves the caller's alone.
        work = asyncio.ensure_future(write())
        wait = WriteWait(self._write_timeout)
        await wait.until_done(work, work.cancel)
        if commit.committing and not commit.committed:
            # Nothing written (no transaction id): nothing to lose either way.
            commit.committed = commit.xid is None or await self._committed(commit.xid, wait)
        if commit.committed:
            return wait.committed(commit.result)
        error = None if work.cancelled() else work.exception()
        wait.rolled_back(error or StoreUnavailable("the write was stopped and rolled back"))

    async def _committed(self, xid: int, wait: WriteWait) -> bool:
        """Whether transaction `xid`, whose COMMIT was cut off, committed: the server knows.
        OutcomeUnknown when it cannot say within the timeout."""

        async def ask() -> str | None:
            async with asyncio.timeout(self._timeout):
                while True:
                    status = await self._call(lambda s: s.fetchval("SELECT txid_status($1)", xid))
                    if status != "in progress":  # the backend may still be committing
                        return None if status is None else str(status)
                    await asyncio.sleep(FATE_POLL)

        asking = asyncio.ensure_future(ask())
        await wait.outlast(asking)  # a Ctrl-C now must not leave the outcome untold
        fate = None if asking.cancelled() or asking.exception() else asking.result()
        if fate not in {"committed", "aborted"}:
            wait.unknown(
                OutcomeUnknown(
                    "the account store stopped answering while committing the write: "
                    "it may or may not have been applied"
                )
            )
        return fate == "committed"

    def _now(self) -> str:
        return format_timestamp(self._clock())

    # --- reads of the API ---

    async def lookup_key(self, key_hash: str) -> KeyRecord | None:
        async def run(s: _Session) -> KeyRecord | None:
            row = await s.fetchrow(
                "SELECT k.id, a.uid, k.prefix, k.label, k.scopes, k.created_at, k.revoked_at, "
                "a.id FROM api_keys k JOIN accounts a ON a.id = k.account_id "
                "WHERE k.key_hash = $1 AND k.revoked_at IS NULL",
                key_hash,
            )
            if row is None:
                return None
            account = await _account_view(s, row[7])
            assert account is not None  # the foreign key guarantees it
            return KeyRecord(key=key_view(tuple(row)[:7]), account=account)

        return await self._read(run)

    async def list_commissions(self, query: CommissionQuery) -> list[CommissionRow]:
        sql, params = commissions_sql(query)
        sql = numbered(sql)

        async def run(s: _Session) -> list[CommissionRow]:
            return [CommissionRow(*row) for row in await s.fetch(sql, *params)]

        return await self._read(run, snapshot=False)

    # --- admin reads ---

    async def account_view(self, uid: str) -> AccountView | None:
        async def run(s: _Session) -> AccountView | None:
            account_id = await s.fetchval("SELECT id FROM accounts WHERE uid = $1", uid)
            return None if account_id is None else await _account_view(s, account_id)

        return await self._read(run)

    async def list_keys(self, account_uid: str) -> list[KeyView]:
        async def run(s: _Session) -> list[KeyView]:
            account_id = await _account_id(s, account_uid)
            rows = await s.fetch(
                "SELECT id, $1::text, prefix, label, scopes, created_at, revoked_at "
                "FROM api_keys WHERE account_id = $2 ORDER BY created_at, id",
                account_uid,
                account_id,
            )
            return [key_view(tuple(row)) for row in rows]

        return await self._read(run)

    # --- writes ---

    async def create_account(self, email: str | None, plan: str, *, uid: str | None = None) -> str:
        check_plan(plan)
        check_email(email)
        new_uid = uid or new_id("acc")
        now = self._now()

        async def run(s: _Session) -> str:
            account_id = await s.fetchval(
                "INSERT INTO accounts (uid, email, plan, suspended, created_at) "
                "VALUES ($1, $2, $3, false, $4) RETURNING id",
                new_uid,
                email,
                plan,
                now,
            )
            await s.executemany(
                "INSERT INTO capabilities (account_id, name, enabled, configured, enabled_at) "
                "VALUES ($1, $2, false, false, NULL)",
                [(account_id, name) for name in v.CAPABILITIES],
            )
            return new_uid

        return await self._write(run)

    async def set_plan(self, uid: str, plan: str) -> None:
        check_plan(plan)
        await self._update_account(uid, "UPDATE accounts SET plan = $1 WHERE uid = $2", plan)

    async def set_suspended(self, uid: str, suspended: bool) -> None:
        await self._update_account(
            uid, "UPDATE accounts SET suspended = $1 WHERE uid = $2", suspended
        )

    async def _update_account(self, uid: str, sql: str, value: Any) -> None:
        async def run(s: _Session) -> None:
            if _rowcount(await s.execute(sql, value, uid)) == 0:
                raise NotFound(f"no account {uid}")

        await self._write(run)

    async def set_capability(self, uid: str, name: str, enabled: bool) -> CapabilityView:
        if name not in v.CAPABILITIES:
            raise ValueError(f"capability must be one of: {', '.join(v.CAPABILITIES)}")
        now = self._now()

        async def run(s: _Session) -> CapabilityView:
            account_id = await _account_id(s, uid)
            if enabled:
                row = await s.fetchrow(
                    "UPDATE capabilities SET enabled = true, configured = true, enabled_at = $1 "
                    "WHERE account_id = $2 AND name = $3 "
                    "RETURNING enabled, configured, enabled_at",
                    now,
                    account_id,
                    name,
                )
            else:
                row = await s.fetchrow(
                    "UPDATE capabilities SET enabled = false WHERE account_id = $1 AND name = $2 "
                    "RETURNING enabled, configured, enabled_at",
                    account_id,
                    name,
                )
            return CapabilityView(row[0], row[1], row[2])

        return await self._write(run)

    async def create_key(
        self, account_uid: str, key_hash: str, prefix: str, label: str, scopes: Sequence[str]
    ) -> KeyView:
        bad = [s for s in scopes if s not in v.KEY_SCOPES]
        if bad or not scopes:
            raise ValueError(f"scopes must be among: {', '.join(v.KEY_SCOPES)}")
        check_label(label)
        key_id = new_id("key")
        now = self._now()

        async def run(s: _Session) -> KeyView:
            account_id = await _account_id(s, account_uid)
            await s.execute(
                "INSERT INTO api_keys (id, account_id, key_hash, prefix, label, scopes, "
                "created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)",
                key_id,
                account_id,
                key_hash,
                prefix,
                label,
                " ".join(scopes),
                now,
            )
            return KeyView(key_id, account_uid, prefix, label, tuple(scopes), now, None)

        return await self._write(run)

    async def revoke_key(self, prefix_or_id: str) -> KeyView:
        now = self._now()

        async def run(s: _Session) -> KeyView:
            rows = await s.fetch(
                "SELECT k.id, a.uid, k.prefix, k.label, k.scopes, k.created_at, k.revoked_at "
                "FROM api_keys k JOIN accounts a ON a.id = k.account_id "
                "WHERE k.id = $1 OR k.prefix = $1 ORDER BY k.id FOR UPDATE OF k",
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
            await s.execute("UPDATE api_keys SET revoked_at = $1 WHERE id = $2", now, key.id)
            return key_view((*tuple(rows[0])[:6], now))

        return await self._write(run)

    async def connect_network(self, account_uid: str, network: str, ciphertext: bytes) -> None:
        check_network(network)
        now = self._now()

        async def run(s: _Session) -> None:
            account_id = await _account_id(s, account_uid)
            await s.execute(
                "INSERT INTO networks (account_id, network, status, connected_at) "
                "VALUES ($1, $2, 'never', $3) ON CONFLICT (account_id, network) "
                "DO UPDATE SET connected_at = excluded.connected_at",
                account_id,
                network,
                now,
            )
            await s.execute(
                "INSERT INTO network_credentials (account_id, network, ciphertext, updated_at) "
                "VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, network) DO UPDATE SET "
                "ciphertext = excluded.ciphertext, updated_at = excluded.updated_at",
                account_id,
                network,
                ciphertext,
                now,
            )

        await self._write(run)

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
        check_network(network)
        check_sync(status, (accounts, programs, transactions))
        now = self._now()

        async def run(s: _Session) -> None:
            account_id = await _account_id(s, account_uid)
            status_tag = await s.execute(
                "UPDATE networks SET status = $1, last_sync_at = $2, accounts = $3, "
                "programs = $4, transactions = $5 WHERE account_id = $6 AND network = $7",
                status,
                now,
                accounts,
                programs,
                transactions,
                account_id,
                network,
            )
            if not _rowcount(status_tag):
                raise NotFound(f"account {account_uid} has not connected {network}")

        await self._write(run)

    async def upsert_commissions(
        self, account_uid: str, network: str, rows: Sequence[NewCommission]
    ) -> ImportResult:
        check_network(network)
        seen: set[str] = set()
        for row in rows:
            check_commission(row)
            if row.external_id in seen:
                raise ValueError(f"external_id: {row.external_id!r} appears twice")
            seen.add(row.external_id)
        now = self._now()

        async def run(s: _Session) -> ImportResult:
            account_id = await _account_id(s, account_uid)
            await s.execute("SELECT pg_advisory_xact_lock($1)", import_lock(account_id, network))
            existing = await _existing(s, account_id, network, [r.external_id for r in rows])
            complete = with_stored(rows, existing)
            changed = [r for r in complete if existing.get(r.external_id) != values(r)]
            for start in range(0, len(changed), UPSERT_CHUNK):
                chunk = changed[start : start + UPSERT_CHUNK]
                columns = [[getattr(r, name) for r in chunk] for name in _ROW_COLUMNS]
                await s.execute(UPSERT_SQL, account_id, network, now, *columns)
            return import_result(complete, changed, existing)

        return await self._write(run)


# --- Row helpers ------------------------------------------------------------------------


async def _account_id(s: _Session, uid: str) -> int:
    account_id = await s.fetchval("SELECT id FROM accounts WHERE uid = $1", uid)
    if account_id is None:
        raise NotFound(f"no account {uid}")
    return int(account_id)


async def _account_view(s: _Session, account_id: int) -> AccountView | None:
    row = await s.fetchrow(
        "SELECT uid, email, plan, suspended, created_at FROM accounts WHERE id = $1", account_id
    )
    if row is None:
        return None
    capabilities = await s.fetch(
        "SELECT name, enabled, configured, enabled_at FROM capabilities WHERE account_id = $1",
        account_id,
    )
    networks = await s.fetch(
        "SELECT network, status, connected_at, last_sync_at, accounts, programs, "
        "transactions FROM networks WHERE account_id = $1 ORDER BY network",
        account_id,
    )
    return account_view(row, capabilities, networks)


async def _existing(
    s: _Session, account_id: int, network: str, external_ids: list[str]
) -> dict[str, tuple[Any, ...]]:
    """external_id -> compared values, of the rows already stored among `external_ids`."""
    if not external_ids:
        return {}
    rows = await s.fetch(
        f"SELECT external_id, {', '.join(VALUE_FIELDS)} FROM commissions "
        "WHERE account_id = $1 AND network = $2 AND external_id = ANY($3::text[])",
        account_id,
        network,
        external_ids,
    )
    return {row[0]: tuple(row)[1:] for row in rows}
