"""The SQLite layer of the account store: one file in WAL mode, its schema brought up to date
on start (store.schema).

The operations, their checks and their SQL are in store.accounts, .connections,
.commissions and .summary; this layer brings the connections, their threads and their
transactions behind the two doors, `read` and `write`.

Concurrency model: every connection belongs to one dedicated thread (a single-thread
executor), so SQLite calls never block the event loop and a connection is never shared
between threads. A door hands the operation and its arguments to a connection's thread
as one work item (`_run`), which opens the transaction, drives the operation's coroutine
to its end with one `send(None)` and commits. The operations are coroutines because the
PostgreSQL layer awaits its driver; here their session calls sqlite3 directly and never
suspends, so the thread needs no event loop of its own, and the stack from a door to
sqlite3 is the door, the work item, the operation and the session method (a coroutine
that did suspend is a bug, reported as one). The edge opens `readers` read-only
connections (WAL lets them read while the admin CLI writes); the admin CLI opens one
writable connection. Each read waits at most `timeout` seconds (for a free connection
plus the work); a read that overruns is interrupted (`sqlite3.Connection.interrupt`) and
reported as StoreUnavailable, so a stuck store answers 503 instead of hanging a request.
A read of several statements runs in one DEFERRED transaction (one snapshot); one marked
`@one_statement` runs alone.

Writes (admin CLI, importer, demo, sync) wait at most `timeout` for the connection and for
SQLite's write lock (`busy_timeout`); their work is bounded by `write_timeout` only (none by
default: an import of millions of rows takes minutes). A write asked to stop (past
`write_timeout`, or its caller cancelled: Ctrl-C) is rolled back, and its caller hears of
it only once the worker has ended: a write that was committing already returns its
result, one rolled back raises. `interrupt()` alone cannot stop a write: it is a no-op
between two statements (between the rows of an executemany, while Python binds the next
one), after which the write went on to COMMIT. So a write runs under a stop flag, which a
progress handler checks during its statements and `_run` again before COMMIT.

Read connections are also opened `mode=ro` with `query_only`, and an authorizer that
refuses any read of `network_credentials` and `webhook_secrets`: no read path of the API
can select the credentials or the webhook secrets, even by mistake.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import secrets
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Coroutine, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from store import idkey, publicids
from store.base import (
    Conflict,
    StoreError,
    StoreUnavailable,
    WriteWait,
    format_timestamp,
    utc_now,
)
from store.core import SECRET_TABLES, Dialect, Op
from store.privatefiles import touch_private
from store.publicids import PublicIds
from store.schema import LATEST, runner

T = TypeVar("T")
P = ParamSpec("P")

# One write at a time (BEGIN IMMEDIATE), lists of values as JSON text, pages as one JSON row.
DIALECT = Dialect(arrays=False, concurrent_writes=False, json_pages=True, idle_timeout=False)

# SQLite VM steps between two looks at a write's stop flag: about 4,000 upserted rows, some
# 80 ms of work. Each look is a call into Python, which must take the GIL back from a busy
# event loop (up to a switch interval, 5 ms): rarer looks keep a bulk write from waiting
# more than it works, and a stop still lands within a fraction of a second.
PROGRESS_STEPS = 500_000


def database_path(database: str) -> Path:
    """The file of `sqlite:///path`, `sqlite:path` or a plain path."""
    if database.startswith("sqlite:"):
        rest = database.removeprefix("sqlite:")
        rest = rest.removeprefix("//")
        if not rest:
            raise ValueError(f"{database!r} names no file")
        return Path(urllib.parse.unquote(rest))
    return Path(database)


# --- Connections ------------------------------------------------------------------------


def _deny_credentials(action: int, arg1: str | None, *_: Any) -> int:
    """SQLite authorizer of read connections: nothing may read the tables of secrets."""
    if action == sqlite3.SQLITE_READ and arg1 in SECRET_TABLES:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


class _Stopped(Exception):  # noqa: N818 - reads as the outcome it reports
    """The write was asked to stop before it could commit: it is rolled back."""


LOCK_WAIT_SLICE_MS = 50  # how often a write waiting for the lock looks at its stop flag


def _begin_unless_stopped(conn: sqlite3.Connection, mode: str, stop: threading.Event) -> None:
    """BEGIN, waiting for the write lock as long as the busy timeout allows, unless `stop`
    is set meanwhile (_Stopped: nothing began). SQLite's own wait sleeps through
    sqlite3_interrupt, so a stop signal would have waited for the lock first (up to a
    minute in the admin CLI): the wait is made of short slices instead."""
    (timeout_ms,) = conn.execute("PRAGMA busy_timeout").fetchone()
    conn.execute(f"PRAGMA busy_timeout = {min(timeout_ms, LOCK_WAIT_SLICE_MS)}")
    try:
        _while_locked(conn, f"BEGIN {mode}", timeout_ms / 1000, stop=stop)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {timeout_ms}")


def _while_locked(
    conn: sqlite3.Connection,
    sql: str,
    seconds: float,
    *,
    stop: threading.Event | None = None,
    pause: float = 0.0,
) -> None:
    """Execute `sql`, again (after `pause`) while SQLite says the database is locked, for
    `seconds` at most, and only until `stop` is set (then _Stopped: nothing was done)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            conn.execute(sql)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        if stop is not None and stop.is_set():
            raise _Stopped("asked to stop while waiting for the database lock")
        time.sleep(pause)


def migrate(
    conn: sqlite3.Connection,
    clock: Callable[[], dt.datetime] = utc_now,
    upto: int = LATEST,
) -> int:
    """Apply the missing steps of the schema history (store.schema) up to `upto` (the
    tests' earlier releases stop before the latest); return the schema version. Safe to
    race: IMMEDIATE."""
    # Read first: a schema already current needs no write lock, so opening a store does not
    # wait behind another process's write (where no stop signal could cut the wait short).
    try:
        (current,) = conn.execute(runner.VERSION_SQL).fetchone()
    except sqlite3.OperationalError:  # no such table: a new database
        current = None
    if current == upto:
        return int(current)

    return int(_run(conn, clock, runner.apply, ("sqlite", upto), {}, "IMMEDIATE", None))


def _load_ids(conn: sqlite3.Connection, clock: Callable[[], dt.datetime]) -> PublicIds:
    """The public ids of the store `conn` opens: its id key, made now if it has none."""
    key = _run(conn, clock, idkey.stored_key, (), {}, None, None)
    if key is None:
        candidate = secrets.token_bytes(publicids.KEY_BYTES)
        key = _run(conn, clock, idkey.ensure_key, (candidate,), {}, "IMMEDIATE", None)
    return PublicIds.from_key(key)


# --- The operations in a connection's thread ----------------------------------------------


class _Session:
    """A connection as the operations use it: plain sqlite3 calls, each of which returns
    before its coroutine could suspend (see `_run`)."""

    __slots__ = ("clock", "conn")
    dialect = DIALECT

    def __init__(self, conn: sqlite3.Connection, clock: Callable[[], dt.datetime]) -> None:
        self.conn = conn
        self.clock = clock

    def now(self) -> str:
        return format_timestamp(self.clock())

    def moment(self) -> dt.datetime:
        return self.clock()

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        return self.conn.execute(sql, args).fetchall()

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        cursor = self.conn.execute(sql, args)
        try:
            return cursor.fetchone()
        finally:
            # Ends the statement (an INSERT ... RETURNING included) before the next one.
            cursor.close()

    async def fetchval(self, sql: str, *args: Any) -> Any:
        cursor = self.conn.execute(sql, args)
        try:
            row = cursor.fetchone()
        finally:
            cursor.close()
        return None if row is None else row[0]

    async def execute(self, sql: str, *args: Any) -> int:
        return self.conn.execute(sql, args).rowcount

    async def executemany(self, sql: str, args: Iterable[Sequence[Any]]) -> None:
        self.conn.executemany(sql, args)


def _run(
    conn: sqlite3.Connection | None,
    clock: Callable[[], dt.datetime],
    fn: Callable[..., Coroutine[Any, Any, T]],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    begin: str | None,
    stop: threading.Event | None,
) -> T:
    """In `conn`'s thread: `fn(session, *args, **kwargs)` to its end, in one transaction
    (`BEGIN {begin}`; None: none) committed if it returns (and `stop` is not set by then),
    rolled back otherwise, a failed COMMIT included. With `stop`, the wait for the write
    lock and each statement end soon after it is set."""
    if conn is None:
        raise StoreUnavailable("the store connection is not open")
    coro = fn(_Session(conn, clock), *args, **kwargs)
    try:
        if stop is not None:
            _begin_unless_stopped(conn, begin or "IMMEDIATE", stop)
            conn.set_progress_handler(stop.is_set, PROGRESS_STEPS)
        elif begin is not None:
            conn.execute(f"BEGIN {begin}")
        try:
            coro.send(None)
        except StopIteration as done:
            result: T = done.value
        else:
            raise AssertionError("a store operation suspended in a thread without an event loop")
        finally:
            if stop is not None:
                # Before COMMIT or ROLLBACK: the handler must not abort those.
                conn.set_progress_handler(None, 0)
        if stop is not None and stop.is_set():
            raise _Stopped("asked to stop before COMMIT")
        if conn.in_transaction:
            conn.execute("COMMIT")
    except BaseException:
        coro.close()
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result


class _Worker:
    """One connection and the one thread that ever touches it."""

    def __init__(self, name: str) -> None:
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self.conn: sqlite3.Connection | None = None

    def interrupt(self) -> None:
        # Documented as callable from another thread; a no-op when nothing runs.
        if self.conn is not None:
            self.conn.interrupt()

    def close_connection(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class SqliteStore:
    """The SQLite account store (an AccountStore). Make it with `await SqliteStore.open(path, ...)`."""

    def __init__(
        self,
        path: Path,
        *,
        timeout: float = 2.0,
        readers: int = 2,
        writable: bool = False,
        write_timeout: float | None = None,
        clock: Callable[[], dt.datetime] = utc_now,
        trace: Callable[[str], None] | None = None,
    ) -> None:
        self.path = path
        self._timeout = timeout
        self._write_timeout = write_timeout
        self._clock = clock
        self._trace = trace  # sees every statement the read connections run (tests, debugging)
        self._readers = [_Worker(f"store-read-{i}") for i in range(readers)]
        self._writers = [_Worker("store-write")] if writable else []
        self._read_pool: asyncio.Queue[_Worker] = asyncio.Queue()
        self._write_pool: asyncio.Queue[_Worker] = asyncio.Queue()
        self._closed = True  # refuses calls; False once started, True again once closing
        self._started = False
        self._shut_down = False
        self._ids: PublicIds | None = None

    @property
    def ids(self) -> PublicIds:
        """The store's public ids (store.publicids), its key read when it opened."""
        if self._ids is None:
            raise StoreUnavailable("the store is not open")
        return self._ids

    @classmethod
    async def open(cls, path: Path, **options: Any) -> SqliteStore:
        store = cls(path, **options)
        try:
            await store.start()
        except BaseException:
            await store.close()
            raise
        return store

    # --- lifecycle ---

    def _connect(self, *, read_only: bool) -> sqlite3.Connection:
        if read_only:
            uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, cached_statements=256)
        else:
            conn = sqlite3.connect(self.path, isolation_level=None, cached_statements=256)
        try:
            conn.execute(f"PRAGMA busy_timeout = {max(int(self._timeout * 1000), 1)}")
            conn.execute("PRAGMA foreign_keys = ON")
            if read_only:
                conn.execute("PRAGMA query_only = ON")
                conn.set_authorizer(_deny_credentials)
                if self._trace is not None:
                    conn.set_trace_callback(self._trace)
            else:
                conn.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            conn.close()
            raise
        return conn

    def _enable_wal(self, conn: sqlite3.Connection) -> None:
        """WAL mode, retried until the timeout while the file is locked: processes opening
        a new database at once (the workers of one edge) can make the switch fail with
        "database is locked" at once, without SQLite's busy handler waiting."""
        _while_locked(conn, "PRAGMA journal_mode = WAL", self._timeout, pause=0.01)

    def _open_worker(self, worker: _Worker, *, read_only: bool, migrate_first: bool) -> None:
        """Runs in the worker's thread."""
        if migrate_first:
            # Owner-only, and so are the -wal and -shm files SQLite makes beside it.
            touch_private(self.path)
            conn = self._connect(read_only=False)
            try:
                self._enable_wal(conn)
                migrate(conn, self._clock)
                self._ids = _load_ids(conn, self._clock)
            finally:
                conn.close()
        worker.conn = self._connect(read_only=read_only)

    async def start(self) -> None:
        """Migrate the schema, then open every connection (each in its own thread)."""
        loop = asyncio.get_running_loop()
        workers = [(w, True) for w in self._readers] + [(w, False) for w in self._writers]
        try:
            for index, (worker, read_only) in enumerate(workers):
                opening = functools.partial(
                    self._open_worker, worker, read_only=read_only, migrate_first=index == 0
                )
                await loop.run_in_executor(worker.executor, opening)
        except (sqlite3.Error, OSError) as exc:
            raise StoreUnavailable(f"cannot open the account store {self.path}: {exc}") from exc
        for worker in self._readers:
            self._read_pool.put_nowait(worker)
        for worker in self._writers:
            self._write_pool.put_nowait(worker)
        self._started = True
        self._closed = False

    async def close(self) -> None:
        """Let running calls finish (interrupting them after the timeout), close everything."""
        if self._shut_down:
            return
        self._closed = self._shut_down = True
        for pool, workers in ((self._read_pool, self._readers), (self._write_pool, self._writers)):
            if self._started:
                await self._drain(pool, workers)
            for worker in workers:
                done = worker.executor.submit(worker.close_connection)
                # A thread stuck in SQLite closes its connection when it returns.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.wrap_future(done), self._timeout)
                worker.executor.shutdown(wait=False)

    async def _drain(self, pool: asyncio.Queue[_Worker], workers: list[_Worker]) -> None:
        """Take every worker back from `pool` (busy ones give themselves back when done)."""
        missing = len(workers)
        for attempt in range(2):
            try:
                async with asyncio.timeout(self._timeout):
                    while missing:
                        await pool.get()
                        missing -= 1
                return
            except TimeoutError:
                if attempt == 0:
                    for worker in workers:
                        worker.interrupt()

    # --- the two doors ---

    async def read(self, fn: Op[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(session, *args, **kwargs)` on a read connection, its statements seeing one
        state, all within the timeout (then interrupted: StoreUnavailable)."""
        if self._closed:
            raise StoreUnavailable("the account store is closed")
        begin = None if getattr(fn, "one_statement", False) else "DEFERRED"
        pool = self._read_pool
        try:
            async with asyncio.timeout(self._timeout):
                worker = await pool.get()
                job = worker.executor.submit(
                    _run, worker.conn, self._clock, fn, args, kwargs, begin, None
                )
                try:
                    result = await asyncio.wrap_future(job)
                except asyncio.CancelledError:
                    # Timed out (or the request went away): stop the statement; the worker
                    # goes back to the pool from its own thread once the job has ended.
                    worker.interrupt()
                    self._give_back(pool, worker, job)
                    raise
                except BaseException:
                    pool.put_nowait(worker)
                    raise
                pool.put_nowait(worker)  # here, not from the thread: one wake-up less per call
                return result
        except TimeoutError:
            raise self._no_answer() from None
        except sqlite3.DatabaseError as exc:
            raise _store_error(exc) from exc

    async def write(self, fn: Op[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(session, *args, **kwargs)` in one write transaction; returns once it
        committed, raises if it did not (store.base.WriteWait)."""
        if not self._writers:
            raise StoreError("this store was opened read-only")
        if self._closed:
            raise StoreUnavailable("the account store is closed")
        try:
            async with asyncio.timeout(self._timeout):
                worker = await self._write_pool.get()
        except TimeoutError:
            raise self._no_answer() from None
        stop = threading.Event()
        try:
            job = worker.executor.submit(
                _run, worker.conn, self._clock, fn, args, kwargs, "IMMEDIATE", stop
            )
        except BaseException:
            self._write_pool.put_nowait(worker)
            raise
        work = asyncio.wrap_future(job)
        wait = WriteWait(self._write_timeout)
        try:
            # Until the job has ended, nobody knows whether it committed.
            await wait.until_done(work, stop.set)
        finally:
            self._give_back(self._write_pool, worker, job)
        if work.cancelled():  # never started: the store was shut down under it
            wait.rolled_back(StoreUnavailable("the account store is closed"))
        error = work.exception()
        if error is None:
            return wait.committed(work.result())
        wait.rolled_back(_store_error(error))

    def _give_back(self, pool: asyncio.Queue[_Worker], worker: _Worker, job: Future[Any]) -> None:
        """Return `worker` to `pool` now if `job` has ended, else from its thread when it has."""
        if job.done():
            pool.put_nowait(worker)
            return
        loop = asyncio.get_running_loop()

        def give_back(_job: Future[Any]) -> None:
            # RuntimeError: the loop is gone (interpreter shutdown), nothing to return to.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(pool.put_nowait, worker)

        job.add_done_callback(give_back)

    def _no_answer(self) -> StoreUnavailable:
        return StoreUnavailable(f"the account store did not answer within {self._timeout:g}s")


def _store_error(exc: BaseException) -> BaseException:
    """SQLite's failures as the store's own errors (others are the store's already)."""
    error: BaseException
    if isinstance(exc, sqlite3.IntegrityError):
        error = Conflict(str(exc))
    elif isinstance(exc, sqlite3.DatabaseError):  # OperationalError (locked, I/O, interrupted)...
        error = StoreUnavailable(f"the account store failed: {exc}")
    else:
        return exc
    error.__cause__ = exc
    return error
