"""A sync killed at any point loses nothing and duplicates nothing; positions and re-scans."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from support.clock import FakeClock
from sync_support import NETWORKS, FakeNetworks, MemoryStore, StoreCrashError, expected

from sync.model import Outcome


async def reference_rows(network, run_sync, store: MemoryStore):
    await run_sync(network)
    return store.rows_of(network)


@pytest.mark.parametrize("network", ["awin", "cj", "impact", "effiliation", "admitad"])
@pytest.mark.parametrize("kill_at", [1, 2, 3, 5])
async def test_a_sync_cancelled_at_any_request_resumes_without_loss_or_duplicates(
    network, kill_at, networks: FakeNetworks, store: MemoryStore, run_sync
):
    task: asyncio.Task | None = None

    def kill(st):
        if len(st.seen) == kill_at and task is not None:
            task.cancel()

    networks[network].on_request = kill
    task = asyncio.create_task(run_sync(network))
    try:
        await task
    except asyncio.CancelledError:
        pass
    else:  # a network needing fewer requests than kill_at simply finished
        assert len(networks[network].seen) < kill_at
    partial_rows = dict(store.rows_of(network))
    networks[network].on_request = None
    report = await run_sync(network)
    assert report.outcome is Outcome.OK
    rows = store.rows_of(network)
    assert set(rows) == set(expected(network))
    assert set(partial_rows) <= set(rows)


@pytest.mark.parametrize("crash_on_write", [1, 2, 3])
async def test_a_store_that_dies_mid_sync_resumes_from_the_last_committed_window(
    crash_on_write, networks, store: MemoryStore, run_sync
):
    store.crash_on_write = crash_on_write
    with pytest.raises(StoreCrashError):
        await run_sync("awin")
    committed = store.positions.get(("acc_sync_test", "awin"))
    assert store.writes == crash_on_write
    store.crash_on_write = None
    asked_before = len(networks["awin"].windows)
    report = await run_sync("awin")
    assert report.outcome is Outcome.OK
    assert set(store.rows_of("awin")) == set(expected("awin"))
    if committed is not None:
        # The resumed run starts forward at the committed position, not at the beginning.
        resumed = networks["awin"].windows[asked_before:]
        forward = [w for w in resumed if w[0] >= committed.complete_through]
        assert forward and forward[0][0] == committed.complete_through


async def test_a_failed_forward_window_holds_the_position_and_the_rest_waits(
    networks, store, run_sync
):
    from sync_support import Canned

    # The second forward window (of three) fails for good.
    calls = {"n": 0}

    def fail_second(st):
        calls["n"] += 1
        if calls["n"] == 2:
            st.inject.extend([Canned(500, b"down")] * 10)

    networks["awin"].on_request = fail_second
    report = await run_sync("awin")
    assert report.outcome is Outcome.PARTIAL
    assert report.reason.code == "network_unavailable"
    first_window_end = networks["awin"].windows[0][1] + dt.timedelta(seconds=1)
    assert report.position.complete_through == first_window_end
    # Windows after the failed one were not fetched (the position could not pass it); the
    # run still read the payments, which ask for no window.
    starts = {s.query["startDate"] for s in networks["awin"].seen if "startDate" in s.query}
    assert starts == {"2025-12-15T12:00:00", "2026-01-15T12:00:00"}
    networks["awin"].on_request = None
    networks["awin"].inject.clear()
    again = await run_sync("awin")
    assert again.outcome is Outcome.OK
    assert set(store.rows_of("awin")) == set(expected("awin"))


@pytest.mark.parametrize("network", NETWORKS)
async def test_a_later_run_rescans_the_lock_period_then_fetches_forward(
    network, networks, store, clock: FakeClock, run_sync
):
    await run_sync(network)
    first_end = store.positions[("acc_sync_test", network)].complete_through
    asked = len(networks[network].windows)
    clock.advance(3 * 86400)
    # When the second run starts (a first sync at one call a minute takes fake time too).
    started = clock.now()
    report = await run_sync(network)
    assert report.outcome is Outcome.OK
    later = networks[network].windows[asked:]
    assert later, "the second run asked for nothing"
    assert min(w[0] for w in later) < first_end  # re-scan behind the position
    assert report.position.complete_through == started
    assert networks[network].too_long == 0
