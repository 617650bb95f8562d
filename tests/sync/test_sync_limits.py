"""Limits that break naive loops, and the faults of a long sync: several documented rates at
once (a minute's and a day's), no concurrent calls, a 429 without Retry-After, a backfill
spread over as many runs as the limits allow, leases renewed while a run works and a lost
one stopping it, and a change feed whose dates run ahead of now."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt

import pytest
from sync_support import Canned, connection, expected, limited, max_in_any_period

from sync.lease import Lease, LeaseLost
from sync.model import Outcome
from sync.ratelimit import SlidingLimiter
from sync.spec import Rate
from sync.worker import Worker, WorkerConfig


async def test_a_request_waits_until_it_fits_every_documented_rate(clock):
    limiter = SlidingLimiter(Rate(3, 60), clock, (Rate(5, 3600),))
    sent = []
    for _ in range(12):
        assert await limiter.acquire()
        sent.append(clock.monotonic())
    assert max_in_any_period(sent, 60) <= 3
    assert max_in_any_period(sent, 3600) <= 5
    # The sixth waited for the hour, not for the minute.
    assert sent[5] - sent[0] >= 3600


async def test_no_concurrent_calls_where_the_network_allows_one(clock):
    limiter = SlidingLimiter(Rate(100, 1), clock, concurrency=1)
    inside = most = 0

    async def call() -> None:
        nonlocal inside, most
        assert await limiter.acquire()
        async with limiter.flight():
            inside += 1
            most = max(most, inside)
            await asyncio.sleep(0.01)
            inside -= 1

    await asyncio.gather(*(call() for _ in range(5)))
    assert most == 1


async def test_a_429_without_retry_after_waits_the_documented_window(
    networks, store, clock, run_sync
):
    networks["awin"].inject.extend([Canned(429, b"{}"), Canned(429, b"{}")])
    report = await run_sync("awin")
    assert report.outcome is Outcome.OK, report.reason
    # Awin documents 20 calls a minute and sends no Retry-After: a minute, twice.
    assert clock.slept.count(60) >= 2
    assert len(store.rows_of("awin")) == len(expected("awin"))


async def test_a_backfill_is_spread_over_runs_never_past_any_limit(
    networks, store, clock, settings, run_sync
):
    """One call a minute, one day a call and twenty calls a day (limits of Sovrn's and
    Commission Factory's kind): every run goes as far as the limits allow, stops with the
    moment they open again, and the next run goes on from there until the backfill is done."""
    connectors = limited(
        "awin",
        rate=Rate(1, 60),
        more_rates=(Rate(20, 86400),),
        concurrency=1,
        max_window=dt.timedelta(days=1),
        granularity=dt.timedelta(days=1),
        change_feeds=(),
        rescan=dt.timedelta(0),
    )
    backfill = dataclasses.replace(settings, backfill=dt.timedelta(days=90))
    positions = []
    reports = []
    for _ in range(10):
        lease = Lease(store, connection("awin"), "w1", 3600.0, clock)
        report = await run_sync("awin", settings=backfill, connectors=connectors, lease=lease)
        reports.append(report)
        positions.append(report.position.complete_through if report.position else None)
        if report.resume_at is None:
            break
        assert report.outcome is Outcome.PARTIAL and report.reason.code == "rate_limited"
        clock.advance((report.resume_at - clock.now()).total_seconds())
    assert reports[-1].outcome is Outcome.OK, reports[-1].reason
    assert len(reports) >= 4  # 91 one-day windows, twenty a day
    # Coverage (/v1/me completeThrough) moved forward with every run.
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    times = networks["awin"].times()
    assert max_in_any_period(times, 60) <= 1
    assert max_in_any_period(times, 86400) <= 20
    assert networks["awin"].most_in_flight == 1
    assert len(store.rows_of("awin")) == len(expected("awin"))


async def test_a_run_stopped_by_a_limit_is_run_again_when_it_opens_not_an_interval_later(
    networks, store, clock, settings, map_status
):
    from sync_support import decrypt

    networks["awin"].inject.append(Canned(429, b"{}", {"Retry-After": "3000"}))
    config = WorkerConfig(worker_id="w1", poll_seconds=0.01, lease_seconds=600.0)
    store.connections = [connection("awin")]
    worker = Worker(store, decrypt, map_status, config, settings, clock)
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    async with asyncio.timeout(20):
        while not worker.reports:  # noqa: ASYNC110 - the worker keeps no event to wait on
            await asyncio.sleep(0.01)
        first = worker.reports[-1]
        assert first.outcome is Outcome.PARTIAL and first.reason.code == "rate_limited"
        assert first.resume_at is not None
        clock.advance(3001)  # well within the six hours of the interval
        while len(worker.reports) < 2:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
    stop.set()
    await running
    assert worker.reports[-1].outcome is Outcome.OK, worker.reports[-1].reason
    assert len(store.rows_of("awin")) == len(expected("awin"))


async def test_a_run_longer_than_its_lease_renews_it_and_finishes(
    networks, store, clock, settings, run_sync
):
    # 700 days of Awin at 2 calls a minute take far longer than a 300 s lease.
    conn = connection("awin")
    assert await store.claim(conn, "w1", 300.0)
    lease = Lease(store, conn, "w1", 300.0, clock)
    started = clock.monotonic()
    report = await run_sync(
        "awin",
        settings=dataclasses.replace(settings, backfill=dt.timedelta(days=700)),
        lease=lease,
        connectors=limited("awin", rate=Rate(2, 60)),
    )
    assert report.outcome is Outcome.OK, report.reason
    assert clock.monotonic() - started > 300
    holder, until = store.leases[("acc_sync_test", "awin")]
    assert holder == "w1" and until > clock.monotonic()


async def test_a_lost_lease_stops_the_run_at_once_and_records_nothing(
    networks, store, clock, settings, run_sync
):
    conn = connection("awin")
    assert await store.claim(conn, "w1", 90.0)
    lease = Lease(store, conn, "w1", 90.0, clock)
    calls = {"n": 0}

    def taken(st) -> None:
        calls["n"] += 1
        if calls["n"] == 3:  # the worker stalls past its lease; w2 takes the connection
            clock.advance(91)
            store.leases[("acc_sync_test", "awin")] = ("w2", clock.monotonic() + 90)

    networks["awin"].on_request = taken
    with pytest.raises(LeaseLost):
        await run_sync(
            "awin",
            settings=dataclasses.replace(settings, backfill=dt.timedelta(days=300)),
            lease=lease,
        )
    assert len(networks["awin"].seen) == 3  # not one request after the loss
    assert store.reports == []


async def test_a_reversal_dated_by_a_locking_date_ahead_of_now_is_read(
    networks, store, clock, settings, run_sync
):
    """Impact: an action transacted 120 days ago, still PENDING, its LockingDate 10 days
    ahead, is reversed at the network. The locking-date feed reaches past now."""
    record = next(r for r in networks["impact"].records if r["Id"] == "7700.1.2")
    record["EventDate"] = (clock.now() - dt.timedelta(days=120)).strftime("%Y-%m-%dT%H:%M:%SZ")
    record["LockingDate"] = (clock.now() + dt.timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    record["State"] = "PENDING"
    backfill = dataclasses.replace(settings, backfill=dt.timedelta(days=200))
    assert (await run_sync("impact", settings=backfill)).outcome is Outcome.OK
    assert store.rows_of("impact")["7700.1.2"].status == "pending"
    record["State"] = "REVERSED"
    clock.advance(6 * 3600)
    report = await run_sync("impact", settings=backfill)
    assert report.outcome is Outcome.OK, report.reason
    assert store.rows_of("impact")["7700.1.2"].status == "declined"


async def test_a_retry_after_of_weeks_plans_the_next_attempt_a_day_ahead_at_most(
    networks, store, clock, settings, run_sync
):
    """A network's Retry-After is not taken at its word past the longest documented period:
    the run is planned again a day later, and asks again then."""
    networks["awin"].inject.append(Canned(429, b"{}", {"Retry-After": str(21 * 86400)}))
    report = await run_sync("awin")
    assert report.outcome is Outcome.PARTIAL and report.reason.code == "rate_limited"
    assert report.resume_at == report.finished_at + dt.timedelta(days=1)
    assert store.next_attempts[("acc_sync_test", "awin")] == report.resume_at
