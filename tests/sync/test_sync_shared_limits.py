"""What the sync's workers share through the account store, on SQLite and PostgreSQL: the
moment a run a limit cut short resumes (any worker, a restarted one, takes it up then, not a
sync interval later), and the count of requests per connection, so a network's documented
limit holds across workers and restarts (counted at the fake network)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from support.clock import FakeClock
from sync_support import (
    ACCOUNT,
    Canned,
    FakeNetworks,
    connection,
    expected,
    limited,
    max_in_any_period,
    seed_store,
)

from accounts.keyring import Keyring
from store import AccountStore, connections, open_store
from store.base import format_timestamp
from sync.lease import Lease
from sync.model import Counts, Outcome, SyncReport
from sync.runner import SyncSettings
from sync.spec import Rate
from sync.storage import AccountSyncStore, credential_opener, credential_sealer, resume_after
from sync.worker import Worker, WorkerConfig

# A limit of TimeOne's kind: 3 calls per 15 minutes.
PER_QUARTER = Rate(3, 900)


@pytest.fixture
def open_awin_store(database: str, clock: FakeClock) -> Callable[[], Awaitable[AccountStore]]:
    """`await open_awin_store()`: a store on the test database, as a process of its own
    opens it (the caller closes it)."""

    async def opened() -> AccountStore:
        return await open_store(
            database, writable=True, readers=1, timeout=10.0, clock=lambda: clock.now()
        )

    return opened


@pytest.fixture
async def awin_store(open_awin_store, keyring: Keyring) -> AsyncIterator[AccountStore]:
    """The test account on the test database, connected to Awin only."""
    store = await open_awin_store()
    try:
        await seed_store(store, keyring, ("awin",))
        yield store
    finally:
        await store.close()


def a_worker(
    store: AccountStore,
    name: str,
    keyring: Keyring,
    map_status,
    settings: SyncSettings,
    clock: FakeClock,
    lease_seconds: float = 600.0,
) -> Worker:
    """A worker as a process of its own has it: its own limiters, its own HTTP session."""
    return Worker(
        AccountSyncStore(store, name),
        credential_opener(keyring),
        map_status,
        WorkerConfig(worker_id=name, poll_seconds=0.01, lease_seconds=lease_seconds),
        settings,
        clock,
        seal=credential_sealer(keyring),
    )


async def reports_of(worker: Worker, count: int) -> SyncReport:
    """The worker's report number `count` (waiting for it)."""
    async with asyncio.timeout(30):
        while len(worker.reports) < count:  # noqa: ASYNC110 - the worker keeps no event
            await asyncio.sleep(0.01)
    return worker.reports[count - 1]


async def awin_view(store: AccountStore):
    view = await store.read(connections.find, ACCOUNT, "awin")
    assert view is not None
    return view


async def test_a_run_a_429_cut_short_resumes_at_the_reset_on_a_fresh_worker(
    networks: FakeNetworks,
    awin_store: AccountStore,
    open_awin_store,
    clock: FakeClock,
    settings: SyncSettings,
    map_status,
    keyring: Keyring,
):
    # Longer than a run waits (a third of the 600 s lease): the run stops and says when.
    networks["awin"].inject.append(Canned(429, b"{}", {"Retry-After": "3000"}))
    first = a_worker(awin_store, "w1", keyring, map_status, settings, clock)
    stop = asyncio.Event()
    running = asyncio.create_task(first.run(stop))
    report = await reports_of(first, 1)
    stop.set()
    await running
    assert report.outcome is Outcome.PARTIAL and report.reason is not None
    assert report.reason.code == "rate_limited"
    assert report.resume_at is not None
    resume_at = resume_after(report.resume_at)
    view = await awin_view(awin_store)
    # Recorded with the outcome, in the store: not in the memory of a worker now gone.
    assert (view.status, view.reason_code) == ("partial", "rate_limited")
    assert view.next_attempt_at == format_timestamp(resume_at)
    assert (
        dt.timedelta(seconds=3000) <= resume_at - report.finished_at <= dt.timedelta(seconds=3002)
    )

    # Another worker process, started afresh: nothing before the reset...
    other = await open_awin_store()
    second = a_worker(other, "w2", keyring, map_status, settings, clock)
    stop = asyncio.Event()
    running = asyncio.create_task(second.run(stop))
    try:
        asked = len(networks["awin"].seen)
        clock.advance((resume_at - clock.now()).total_seconds() - 5)
        await asyncio.sleep(0.3)  # dozens of polls
        assert not second.reports and len(networks["awin"].seen) == asked
        # ...and the run at the reset, hours before the sync interval would bring it.
        clock.advance(5)
        resumed = await reports_of(second, 1)
    finally:
        stop.set()
        await running
        await other.close()
    assert resumed.outcome is Outcome.OK, resumed.reason
    assert resume_at <= resumed.started_at < resume_at + dt.timedelta(seconds=60)
    assert resumed.started_at < report.started_at + WorkerConfig("x").interval
    view = await awin_view(awin_store)
    assert (view.status, view.next_attempt_at) == ("ok", None)
    assert len(networks["awin"].windows) >= 1


async def test_a_planned_attempt_ahead_holds_the_connection_back_past_the_interval(
    awin_store: AccountStore, clock: FakeClock
):
    """A day's limit reached: the network refuses calls until it opens, so the interval
    alone does not make the connection due; the planned moment does."""
    store = AccountSyncStore(awin_store, "w1")
    conn = connection("awin")
    assert await store.claim(conn, "w1", 600.0)
    report = SyncReport(
        Outcome.PARTIAL,
        None,
        Counts(),
        clock.now(),
        clock.now(),
        None,
        clock.now() + dt.timedelta(hours=20),
    )
    await store.record_outcome(conn, report)
    await store.release(conn, "w1")
    clock.advance(7 * 3600)  # past a six-hour interval
    assert await store.due_connections(clock.now() - dt.timedelta(hours=6), 10) == []
    clock.advance(13 * 3600)
    assert await store.due_connections(clock.now() - dt.timedelta(hours=6), 10) == [conn]


async def test_the_documented_limit_holds_across_a_killed_worker_and_the_next(
    networks: FakeNetworks,
    awin_store: AccountStore,
    open_awin_store,
    clock: FakeClock,
    settings: SyncSettings,
    map_status,
    keyring: Keyring,
    run_sync,
):
    """3 calls per 15 minutes. A worker dies (SIGKILL: its lease left behind) after its
    third call; the next worker, its own count empty, takes the connection over once the
    lease ends: the store's count makes it wait for the period, not call at once. Then
    runs go on, each when the limit opens, until the backfill is complete."""
    connectors = limited(
        "awin",
        rate=PER_QUARTER,
        max_window=dt.timedelta(days=10),
        granularity=dt.timedelta(days=1),
        change_feeds=(),
        rescan=dt.timedelta(0),
    )
    backfill = dataclasses.replace(settings, backfill=dt.timedelta(days=120))
    conn = connection("awin")
    first = AccountSyncStore(awin_store, "w1")
    assert await first.claim(conn, "w1", 120.0)
    task: asyncio.Task[SyncReport] | None = None

    def killed(state) -> None:
        if len(state.seen) == 3 and task is not None:
            task.cancel()

    networks["awin"].on_request = killed
    task = asyncio.create_task(
        run_sync(
            "awin",
            store=first,
            settings=backfill,
            connectors=connectors,
            lease=Lease(first, conn, "w1", 120.0, clock),
            decrypt=credential_opener(keyring),
        )
    )
    with pytest.raises(asyncio.CancelledError):
        await task
    networks["awin"].on_request = None
    assert len(networks["awin"].seen) == 3
    clock.advance(121)  # the dead worker's lease ends

    other = await open_awin_store()
    second = a_worker(other, "w2", keyring, map_status, backfill, clock)
    second.connectors = connectors
    stop = asyncio.Event()
    running = asyncio.create_task(second.run(stop))
    try:
        taken = await reports_of(second, 1)
        # Its own count was empty; the store's was full: not one call before it opens.
        assert taken.outcome is Outcome.PARTIAL and taken.reason is not None
        assert taken.reason.code == "rate_limited"
        assert len(networks["awin"].seen) == 3
        runs = 1
        while second.reports[-1].outcome is not Outcome.OK:
            view = await awin_view(other)
            assert view.next_attempt_at is not None, second.reports[-1].reason
            opens = dt.datetime.fromisoformat(view.next_attempt_at.replace("Z", "+00:00"))
            clock.advance(max(0.0, (opens - clock.now()).total_seconds()))
            runs += 1
            await reports_of(second, runs)
            assert runs < 40, "the backfill never completed"
    finally:
        stop.set()
        await running
        await other.close()
    times = networks["awin"].times()
    assert len(times) > 6  # the backfill needed several periods' calls
    assert max_in_any_period(times, PER_QUARTER.seconds) <= PER_QUARTER.requests
    assert second.reports[-1].outcome is Outcome.OK
    rows = await awin_store.read(connections.find, ACCOUNT, "awin")
    assert rows is not None and rows.transactions == len(expected("awin"))


async def test_a_days_limit_holds_over_two_workers_taking_turns(
    networks: FakeNetworks,
    awin_store: AccountStore,
    open_awin_store,
    clock: FakeClock,
    settings: SyncSettings,
    map_status,
    keyring: Keyring,
):
    """A day's budget of Commission Factory's kind (scaled down to 6 calls a day), two
    workers taking the connection in turns, each start a process afresh (its own count
    empty): the store's count stops the run that would pass the day's budget, and the next
    attempt is planned for when the oldest call of the day leaves it."""
    per_day = Rate(6, 86400)
    daily = dataclasses.replace(settings, rates={"awin": per_day})
    interval = WorkerConfig("x").interval
    other = await open_awin_store()
    workers = [
        a_worker(awin_store, "w1", keyring, map_status, daily, clock),
        a_worker(other, "w2", keyring, map_status, daily, clock),
    ]
    reports: list[SyncReport] = []
    try:
        for turn in range(10):
            worker = workers[turn % 2]
            stop = asyncio.Event()
            running = asyncio.create_task(worker.run(stop))
            try:
                reports.append(await reports_of(worker, len(worker.reports) + 1))
            finally:
                stop.set()
                await running
            if reports[-1].resume_at is not None:
                break
            clock.advance(interval.total_seconds() + 1)  # due again by the schedule
        limited_run = reports[-1]
        assert limited_run.outcome is Outcome.PARTIAL and limited_run.reason is not None
        assert limited_run.reason.code == "rate_limited"
        assert len(reports) >= 2  # the budget was spent over both workers' runs
        times = networks["awin"].times()
        assert len(times) == per_day.requests
        view = await awin_view(awin_store)
        assert view.next_attempt_at is not None
        opens = dt.datetime.fromisoformat(view.next_attempt_at.replace("Z", "+00:00"))
        # The oldest call of the day leaves it a day after it was made (on the fake clock).
        first_call = clock.now() - dt.timedelta(seconds=clock.monotonic() - min(times))
        assert abs((opens - (first_call + dt.timedelta(days=1))).total_seconds()) <= 2
        clock.advance((opens - clock.now()).total_seconds())
        worker = workers[len(reports) % 2]
        stop = asyncio.Event()
        running = asyncio.create_task(worker.run(stop))
        try:
            resumed = await reports_of(worker, len(worker.reports) + 1)
        finally:
            stop.set()
            await running
    finally:
        await other.close()
    assert resumed.outcome in (Outcome.OK, Outcome.PARTIAL)
    assert len(networks["awin"].times()) > per_day.requests  # it went on after the reset
    assert max_in_any_period(networks["awin"].times(), per_day.seconds) <= per_day.requests
