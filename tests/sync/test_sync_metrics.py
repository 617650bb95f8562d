"""The worker's events as its metrics and health count them: in process, against the
loopback fake networks, and the pure rules of /healthz and the last-success ages."""

from __future__ import annotations

import asyncio

import pytest
from support.clock import FakeClock
from sync_support import NETWORKS, Canned, FakeNetworks, MemoryStore, decrypt, expected, seal

from contract.version import VERSION
from sync.health import MIN_DEFAULT_STALL_SECONDS, Progress, default_stall_seconds, health
from sync.metrics import NOT_RECORDED, Successes, SyncMetrics
from sync.worker import Worker, WorkerConfig


class Ticks:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def metrics_worker(store, settings, map_status, clock: FakeClock) -> tuple[Worker, SyncMetrics]:
    metrics = SyncMetrics(Progress(60.0))
    cfg = WorkerConfig(worker_id="w1", poll_seconds=0.01, concurrency=3)
    worker = Worker(store, decrypt, map_status, cfg, settings, clock, events=metrics, seal=seal)
    return worker, metrics


async def run_until(worker: Worker, done) -> None:
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        async with asyncio.timeout(30):
            while True:
                if done():
                    return
                await asyncio.sleep(0.01)
    finally:
        stop.set()
        await running


def sample(metrics: SyncMetrics, name: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


async def test_every_request_run_and_row_of_every_network_is_counted(
    networks: FakeNetworks, store: MemoryStore, settings, map_status, clock: FakeClock
):
    networks["awin"].inject.append(Canned(503, b"busy"))  # one retry, after a backoff
    worker, metrics = metrics_worker(store, settings, map_status, clock)
    await run_until(worker, lambda: len(store.reports) == len(NETWORKS))
    for network in NETWORKS:
        assert sample(metrics, "affdir_sync_runs_total", network=network, outcome="ok") == 1
        rows = sample(metrics, "affdir_sync_rows_written_total", network=network, change="inserted")
        assert rows == len(store.rows_of(network)) == len(expected(network))
        sent = sum(
            s.value
            for family in metrics.registry.collect()
            for s in family.samples
            if s.name == "affdir_sync_requests_total" and s.labels["network"] == network
        )
        assert sent == len(networks[network].seen), network
    assert sample(metrics, "affdir_sync_requests_total", network="awin", status="503") == 1
    retried = sample(
        metrics, "affdir_sync_retries_total", network="awin", cause="network_unavailable"
    )
    assert retried == 1
    assert sample(metrics, "affdir_sync_running") == 0
    assert sample(metrics, "affdir_build_info", version=VERSION) == 1
    ages = metrics.successes.ages(metrics.wall())
    assert set(ages) == {("acc_sync_test", n) for n in NETWORKS}


async def test_a_run_the_store_cut_short_is_counted_without_an_outcome(
    networks: FakeNetworks, store: MemoryStore, settings, map_status, clock: FakeClock
):
    store.connections = [c for c in store.connections if c.network == "awin"]
    store.crash_on_write = 1
    worker, metrics = metrics_worker(store, settings, map_status, clock)
    await run_until(
        worker,
        lambda: sample(metrics, "affdir_sync_runs_total", network="awin", outcome=NOT_RECORDED),
    )
    assert sample(metrics, "affdir_sync_runs_total", network="awin", outcome="ok") is None
    assert not store.reports
    assert sample(metrics, "affdir_sync_running") == 0


def test_healthz_turns_503_only_past_the_stall_seconds() -> None:
    ticks = Ticks()
    progress = Progress(10.0, clock=ticks)
    ticks.now += 10.0
    assert health(progress, 2) == (
        200,
        {
            "status": "ok",
            "version": VERSION,
            "secondsSinceProgress": 10.0,
            "stallSeconds": 10.0,
            "running": 2,
        },
    )
    ticks.now += 0.5
    status, body = health(progress, 2)
    assert (status, body["status"], body["secondsSinceProgress"]) == (503, "stalled", 10.5)
    progress.mark()
    assert health(progress, 0)[0] == 200


def test_a_stalled_worker_shows_an_age_past_its_limit_however_little_past() -> None:
    ticks = Ticks()
    progress = Progress(1.5, clock=ticks)
    ticks.now += 1.5001
    status, body = health(progress, 1)
    assert (status, body["status"]) == (503, "stalled")
    assert body["secondsSinceProgress"] > body["stallSeconds"]


@pytest.mark.parametrize(
    ("poll", "stall"),
    [(30.0, MIN_DEFAULT_STALL_SECONDS), (0.1, MIN_DEFAULT_STALL_SECONDS), (1000.0, 3000.0)],
)
def test_the_default_stall_is_three_polls_but_never_under_the_floor(poll, stall) -> None:
    assert default_stall_seconds(poll) == stall


def test_a_last_success_is_the_latest_known_else_the_worker_start() -> None:
    known = Successes(started_at=100.0)
    known.seen[("a", "awin")] = 150.0
    # Before the store was read: what this process saw.
    assert known.ages(200.0) == {("a", "awin"): 50.0}
    known.stored = {("a", "awin"): 170.0, ("a", "cj"): None, ("b", "impact"): 90.0}
    assert known.ages(200.0) == {("a", "awin"): 30.0, ("a", "cj"): 100.0, ("b", "impact"): 110.0}
    known.stored = {("a", "cj"): None}  # awin disconnected since: no series left for it
    assert known.ages(200.0) == {("a", "cj"): 100.0}
