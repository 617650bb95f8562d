"""The PostgreSQL layer of the account store: an asyncpg connection pool.

`open_store("postgresql://user:password@host:port/database")` makes one. The operations,
their checks and their SQL are those of store.accounts, .connections,
.commissions and .summary, the same as SQLite's (with `?` numbered `$1, $2, ...` here);
the schema is store.schema's history of steps. Same values out: the two stores
are interchangeable, and the account tests run against both. The two doors await the
operation on a pooled connection in the caller's task (`read`: in a REPEATABLE READ
transaction unless it is `@one_statement`), or in a task of its own for a write (so that
stopping it drops its connection and leaves the caller's task alone).

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
has the server's `statement_timeout`, at least WRITE_BACKSTOP on a writable store). A write
asked to stop (its deadline, or its caller cancelled: Ctrl-C) has its connection dropped,
so it is rolled back unless its COMMIT had been sent: then the store asks the server what
became of its transaction id (`txid_status`) and returns the result of a committed one. OutcomeUnknown is left for a
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
`network_credentials` or `webhook_secrets` before sending it (the SQLite store's
authorizer does the same); a deployment enforces it in the database too by revoking those
tables from the edge's role (docs/accounts.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import itertools
import re
import secrets
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, ParamSpec, TypeVar

import asyncpg

from store import idkey, publicids
from store.base import (
    Conflict,
    OutcomeUnknown,
    StoreError,
    StoreUnavailable,
    WriteWait,
    format_timestamp,
    utc_now,
)
from store.core import SECRET_TABLES, Dialect, Op, Session, one_statement
from store.publicids import PublicIds
from store.schema import LATEST, runner

T = TypeVar("T")
P = ParamSpec("P")

SCHEMES = ("postgresql", "postgres")
DEFAULT_POOL_MIN = 1
DEFAULT_POOL_MAX = 10
WRITE_BACKSTOP = 60.0  # seconds: at least this for each statement of a writable store
MIGRATION_TIMEOUT = 300.0  # seconds: a future migration may rebuild an index on many rows
APPLICATION_NAME = "affdir-edge"
FATE_POLL = 0.05  # seconds between two questions about a cut-off COMMIT still in progress

# Writes run side by side (row and advisory locks), lists travel as arrays, pages as rows.
DIALECT = Dialect(arrays=True, concurrent_writes=True, json_pages=False, idle_timeout=True)

# Failures that say nothing about the statement, only that its connection is gone: a read
# hit by one on a connection that sat in the pool is worth one more try on a new one. During
# a server restart asyncpg reports a connection cut mid-message as InternalClientError (its
# protocol state machine lost its footing), one closed under it as InterfaceError, and a
# server still starting or stopping as CannotConnectNowError.
_CONNECTION_LOST: tuple[type[BaseException], ...] = (
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CrashShutdownError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.InternalClientError,
    asyncpg.InterfaceError,
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
    # A writer's statement upserts up to 10,000 rows, which a loaded server can take seconds
    # over: its backstop is sized for that, whatever short timeout bounds the writer's reads.
    seconds = timeout if read_only else max(timeout, WRITE_BACKSTOP)
    backstop = str(int(seconds * 1000) + 1000)  # ms; the client gives up first
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


@functools.lru_cache(maxsize=512)
def numbered(sql: str) -> str:
    """`?` placeholders (SQLite's) as `$1, $2, ...` (PostgreSQL's). Our SQL has no `?` in
    literals, so a plain left-to-right replacement is exact."""
    counter = itertools.count(1)
    return re.sub(r"\?", lambda _: f"${next(counter)}", sql)


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
    """A pooled connection as the core's operations use it (`?` placeholders numbered);
    reports each statement to `trace` (the SQLite store's trace hook: tests see what the
    read paths run).

    On read paths (`reading`) a statement naming the credentials table is refused before
    it is sent: the twin of the SQLite store's authorizer. The database-level guarantee is
    the edge's role having no SELECT on it (docs/accounts.md)."""

    dialect: ClassVar[Dialect] = DIALECT
    conn: Any  # asyncpg's Connection or PoolConnectionProxy
    clock: Callable[[], dt.datetime]
    trace: Callable[[str], None] | None
    reading: bool = False

    def now(self) -> str:
        return format_timestamp(self.clock())

    def moment(self) -> dt.datetime:
        return self.clock()

    def _note(self, sql: str) -> str:
        """`sql` as sent, once checked and traced."""
        if self.reading:
            lowered = sql.lower()
            for table in SECRET_TABLES:
                if table in lowered:
                    raise StoreUnavailable(f"{table} is not authorized on a read path")
        sql = numbered(sql)
        if self.trace is not None:
            self.trace(sql)
        return sql

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        return list(await self.conn.fetch(self._note(sql), *args))

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        return await self.conn.fetchrow(self._note(sql), *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self.conn.fetchval(self._note(sql), *args)

    async def execute(self, sql: str, *args: Any) -> int:
        return _rowcount(str(await self.conn.execute(self._note(sql), *args)))

    async def executemany(self, sql: str, args: Iterable[Sequence[Any]]) -> None:
        await self.conn.executemany(self._note(sql), args)


async def _keep_session(_conn: Any) -> None:
    """Pool reset hook: nothing to reset. asyncpg still rolls back a transaction left open;
    the default reset would cost a round trip per call to undo state we never create
    (LISTEN, cursors, session SETs, session-level advisory locks)."""


def _rowcount(status: str) -> int:
    """Rows touched, from a command tag such as `UPDATE 1` (0 for a tag without a count)."""
    count = status.rsplit(" ", 1)[-1]
    return int(count) if count.isdigit() else 0


async def migrate(
    conn: asyncpg.Connection,
    clock: Callable[[], dt.datetime] = utc_now,
    upto: int = LATEST,
) -> int:
    """Apply the missing steps of the schema history (store.schema) up to `upto` (the
    tests' earlier releases stop before the latest); return the schema version.

    An up-to-date database is only read (a role without DDL rights can open it). Otherwise
    the missing steps and their version rows commit together, under the advisory lock:
    concurrent openers queue on the lock and then see the new version.
    """
    version = await runner.postgres_version(conn)
    runner.check_version(version)
    if version >= upto:
        return version
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", runner.MIGRATION_LOCK)
        # Reads the version again: someone else may have migrated meanwhile.
        return await runner.apply(_Session(conn, clock, None), "postgres", upto)


async def _load_ids(s: Session) -> PublicIds:
    """The public ids of the store: its id key, made now if it has none (the first insert
    of racing openers wins; each then reads the same key)."""
    key = await idkey.stored_key(s)
    if key is None:
        key = await idkey.ensure_key(s, secrets.token_bytes(publicids.KEY_BYTES))
    return PublicIds.from_key(key)


# --- The store --------------------------------------------------------------------------


class PostgresStore:
    """The PostgreSQL account store (an AccountStore). Make it with `await PostgresStore.open(url, ...)`."""

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
        self._ids: PublicIds | None = None

    @property
    def ids(self) -> PublicIds:
        """The store's public ids (store.publicids), its key read when it opened."""
        if self._ids is None:
            raise StoreUnavailable("the store is not open")
        return self._ids

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
                    await migrate(conn, self._clock)
                    self._ids = await _load_ids(_Session(conn, self._clock, None))
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
        except (
            asyncpg.PostgresError,
            asyncpg.InterfaceError,
            asyncpg.exceptions.InternalClientError,
            OSError,
        ) as exc:
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
        except (
            TimeoutError,
            asyncpg.PostgresError,
            asyncpg.InterfaceError,
            asyncpg.exceptions.InternalClientError,
            OSError,
        ):
            pool.terminate()  # a hung call or a dead server: drop the sockets

    # --- the two doors ---

    async def read(self, fn: Op[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(session, *args, **kwargs)` on a pooled connection within the timeout, its
        statements seeing one state; retried once when its connection turns out dead
        (writes never are: see the module docstring)."""
        pool = self._pool_or_closed()
        snapshot = not getattr(fn, "one_statement", False)
        with self._store_errors():
            async with asyncio.timeout(self._timeout):
                try:
                    return await self._read_once(pool, snapshot, fn, args, kwargs)
                except _CONNECTION_LOST as exc:
                    if isinstance(exc, asyncpg.DataError):
                        raise  # a value of the wrong type: the same again on any connection
                # A connection that died while idle (server restarted): once more, anew.
                return await self._read_once(pool, snapshot, fn, args, kwargs)

    async def _read_once(
        self,
        pool: asyncpg.Pool,
        snapshot: bool,
        fn: Callable[..., Awaitable[T]],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> T:
        conn = await pool.acquire()
        try:
            s = _Session(conn, self._clock, self._trace, reading=True)
            if not snapshot:
                return await fn(s, *args, **kwargs)
            s._note("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                return await fn(s, *args, **kwargs)
        except BaseException as exc:
            _drop_unless_clean(conn, exc)
            raise
        finally:
            await pool.release(conn, timeout=self._timeout)

    async def write(self, fn: Op[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(session, *args, **kwargs)` in one transaction; returns once it committed,
        raises if it did not (store.base.WriteWait)."""
        if not self._writable:
            raise StoreError("this store was opened read-only")
        pool = self._pool_or_closed()
        commit = _Commit()

        async def write() -> None:
            with self._store_errors():
                async with asyncio.timeout(self._timeout):
                    conn = await pool.acquire()
                try:
                    s = _Session(conn, self._clock, self._trace)
                    async with conn.transaction():
                        commit.result = await fn(s, *args, **kwargs)
                        # Asked before COMMIT: should its answer be lost, the server still
                        # knows what became of this transaction id.
                        commit.xid = await s.fetchval("SELECT txid_current_if_assigned()")
                        commit.committing = True
                    commit.committed = True
                except BaseException as exc:
                    _drop_unless_clean(conn, exc)
                    raise
                finally:
                    await pool.release(conn, timeout=self._timeout)

        # A task of its own: stopping it (dropping its connection) leaves the caller's alone.
        work = asyncio.ensure_future(write())
        wait = WriteWait(self._write_timeout)
        await wait.until_done(work, work.cancel)
        if commit.committing and not commit.committed:
            # Nothing written (no transaction id): nothing to lose either way.
            commit.committed = commit.xid is None or await self._committed(commit.xid, wait)
        if commit.committed:
            return wait.committed(commit.result)  # type: ignore[no-any-return]
        error = None if work.cancelled() else work.exception()
        wait.rolled_back(error or StoreUnavailable("the write was stopped and rolled back"))

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
        except (asyncpg.InterfaceError, asyncpg.exceptions.InternalClientError) as exc:
            if isinstance(exc, asyncpg.DataError):
                raise  # a value of the wrong type: a bug, not an outage
            raise StoreUnavailable(f"the account store failed: {exc}") from exc

    async def _committed(self, xid: int, wait: WriteWait) -> bool:
        """Whether transaction `xid`, whose COMMIT was cut off, committed: the server knows.
        OutcomeUnknown when it cannot say within the timeout."""

        async def ask() -> str | None:
            async with asyncio.timeout(self._timeout):
                while True:
                    status = await self.read(_txid_status, xid)
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


@one_statement
async def _txid_status(s: Session, xid: int) -> str | None:
    """What became of transaction `xid`: committed, aborted, in progress (None: unknown)."""
    status = await s.fetchval("SELECT txid_status(?)", xid)
    return None if status is None else str(status)


def _drop_unless_clean(conn: Any, exc: BaseException) -> None:
    """Drop `conn` now unless `exc` left it in a known state: one timed out or cancelled
    mid-statement, or whose connection broke, would cost a cancel and a reset first."""
    if not isinstance(exc, (asyncpg.PostgresError, StoreError, ValueError)):
        conn.terminate()
