"""How many Python frames lie between a caller and the database driver, on both stores.

The rule: with `sys.setprofile` (and `threading.setprofile` for the SQLite store's
threads, which start with the store), every call into the driver (sqlite3's `execute` or
`executemany`, asyncpg's `fetch`, `fetchrow`, `fetchval`, `execute` or `executemany`,
the pool's proxy of them included) is measured by walking its caller's frames up to the
measured call's frame, which is not counted; the driver's own frames are not counted
either. When the work hops to another thread (SQLite's connection thread) or to a task of
its own (a PostgreSQL write), the count is the frames from the caller up to the hop
(the frame that calls `ThreadPoolExecutor.submit` or `asyncio.ensure_future`, counted)
plus the frames on the other side from the work item's root (`_WorkItem.run`, or the
task's coroutine, which the event loop's `Handle._run` steps) down to the caller of the
driver, both counted. The largest count of
the measured call is asserted.

- `GET /v1/commissions` from its handler (`edge.handlers.account.commissions`), through
  the edge as it runs with metrics on (`CountingStore` over `StoreHandle` over the store):
  at most 8 frames.
- A sync window's write from the sync's call of `SyncStore.write_window` (as
  `sync.runner` makes it), over `AccountSyncStore` and `StoreHandle` as the worker runs
  it: at most 10 frames.
"""

from __future__ import annotations

import asyncio.events
import asyncio.tasks
import concurrent.futures.thread
import datetime as dt
import sqlite3
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import asyncpg
import pytest
from support.accountfixtures import Seeded
from support.pgserver import free_port

from edge.config import Config
from edge.handlers import account
from store import AccountStore, connections, open_store
from store.handle import StoreHandle
from sync.model import Position, Transaction, Window
from sync.ports import Connection
from sync.storage import AccountSyncStore

HANDLER_LIMIT = 8
SYNC_WRITE_LIMIT = 10

SUBMIT = concurrent.futures.thread.ThreadPoolExecutor.submit.__code__
WORK_ITEM = concurrent.futures.thread._WorkItem.run.__code__
DRIVER_NAMES = {"fetch", "fetchrow", "fetchval", "execute", "executemany", "call_con_method"}
SQLITE_TYPES = (sqlite3.Connection, sqlite3.Cursor)


ENSURE_FUTURE = asyncio.tasks.ensure_future.__code__
STEP = asyncio.events.Handle._run.__code__  # what runs a task's step (its coroutine's caller)
ASYNCPG = str(Path(asyncpg.__file__).parent)


def _asyncpg(code: CodeType) -> bool:
    return code.co_filename.startswith(ASYNCPG)


class FrameCounter:
    """Counts frames from `measured` (a code object) to every driver call below it."""

    def __init__(self, measured: CodeType) -> None:
        self.measured = measured
        self.on = False
        self.hop: int | None = None  # frames from the measured call to the last hop
        self.counts: list[int] = []

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self.on:
            return
        if event == "call":
            code = frame.f_code
            if code is SUBMIT or code is ENSURE_FUTURE:
                below = self._up_to_measured(frame.f_back)
                if below is not None:
                    self.hop = below
            elif code.co_name in DRIVER_NAMES and _asyncpg(code):
                caller = frame.f_back
                if caller is not None and not _asyncpg(caller.f_code):
                    self._driver_call(caller)
        elif (
            event == "c_call"
            and getattr(arg, "__name__", "") in {"execute", "executemany"}
            and isinstance(getattr(arg, "__self__", None), SQLITE_TYPES)
        ):
            self._driver_call(frame)

    def _up_to_measured(self, frame: FrameType | None) -> int | None:
        """Frames from `frame` (counted) up to the measured call (not counted); None when
        `frame` is not below it."""
        depth = 0
        while frame is not None:
            if frame.f_code is self.measured:
                return depth
            depth += 1
            frame = frame.f_back
        return None

    def _driver_call(self, caller: FrameType) -> None:
        depth = 0
        frame: FrameType | None = caller
        while frame is not None:
            if frame.f_code is self.measured:
                self.counts.append(depth)
                return
            depth += 1
            caller = frame.f_back
            if frame.f_code is WORK_ITEM or (caller is not None and caller.f_code is STEP):
                break
            frame = frame.f_back
        # The root of a thread's work item or of a task: add the frames to its hop.
        if self.hop is not None:
            self.counts.append(self.hop + depth)


@pytest.fixture
def counter() -> Iterator[Any]:
    """Installs a counter's profile hook in this thread and in threads started from now on
    (the store's); `counter(code)` makes one."""
    made: list[FrameCounter] = []

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        for each in made:
            each.profile(frame, event, arg)

    def make(code: CodeType) -> FrameCounter:
        made.append(FrameCounter(code))
        return made[-1]

    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        yield make
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


@pytest.fixture
def client_config(account_config: Config) -> Config:
    return account_config


async def test_a_commissions_page_reaches_its_driver_call_within_8_frames(
    counter, edge_client, seeded: Seeded, account_config: Config, database: str
):
    frames = counter(account.commissions.__code__)
    client = await edge_client(metrics_port=free_port())
    # The key is verified and cached first: the measured request reads only its page.
    assert (await client.get("/v1/commissions", headers=seeded.auth)).status == 200
    frames.on = True
    try:
        response = await client.get("/v1/commissions", headers=seeded.auth)
    finally:
        frames.on = False
    assert response.status == 200
    assert frames.counts, "no driver call seen below the handler"
    print(f"\n/v1/commissions on {_kind(database)}: frames {sorted(set(frames.counts))}")
    assert max(frames.counts) <= HANDLER_LIMIT, frames.counts


async def window_write(
    store: AccountSyncStore, connection: Connection, window: Window, rows: list[Transaction]
) -> None:
    """The sync's call (sync.runner._commit): the measured frame."""
    await store.write_window(connection, window, rows, Position(window.end))


async def test_a_sync_window_write_reaches_its_driver_calls_within_10_frames(
    counter, database: str, seeded: Seeded
):
    handle = StoreHandle(lambda: open_store(database, writable=True, readers=1))
    await handle.start()
    store: AccountStore = handle
    try:
        await store.write(connections.connect, seeded.uid, "awin", b"sealed elsewhere")
        sync_store = AccountSyncStore(store, "w1")
        connection = Connection(seeded.uid, "awin")
        assert await sync_store.claim(connection, "w1", 3600.0)
        end = dt.datetime(2026, 2, 1, tzinfo=dt.UTC)
        window = Window(end - dt.timedelta(days=31), end)
        rows = [
            Transaction(
                external_id=f"frame-{i}",
                status="pending",
                raw_status="pending",
                commission_amount="1.50",
                currency="EUR",
                transacted_at="2026-01-15T10:00:00Z",
                network="awin",
            )
            for i in range(3)
        ]
        frames = counter(window_write.__code__)
        frames.on = True
        try:
            await window_write(sync_store, connection, window, rows)
        finally:
            frames.on = False
        assert frames.counts, "no driver call seen below the window write"
        print(f"\nwindow write on {_kind(database)}: frames {sorted(set(frames.counts))}")
        assert max(frames.counts) <= SYNC_WRITE_LIMIT, frames.counts
    finally:
        await handle.close()


def _kind(database: str) -> str:
    return "postgresql" if database.startswith("postgres") else "sqlite"
